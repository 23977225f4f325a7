"""A second fresh generator of Japanese paperwork for the masking property (issue 37).

``tests/privacy/backoffice.py`` writes mails, letterheads, CSV exports and 摘要 lines. The
shapes here are the ones it leaves out, as bank statements, 振込依頼書, e-mail headers, 履歴書
and 人事 registers write them:

- accounts after the one-character or half-width kind (``普 1234567``, ``当``, ``ﾌﾂｳ``,
  ``ﾄｳｻﾞ``, ``(普)``), ``普通預金 No.``, ``口座番号：`` in full-width digits, a 口座番号 column
  in CSV and in a Markdown table (with its ``|---|`` rule);
- names in roman letters without an honorific (``From: Misaki Hasegawa <...>``, a signature,
  ``担当 HASEGAWA MISAKI``, ``長谷川 Misaki``, ``Dear Mr. Hasegawa``), beside companies in roman
  letters before 様 (``Amazon様``, ``NTT様``), which are no personal data and must stay;
- 社員番号 / 従業員番号 after their label and in their column (the README masks them);
- マイナンバー, card and phone numbers in mixed widths and separators (``03(1234)5678``,
  ``（03）1234-5678``, ``０９０－１２３４－５６７８``), ``＠`` in full width, 〒 in full width;
- birthdays in 和暦 (``昭和60年4月1日生``, ``生年月日 S60.4.1``, ``平成元年``, spaces between the
  parts), beside other dates that must stay (入社日, 支払日);
- statement lines whose payers are people in half-width kana as banks print them (no small
  letters: ``ｻｻｷ ｼﾖｳﾀ``) or companies (``ｶ)``, ``(ｶ``, ``ﾕ)``, ``ｲ)``), with amounts and dates.

Every document also carries what must reach the model unchanged: amounts, dates, 登録番号
(T + 13 digits), 法人番号, order numbers of an account's length, product codes shaped like
phone numbers, company names. Deterministic for a seed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tests.privacy import backoffice
from tests.privacy.backoffice import PEOPLE, Doc, Maker, half_kana
from tests.support.personal import luhn_valid, my_number_valid

__all__ = ["COMPANIES_EN", "COMPANIES_READ_AS_NAMES", "SHAPES", "bank_kana", "make_docs"]

BANKS = ["みずほ銀行", "三菱UFJ銀行", "りそな銀行", "西武信用金庫", "千葉銀行", "○○銀行"]
BRANCHES = ["渋谷", "新宿", "本町", "大手町", "船橋", "柏"]
# Companies in roman letters as mails and invoices name them. The README keeps those whose name
# is no Japanese name in romaji; one that reads as a surname (Toyota: 豊田) or as a word the
# dictionary does not know (Fujitsu, Nintendo) is masked before 様 on purpose, like a person's.
COMPANIES_EN = [
    "Amazon",
    "NTT",
    "Google",
    "Microsoft",
    "Apple",
    "Oracle",
    "Adobe",
    "Salesforce",
    "IBM",
    "KDDI",
    "SoftBank",
    "Uniqlo",
    "Sony",
    "Panasonic",
    "Hitachi",
    "Amazon Web Services",
]
COMPANIES_READ_AS_NAMES = ["Toyota", "Honda", "Fujitsu", "Nintendo", "Yahoo"]
COMPANIES_JA = ["青葉商事株式会社", "株式会社みどり電機", "有限会社星野商会", "ソニー", "日立"]
# Company payers as banks print them (法人略語 before or after the name).
PAYERS = ["ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", "ﾐﾄﾞﾘﾃﾞﾝｷ(ｶ", "ﾕ)ﾎｼﾉｼﾖｳｶｲ", "ｲ)ｻｸﾗｶｲ", "ﾄﾞ)ﾊﾔｼﾃﾞｻﾞｲﾝ"]
_LARGE = str.maketrans("ｬｭｮｯ", "ﾔﾕﾖﾂ")


def bank_kana(text: str) -> str:
    """``text`` in half-width kana as banks print it: no small letters (ｼﾖｳﾀ)."""
    return half_kana(text).translate(_LARGE)


def _amount(m: Maker, doc: Doc) -> None:
    doc.keep(f"{m.r.randint(1, 999)},{m.digits(3)}")


def _lookalikes(m: Maker, doc: Doc) -> None:
    """Numbers that are no personal data, in the forms invoices print them."""
    body = m.digits(12)
    check = 9 - sum(int(d) * (1 + i % 2) for i, d in enumerate(reversed(body))) % 9
    corporate = f"{check}{body}"
    form = m.r.randrange(4)
    if form == 0:
        doc.add("登録番号：").keep(f"T{corporate}")
    elif form == 1:
        doc.add("法人番号 ").keep(corporate)
    elif form == 2:
        doc.add("注文番号 ").keep(m.digits(7))  # an account's length
    else:
        doc.add("品番 ").keep(f"0{m.r.randint(1, 9)}0-{m.digits(4)}-{m.digits(4)}")
    doc.add("、支払日 ").keep(m.r.choice(["令和7年4月30日", "2025/04/30", "R7.4.30"]))
    doc.add("、金額 ¥")
    _amount(m, doc)
    doc.add("\n")


def _account(m: Maker, doc: Doc) -> None:
    number = m.digits(7)
    bank, branch = m.r.choice(BANKS), m.r.choice(BRANCHES) + "支店"
    form = m.r.randrange(9)
    if form == 0:
        doc.add(f"{bank} ").secret(branch).add(" 普 ").secret(number)
    elif form == 1:
        doc.add(f"{bank} ").secret(branch).add(" 当 ").secret(number)
    elif form == 2:
        doc.add("ﾌﾘｺﾐｻｷ ").secret(bank_kana("シブヤ")).add(" ﾌﾂｳ ").secret(number)
    elif form == 3:
        doc.add("ﾄｳｻﾞ ").secret(number)
    elif form == 4:
        doc.add("普通預金 No.").secret(number)
    elif form == 5:
        doc.add("口座番号：").secret(m.wide(number))
    elif form == 6:
        doc.add(f"{bank} ").secret(branch).add(" 普通 ").secret(number)
    elif form == 7:
        doc.add("預金種目 普通 口座番号 ").secret(m.wide(number))
    else:
        doc.add("振込先 ").secret(branch).add(" (普)").secret(number)
    doc.add(" へお振込ください。振込金額 ")
    _amount(m, doc)
    doc.add("円\n")
    _lookalikes(m, doc)


def _account_table(m: Maker, doc: Doc) -> None:
    markdown = m.r.random() < 0.5
    headers = ["支払先", "銀行", "支店", "種別", "口座番号", "金額"]
    if markdown:
        doc.add("| " + " | ".join(headers) + " |\n|" + "---|" * len(headers) + "\n")
    else:
        doc.add(",".join(headers) + "\n")
    for _ in range(3):
        cells: list[tuple[str, str]] = []
        if m.r.random() < 0.5:
            cells.append(("keep", m.r.choice(COMPANIES_JA)))
        else:
            sur, given, *_ = m.r.choice(PEOPLE)
            cells.append(("secret", f"{sur} {given}"))
            doc.secrets += [sur, given]
        cells += [("add", m.r.choice(BANKS)), ("add", m.r.choice(BRANCHES))]
        cells += [("add", m.r.choice(["普通", "当座"])), ("secret", m.digits(7))]
        cells.append(("keep", f"{m.r.randint(1, 999)},{m.digits(3)}"))
        doc.add("| " if markdown else "")
        for index, (how, value) in enumerate(cells):
            if index:
                doc.add(" | " if markdown else ",")
            quote = '"' if "," in value and not markdown else ""  # CSV quotes 1,234
            getattr(doc.add(quote), how)(value).add(quote)
        doc.add(" |\n" if markdown else "\n")


def _romaji(m: Maker, doc: Doc) -> None:
    sur, _, _, _, rsur, rgiven = m.r.choice(PEOPLE)
    mail = f"{rgiven[0].lower()}.{rsur.lower()}@example.co.jp"
    form = m.r.randrange(6)
    if form == 0:
        doc.add("From: ").secret(f"{rgiven} {rsur}", rgiven, rsur).add(" <").secret(mail)
        doc.add(">\nSubject: 請求書の件\n")
    elif form == 1:
        doc.add("よろしくお願いいたします。\n--\n").secret(f"{rgiven} {rsur}", rgiven, rsur)
        doc.add("\n経理部\n")
    elif form == 2:
        doc.add(m.r.choice(["担当 ", "担当者：", "氏名 "]))
        doc.secret(f"{rsur.upper()} {rgiven.upper()}", rsur.upper(), rgiven.upper()).add("\n")
    elif form == 3:
        doc.add("担当：").secret(sur).add(" ").secret(rgiven).add("\n")
    elif form == 4:
        doc.add("Dear Mr. ").secret(rsur).add(",\nThank you for your invoice.\n")
    else:
        doc.secret(f"{rsur} {rgiven}", rsur, rgiven).add(m.r.choice(["様", " 様", "さん"]))
        doc.add("\n")
    doc.keep(m.r.choice(COMPANIES_EN)).add(m.r.choice(["様", " 様", "様より"]))
    doc.add("請求書が届きました。")
    _amount(m, doc)
    doc.add("円\n")


def _employee_id(m: Maker, doc: Doc) -> None:
    code = m.r.choice([m.digits(6), f"E-{m.digits(4)}", f"A{m.digits(5)}", f"0{m.digits(4)}"])
    form = m.r.randrange(4)
    if form == 0:
        doc.add(m.r.choice(["社員番号 ", "社員番号：", "社員No.", "従業員番号 "])).secret(code)
        doc.add(" の立替金 ")
        _amount(m, doc)
        doc.add("円\n")
    elif form == 1:
        doc.add('{"社員番号": "').secret(code).add('", "金額": ')
        doc.keep(str(m.r.randint(1000, 99999))).add("}\n")
    else:
        sep = m.r.choice([",", "\t"])
        doc.add(sep.join(["従業員番号", "部署", "残業時間", "金額"]) + "\n")
        for _ in range(3):
            doc.secret(m.r.choice([m.digits(6), f"E-{m.digits(4)}"])).add(sep + "経理部" + sep)
            doc.keep(str(m.r.randint(1, 60))).add(sep).keep(str(m.r.randint(1000, 99999)))
            doc.add("\n")


def _numbers(m: Maker, doc: Doc) -> None:
    """マイナンバー, cards and phones in mixed widths and separators."""
    my_number = m.with_check(m.digits(11), my_number_valid)
    sep = m.r.choice(["-", " ", "　", "－", ""])
    doc.add(m.r.choice(["個人番号（マイナンバー）：", "マイナンバー "]))
    doc.secret(m.wide(sep.join((my_number[:4], my_number[4:8], my_number[8:])))).add("\n")
    card = m.with_check(m.r.choice(["4", "52", "35"]) + m.digits(13), luhn_valid)
    card_sep = m.r.choice([" ", "-", "－", "　", "  "])
    doc.add("カード番号 ").secret(m.wide(card_sep.join(card[i : i + 4] for i in range(0, 16, 4))))
    doc.add("\n")
    a, b = m.digits(4), m.digits(4)
    phone = m.r.choice(
        [f"03({a}){b}", f"（03）{a}-{b}", f"０９０－{a}－{b}", f"06（{a}）{b}", f"090.{a}.{b}"]
    )
    doc.add(m.r.choice(["TEL：", "電話 ", "携帯 ", "連絡先 "])).secret(m.wide(phone)).add("\n")
    _lookalikes(m, doc)


def _mail_and_post(m: Maker, doc: Doc) -> None:
    _, _, _, _, rsur, rgiven = m.r.choice(PEOPLE)
    doc.add("メール ").secret(f"{rgiven.lower()}.{rsur.lower()}＠example.co.jp").add("\n")
    postal = f"{m.digits(3)}-{m.digits(4)}"
    doc.add("〒").secret(postal.translate(str.maketrans("0123456789-", "０１２３４５６７８９－")))
    doc.add("　東京都").secret(f"渋谷区神南{m.r.randint(1, 3)}丁目{m.r.randint(1, 30)}番地").add(
        "\n"
    )
    doc.add("取引先 ").keep(m.r.choice(COMPANIES_JA)).add("\n")


def _birthday(m: Maker, doc: Doc) -> None:
    year, month, day = m.r.randint(40, 63), m.r.randint(1, 12), m.r.randint(1, 28)
    form = m.r.randrange(6)
    if form == 0:
        doc.secret(f"昭和{year}年{month}月{day}日").add("生\n")
    elif form == 1:
        doc.add("生年月日 ").secret(f"S{year}.{month}.{day}").add("\n")
    elif form == 2:
        doc.secret(f"平成元年{month}月{day}日").add("生まれ\n")
    elif form == 3:
        doc.add("生年月日 ").secret(f"昭和{year}年 {month}月 {day}日").add("\n")
    elif form == 4:
        doc.add("生年月日：").secret(m.wide(f"S{year}.{month}.{day}").replace(".", "．"))
        doc.add("\n")
    else:
        doc.add("生年月日 ").secret(f"H{m.r.randint(1, 12)}/{month}/{day}").add("\n")
    doc.add("入社日 ").keep(f"2010年{month}月1日").add("、支払日 ").keep("令和7年4月30日")
    doc.add("\n")


def _statement(m: Maker, doc: Doc) -> None:
    doc.add("口座番号 ").secret(m.digits(7)).add("\n日付 摘要 お引出し お預入れ 残高\n")
    for day in range(1, 5):
        doc.keep(f"07-04-{day:02d}").add(" ")
        if m.r.random() < 0.5:
            doc.add(m.r.choice(["ﾌﾘｺﾐ ", "振込 "])).keep(m.r.choice(PAYERS))
        else:
            _, _, ksur, kgiven, _, _ = m.r.choice(PEOPLE)
            payer = bank_kana(f"{ksur} {kgiven}")
            doc.add(m.r.choice(["ﾌﾘｺﾐ ", "振込 "])).secret(payer, *payer.split())
        doc.add(" ")
        _amount(m, doc)
        doc.add(f" {m.r.randint(1, 9)},{m.digits(3)},{m.digits(3)}\n")


SHAPES: dict[str, Callable[[Maker, Doc], None]] = {
    "account": _account,
    "account_table": _account_table,
    "romaji": _romaji,
    "employee_id": _employee_id,
    "numbers": _numbers,
    "mail_and_post": _mail_and_post,
    "birthday": _birthday,
    "statement": _statement,
}


def make_docs(seed: int, per_shape: int, shapes: Iterable[str] | None = None) -> list[Doc]:
    """``per_shape`` documents of each of ``shapes`` (all by default), deterministic for ``seed``."""
    return backoffice.make_docs(seed, per_shape, shapes, SHAPES)
