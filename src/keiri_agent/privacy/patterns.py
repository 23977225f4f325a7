"""Structured personal identifiers found by their form: マイナンバー, card and account numbers,
phone numbers, e-mail addresses, postal codes with addresses, dates of birth; and the numbers
of licences and insurance cards (運転免許証, 被保険者証の記号・番号) after their label.

Each pattern is checked beyond its shape where the identifier allows it: a マイナンバー by its
check digit, a card number by Luhn and its issuer prefix, a phone number by its digit count.
Forms that other numbers share are only taken in context: an account number after 普通 / 当座
/ 口座 (普 / 当 / ﾌﾂｳ as statements print them), a 社員番号 after its label, a date of birth after 生年月日 / 誕生日, a phone number without separators after 電話 /
TEL (mobile numbers excepted). A number right after a label that names something else
(注文番号, 法人番号, 品番, 請求書番号...) is left alone, so order numbers, product codes and
corporate numbers stay visible to the model. Full-width digits and the hyphens people type
(``－``, ``ー``, ``‐``) count as digits and hyphens.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from keiri_agent.privacy.kinds import PersonalKind, Span

__all__ = [
    "AT_IN_HIDING",
    "ID_CARD_WORDS",
    "NON_PERSONAL_LABELS",
    "NUMBER_KIND_WORDS",
    "find_identifiers",
    "trailing_identifier",
]

D = "[0-9０-９]"
HY = "[-‐‑‒–—―−－ー]"
SEP = f"(?:{HY}|[ 　])"
# No digit, ASCII letter or hyphen may touch an identifier (INV-2024-0001, T1234567890123); an
# underscore may, as it parts the words of a file name (連絡先_小林由美_09063170669.pdf).
_BEFORE = r"(?<![0-9０-９A-Za-zＡ-Ｚａ-ｚ\-－.@])"
_AFTER = r"(?![0-9０-９A-Za-zＡ-Ｚａ-ｚ]|[-－]?[0-9０-９])"
LABEL_WINDOW = 16  # characters before a number searched for the label that names it

# Labels that name numbers which are not personal data.
NON_PERSONAL_LABELS = (
    "注文番号",
    "受注番号",
    "発注番号",
    "伝票番号",
    "請求書番号",
    "請求番号",
    "納品書番号",
    "見積番号",
    "管理番号",
    "取引番号",
    "契約番号",
    "案件番号",
    "商品コード",
    "品番",
    "型番",
    "製品番号",
    "製造番号",
    "シリアル",
    "ロット",
    "登録番号",
    "法人番号",
    "事業者番号",
    "インボイス",
    "JAN",
    "SKU",
    "部品",
    "コード",
)
# Words naming the cards whose numbers are 個人識別符号 (``kinds.ID_CARD``), as header or label;
# not 保険者番号 (the insurer's number) nor 免許 alone (a licence to trade).
ID_CARD_WORDS = (
    "免許証",
    "保険証",
    "被保険者証",
    "被保険者",
    "基礎年金番号",
    "年金番号",
    "年金手帳",
    "旅券",
    "パスポート",
    "在留カード",
    "passport",
    "license_number",
    "licence_number",
)
_POSITIVE: dict[PersonalKind, tuple[str, ...]] = {
    PersonalKind.MY_NUMBER: ("マイナンバー", "個人番号"),
    PersonalKind.CARD: ("カード",),
    PersonalKind.PHONE: ("電話", "TEL", "Tel", "tel", "ＴＥＬ", "携帯", "連絡先", "FAX", "Fax"),
    PersonalKind.ACCOUNT: ("口座", "普通", "当座", "貯蓄"),
}
# Every word above: a label holding one names an identifier's number (カード会員番号, 電話番号).
NUMBER_KIND_WORDS = tuple(word for words in _POSITIVE.values() for word in words)

# Between the groups of a card or マイナンバー: one hyphen, or one or two spaces (text taken
# from a PDF often has two); the same between every group.
GROUP_SEP = f"(?:{HY}|[ 　]{{1,2}})"
_MY_NUMBER = re.compile(f"{_BEFORE}{D}{{4}}({GROUP_SEP}?){D}{{4}}\\1{D}{{4}}{_AFTER}")
# A card number in its issuer's groups: 4-4-4-1..4, 4-4-4-4-1..3 (up to 19 digits), 4-6-4/5.
_CARD = re.compile(
    f"{_BEFORE}(?:{D}{{4}}({GROUP_SEP}?){D}{{4}}\\1{D}{{4}}\\1(?:{D}{{4}}\\1{D}{{1,3}}|{D}{{1,4}})"
    f"|{D}{{4}}({GROUP_SEP}?){D}{{6}}\\2{D}{{4,5}}|{D}{{14,19}}){_AFTER}"
)
# A phone number may follow its label with no space (TEL03-..., TEL.03-..., FAX.06-...).
_PHONE_BEFORE = (
    "(?:"
    + "|".join(
        (
            _BEFORE,
            *(f"(?<={re.escape(w)})" for w in ("TEL", "Tel", "tel", "FAX", "Fax", "ＴＥＬ")),
            *(f"(?<={re.escape(w)}.)" for w in ("TEL", "Tel", "tel", "FAX", "Fax")),
        )
    )
    + ")"
)
_PHONE = re.compile(
    "|".join(
        (
            # +81 3-..., +81 (0)90-... (the trunk 0 kept in brackets), in full width too
            f"(?:\\+|＋)[8８][1１]{SEP}?[(（]?[0０]?[)）]?{SEP}?{D}{{1,4}}[)）]?{SEP}?{D}{{1,4}}"
            f"{SEP}?{D}{{3,4}}",
            f"{_PHONE_BEFORE}[0０]{D}{{1,4}}{HY}{D}{{1,4}}{HY}{D}{{3,4}}",
            f"{_PHONE_BEFORE}[(（][0０]{D}{{1,4}}[)）][ 　]?{D}{{1,4}}{HY}{D}{{4}}",
            f"{_PHONE_BEFORE}[0０]{D}{{1,4}}[(（]{D}{{1,4}}[)）]{D}{{4}}",
            f"{_PHONE_BEFORE}[0０]{D}{{9,10}}",
            # spaces or dots between the groups, the same twice (090 1234 5678, 03.1234.5678):
            # taken like a number without separators (a mobile number, 0120 or a label)
            f"{_PHONE_BEFORE}[0０]{D}{{1,4}}(?P<loose>[ 　.．]){D}{{1,4}}(?P=loose){D}{{3,4}}",
        )
    )
    + _AFTER
)
# Half- and full-width alike (ｍｉｓａｋｉ＠ｅｘａｍｐｌｅ．ｃｏ．ｊｐ is typed as often as the ASCII).
_LOCAL = "[A-Za-z0-9._%+\\-Ａ-Ｚａ-ｚ０-９．＿％＋－]"
_LABEL = "[A-Za-z0-9\\-Ａ-Ｚａ-ｚ０-９－]"
# The at sign as web pages and signatures hide it from address harvesters: m.hasegawa(at)…,
# [at], （アット）, or a star the reader is told to replace (★を@に変えてください).
AT_IN_HIDING = "[ 　]?[(\\[（［][ 　]?(?:at|AT|ａｔ|アット)[ 　]?[)\\]）］][ 　]?|[★☆]"
_EMAIL = re.compile(
    f"{_LOCAL}+(?:[@＠]|{AT_IN_HIDING}){_LABEL}+(?:[.．]{_LABEL}+)*[.．][A-Za-zＡ-Ｚａ-ｚ]{{2,}}"
)
_PREFECTURE = "(?:東京都|北海道|(?:京都|大阪)府|[一-龥]{2,3}県)"
# An address's rest after its prefecture or city: the street, then after a space each a
# building and its floor or room (青葉ビル 3階 301号室, グランドメゾン渋谷 1203).
_BUILDING_WORDS = (
    "ビル|マンション|ハイツ|コーポ|荘|号室|レジデンス|タワー|メゾン|ハウス|アパート|パレス"
    "|ヒルズ|コート|テラス|[0-9０-９]+[FＦ階]"
)
_CELL = "[^\\s,，、。|\t\"'<>「」]"
_STREET = (
    f"{_CELL}{{1,40}}"
    f"(?:(?:[ 　](?=[^\\s]*(?:{_BUILDING_WORDS})){_CELL}{{1,20}}){{1,3}}"
    # a room number alone after the building (グランドメゾン渋谷 1203)
    "(?:[ 　](?:[0-9０-９]{1,4}号室?|[0-9０-９]{3,4})(?![0-9０-９]|[,，.．][0-9０-９]|[^\\s,，、。|\t]))?)?"
)
_ADDRESS_BODY = f"{_PREFECTURE}{_STREET}"
# After a postal code an address often starts at the city (大阪市北区..., 港区芝浦...).
_CITY_BODY = f"[一-龥ぁ-んァ-ヶ々ー]{{1,6}}?[市区町村郡]{_STREET}"
_POSTAL = f"{D}{{3}}{HY}{D}{{4}}"
_ADDRESS = re.compile(
    f"〒[ 　]?{D}{{3}}{HY}?{D}{{4}}(?![0-9０-９])(?:[ 　]*(?:{_ADDRESS_BODY}|{_CITY_BODY}))?"
    f"|{_BEFORE}{_POSTAL}[ 　]*{_ADDRESS_BODY}"
    f"|(?<=住所)[ 　]*[:：]?[ 　]*((?:〒?[ 　]?{_POSTAL}[ 　]*)?{_ADDRESS_BODY})"
)
# A date as people write their birthday: 和暦 (昭和60年4月1日, S60.4.1, 平成元年, spaces between
# the parts) or 西暦 (1985年4月1日, 1985/4/1, 1985（昭和60）年4月1日).
_S = "[ 　]?"
_ERA_DATE = (
    f"(?:明治|大正|昭和|平成|令和|[MTSHRＭＴＳＨＲ]){_S}(?:{D}{{1,2}}|元){_S}[年./．]{_S}"
    f"{D}{{1,2}}{_S}[月./．]{_S}{D}{{1,2}}{_S}日?"
)
_WEST_DATE = (
    f"{D}{{4}}{_S}(?:[(（][^)）]{{1,6}}[)）])?{_S}[年/.．\\-－]{_S}{D}{{1,2}}{_S}"
    f"[月/.．\\-－]{_S}{D}{{1,2}}{_S}日?"
)
_DATE = f"(?:{_ERA_DATE}|{_WEST_DATE})"
# After its label a birthday may leave out the era (60.4.1) or the year (4月1日).
_LABELLED_DATE = (
    f"(?:{_DATE}|{D}{{1,2}}[./．]{D}{{1,2}}[./．]{D}{{1,2}}|{D}{{1,2}}{_S}月{_S}{D}{{1,2}}{_S}日)"
)
_BIRTH = re.compile(
    f"(?:生年月日|誕生日)[ 　]*(?:[:：]|は|が)?[ 　]*(?:[(（][^)）]{{0,8}}[)）])?[ 　]*"
    f"({_LABELLED_DATE})(?![0-9０-９])"
    f"|({_DATE})[ 　]*(?:生まれ|生(?![一-龥々]))"  # not 4月1日生産
)
# The kind of deposit as statements and 振込 forms print it: 普通 / 当座 / 貯蓄 (預金, 口座),
# in half-width kana (ﾌﾂｳ, ﾄｳｻﾞ, ﾁﾖﾁｸ, ﾌﾂｳﾖｷﾝ), or cut to one character (普 / 当 / 貯, alone
# or in brackets) where no other kanji touches it (担当 1234567 is no account).
_DEPOSIT_KIND = (
    "(?:(?:普通|当座|貯蓄|総合)(?:預金)?(?:口座)?"
    "|(?:ﾌﾂｳ|ﾄｳｻﾞ|ﾁﾖﾁｸ|フツウ|トウザ|チョチク|チヨチク)(?:[ 　]?(?:ﾖｷﾝ|ヨキン))?"
    "|(?<![一-龥々])[普当貯](?![一-龥々])"
    "|[(（][普当貯][)）])"
)
# An account number: 7 digits (6 to 8 as some banks and exports write them), typed in two
# groups (1234 567, 123-4567), or after its branch's number (店番 123-1234567).
_ACCOUNT_NUMBER = f"{D}{{6,8}}|{D}{{3,4}}(?:{HY}|[ 　]){D}{{3,4}}|{D}{{3}}{HY}{D}{{7}}"
# The kind and the number may stand in cells side by side (普通,1234567 / | 当座 | 1234567 |).
_ACCOUNT = re.compile(
    f"(?:{_DEPOSIT_KIND}[ 　]*[,，\t|]?|口座(?:番号)?)[ 　]*[:：]?[ 　]*"
    f"(?:(?:No|NO|№|番号)\\.?[ 　]*[:：]?[ 　]*)?(?:[(（](?:普通|当座)[)）][ 　]*)?({_ACCOUNT_NUMBER})"
    f"{_AFTER}"
)
# An employee's number after its label, with or without a colon (社員番号 012345, 社員No.A-1024).
_EMPLOYEE = re.compile(
    "(?:社員|従業員|職員)(?:番号|No\\.?|NO\\.?|№|ID|コード)[ 　]*[:：]?[ 　]*"
    f"((?:[A-Za-zＡ-Ｚａ-ｚ]{{1,3}}[-－]?)?{D}{{2,10}}){_AFTER}"
)
# The number of a card that is a 個人識別符号, after the card's word and any of 記号, 番号, 第,
# の, a colon or ・ (運転免許証番号 第123456789012号, 被保険者証の記号・番号：4063・812569,
# 健康保険証 記号 12345 番号 678): each run of digits (in groups, perhaps after a letter or two)
# up to a word that is none of those; not a year, an amount or a count (保険証 2025年, 3枚).
_ID_CARD_LABEL = re.compile("|".join(map(re.escape, sorted(ID_CARD_WORDS, key=len, reverse=True))))
_ID_CARD_GLUE = re.compile(r"(?:[ 　:：・･/／、,]|記号|番号|第|号|No\.?|NO\.?|№|の|\(|\)|（|）)*")
_ID_CARD_VALUE = re.compile(
    f"[A-Za-zＡ-Ｚａ-ｚ]{{0,2}}{D}+(?:(?:{HY}|[ 　]){D}+)*(?![0-9０-９年月日円枚件通部%％.,．，])"
)
_ID_CARD_REACH = 40  # letters after the card's word searched for its numbers
# ゆうちょ銀行's accounts: a 記号 of five digits and a 番号 of up to eight.
_YUCHO = re.compile(
    f"記号(?:番号)?[ 　]*[:：]?[ 　]*({D}{{5}})[ 　]*(?:{HY}|[、,/／])?[ 　]*(?:番号)?[ 　]*[:：]?"
    f"[ 　]*({D}{{6,8}}){_AFTER}"
)
_BRANCH = re.compile(
    "(?:(?<=銀行)|(?<=信用金庫)|(?<=信金)|(?<=信用組合)|(?<=労働金庫))[ 　]*"
    "([一-龥ぁ-んァ-ヶ々ー]{1,10}(?:支店|出張所|営業部)|本店)"
    "|([一-龥ぁ-んァ-ヶ々ー]{1,10}(?:支店|出張所|営業部)|本店"
    # a branch as banks print it in half-width kana, right before the kind (ｼﾌﾞﾔ ﾌﾂｳ)
    "|(?<![ｦ-ﾟ])[ｦ-ﾟ]{2,10}(?=[ 　]+(?:ﾌﾂｳ|ﾄｳｻﾞ|ﾁﾖﾁｸ)))"
    f"(?=[ 　]*[(（]?[ 　]*{_DEPOSIT_KIND}[^\\n0-9０-９]{{0,12}}{D})"
    # 支店名 as a label, on a line that names an account (a sales report's 支店名 is no bank's)
    "|(?<=支店名)[ 　]*[:：]?[ 　]*([一-龥ぁ-んァ-ヶ々ー]{1,10})(?=[^\n]*(?:口座|普通|当座|預金))"
)


# Card numbers are 14 (Diners) to 19 digits; 13-digit Visa numbers are no longer issued, and 13
# digits are a 法人番号 or a JAN code far more often (4901234567894 may pass Luhn by chance),
# unless written in a card's groups (4111 1111 1111 1), which neither is.
CARD_DIGITS = (14, 19)
GROUPED_CARD_DIGITS = 13


def _digits(text: str) -> list[int]:
    return [int(ch) for ch in text if ch.isdigit()]


def my_number_valid(digits: list[int]) -> bool:
    """Whether 12 digits carry a valid マイナンバー check digit (the last one)."""
    if len(digits) != 12:
        return False
    body = digits[:11][::-1]  # P1 is the digit next to the check digit
    total = sum(p * (n + 1 if n <= 6 else n - 5) for n, p in enumerate(body, start=1))
    remainder = total % 11
    return digits[11] == (0 if remainder <= 1 else 11 - remainder)


def luhn_valid(digits: list[int]) -> bool:
    total = 0
    for index, digit in enumerate(reversed(digits)):
        if index % 2:
            digit *= 2
            if digit > 9:
                digit -= 9
        total += digit
    return total % 10 == 0


def _card_issuer(digits: list[int]) -> bool:
    """Visa, Mastercard (51-55, 2221-2720), Amex, JCB, Diners, Discover/UnionPay prefixes."""
    first = digits[0]
    if first in (3, 4, 5, 6):
        return first != 5 or 1 <= digits[1] <= 5
    if first == 2:
        prefix = int("".join(map(str, digits[:4])))
        return 2221 <= prefix <= 2720
    return False


_TRUNK = re.compile("[(（][0０][)）]")  # +81 (0)3-...: the 0 dialled at home only


def _phone_digits_ok(text: str) -> bool:
    digits = _digits(text)
    if text.lstrip().startswith(("+", "＋")):
        return 10 <= len(_digits(_TRUNK.sub("", text))) <= 12
    return len(digits) in (10, 11)


def _label_before(text: str, start: int) -> tuple[str, int] | None:
    """The last label (a word of NON_PERSONAL_LABELS or a positive label) in the window before
    ``start`` on the same line, with the position in ``text`` where it ends."""
    window_start = max(0, start - LABEL_WINDOW)
    line_start = text.rfind("\n", window_start, start) + 1
    window_start = max(window_start, line_start)
    window = text[window_start:start]
    best: tuple[str, int] | None = None
    for label in (*NON_PERSONAL_LABELS, *(w for ws in _POSITIVE.values() for w in ws)):
        at = window.rfind(label)
        if at >= 0 and (best is None or window_start + at + len(label) > best[1]):
            best = (label, window_start + at + len(label))
    return best


def _named_otherwise(text: str, start: int, end: int) -> bool:
    """Whether the nearest label before the number at ``start:end`` names a non-personal
    number: the number right after it, or one of its form listed after it (注文番号：A-1001、
    A-1002); a number of another form written after the label's number is judged on its own
    (管理番号：T823663  0886-8687-2119, 受付番号 6738195988、649031697928)."""
    found = _label_before(text, start)
    if found is None or found[0] not in NON_PERSONAL_LABELS:
        return False
    first = _CODE.search(text, found[1], start)
    if first is None or first.start() >= start:
        return True
    return _form(first.group()) == _form(text[start:end])


# A business number as written after its label: letters and digits, hyphens between.
_CODE = re.compile(
    f"[A-Za-zＡ-Ｚａ-ｚ0-9０-９]*{D}(?:[A-Za-zＡ-Ｚａ-ｚ0-9０-９]|{HY}(?={D}|[A-Za-z]))*"
)
_FORM = str.maketrans("0123456789０１２３４５６７８９", "0" * 20)


def _form(number: str) -> str:
    """A number's form: its letters and separators, each digit as 0 (T823663 → T000000)."""
    return number.translate(_FORM)


