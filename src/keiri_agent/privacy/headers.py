"""Personal data found by what names it: a column header (氏名, 担当者, 電話, メール, 口座...),
or a label before a value (``氏名: 長谷川 美咲``, ``"担当者": "田中"``).

A table reaches a model as text (a preview, printed output, CSV lines, a JSON record), so the
header rule works on text too: in lines cut by ``|``, tabs or commas, the cells under a
personal header are personal whatever they look like, and the cells under a header that names
something else (金額, 注文番号, 法人番号...) are never taken for a number that identifies. A
label on its own line over one item a line (``担当者一覧``, ``支店一覧``: ``privacy.page_lists``)
is that column's header. A label that names a number (受付番号, 会員番号, お客様ID) says what the
number after it, below it or in its column is: one naming no personal kind names a business
number, never taken for a マイナンバー or a card however its digits check (:func:`names_business_number`).
Records held as data (JSON objects, a tool call's arguments) are read
key by key with :func:`header_kind` and :func:`non_personal_header` by ``privacy.structured``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from keiri_agent.privacy.kana_names import known_as_name, name_form, names_no_one
from keiri_agent.privacy.kinds import PersonalKind, Span
from keiri_agent.privacy.page_lists import page_lists
from keiri_agent.privacy.patterns import ID_CARD_WORDS, NUMBER_KIND_WORDS
from keiri_agent.privacy.places import is_place, speaks_of_places
from keiri_agent.sudachi import thread_tokenizer

__all__ = [
    "BANK_COMPANY",
    "EMPLOYEE_ID_WORDS",
    "HEADER_WORDS",
    "MAX_LABELLED_CHARS",
    "NAME_PART_HEADERS",
    "ROMAJI_NAME",
    "TextTables",
    "header_kind",
    "holds_no_one",
    "labelled_spans",
    "looks_like_company",
    "names_business_number",
    "non_personal_header",
    "nouns_only",
    "person_in",
    "table_spans",
]

MAX_LABELLED_CHARS = 40  # a labelled value longer than this is prose, not one value
MIN_TABLE_CELLS = 2  # a line cut into fewer cells is not a table row

# Headers of an employee's number; they name a person although コード / id / 番号 alone do not.
EMPLOYEE_ID_WORDS = (
    "社員番号",
    "従業員番号",
    "職員番号",
    "社員no",
    "社員コード",
    "社員id",
    "従業員コード",
    "従業員id",
    "employee_id",
    "employeeid",
    "employee_no",
)
# Header words → kind, most specific first (a header is normalized: NFKC, no spaces, lower).
# English words are kept to those that name a person's data only ("name" and "address" also
# name files, blocks and URLs in the records a plan passes around).
_HEADER_WORDS: tuple[tuple[PersonalKind, tuple[str, ...]], ...] = (
    (PersonalKind.MY_NUMBER, ("マイナンバー", "個人番号", "my_number", "mynumber")),
    (PersonalKind.CARD, ("カード番号", "クレジットカード", "card_number", "cardnumber")),
    (PersonalKind.BIRTH_DATE, ("生年月日", "誕生日", "birth")),
    (PersonalKind.EMAIL, ("メール", "mail", "email", "e-mail")),
    # 連絡先 holds a phone number mostly; whatever it holds (a mail, an address) is personal
    (PersonalKind.PHONE, ("電話", "tel", "携帯", "fax", "phone", "連絡先")),
    # not "account" alone: in accounting it names a ledger account (勘定科目)
    (PersonalKind.ACCOUNT, ("口座番号", "口座no", "口座", "bank_account", "bankaccount")),
    (PersonalKind.ADDRESS, ("住所", "郵便番号", "〒", "postal_code", "zip_code", "zipcode")),
    (PersonalKind.EMPLOYEE_ID, EMPLOYEE_ID_WORDS),
    (PersonalKind.ID_CARD, ID_CARD_WORDS),
    (
        PersonalKind.PERSON,
        (
            "氏名",
            "名前",
            "お名前",
            "フリガナ",
            "ふりがな",
            "担当者",
            "担当",
            "顧客名",
            "社員名",
            "従業員名",
            "申請者",
            "宛名",
            "出席者",
            "参加者",
            "依頼人",
            "受取人",
            "名義",
            "契約者",
            "代表者",
            "承認者",
            "作成者",
            "責任者",
            "氏名カナ",
            "full_name",
            "fullname",
            "customer_name",
        ),
    ),
)
# A title ending a header or label names its holder (営業所長: 佐賀, 支店長: 石川 太郎); not
# inside one (部長承認, 課長印: a mark or a date).
_TITLE_HEADERS = ("部長", "課長", "係長", "所長", "店長", "社長", "室長", "工場長")
# Headers that are a part of a person's name on their own (a name split over 姓 / 名 cells);
# only the whole header counts (名 also ends 件名, 科目名 and ファイル名).
NAME_PART_HEADERS = frozenset(
    {"姓", "名", "セイ", "メイ", "せい", "めい", "姓カナ", "名カナ", "姓(カナ)", "名(カナ)"}
    | {"first_name", "last_name", "firstname", "lastname", "family_name", "given_name"}
)
# Headers that name what is not personal data even though a word above occurs in them.
_NOT_PERSONAL_HEADERS = (
    "会社名",
    "取引先",
    "商品名",
    "品名",
    "支店名",
    "銀行名",
    "部署",
    "件数",
    "有無",
    "人数",
    "数",
    "コード",
    "id",
)
# A header naming an amount, a date or a rate about something personal (電話料金, 口座振替日,
# 住所変更日, telephone_fee) holds amounts and dates, which stay visible: words anywhere, tails.
_MEASURE_WORDS = ("料金", "金額", "代金", "費", "fee", "amount", "cost", "charge", "price", "date")
_MEASURE_TAILS = (
    "額",
    "代",
    "日",
    "日時",
    "日付",
    "年月",
    "月",
    "時刻",
    "時間",
    "期限",
    "率",
    "回数",
)
# An English header word is a word of its own at its start (tel in customer_tel, not in hotel).
_ASCII_WORDS = {
    word: re.compile(rf"(?<![a-z]){re.escape(word)}")
    for _, words in _HEADER_WORDS
    for word in words
    if word.isascii()
}
# Headers whose column never holds an identifier (金額, 日付, order and product numbers).
_NEUTRAL_HEADERS = (
    "金額",
    "単価",
    "数量",
    "合計",
    "税",
    "売上",
    "日付",
    "年月",
    "請求",
    "注文",
    "受注",
    "発注",
    "伝票",
    "品番",
    "型番",
    "商品",
    "製品",
    "法人番号",
    "登録番号",
    "インボイス",
    "管理番号",
    "コード",
)
_COMPANY_WORDS = (
    "株式会社",
    "有限会社",
    "合同会社",
    "合資会社",
    "(株)",
    "(有)",
    # how banks print a company's kind in half-width kana (ｶ)ｱｵﾊﾞｼﾖｳｼﾞ, ﾀﾅｶｺｳｷﾞﾖｳ(ｶ), after NFKC
    "カ)",
    "(カ",
    "ユ)",
    "(ユ",
    "ド)",
    "(ド",
    "㈱",
    "㈲",
    "商事",
    "商店",
    "工業",
    "製作所",
    "銀行",
    "信用金庫",
    "協会",
    "組合",
    "法人",
    "事務所",
    "ホールディングス",
    "グループ",
    "inc",
    "ltd",
    "llc",
    "corp",
)


# A company as banks print it in half-width kana, its kind abbreviated before or after the name:
# ｶ)ｱｵﾊﾞｼﾖｳｼﾞ (株式会社), ﾀﾅｶｺｳｷﾞﾖｳ(ｶ, ﾕ)ﾎｼﾉｼﾖｳｶｲ (有限会社), ｲ)ｻｸﾗｶｲ (医療法人).
_KINDS = "(?:ｶ|ﾕ|ﾒ|ｼ|ﾄﾞ|ｲ|ｻﾞｲ|ｼﾔ|ｶﾞｸ|ﾌｸ|ﾄｸﾋ|ｷﾖｳ|ﾉｳ|ｾｲ)"
BANK_COMPANY = re.compile(rf"(?<![ｦ-ﾟ]){_KINDS}\)[ｦ-ﾟ]+|[ｦ-ﾟ]+\({_KINDS}(?![ｦ-ﾟ])\)?")


def _normal(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text)).lower()


def header_kind(header: str) -> PersonalKind | None:
    """The kind of personal data a column headed ``header`` holds, or None."""
    name = _normal(header)
    if not name or len(name) > MAX_LABELLED_CHARS:
        return None
    if name in NAME_PART_HEADERS or name.endswith(_TITLE_HEADERS):
        return PersonalKind.PERSON
    if any(word in name for word in EMPLOYEE_ID_WORDS) and not _measure(name):
        return PersonalKind.EMPLOYEE_ID
    if any(word in name for word in _NOT_PERSONAL_HEADERS):
        # 担当者id, 顧客コード, 会社名: identifiers of records or companies, not of people.
        return None
    for kind, words in _HEADER_WORDS:
        if any(_ASCII_WORDS[w].search(name) if w in _ASCII_WORDS else w in name for w in words):
            if kind is not PersonalKind.BIRTH_DATE and _measure(name):
                return None
            if kind is PersonalKind.PERSON and speaks_of_places(name):
                return None  # 担当地域, 担当支店: a place, not the person in charge
            return kind
    return None


def _measure(name: str) -> bool:
    return any(w in name for w in _MEASURE_WORDS) or name.endswith(_MEASURE_TAILS)


def non_personal_header(header: str) -> bool:
    """Whether a column headed ``header`` holds amounts, dates or business numbers."""
    name = _normal(header)
    return header_kind(header) is None and (
        any(word in name for word in _NEUTRAL_HEADERS) or names_business_number(header)
    )


# What a label naming a number ends in (受付番号, 会員No., お客様ID, 予約コード, 整理#), normalized.
# 番号 or ID alone names no number in particular (a マイナンバー under "番号" is one).
_NUMBER_TAIL = re.compile(r"(?<=.)(?:番号|ナンバー|no\.?|№|id|コード|#)$")
_NUMBER_WORDS = tuple(_normal(word) for word in NUMBER_KIND_WORDS)


def names_business_number(label: str) -> bool:
    """Whether ``label`` names a number that is no person's identifier: it ends as a number's
    label does (番号, No., ID, コード) and names none of the personal kinds (電話番号, 口座番号,
    社員番号, カード会員番号, 被保険者番号 do): 受付番号, 会員番号, 注文番号, お客様番号, 予約番号."""
    name = _normal(label).rstrip(":：=")
    return (
        _NUMBER_TAIL.search(name) is not None
        and header_kind(name) is None
        and not any(word in name for word in _NUMBER_WORDS)
    )


def looks_like_company(value: str) -> bool:
    name = _normal(value)
    return any(word in name for word in _COMPANY_WORDS)


# Every word that makes a header or a label personal (detect.maybe_personal looks for them).
HEADER_WORDS = tuple(
    sorted({w for _, words in _HEADER_WORDS for w in words} | set(_TITLE_HEADERS), key=len)
)
_LABELS = [w for w in HEADER_WORDS if not w.isascii()]
_LABELLED = re.compile(
    "(?P<label>" + "|".join(map(re.escape, reversed(_LABELS))) + ")"
    r"(?P<rest>[^\s:：=「」\"|,、\n]{0,6})[\"」]?[ 　]*[:：=][ 　]*[\"「]?"
    # a value ends before a bracket opening another label (担当：林 光（承認者：未定）)
    r"(?P<value>(?:(?![（(【][^）)】\n]{1,12}[:：])[^\"」\n,，、。|\t{}\[\]]){1,"
    + str(MAX_LABELLED_CHARS)
    + "})"
)
# A closing bracket that closes nothing in a value ends it (the 未定 of （承認者：未定）).
_CLOSERS = {"）": "（", ")": "(", "】": "【"}
# An account holder after 名義 with a space or a colon and no more (名義 わたなべだいき), as
# bank details are written; 名義変更 (no space) is a word, not a label.
_HOLDER = re.compile(
    r"名義(?:人)?(?:[ 　]*[:：][ 　]*|[ 　]+)"
    r"(?P<value>[^\s,，、。|\t/／]+(?:[ 　][^\s,，、。|\t/／]+)?)"
)
# A name in roman letters: capitalized words, or a word in capitals beside one (INOUE Mayumi).
ROMAJI_NAME = r"(?:[A-Z][a-z]+|[A-Z]{2,})(?: (?:[A-Z][a-z]+|[A-Z]{2,}))+"
# A header cell: a short label with no colon, no sentence mark and at most a few digits.
_HEADER_CELL = re.compile(r"(?=[^0-9]*[0-9]?[^0-9]*$)[^:：=。、\s][^:：=。、]{0,19}")
_HONORIFIC_TAIL = re.compile(r"[ 　]*(?:様|さん|氏|殿|くん|君)?[ 　]*$")
_EMPLOYEE_ID = re.compile(r"[A-Za-z0-9Ａ-Ｚａ-ｚ０-９\-－_]{1,16}")
_ID_CARD = re.compile(r"(?:第[ 　]*)?[A-Za-z0-9Ａ-Ｚａ-ｚ０-９\-－ー‐ 　・･/／]{3,24}(?:[ 　]*号)?")
_JAPANESE = re.compile(r"[ぁ-んァ-ヶ一-龥々ｦ-ﾟ]")


def _value_fits(kind: PersonalKind, value: str) -> bool:
    if kind is PersonalKind.PERSON:
        return (
            bool(_JAPANESE.search(value) or re.fullmatch(ROMAJI_NAME, value))
            and not any(ch.isdigit() for ch in value)
            and not looks_like_company(value)
            and not names_no_one(value)  # 担当者：未定 names no one yet
        )
    digits = sum(ch.isdigit() for ch in value)
    if kind in (PersonalKind.PHONE, PersonalKind.ACCOUNT, PersonalKind.MY_NUMBER):
        return digits >= 6 and all(ch.isdigit() or ch in "-‐－ー ()（）+＋　" for ch in value)
    if kind is PersonalKind.CARD:
        return digits >= 13
    if kind is PersonalKind.EMPLOYEE_ID:
        return digits > 0 and _EMPLOYEE_ID.fullmatch(value) is not None
    if kind is PersonalKind.ID_CARD:
        return digits >= 3 and _ID_CARD.fullmatch(value) is not None
    if kind is PersonalKind.EMAIL:
        return "@" in value or "＠" in value
    return digits > 0 or bool(_JAPANESE.search(value))


def holds_no_one(kind: PersonalKind, value: str) -> bool:
    """Whether a cell under a person's header names no one (未定, 同上, 空欄: ``names_no_one``)
    or a company (a 宛名 column holds both)."""
    return kind is PersonalKind.PERSON and (
        names_no_one(_HONORIFIC_TAIL.sub("", value.strip())) or looks_like_company(value)
    )


# A note in brackets after a person's name (佐藤（経理部）, 林（代理）, 森 空 (不在)): its department,
# role or state, which names no one, stays readable.
_NOTE_AFTER = re.compile(r"[ 　]*[（(]([^（()）]+)[）)]?[ 　]*$")


def person_value(value: str) -> str:
    """The name in ``value``, a cell or labelled value under a person's label: without an
    honorific after it, nor a note in brackets that names no one (経理部 in 佐藤（経理部）)."""
    value = _HONORIFIC_TAIL.sub("", value)
    note = _NOTE_AFTER.search(value)
    if note is not None and note.start() > 0 and names_no_one(note.group(1).strip(" 　")):
        value = _HONORIFIC_TAIL.sub("", value[: note.start()])
    return value


def _closed(value: str) -> str:
    """``value`` up to a closing bracket that closes nothing in it."""
    for at, ch in enumerate(value):
        if ch in _CLOSERS and _CLOSERS[ch] not in value[:at]:
            return value[:at]
    return value


def _fitting(kind: PersonalKind, label: str, value: str) -> tuple[PersonalKind, str] | None:
    """The kind of ``value`` under ``label`` (which names ``kind``) and the part of it that is
    that kind's, or None when it is none. A contact (連絡先) is a phone number mostly, or the
    person to call (連絡先：森 タイガ); a department there (経理部) names no one."""
    kinds = [kind]
    if kind is PersonalKind.PHONE and "連絡先" in label:
        kinds.append(PersonalKind.PERSON)
    for each in kinds:
        part = person_value(value) if each is PersonalKind.PERSON else value
        if part and _value_fits(each, part):
            return each, part
    return None


def labelled_spans(text: str) -> Iterator[Span]:
    """Values written after a personal label (``氏名: 長谷川 美咲``, ``"電話": "03-..."``)."""
    for match in _LABELLED.finditer(text):
        label = match.group("label") + match.group("rest")
        kind = header_kind(label)
        if kind is None:
            continue
        closed = _closed(match.group("value"))
        # ・ parts the people of a list as 、 does (出席者：佐藤・システム・田中)
        value = closed.split("・")[0] if kind is PersonalKind.PERSON else closed
        start = match.start("value")
        fitting = _fitting(kind, label, value.strip())
        if fitting is not None:
            offset = value.find(fitting[1])
            yield Span(start + offset, start + offset + len(fitting[1]), fitting[0])
        # the list goes on after a first item that names no one (出席者：システム・田中)
        if kind is PersonalKind.PERSON and closed == match.group("value"):
            yield from _listed_people(text, start + len(value))
    for match in _HOLDER.finditer(text):
        if looks_like_company(match.group("value")):  # ｶ)ｱｵﾊﾞｼﾖｳｼﾞ, ﾀﾅｶｺｳｷﾞﾖｳ(ｶ
            continue
        value = _HONORIFIC_TAIL.sub("", re.split(r"[(（]", match.group("value"))[0])
        if value and _value_fits(PersonalKind.PERSON, value):
            yield Span(match.start("value"), match.start("value") + len(value), PersonalKind.PERSON)


_PHRASE_POS = frozenset({"名詞", "接尾辞", "接頭辞", "補助記号", "空白"})


def person_in(value: str) -> str | None:
    """The name in ``value`` where a person is named without a label (a chat's speaker, a
    signature's signer), as under a person's label, or None when it names no one."""
    fitting = _fitting(PersonalKind.PERSON, "", value)
    if fitting is None or not (nouns_only(fitting[1]) or name_form(fitting[1])):
        return None  # words alone, or a name's form of a word of grammar too (山本 唯, ただ)
    return fitting[1]


def nouns_only(value: str) -> bool:
    """Whether ``value`` is words alone, as a name is (佐藤, タイガ, 森 空), not a sentence that
    goes on after a list's break (担当：佐藤、経費の件です)."""
    return all(m.part_of_speech()[0] in _PHRASE_POS for m in thread_tokenizer().tokenize(value))


# The items of a list of people after a person's label (出席者：佐藤、タイガ、遥（経理部）).
_LIST_ITEM = re.compile(r"[、，・]([^、，・,。\n\t|]{1," + str(MAX_LABELLED_CHARS) + "})")


def _listed_people(text: str, at: int) -> Iterator[Span]:
    """The people listed after a person's label's first value, which ends at ``at``: each item
    parted by 、 or ・ on the label's line is a value under that label (a department in brackets
    after a name, or an item that names no one, stays)."""
    while (item := _LIST_ITEM.match(text, at)) is not None:
        value = _closed(item.group(1))
        fitting = _fitting(PersonalKind.PERSON, "", value.strip())
        if fitting is not None and nouns_only(fitting[1]):
            offset = item.start(1) + value.find(fitting[1])
            yield Span(offset, offset + len(fitting[1]), PersonalKind.PERSON)
        if value != item.group(1):
            return
        at = item.end()


@dataclass
class TextTables:
    """What the table lines of a text say: personal cells, neutral cells (amounts, order
    numbers...) where no identifier is looked for, and places in a column about places
    (地域, 都道府県, 支店: ``privacy.places``) where no name is."""

    personal: list[Span]
    neutral: list[tuple[int, int]]
    places: list[tuple[int, int]] = field(default_factory=list)


def _cuts(line: str, delimiter: str) -> list[int]:
    """Where ``line`` is cut into cells: at each delimiter outside double quotes for CSV and
    TSV (``"1,234,567"`` is one cell, as exports write amounts), at each ``|`` for Markdown."""
    if delimiter == "|" or '"' not in line:
        return [at for at, ch in enumerate(line) if ch == delimiter]
    cuts: list[int] = []
    quoted = False
    for at, ch in enumerate(line):
        if ch == '"':
            quoted = not quoted  # "" inside a quoted cell turns it off and on again
        elif ch == delimiter and not quoted:
            cuts.append(at)
    return cuts


def _cells(line: str, delimiter: str) -> list[tuple[int, int]]:
    """(start, end) of each cell of ``line``, trimmed of spaces and quotes."""
    spans: list[tuple[int, int]] = []
    start = 0
    for end in (*_cuts(line, delimiter), len(line)):
        left, right = start, end
        while left < right and line[left] in " 　\"'":
            left += 1
        while right > left and line[right - 1] in " 　\"'":
            right -= 1
        spans.append((left, right))
        start = end + 1
    return spans


def _lines(text: str) -> Iterable[tuple[int, str]]:
    offset = 0
    for line in text.split("\n"):
        yield offset, line
        offset += len(line) + 1


def _places_header(label: str) -> bool:
    return speaks_of_places(label) and not is_place(label)  # 支店一覧, not 金沢支店


def _column_label(label: str) -> bool:
    """Whether a line heads a column written down the page: a personal header, one about
    places or one naming a business number (``privacy.page_lists``)."""
    return header_kind(label) is not None or _places_header(label) or names_business_number(label)


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end


def _page_columns(text: str, found: TextTables) -> None:
    """The items of lists down the page under a personal label (担当者一覧, 電話) as that
    kind, under a label naming a business number (受付番号) as neutral, and under a label about
    places (支店一覧, 営業所:) as places, unless one of them is a person's name and no place
    (支店一覧 over 石川 and 佐藤: people listed by branch)."""
    for listed in page_lists(text, _column_label):
        kind = header_kind(listed.label)
        if kind is None and names_business_number(listed.label):
            # the whole line: a number in groups (1234 5678 9018) is one cell, not figures after one
            found.neutral.extend((start, _line_end(text, start)) for start, _ in listed.items)
            continue
        if kind is not None:
            for start, end in listed.items:
                fitting = _fitting(kind, listed.label, text[start:end])
                if fitting is not None:
                    found.personal.append(Span(start, start + len(fitting[1]), fitting[0]))
            continue
        words = [text[start:end] for start, end in listed.items]
        places = [is_place(word) for word in words]
        if any(not place and known_as_name(w) for w, place in zip(words, places, strict=True)):
            continue
        found.places.extend(item for item, place in zip(listed.items, places, strict=True) if place)


# A number right after a label that names it (受付番号：1234-5678-9018, 会員番号 123456789018).
_NAMED_NUMBER = re.compile(
    r"(?P<label>[^\s:：=、。,，|｜\t「」()（）\[\]0-9０-９]{1,12}?"
    r"(?:番号|ナンバー|No\.?|NO\.?|№|ID|ＩＤ|コード|#|＃))"
    r"[ 　]*[:：=]?[ 　]*(?:第[ 　]*)?"
    r"(?P<value>[0-9０-９](?:(?:[-‐－ー]|[ 　]{1,2})?[0-9０-９])*)"
)


def _named_numbers(text: str, found: TextTables) -> None:
    """Numbers right after a label naming a business number, as neutral."""
    for match in _NAMED_NUMBER.finditer(text):
        if names_business_number(match.group("label")):
            found.neutral.append(match.span("value"))


def table_spans(text: str) -> TextTables:
    """Cells of table text under personal, neutral and place headers: delimited lines, and
    columns written down the page (``privacy.page_lists``); and numbers right after a label
    naming a business number."""
    found = TextTables([], [])
    _page_columns(text, found)
    _named_numbers(text, found)
    if "|" not in text and "\t" not in text and "," not in text:
        return found
    columns: dict[int, PersonalKind] | None = None
    neutral: set[int] = set()
    placed: set[int] = set()
    delimiter = ""
    width = 0
    for offset, line in _lines(text):
        cells = _cells(line, delimiter) if columns is not None and delimiter in line else []
        if columns is not None and len(cells) == width:
            for index, (start, end) in enumerate(cells):
                if not any(ch.isalnum() for ch in line[start:end]):
                    continue  # empty, or a Markdown rule (|---|) under the header
                kind = columns.get(index)
                if kind is not None and not holds_no_one(kind, line[start:end]):
                    if kind is PersonalKind.PERSON:
                        end = start + len(person_value(line[start:end]))
                    found.personal.append(Span(offset + start, offset + end, kind))
                elif index in neutral:
                    found.neutral.append((offset + start, offset + end))
                elif index in placed and is_place(line[start:end]):
                    found.places.append((offset + start, offset + end))
            continue
        columns = None
        for candidate in ("|", "\t", ","):
            if candidate not in line:
                continue
            cells = _cells(line, candidate)
            if len(cells) < MIN_TABLE_CELLS:
                continue
            headers = [line[s:e] for s, e in cells]
            if not all(_HEADER_CELL.fullmatch(h) for h in headers if h):
                continue  # prose or a record ("氏名: 長谷川", "C001"), not a header row
            kinds = {i: k for i, h in enumerate(headers) if (k := header_kind(h)) is not None}
            placed = {i for i, h in enumerate(headers) if h and speaks_of_places(h)}
            neutral = {i for i, h in enumerate(headers) if non_personal_header(h)}
            if kinds or placed or neutral:
                columns, delimiter, width = kinds, candidate, len(cells)
                break
    return found
