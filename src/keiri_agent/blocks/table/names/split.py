"""A written name split into the name itself, its company forms and what follows a middle form.

:func:`split_name` takes any spelling of a company name (kanji from a customer master, a bank's
half-width kana, a master's 取引先名カナ) and removes what is not the name:

- the kanji legal and office words wherever they stand (株式会社, 医療法人社団, 営業所 ...),
  their short forms ((株), ㈱, （有）, (一社) ...) and Latin ones at the end (Co., Ltd., Inc.);
- the bank's kana abbreviations by the 全銀協 position rule: first ``ｶ)``, last ``(ｶ``, in
  the middle ``(ｶ)`` (what follows, a branch like ``ｵｵｻｶｼﾃﾝ``, is kept apart as ``rest``);
  a form written ``(ｶ)`` first or last is taken as well, one whose closing parenthesis is a
  space (``(ｶ ﾄｳｷﾖｳｼﾖｳｼﾞ``, ``ﾄｳｷﾖｳｼﾖｳｼﾞ(ｶ ﾄｳｷﾖｳｼｼﾔ``), and a form cut short by the field's
  width (``...(ﾄｸ``, ``...(ｻ`` of ``(ｻﾞｲ``) when the caller says the name was cut;
  a period, a middle dot or a slash where a parenthesis belongs (``ｶ.ｱｵﾊﾞｼﾖｳｼﾞ``,
  ``ｱｵﾊﾞｼﾖｳｼﾞ･ｶ･ｵｵｻｶｼﾃﾝ``, ``ﾕ/ｻｸﾗｻﾝｷﾞﾖｳ``).

:func:`trade_parts` takes a sole proprietor's name (個人事業主: no legal form) apart into its trade
name (屋号) and the owner's name when it holds both: ``山田商店 代表 山田太郎``,
``ﾔﾏﾀﾞｼﾖｳﾃﾝ ﾀﾞｲﾋﾖｳ ﾔﾏﾀﾞ ﾀﾛｳ``, ``山田商店（山田太郎）``, ``ﾔﾏﾀﾞ ﾀﾛｳ(ﾔﾏﾀﾞｼﾖｳﾃﾝ``, and in kanji with
a space only when one side is a full name by the dictionary (``山田商店 山田太郎``); either names
the one business.

:func:`cut_spelled_form` gives a cut name without the start of a legal form spelled out after
it (``ﾄｳｷﾖｳｼﾖｳｼﾞｶﾌﾞｼｷｶ`` of ``...ｶﾌﾞｼｷｶﾞｲｼﾔ``): the names the bank may have cut there.

The business words (事業略語: 農業協同組合, 健康保険組合 ...) are part of a name; banks write
them short inside it (``ﾄｳｷﾖｳﾄﾉｳｷﾖｳ``). :func:`canonical` writes them short on the folded
name whichever way they were spelled, and :func:`business_trimmed` gives the name without
one at either end, for a bank that wrote such a word as a form (``ﾉｳｷﾖｳ)ﾄｳｷﾖｳﾄ``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from keiri_agent.blocks.table.names.fold import fold, has_kanji, nfkc, starts_cut, unvoiced
from keiri_agent.blocks.table.names.forms import FORMS, KANJI_SHORT, CompanyForm, FormKind
from keiri_agent.blocks.table.names.reading import name_parts

__all__ = [
    "BRANCH_WORDS",
    "MIN_FORM_START",
    "NOTE_DIGITS",
    "NOTE_NUMBER_DIGITS",
    "SEPARATORS",
    "TITLE_WORDS",
    "WORD_BREAK",
    "NameParts",
    "business_trimmed",
    "canonical",
    "cut_spelled_form",
    "is_branch",
    "is_full_name",
    "is_note",
    "is_title",
    "kanji_business_short",
    "split_name",
    "starts_with_form",
    "trade_parts",
]

# Words a branch, an office or a department of a company ends with, as a bank writes them after
# the company's name (``ｱｵﾊﾞｼﾖｳｼﾞ ｵｵｻｶｼﾃﾝ``, ``ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ ｹｲﾘﾌﾞ``), folded, and in kanji as a
# master writes them (``青葉商事(大阪支店)``). Only words no company name ends with by chance
# (not ブ or カ alone, not 事務所: ｱｵｷ ﾎｳﾘﾂｼﾞﾑｼﾖ is a law office).
_BRANCHES = (
    ("支店", "シテン"), ("支社", "シシヤ"), ("営業所", "エイギヨウシヨ"), ("出張所", "シユツチヨウシヨ"),
    ("本店", "ホンテン"), ("本社", "ホンシヤ"), ("本部", "ホンブ"), ("事業所", "ジギヨウシヨ"),
    ("事業部", "ジギヨウブ"), ("営業部", "エイギヨウブ"), ("経理部", "ケイリブ"), ("財務部", "ザイムブ"),
    ("総務部", "ソウムブ"), ("経理課", "ケイリカ"),
)  # fmt: skip
BRANCH_WORDS = tuple(fold(kana) for _, kana in _BRANCHES) + tuple(kanji for kanji, _ in _BRANCHES)
# What a payer writes after its name to say what it pays (``ｶ)ｱｵﾊﾞ ｾｲｷﾕｳ1234``,
# ``ｱｵﾊﾞｼﾖｳｼﾞ 5ｶﾞﾂﾌﾞﾝ``, ``ｱｵﾊﾞｼﾖｳｼﾞ NO.1234``), folded: a word beginning with 請求 or 支払, one
# ending with 月分, ``NO``, or an invoice or order number (at least :data:`NOTE_DIGITS` digits,
# Latin letters and dashes only: ``A-0012``; kana before digits are a name, ``ｼﾖｳｼﾞ1234``).
# Not ブン alone (シンブン is a name), not 代金 (ダイキン is one). Digits alone are a number in
# a company's name as often (``ｱｵﾊﾞ 2000``, ``ﾄｳﾖｳ 1985``, ``ﾁﾕｳｵｳ 21``: a bank puts a space
# before it): they are a note only after a note word (``NO 1234``, ``ｾｲｷﾕｳ 1234``) or with
# more digits than such a number has (:data:`NOTE_NUMBER_DIGITS`: a date, ``20260131``).
NOTE_DIGITS = 4
NOTE_NUMBER_DIGITS = 5
_NOTE_STARTS = ("セイキユウ", "シハライ", "請求", "支払")
_NOTE_ENDS = ("ガツブン", "月分")
_NOTE_NUMBER = re.compile(r"[\dA-Zー]+")
# The titles of a representative a bank writes after a company's name when the account is held
# in the representative's name too (``ｶ)ｱｵﾊﾞｼﾖｳｼﾞ ﾀﾞｲﾋﾖｳﾄﾘｼﾏﾘﾔｸ ｱｵﾊﾞ ﾀﾛｳ``), and the word before
# the person in charge a payer writes (``ｶ)ｱｵﾊﾞｼﾖｳｼﾞ ﾀﾝﾄｳ ｻﾄｳ``): what follows is a person, the
# words before are the company. Whole words only (ｼﾔﾁﾖｳ is no part of a name).
_TITLES = (
    ("代表取締役", "ダイヒヨウトリシマリヤク"), ("代表取締役社長", "ダイヒヨウトリシマリヤクシヤチヨウ"),
    ("取締役社長", "トリシマリヤクシヤチヨウ"), ("代取", "ダイトリ"), ("代表社員", "ダイヒヨウシヤイン"),
    ("代表理事", "ダイヒヨウリジ"), ("理事長", "リジチヨウ"), ("代表役員", "ダイヒヨウヤクイン"),
    ("院長", "インチヨウ"), ("園長", "エンチヨウ"), ("社長", "シヤチヨウ"), ("担当", "タントウ"),
    ("担当者", "タントウシヤ"),
)  # fmt: skip
# (代表 / ﾀﾞｲﾋﾖｳ alone stands between a sole proprietor's trade name and owner: trade_parts.)
TITLE_WORDS = frozenset(fold(kana) for _, kana in _TITLES) | {kanji for kanji, _ in _TITLES}
# A sole proprietor's name: trade name and owner's name on either side of 代表 / 代表者 (ﾀﾞｲﾋﾖｳ,
# ﾀﾞｲﾋﾖｳｼﾔ: a word apart in kana), or one of them in parentheses (the closing one may be cut).
_OWNER_WORD = re.compile(r"\s*代表者?\s*[:：]?\s*|\s+ダイヒ[ヨョ]ウ(?:シ[ヤャ])?\s+")
_IN_PARENTHESES = re.compile(r"^([^()]+)\(([^()]+)\)?$")
# Kana of a spelled-out legal form that must show after a cut name to be taken as its start.
MIN_FORM_START = 2
# Latin company forms at the end of a name (after NFKC).
_LATIN_FORM = re.compile(r"[\s,]+(?:co\.?,?\s*ltd\.?|inc\.?|corp\.?|ltd\.?|k\.k\.)$", re.I)
_ABBREVIATIONS: dict[str, CompanyForm] = {form.abbreviation: form for form in FORMS}
_LONGEST_ABBREVIATION = max(len(a) for a in _ABBREVIATIONS)
# Kanji words of legal and office forms, longest first (医療法人社団 before 医療法人).
_KANJI_WORDS = sorted(
    ((word, form) for form in FORMS if form.kind is not FormKind.BUSINESS for word in form.words),
    key=lambda item: -len(item[0]),
)
_BUSINESS_WORDS = sorted(
    ((word, form) for form in FORMS if form.kind is FormKind.BUSINESS for word in form.words),
    key=lambda item: -len(item[0]),
)
_LEGAL_READINGS = sorted(
    ((reading, form) for form in FORMS if form.kind is FormKind.LEGAL for reading in form.readings),
    key=lambda item: -len(item[0]),
)
_OFFICE_READINGS = sorted(
    (
        (reading, form)
        for form in FORMS
        if form.kind is FormKind.OFFICE
        for reading in form.readings
    ),
    key=lambda item: -len(item[0]),
)
_BUSINESS_READINGS = sorted(
    (
        (r, form.abbreviation)
        for form in FORMS
        if form.kind is FormKind.BUSINESS
        for r in form.readings
    ),
    key=lambda item: -len(item[0]),
)
# Each table above as one test, to pass over the names that hold none of it (most names).
_ANY_KANJI_FORM = re.compile(
    "|".join(map(re.escape, [*KANJI_SHORT, *(w for w, _ in _KANJI_WORDS)]))
)
_ANY_BUSINESS_READING = re.compile("|".join(re.escape(r) for r, _ in _BUSINESS_READINGS))
_LEGAL_SPELLINGS = tuple(reading for reading, _ in _LEGAL_READINGS)
_BUSINESS_TEXTS = tuple(word for word, _ in _BUSINESS_WORDS)
_BUSINESS_SPELLINGS = tuple(reading for reading, _ in _BUSINESS_READINGS)
_OFFICE_SPELLINGS = tuple(reading for reading, _ in _OFFICE_READINGS)
# Every start of a legal form spelled out, as a cut leaves it (its last kana may have lost its
# voiced mark): what :func:`cut_spelled_form` looks for at the end of a cut name.
_LONGEST_READING = max(len(reading) for reading, _ in _LEGAL_READINGS)
_FORM_STARTS = frozenset(
    start
    for reading, _ in _LEGAL_READINGS
    for end in range(MIN_FORM_START, len(reading) + 1)
    for start in (reading[:end], reading[: end - 1] + unvoiced(reading[end - 1]))
)
# An abbreviation between parentheses, room left for small kana and marks written apart.
_TOKEN = f"[^()]{{1,{2 * _LONGEST_ABBREVIATION}}}"
_FIRST = re.compile(rf"^\(?({_TOKEN})\)")
_LAST = re.compile(rf"\(({_TOKEN})\)?$")
_MIDDLE = re.compile(rf"\(({_TOKEN})\)")
# The same with a space where the closing parenthesis belongs: ``(ｶ ﾄｳｷﾖｳ``, ``ﾄｳｷﾖｳ(ｶ ｼﾃﾝ``.
_SPACED = rf"\(([^()\s]{{1,{2 * _LONGEST_ABBREVIATION}}})\s+(?=\S)"
_FIRST_SPACED = re.compile(f"^{_SPACED}")
_MIDDLE_SPACED = re.compile(_SPACED)
_CUT_FORM = re.compile(rf"\(({_TOKEN})?$")
# The same with a separator where a parenthesis belongs, as some payers' systems write it: a
# period, a middle dot or a slash (``ｶ.ｱｵﾊﾞｼﾖｳｼﾞ``, ``ｱｵﾊﾞｼﾖｳｼﾞ･ｶ``, ``ｱｵﾊﾞｼﾖｳｼﾞ.ｶ.ｵｵｻｶｼﾃﾝ``);
# only an abbreviation of the list counts (``ｴｽ.ｹｲ`` stays). Between words they part words as
# a space does (:data:`WORD_BREAK`).
SEPARATORS = "./・"  # after NFKC: ``･`` and ``／`` are ``・`` and ``/``
WORD_BREAK = re.compile(rf"[\s{re.escape(SEPARATORS)}]+")
_SEPARATOR = f"[{re.escape(SEPARATORS)}]"
_PERIOD_TOKEN = rf"([^()\s{re.escape(SEPARATORS)}]{{1,{2 * _LONGEST_ABBREVIATION}}})"
_FIRST_PERIOD = re.compile(rf"^{_PERIOD_TOKEN}{_SEPARATOR}")
_LAST_PERIOD = re.compile(rf"{_SEPARATOR}{_PERIOD_TOKEN}$")
# (the separator after it only looked at: it may stand before the next one, ``ｱｵﾊﾞ.ｼﾖｳｼﾞ.ｶ.``;
# a space after it parts the name from a branch or a note as well: ``ﾏﾙｼﾖｳ.ｶ NO.1234``)
_MIDDLE_PERIOD = re.compile(rf"{_SEPARATOR}{_PERIOD_TOKEN}(?=[{re.escape(SEPARATORS)}\s])")


@dataclass(frozen=True)
class NameParts:
    name: str  # NFKC text of the name itself, forms removed, not folded
    forms: tuple[CompanyForm, ...]  # the forms found, in the order they were removed
    rest: str = ""  # what followed a form in the middle (a branch, an office), NFKC

    @property
    def office(self) -> bool:
        """Whether an office form (営業所, 出張所: ``(ｴｲ``, ``ｴｲｷﾞﾖｳｼﾖ``) was taken off: the last
        word left names the office (``ｱｵﾊﾞｼﾖｳｼﾞ ﾅｺﾞﾔ(ｴｲ``)."""
        return any(f.kind is FormKind.OFFICE for f in self.forms)

    @property
    def legal(self) -> CompanyForm | None:
        """The legal form (株式会社, 医療法人 ...) of the name, when one was written."""
        return next((f for f in self.forms if f.kind is FormKind.LEGAL), None)


def split_name(text: str, *, cut: bool = False) -> NameParts:
    """``text`` without its company forms (see the module docstring); ``cut``: it was cut short."""
    name = nfkc(text).strip()
    forms: list[CompanyForm] = []
    if cut:
        name = _drop_cut_form(name)
    name = _LATIN_FORM.sub("", name)
    if _ANY_KANJI_FORM.search(name):  # most names hold none: one search instead of each word
        for short, form in KANJI_SHORT.items():
            if short in name:
                name = name.replace(short, " ")
                forms.append(form)
        for word, form in _KANJI_WORDS:
            if word in name:
                name = name.replace(word, " ")
                forms.append(form)
    name, rest = _kana_forms(name.strip(), forms)
    folded = fold(name)
    if folded.startswith(_LEGAL_SPELLINGS):  # a bank that spelled the form out
        for reading, form in _LEGAL_READINGS:
            if folded.startswith(reading) and len(folded) > len(reading):
                name, folded = _drop_spelled(name, len(reading), first=True), folded[len(reading) :]
                forms.append(form)
                break
    if folded.endswith(_LEGAL_SPELLINGS):
        for reading, form in _LEGAL_READINGS:
            if folded.endswith(reading) and len(folded) > len(reading):
                name = _drop_spelled(name, len(reading), first=False)
                forms.append(form)
                break
    last = rest if rest.strip() else name  # an office spelled out ends the whole name
    folded_last = fold(last)
    for reading, form in _OFFICE_READINGS if folded_last.endswith(_OFFICE_SPELLINGS) else ():
        if folded_last.endswith(reading) and len(folded_last) > len(reading):
            last = _drop_spelled(last, len(reading), first=False)
            name, rest = (name, last) if rest.strip() else (last, rest)
            forms.append(form)
            break
    return NameParts(name.strip(), tuple(forms), rest.strip())


def canonical(folded: str) -> str:
    """A folded name with its business words written as banks write them (農業協同組合 → ノウキヨウ)."""
    if _ANY_BUSINESS_READING.search(folded) is None:  # most names: one search
        return folded
    for reading, abbreviation in _BUSINESS_READINGS:
        if reading in folded:
            folded = folded.replace(reading, abbreviation)
    return folded


def business_trimmed(name: str) -> str:
    """``name`` (NFKC) without the business word it starts or ends with; "" when it has none.

    Only a business word written out (kanji ``農業協同組合`` or kana ``ノウギヨウキヨウドウクミアイ``)
    is taken: a short abbreviation at an end may be part of the name (``カレン``).
    """
    written = name.startswith(_BUSINESS_TEXTS) or name.endswith(_BUSINESS_TEXTS)
    for word, _ in _BUSINESS_WORDS if written else ():
        if name.startswith(word) and len(name) > len(word):
            return name[len(word) :].strip()
        if name.endswith(word) and len(name) > len(word):
            return name[: -len(word)].strip()
    folded = fold(name)
    if not (folded.startswith(_BUSINESS_SPELLINGS) or folded.endswith(_BUSINESS_SPELLINGS)):
        return ""
    for reading, _ in _BUSINESS_READINGS:
        if folded.startswith(reading) and len(folded) > len(reading):
            return _drop_spelled(name, len(reading), first=True).strip()
        if folded.endswith(reading) and len(folded) > len(reading):
            return _drop_spelled(name, len(reading), first=False).strip()
    return ""


def starts_with_form(text: str) -> bool:
    """Whether ``text`` (NFKC) begins with a bank's form written first (``カ)``, ``トクヒ)``)."""
    return _form_at(text, (_FIRST, _FIRST_PERIOD)) is not None


def is_branch(word: str) -> bool:
    """Whether ``word`` (folded) names a branch, an office or a department (:data:`BRANCH_WORDS`)."""
    return word.endswith(BRANCH_WORDS)


def is_note(word: str, *, after_note: bool = False) -> bool:
    """Whether ``word`` (folded) is a payer's note of what it pays, not a name (see
    :data:`NOTE_DIGITS`); ``after_note``: the word before it is a note."""
    if word == "NO" or word.startswith(_NOTE_STARTS) or word.endswith(_NOTE_ENDS):
        return True
    if _NOTE_NUMBER.fullmatch(word) is None:
        return False
    digits = sum(ch.isdigit() for ch in word)
    if digits < len(word):  # letters or dashes with the digits: ``A-0012``
        return digits >= NOTE_DIGITS
    return after_note or digits >= NOTE_NUMBER_DIGITS


def is_title(word: str) -> bool:
    """Whether ``word`` (folded) is a representative's title (:data:`TITLE_WORDS`)."""
    return word in TITLE_WORDS


def kanji_business_short(text: str) -> str:
    """``text`` with its kanji business words replaced by the bank's kana (before reading it)."""
    for word, form in _BUSINESS_WORDS:
        if word in text:
            text = text.replace(word, form.abbreviation)
    return text


def _form_of(token: str) -> CompanyForm | None:
    return _ABBREVIATIONS.get(fold(token))


def _form_at(
    name: str, patterns: tuple[re.Pattern[str], ...]
) -> tuple[re.Match[str], CompanyForm] | None:
    """The first of ``patterns`` found in ``name`` whose token is an abbreviation, and its form."""
    for pattern in patterns:
        found = pattern.search(name)
        if found and (form := _form_of(found.group(1))):
            return found, form
    return None


def _kana_forms(name: str, forms: list[CompanyForm]) -> tuple[str, str]:
    """Remove the bank's abbreviations (first, last, middle); returns the name and the rest."""
    rest = ""
    if first := _form_at(name, (_FIRST, _FIRST_SPACED, _FIRST_PERIOD)):
        name = name[first[0].end() :]
        forms.append(first[1])
    if last := _form_at(name, (_LAST, _LAST_PERIOD)):
        name = name[: last[0].start()]
        forms.append(last[1])
    middles = (_MIDDLE, _MIDDLE_SPACED, _MIDDLE_PERIOD)
    for middle in (found for pattern in middles for found in pattern.finditer(name)):
        if form := _form_of(middle.group(1)):
            name, rest = name[: middle.start()], name[middle.end() :].lstrip(SEPARATORS)
            forms.append(form)
            break
    return name, rest


def _drop_cut_form(name: str) -> str:
    """A name cut inside its last form (``...(ﾄｸ`` of ``(ﾄｸﾋ``, or a lone ``(``) loses it."""
    match = _CUT_FORM.search(name)
    if match is None:
        return name
    start = fold(match.group(1) or "")
    if any(starts_cut(a, start) for a in _ABBREVIATIONS) and start not in _ABBREVIATIONS:
        return name[: match.start()]
    return name


def trade_parts(name: str) -> tuple[str, ...]:
    """A sole proprietor's ``name`` (NFKC, forms removed) as its trade name, its owner's name and
    both without the word between, in either order; () when it is not written so. A part
    naming a branch is none (``青葉商事(大阪支店)`` is a company and its branch)."""
    text = name.strip()
    if bracketed := _IN_PARENTHESES.match(text):
        parts = [bracketed.group(1).strip(), _OWNER_WORD.sub("", bracketed.group(2)).strip()]
    else:
        parts = [p.strip() for p in _OWNER_WORD.split(text, maxsplit=1)]
    if len(parts) < 2:
        parts = _spaced_owner(text)
    if len(parts) < 2 or not all(parts) or any(is_branch(fold(p)) for p in parts):
        return ()
    return (parts[0], parts[1], f"{parts[0]} {parts[1]}", f"{parts[1]} {parts[0]}")


def _spaced_owner(text: str) -> list[str]:
    """A trade name and its owner's full name parted by a space only (``山田商店 山田太郎``,
    ``山田太郎 山田商店``, ``さくら整骨院 佐藤 花子``): the part that is a surname and a given name
    by the dictionary is the owner, the other, which holds a word that is no name, the trade
    name. A name written with a space (``山田 太郎``) is one person, never a trade and an owner."""
    words = text.split()
    if len(words) < 2 or not has_kanji(text):
        return [text]
    for cut in dict.fromkeys((1, len(words) - 1)):
        first, second = " ".join(words[:cut]), " ".join(words[cut:])
        if is_full_name(second) and name_parts(first) is None:
            return [first, second]
        if is_full_name(first) and name_parts(second) is None:
            return [second, first]
    return [text]


def is_full_name(text: str) -> bool:
    """Whether ``text`` is a person's surname and given name by the dictionary (山田太郎)."""
    parts = name_parts(text)
    return parts is not None and len(parts) >= 2 and parts[0] == "姓" and parts[-1] == "名"


def cut_spelled_form(folded: str) -> tuple[str, ...]:
    """A cut, folded name without the start of a legal form spelled out at its end
    (``...ｶﾌﾞｼｷｶﾞｲｼﾔ`` cut to ``...ｶﾌﾞｼｷｶ``): every such name, longest start off first.

    At least :data:`MIN_FORM_START` kana of the form must show: one kana (``カ``, ``シ``,
    ``イ``) begins a form's spelling as often as it goes on a name."""
    ends = range(max(1, len(folded) - _LONGEST_READING), len(folded) - MIN_FORM_START + 1)
    return tuple(folded[:end] for end in ends if folded[end:] in _FORM_STARTS)


def _drop_spelled(name: str, length: int, *, first: bool) -> str:
    """Remove ``length`` folded characters from one end of ``name`` (skipping dropped marks)."""
    chars = list(name) if first else list(reversed(name))
    taken = 0
    position = 0
    while position < len(chars) and taken < length:
        taken += len(fold(chars[position]))
        position += 1
    kept = chars[position:]
    return "".join(kept) if first else "".join(reversed(kept))