def _has_label(text: str, start: int, kind: PersonalKind) -> bool:
    found = _label_before(text, start)
    return found is not None and found[0] in _POSITIVE.get(kind, ())


_DIGIT_CHARS = "0123456789０１２３４５６７８９"
# The group of digits that ends where a match's separator begins, and a letter or a hyphen
# glued before it.
_GROUP_BEFORE = re.compile(f"([A-Za-zＡ-Ｚａ-ｚ]|{HY})?{D}+$")
_GOES_ON = _DIGIT_CHARS + "…"


def _read_on(text: str, start: int, end: int, separator: str) -> bool:
    """Whether the groups of a number matched from ``start`` to ``end`` go on beyond it
    (``4111 1111 1111 1``, ``4111 1111 1111 1111``: a digit, then the same separator, before
    it, or the separator then a digit or a cut's ``…`` after it): the groups are one longer
    number, read whole or not at all. A code before it with letters or another separator
    (申請番号：A1234 1234 5678 9018, R-2025-2816 1234 5678 9018) is another number: a number's
    groups are digits parted by one separator."""
    if not separator:
        return False
    before = start - len(separator)
    if before > 0 and text[before:start] == separator and text[before - 1] in _DIGIT_CHARS:
        group = _GROUP_BEFORE.search(text, max(0, before - LABEL_WINDOW), before)
        return group is None or group.group(1) in (None, separator)
    after = end + len(separator)
    # a group cut short where a preview cut the number (4716-3597-0220-…) goes on too
    return text[end:after] == separator and after < len(text) and text[after] in _GOES_ON


