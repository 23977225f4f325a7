"""The comparison keys of a payer name as the bank wrote it and of a customer in the master.

A key is a folded, canonical name (:mod:`.fold`, :func:`.split.canonical`): company forms
removed, business words written short. A customer has several keys, each with its source: its
取引先名カナ (``KANA``), its written name (``NAME``: the kanji itself, or kana when the master
writes kana), the SudachiPy reading of a kanji name (``READING``) and the other readings the
dictionary knows (``ALT_READING``); each also without a business word written out at either
end (``東京都農業協同組合`` is also ``トウキヨウト``, for ``ﾉｳｷﾖｳ)ﾄｳｷﾖｳﾄ``). A payer
has one name key, a customer code written first apart (``1012ｶ)ﾔﾏﾀﾞ...``), and whether the
bank may have cut it: at :data:`.fold.PAYER_NAME_CHARS` characters, or a name exactly as long as
one of the :data:`.fold.EXPORT_CUT_CHARS` a statement export keeps (then also the names it
leaves without the start of a legal form spelled out after them, :func:`.split.cut_spelled_form`).
A payer's ``heads`` are its names before a branch, an office, a department or a note: after a
space, after a form in the middle, or glued to it after a place name the dictionary knows or a
municipality's reading that names no company too (``ｱｵﾊﾞｼﾖｳｼﾞｵｵｻｶｼﾃﾝ``, ``ｱｵﾊﾞｼﾖｳｼﾞﾊﾏﾏﾂｼﾃﾝ``;
not ``ｱｵﾊﾞｻｸﾗｼﾃﾝ``: :func:`_glued_heads`).

:func:`name_key` is the one key of a value when one is needed (``normalize_key(reading=True)``
groups rows by it): a kanji name's SudachiPy reading, a kana name as the bank wrote it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import lru_cache

from keiri_agent.blocks.table.names.fold import (
    EXPORT_CUT_CHARS,
    PAYER_NAME_CHARS,
    bank_length,
    fold,
    has_kanji,
    nfkc,
)
from keiri_agent.blocks.table.names.forms import CompanyForm
from keiri_agent.blocks.table.names.reading import (
    MAX_CACHED_NAMES,
    MAX_PLACE_CHARS,
    MIN_PLACE_CHARS,
    is_branch_place,
    is_place,
    readings,
    word_tails,
)
from keiri_agent.blocks.table.names.split import (
    BRANCH_WORDS,
    WORD_BREAK,
    business_trimmed,
    canonical,
    cut_spelled_form,
    is_branch,
    is_full_name,
    is_note,
    is_title,
    kanji_business_short,
    split_name,
    starts_with_form,
    trade_parts,
)

__all__ = [
    "MIN_CODE_DIGITS",
    "CustomerName",
    "NameKey",
    "NameSource",
    "PayerName",
    "customer_keys",
    "name_key",
]

# A run of digits written before a payer name is a customer code when it has at least this many
# digits, or when a space or a company form follows it (``21ｾｲｷ(ｶ`` is a name, ``1012ﾔﾏﾀﾞ`` and
# ``21 ﾔﾏﾀﾞ`` are code and name).
MIN_CODE_DIGITS = 3
_CODE = re.compile(r"^(\d+)[\s\-]*")
_OWNER_WORDS = frozenset({"ダイヒヨウ", "ダイヒヨウシヤ"})  # 代表, 代表者 as a bank writes them


class NameSource(StrEnum):
    """Which spelling of the customer a key comes from (its Japanese label is shown)."""

    KANA = "取引先名カナ"
    NAME = "取引先名"
    READING = "取引先名の読み"
    ALT_READING = "取引先名の別の読み"


@dataclass(frozen=True)
class NameKey:
    text: str  # folded, canonical
    source: NameSource
    form: CompanyForm | None  # the customer's legal form (from its kana or its name)
    # The readings of the name's last words (:func:`.reading.word_tails`, of its kanji name, or
    # of both its spellings when it has no kanji): a cut that leaves the name without them may
    # be another's whole name.
    tails: tuple[str, ...] = ()


@dataclass(frozen=True)
class CustomerName:
    """A customer of the master: its code, its name and, when the master has it, its kana."""

    code: str
    name: str
    kana: str | None = None
    # The master's kana is how the name reads: no reading of the kanji is a key beside it (白鳥
    # read シロトリ is another name than シラトリ), but for the part of a sole proprietor's name
    # the kana does not spell (its owner, ``ﾔﾏﾀﾞ ﾀﾛｳ`` of 山田商店 山田太郎 with ヤマダショウテン).
    kana_decides: bool = False

    @property
    def keys(self) -> tuple[NameKey, ...]:
        return customer_keys(self.name, self.kana or "", kana_decides=self.kana_decides)


@dataclass(frozen=True)
class PayerName:
    """A payer name (振込依頼人名) as the bank wrote it, taken apart."""

    raw: str
    code: str  # a customer code written first, "" when none
    name: str  # folded, canonical: the key compared with the customers' keys
    form: CompanyForm | None  # the legal form the bank wrote (ｶ) → 株式会社)
    rest: str  # folded: what followed a form in the middle (a branch)
    truncated: bool  # the bank may have cut it: a customer key starting with ``name`` matches
    heads: tuple[str, ...]  # its first words when only branch words follow (``_heads``)
    readings: tuple[str, ...]  # a payer written in kanji: its readings (else empty)
    first_words: tuple[str, ...] = ()  # a company's first words before other words (proposals)
    cut_at: int = 0  # the width the bank may have cut it at (half-width characters), 0: whole
    cut_stems: tuple[str, ...] = ()  # cut inside a legal form spelled out: the names before it
    trade: tuple[str, ...] = ()  # a sole proprietor's trade name, owner's name and both
    # The heads only a branch glued after a place tells (:func:`_glued_heads`), and the name
    # before that branch word (place included): not among ``heads`` until :meth:`told` by the
    # customers that no customer is named so (another customer named so proves them none).
    glued: tuple[str, ...] = ()
    before_branch: str = ""

    def told(self, named: Callable[[str], bool]) -> PayerName:
        """This payer with its :attr:`glued` heads among its heads, unless ``named`` says a
        customer's key begins with the name before the branch word, place included
        (``ｱｵﾊﾞｻｸﾗｼﾃﾝ`` with 青葉サクラ among the customers is its branch as likely as 青葉's).
        A payer not told has no glued head (:func:`.match.name_match` alone accepts none)."""
        if not self.glued or named(self.before_branch):
            return replace(self, glued=())
        return replace(self, heads=self.heads + self.glued, glued=())

    @property
    def proposable(self) -> bool:
        """Whether a name one kana apart may be proposed: not for a name the bank cut at the
        field's width (one kana from many longer names), but for one exactly as long as an
        export's cut, which is as often whole."""
        return not self.truncated or self.cut_at in EXPORT_CUT_CHARS

    @classmethod
    def parse(cls, raw: str, *, limit: int | None = PAYER_NAME_CHARS) -> PayerName:
        """Take ``raw`` apart; ``limit``: the width of the field it came from (half-width
        characters), None when it was never cut. Remembered: a payer who pays every month is
        taken apart once."""
        return _parse(raw, limit)


@lru_cache(maxsize=MAX_CACHED_NAMES)
def _parse(raw: str, limit: int | None) -> PayerName:
    """:meth:`PayerName.parse`, remembered per raw text and field width."""
    text = nfkc(raw).strip()
    cut_at = _cut_width(bank_length(text), limit)
    truncated = cut_at > 0
    code, text = _code(text)
    parts = split_name(text, cut=truncated)
    # A branch after a form in the middle (ｱｵﾊﾞｼﾖｳｼﾞ(ｶ)ｵｵｻｶｼﾃﾝ) is part of the name as the words
    # after a space are: the whole is a branch customer's name, the first words the company's.
    whole = f"{parts.name} {parts.rest}" if parts.rest else parts.name
    name = canonical(fold(whole))
    if not name and code:  # digits alone: a name, not a code
        code, name = "", canonical(fold(raw))
    # Words parted by a space or by a separator (``ｱｵﾊﾞｼﾖｳｼﾞ.ｵｵｻｶｼﾃﾝ``, ``ｱｵﾊﾞ･ｼﾖｳｼﾞ``).
    words = [w for w in (canonical(fold(w)) for w in WORD_BREAK.split(whole)) if w]
    middle = len([w for w in WORD_BREAK.split(parts.rest) if fold(w)]) if parts.rest else 0
    heads, first_words = _heads(
        words,
        truncated=truncated,
        company=parts.legal is not None,
        office=parts.office,
        middle=middle,
    )
    before_branch, placed = _glued_heads(words, office=parts.office)
    glued = tuple(h for h in placed if h not in heads)
    spoken = tuple(canonical(r) for r in readings(whole)) if has_kanji(whole) else ()
    return PayerName(
        raw=raw,
        code=code,
        name=name,
        form=parts.legal,
        rest=canonical(fold(parts.rest)),
        truncated=truncated,
        heads=heads,
        readings=spoken,
        first_words=first_words,
        cut_at=cut_at,
        trade=() if parts.legal else tuple(canonical(fold(p)) for p in trade_parts(parts.name)),
        cut_stems=tuple(map(canonical, cut_spelled_form(fold(parts.name)))) if truncated else (),
        glued=glued,
        before_branch=before_branch if glued else "",
    )


def _cut_width(length: int, limit: int | None) -> int:
    """The width a name of ``length`` half-width characters may have been cut at (0: none)."""
    if limit is None:
        return 0
    if length >= limit:
        return limit
    return length if length in EXPORT_CUT_CHARS else 0


def _heads(
    words: list[str], *, truncated: bool, company: bool, office: bool = False, middle: int = 0
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A payer's first words, longest first, when more words follow them: ``heads`` when every
    word after them names a branch, an office or a department, or is the payer's note of what
    it pays (``ｱｵﾊﾞｼﾖｳｼﾞ ｵｵｻｶｼﾃﾝ``, ``ｱｵﾊﾞｼﾖｳｼﾞ 5ｶﾞﾂﾌﾞﾝ``: :func:`.split.is_note`; the
    last word when ``office``: its 営業所 was written as a form, ``ｵｵｻｶ(ｴｲ``; in a name the bank
    may have cut, also every word but the last: a cut word proves nothing; a place name the
    dictionary knows among the last ``middle`` words, which followed a form in the middle:
    ``ｱｵﾊﾞｼﾖｳｼﾞ(ｶ ｵｵｻｶ``, where the 全銀協 rule puts the office) or when a
    representative's title or the word before the person in charge follows them
    (``ﾀﾞｲﾋﾖｳﾄﾘｼﾏﾘﾔｸ ｱｵﾊﾞ ﾀﾛｳ``, ``ﾀﾝﾄｳ ｻﾄｳ``: a person's name after it), or a person's
    surname and given name by the dictionary's tags, the last one or two words
    (``ｱｵﾊﾞｼﾖｳｼﾞ ｻﾄｳ ﾀﾛｳ``: who sent it; no company is named so; after ``ﾀﾞｲﾋﾖｳ`` for a
    company, ``ｶ)ｱｵﾊﾞｼﾖｳｼﾞ ﾀﾞｲﾋﾖｳ ｻﾄｳ ﾀﾛｳ``: :func:`_person_after`),
    else, for a payer that wrote a legal form, ``first_words``: another company may be named
    so (``ｶ)ｱｵﾊﾞｼﾖｳｼﾞ ﾘｰｽ``, a parent or a sister company), a proposal for a person, never a
    match."""
    heads: list[str] = []
    first_words: list[str] = []
    branch = [
        is_branch(word) or is_note(word, after_note=at > 0 and is_note(words[at - 1]))
        for at, word in enumerate(words)
    ]
    if office and branch:
        branch[-1] = True
    for at in range(max(1, len(words) - middle), len(words)):
        branch[at] = branch[at] or is_place(words[at])
    for count in range(len(words) - 1, 0, -1):
        afters = (branch[count:], branch[count:-1]) if truncated else (branch[count:],)
        head = "".join(words[:count])
        person = _person_after(words[count:], company=company)
        if is_title(words[count]) or person or any(after and all(after) for after in afters):
            heads.append(head)
        elif company:
            first_words.append(head)
    return tuple(heads), tuple(first_words)


def _person_after(words: list[str], *, company: bool) -> bool:
    """Whether ``words`` are a person's surname and given name by the dictionary's tags (one
    word or two), after 代表 or 代表者 for a payer that wrote a legal form (a sole proprietor's
    ``ﾀﾞｲﾋﾖｳ`` parts its trade name from its owner: :func:`.split.trade_parts`)."""
    if company and len(words) > 1 and words[0] in _OWNER_WORDS:
        words = words[1:]
    return len(words) <= 2 and is_full_name(" ".join(words))


def _glued_heads(words: list[str], *, office: bool) -> tuple[str, tuple[str, ...]]:
    """The name before a branch word glued to it, and the names before a place that ends it,
    longest first. The last word (notes after it
    left out) ends with a branch word (:data:`.split.BRANCH_WORDS`, ``オオサカシテン``) or had an
    office form spelled out taken off its end (``office``: ``ナゴヤエイギヨウシヨ``), and a place
    name no company is named with stands before that inside the word
    (:func:`.reading.is_branch_place`; ``アオバサクラシテン`` may be 青葉サクラ's branch):
    the words before the place are the name (``アオバシヨウジオオサカシテン``: アオバシヨウジ; a
    name the bank may have cut that ends with a whole branch word was not cut in it). Without
    the place the end of the name cannot be told (``アオバシヨウジカイハツ`` is another
    company's name than アオバシヨウジ's branch), nor without a branch word
    (``アオバシヨウジオオサカ`` may be a company of its own): no head. A place that is the whole
    word (``ｱｵﾊﾞｼﾖｳｼﾞ ｵｵｻｶｼﾃﾝ``) is a word after the name, as :func:`_heads` reads it. A
    customer of the master whose name begins with the name before the branch word
    (アオバサクラ of ``ｱｵﾊﾞｻｸﾗｼﾃﾝ``: 青葉サクラ) makes the place part of a name: that is for the
    customers to tell (:meth:`PayerName.told`)."""
    kept = list(words)
    while len(kept) > 1 and is_note(kept[-1]):
        kept.pop()
    last = kept[-1] if kept else ""
    ending = next((w for w in BRANCH_WORDS if last.endswith(w) and len(last) > len(w)), None)
    if ending is None and not (office and kept == words):
        return "", ()
    base = last[: -len(ending)] if ending else last
    before = "".join(kept[:-1])
    ends = range(len(base) - MIN_PLACE_CHARS, max(0, len(base) - MAX_PLACE_CHARS - 1), -1)
    heads = tuple(before + base[:end] for end in ends if end > 0 and is_branch_place(base[end:]))
    return before + base, heads


def _code(text: str) -> tuple[str, str]:
    match = _CODE.match(text)
    if match is None:
        return "", text
    digits, after = match.group(1), text[match.end() :]
    followed = match.end() > len(digits) or starts_with_form(after)
    if len(digits) >= MIN_CODE_DIGITS or (followed and after):
        return digits, after
    return "", text


@lru_cache(maxsize=MAX_CACHED_NAMES)
def customer_keys(name: str, kana: str = "", *, kana_decides: bool = False) -> tuple[NameKey, ...]:
    """Every key of a customer named ``name`` (取引先名) with ``kana`` (取引先名カナ, or "");
    ``kana_decides``: a kana given is the name's only spelling (:attr:`CustomerName.kana_decides`)."""
    found: dict[str, NameSource] = {}
    spelled = split_name(kana) if kana.strip() else None
    written = split_name(name)
    # The customer's legal form, from whichever spelling writes it.
    form = (spelled.legal if spelled else None) or written.legal
    for text in _variants(spelled.name, form) if spelled else ():
        found.setdefault(canonical(fold(text)), NameSource.KANA)
    # The words of a kanji name are read from it (its kana may run words the dictionary knows in
    # kanji only together: キタニホン…トウホク); a name without kanji from both its spellings.
    spellings = (
        (written.name,) if has_kanji(written.name) or not spelled else (written.name, spelled.name)
    )
    tails = tuple(
        dict.fromkeys(
            canonical(tail) for text in spellings for tail in word_tails(kanji_business_short(text))
        )
    )
    if spelled and kana_decides:
        owner = _unspelled(written.name, canonical(fold(spelled.name))) if form is None else ()
        for text, source in owner:
            found.setdefault(text, source)
        return tuple(NameKey(t, source, form, tails) for t, source in found.items() if t)
    for text in _variants(written.name, form):
        found.setdefault(canonical(fold(text)), NameSource.NAME)
        if has_kanji(text):
            for number, reading in enumerate(readings(kanji_business_short(text))):
                source = NameSource.READING if number == 0 else NameSource.ALT_READING
                found.setdefault(canonical(reading), source)
    return tuple(NameKey(t, source, form, tails) for t, source in found.items() if t)


def _variants(name: str, form: CompanyForm | None) -> tuple[str, ...]:
    """The name, the name without a business word at an end when it has one, and for a sole
    proprietor (no legal form) written with a trade name and an owner's name, each of them."""
    trimmed = business_trimmed(name)
    owner = trade_parts(name) if form is None else ()
    return (name, *((trimmed,) if trimmed else ()), *owner)


def _unspelled(name: str, kana: str) -> tuple[tuple[str, NameSource], ...]:
    """The keys a sole proprietor's ``name`` (trade name and owner, :func:`.split.trade_parts`)
    has beyond its master kana (folded, canonical) that spells one part or both: when the kana
    is one part's reading, the other part's readings, alone and joined to the kana either way;
    when it is both parts' (a part's reading and the rest, in either order, the longest reading
    taken), each alone and
    both the other way round; when it is neither part's reading (the trade name read another
    way), the owner's readings as before, the owner being the part that is a person's full
    name. () for any other name."""
    parts = trade_parts(name)[:2]
    if len(parts) < 2:
        return ()
    spoken = [tuple(canonical(r) for r in readings(kanji_business_short(p))) for p in parts]
    # A part's whole reading first, then the longest start or end: 山田（山田商店） with
    # ヤマダシヨウテン(ヤマダ) is never ヤマダ and シヨウテン(ヤマダ).
    for mine, other in ((0, 1), (1, 0)):
        if kana in spoken[mine]:
            return _joined(kana, spoken[other])
    for reading in sorted({r for part in spoken for r in part}, key=lambda r: (-len(r), r)):
        if len(kana) > len(reading) and kana.startswith(reading):
            return _both(reading, kana[len(reading) :])
        if len(kana) > len(reading) and kana.endswith(reading):
            return _both(reading, kana[: -len(reading)])
    owners = [number for number, part in enumerate(parts) if is_full_name(part)]
    return _joined(kana, spoken[owners[0]]) if len(owners) == 1 else ()


def _both(reading: str, rest: str) -> tuple[tuple[str, NameSource], ...]:
    """The keys of a kana that spells both parts (the one read ``reading``, then ``rest``)
    beyond the whole: each part alone and both the other way round."""
    return tuple((text, NameSource.KANA) for text in (reading, rest, rest + reading))


def _joined(kana: str, owner: tuple[str, ...]) -> tuple[tuple[str, NameSource], ...]:
    """The owner's readings (the first SudachiPy's own, the others alternates), each alone and
    joined to the kana of the trade name in either order."""
    keys: list[tuple[str, NameSource]] = []
    for number, reading in enumerate(owner):
        source = NameSource.READING if number == 0 else NameSource.ALT_READING
        keys += [(reading, source), (kana + reading, source), (reading + kana, source)]
    return tuple(keys)


def name_key(text: str) -> str:
    """The one key of a name: a kanji name's reading, a kana one as the bank wrote it ("" if blank)."""
    parts = split_name(text)
    if has_kanji(parts.name):
        spoken = readings(kanji_business_short(parts.name))
        return canonical(spoken[0]) if spoken else ""
    return PayerName.parse(text, limit=None).name