def _numbers(text: str) -> Iterator[Span]:
    for match in _MY_NUMBER.finditer(text):
        if (
            my_number_valid(_digits(match.group()))
            and not _read_on(text, match.start(), match.end(), match.group(1))
            and not _named_otherwise(text, match.start(), match.end())
        ):
            yield Span(match.start(), match.end(), PersonalKind.MY_NUMBER)
    for match in _CARD.finditer(text):
        digits = _digits(match.group())
        separator = match.group(1) or match.group(2) or ""
        shortest = GROUPED_CARD_DIGITS if separator else CARD_DIGITS[0]
        if (
            shortest <= len(digits) <= CARD_DIGITS[1]
            and not _read_on(text, match.start(), match.end(), separator)
            and luhn_valid(digits)
            and _card_issuer(digits)
            and not _named_otherwise(text, match.start(), match.end())
        ):
            yield Span(match.start(), match.end(), PersonalKind.CARD)
    for match in _PHONE.finditer(text):
        value = match.group()
        if not _phone_digits_ok(value) or _named_otherwise(text, match.start(), match.end()):
            continue
        plain = all(ch.isdigit() for ch in value) or match.group("loose") is not None
        number = "".join(map(str, _digits(value)))
        mobile = plain and len(number) == 11 and number[1] in "5789" and number[2] == "0"
        free = plain and number.startswith("0120")
        if plain and not (mobile or free or _has_label(text, match.start(), PersonalKind.PHONE)):
            continue
        yield Span(match.start(), match.end(), PersonalKind.PHONE)


def _in_context(text: str) -> Iterator[Span]:
    for match in _ACCOUNT.finditer(text):
        yield Span(match.start(1), match.end(1), PersonalKind.ACCOUNT)
    for match in _EMPLOYEE.finditer(text):
        yield Span(match.start(1), match.end(1), PersonalKind.EMPLOYEE_ID)
    for match in _YUCHO.finditer(text):
        yield Span(match.start(1), match.end(1), PersonalKind.ACCOUNT)
        yield Span(match.start(2), match.end(2), PersonalKind.ACCOUNT)
    for match in _BRANCH.finditer(text):
        group = next(g for g in (1, 2, 3) if match.group(g))
        yield Span(match.start(group), match.end(group), PersonalKind.BRANCH)
    for match in _BIRTH.finditer(text):
        group = 1 if match.group(1) else 2
        yield Span(match.start(group), match.end(group), PersonalKind.BIRTH_DATE)
    for match in _ADDRESS.finditer(text):
        start, end = (match.start(1), match.end(1)) if match.group(1) else match.span()
        yield Span(start, end, PersonalKind.ADDRESS)
    for match in _EMAIL.finditer(text):
        yield Span(match.start(), match.end(), PersonalKind.EMAIL)


def _id_cards(text: str) -> Iterator[Span]:
    for label in _ID_CARD_LABEL.finditer(text):
        at, stop = label.end(), label.end() + _ID_CARD_REACH
        while at < stop:
            glue = _ID_CARD_GLUE.match(text, at, stop)
            at = glue.end() if glue is not None else at
            value = _ID_CARD_VALUE.match(text, at, stop)
            if value is None or "\n" in text[label.end() : at]:
                break
            yield Span(value.start(), value.end(), PersonalKind.ID_CARD)
            at = value.end()


# More digits than any number a label names is written with (a 会員番号 or 注文番号 of 16 digits
# in four groups is common, and one in 11 has a マイナンバー's check digit in its last 12): a run
# of groups longer than this after a business number's label holds a second number.
LONGEST_NAMED_DIGITS = 16
_GROUP_START = re.compile(f"(?<={D}){SEP}(?={D})")


def trailing_identifier(text: str, start: int, end: int) -> Span | None:
    """The card number or マイナンバー that ends the digit groups of ``text[start:end]``, a number
    after a business number's label with more digits than one such number has
    (受付番号：1234 5678 4111 1111 1111 1111: the card's groups go on from the business number's
    spacing); the longest such tail, from the start of a group, or None."""
    if len(_digits(text[start:end])) <= LONGEST_NAMED_DIGITS:
        return None
    for cut in _GROUP_START.finditer(text, start, end):
        digits = _digits(text[cut.end() : end])
        if len(digits) == 12 and my_number_valid(digits):
            return Span(cut.end(), end, PersonalKind.MY_NUMBER)
        card = CARD_DIGITS[0] <= len(digits) <= CARD_DIGITS[1]
        if card and luhn_valid(digits) and _card_issuer(digits):
            return Span(cut.end(), end, PersonalKind.CARD)
    return None


def find_identifiers(text: str) -> list[Span]:
    """Every structured identifier in ``text`` (spans may overlap; ``detect`` resolves)."""
    if not text:
        return []
    return [*_numbers(text), *_in_context(text), *_id_cards(text)]
