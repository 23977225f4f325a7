"""A fresh generator of Japanese back-office text, for the masking property tests (issue 37).

``benchmarks/pii_corpus.py`` and ``tests/support/personal.py`` write each kind in one or two
tidy forms. Here every kind comes in the shapes people type into mails, letterheads, CSV
exports and bank statements: 0120 / 050 / mobile numbers with and without hyphens, in
full-width digits, with （内線）; 〒 with and without a hyphen before addresses in 丁目・番地・号
and 漢数字; e-mail addresses typed in full width; （普）and 口座番号 before account numbers;
マイナンバー and card numbers with spaces; names in kanji, kana, half-width kana and romaji
with 様 / さん / 殿; names split over 姓 / 名 cells; payers in the 摘要 of bank lines.

Each :class:`Doc` says what must never reach a model (``secrets``) and, by the README's
policy (「マスクしないもの」), what must still reach it (``kept``: 法人番号, company payers
such as ``ｶ)ｱｵﾊﾞｼﾖｳｼﾞ``, amounts); a 社員番号 is a secret (the README masks it).
Deterministic for a seed.
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.support.personal import luhn_valid, my_number_valid

__all__ = ["PEOPLE", "SHAPES", "Doc", "Maker", "half_kana", "leaks", "make_docs"]

# (kanji surname, kanji given name, kana surname, kana given name, romaji surname, romaji given)
PEOPLE = [
    ("長谷川", "美咲", "ハセガワ", "ミサキ", "Hasegawa", "Misaki"),
    ("佐々木", "翔太", "ササキ", "ショウタ", "Sasaki", "Shota"),
    ("高橋", "優子", "タカハシ", "ユウコ", "Takahashi", "Yuko"),
    ("渡辺", "大輝", "ワタナベ", "ダイキ", "Watanabe", "Daiki"),
    ("小林", "由美", "コバヤシ", "ユミ", "Kobayashi", "Yumi"),
    ("中島", "健太", "ナカジマ", "ケンタ", "Nakajima", "Kenta"),
    ("井上", "真由美", "イノウエ", "マユミ", "Inoue", "Mayumi"),
    ("斎藤", "拓也", "サイトウ", "タクヤ", "Saito", "Takuya"),
    ("松本", "恵子", "マツモト", "ケイコ", "Matsumoto", "Keiko"),
    ("石川", "浩二", "イシカワ", "コウジ", "Ishikawa", "Koji"),
]
# Company payers as banks print them in the 摘要 (法人略語 + half-width kana): not personal data.
PAYERS = ["ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", "ｶ)ﾐﾄﾞﾘﾃﾞﾝｷ", "ﾕ)ﾎｼﾉｼﾖｳｶｲ", "ｱｻﾋｺｳｷﾞﾖｳ(ｶ", "ﾄﾞ)ｻｸﾗﾌﾞﾂﾘﾕｳ"]
BANKS = ["みずほ銀行", "三井住友銀行", "りそな銀行", "城南信用金庫", "横浜銀行"]
BRANCHES = ["新宿", "渋谷", "池袋", "横浜駅前", "梅田"]
PLACES = [
    ("東京都", "渋谷区", "神南"),
    ("東京都", "港区", "芝浦"),
    ("大阪府", "大阪市北区", "中之島"),
    ("神奈川県", "横浜市中区", "山下町"),
    ("福岡県", "福岡市中央区", "天神"),
]
KANJI_DIGITS = "〇一二三四五六七八九"
HONORIFICS = ["様", "さん", "殿", " 様", "　様"]
_WIDE = str.maketrans("0123456789-", "０１２３４５６７８９－")


@dataclass
class Doc:
    """One text, what must not reach a model and what must."""

    shape: str
    text: str = ""
    secrets: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)  # a table's, header first, for a workbook

    def add(self, text: str) -> Doc:
        self.text += text
        return self

    def secret(self, value: str, *parts: str) -> Doc:
        """Write ``value``; it and each of ``parts`` (a surname, a street) must not leak."""
        self.text += value
        self.secrets += [value, *parts]
        return self

    def keep(self, value: str) -> Doc:
        self.text += value
        self.kept.append(value)
        return self


def _spellings(value: str) -> set[str]:
    normal = unicodedata.normalize("NFKC", value)
    plain = "".join(ch for ch in normal if ch not in " -　")
    found = {value, normal}
    if sum(ch.isdigit() for ch in plain) >= 6:
        found.add(plain)  # a number leaks whatever its separators
    return found


def _occurs(value: str, sent: str) -> bool:
    if value.isdigit():  # a number leaks as a number of its own, not inside a longer one
        return re.search(rf"(?<![0-9]){value}(?![0-9])", sent) is not None
    return value in sent


def leaks(doc: Doc, sent: str) -> list[str]:
    """The secrets of ``doc`` that occur in ``sent`` in any width or spacing."""
    return [s for s in dict.fromkeys(doc.secrets) if any(_occurs(v, sent) for v in _spellings(s))]


class Maker:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def digits(self, n: int) -> str:
        return "".join(self.r.choice("0123456789") for _ in range(n))

    def wide(self, text: str) -> str:
        """``text`` in full-width digits half of the time."""
        return text.translate(_WIDE) if self.r.random() < 0.5 else text

    def with_check(self, body: str, valid: Callable[[list[int]], bool]) -> str:
        return next(body + d for d in "0123456789" if valid([int(c) for c in body + d]))

    def kanji_number(self, n: int) -> str:
        if n < 10:
            return KANJI_DIGITS[n]
        tens, ones = divmod(n, 10)
        return (
            ("" if tens == 1 else KANJI_DIGITS[tens]) + "十" + (KANJI_DIGITS[ones] if ones else "")
        )

    def person(self) -> tuple[str, list[str]]:
        """A name as written and the parts that must not leak."""
        sur, given, ksur, kgiven, rsur, rgiven = self.r.choice(PEOPLE)
        form = self.r.randrange(7)
        if form == 0:
            return f"{sur}{self.r.choice(['', ' ', '　'])}{given}", [sur + given]
        if form == 1:
            return f"{ksur} {kgiven}", [ksur, kgiven]
        if form == 2:
            hira = "".join(chr(ord(c) - 0x60) if "ァ" <= c <= "ヶ" else c for c in ksur + kgiven)
            return hira, [hira]
        if form == 3:
            half = half_kana(f"{ksur} {kgiven}")
            return half, [half]
        if form == 4:
            return f"{rgiven} {rsur}", [rgiven, rsur]
        if form == 5:
            return f"{rsur.upper()} {rgiven}", [rsur.upper(), rgiven]
        return sur + given, [sur + given]


_HALF = {
    unicodedata.normalize("NFKC", h): h
    for h in "ｱｲｳｴｵｶｷｸｹｺｻｼｽｾｿﾀﾁﾂﾃﾄﾅﾆﾇﾈﾉﾊﾋﾌﾍﾎﾏﾐﾑﾒﾓﾔﾕﾖﾗﾘﾙﾚﾛﾜｦﾝｬｭｮｯｰ"
}


def half_kana(text: str) -> str:
    out: list[str] = []
    for ch in text:
        base = unicodedata.normalize("NFD", ch)
        if base[0] in _HALF:
            out.append(
                _HALF[base[0]] + ("ﾞ" if "\u3099" in base else "ﾟ" if "\u309a" in base else "")
            )
        else:
            out.append(ch)
    return "".join(out)


def _phone_forms(m: Maker) -> list[tuple[str, str]]:
    """(number, label) in every form people write; one is picked."""
    a, b, mobile = m.digits(4), m.digits(4), f"0{m.r.choice('789')}0"
    loose = m.r.choice([" ", "　", "."])
    return [
        (f"0120-{m.digits(3)}-{m.digits(3)}", "フリーダイヤル "),
        (f"0120{m.digits(6)}", "通話料無料 "),
        (f"050-{a}-{b}", "IP電話："),
        (f"{mobile}{a}{b}", m.r.choice(["携帯", "携帯：", "ケータイ "])),
        (f"{mobile}-{a}-{b}", "携帯電話 "),
        (f"03-{a}-{b}", "TEL "),
        (f"(06){a}-{b}", "代表 "),
        (loose.join((mobile, a, b)), m.r.choice(["携帯 ", ""])),
        (f"03 {a} {b}", "TEL "),
        (f"0{m.r.randint(3, 6)}-{a}-{b}", m.r.choice(["TEL.", "TEL", "Fax."])),
    ]


def _phone(m: Maker, doc: Doc) -> None:
    value, label = m.r.choice(_phone_forms(m))
    doc.add(f"お問い合わせは{label}").secret(m.wide(value))
    if m.r.random() < 0.5:
        doc.add(m.r.choice(["（内線", "(内線 ", " 内線"]) + m.digits(3) + "）")
    doc.add(" までお願いします。\n")


def _address(m: Maker, doc: Doc) -> None:
    pref, city, town = m.r.choice(PLACES)
    postal = f"{m.digits(3)}{m.r.choice(['-', ''])}{m.digits(4)}"
    chome, ban, go = m.r.randint(1, 9), m.r.randint(1, 40), m.r.randint(1, 20)
    form = m.r.randrange(4)
    if form == 0:
        block = f"{m.kanji_number(chome)}丁目{ban}番{go}号"
    elif form == 1:
        block = f"{m.kanji_number(chome)}丁目{m.kanji_number(ban)}番地{m.kanji_number(go)}"
    elif form == 2:
        block = f"{chome}丁目{ban}番地の{go}"
    else:
        block = f"{chome}-{ban}-{go}"
    street = f"{town}{m.wide(block) if form == 3 else block}"
    lead = m.r.choice(["送付先：", "ご住所 ", "本社 ", ""])
    doc.add(f"{lead}〒").secret(m.wide(postal)).add(m.r.choice([" ", "　", ""]))
    doc.add(m.r.choice([pref, ""]) + city).secret(street)
    if m.r.random() < 0.4:
        doc.add(f" {m.r.choice(['青葉ビル', 'メゾン桜'])}{m.r.randint(2, 9)}階")
    doc.add("\n")


def _email(m: Maker, doc: Doc) -> None:
    _, _, _, _, rsur, rgiven = m.r.choice(PEOPLE)
    user = m.r.choice([f"{rgiven}.{rsur}", f"{rsur[0]}-{rgiven}", f"{rgiven}{m.r.randint(1, 99)}"])
    value = f"{user.lower()}@{m.r.choice(['example.co.jp', 'mail.example.jp'])}"
    form = m.r.randrange(3)
    if form == 0:
        value = unicodedata.normalize("NFKC", value).translate(
            {c: c + 0xFEE0 for c in range(0x21, 0x7F)}
        )
    elif form == 1:
        value = value.replace("@", "＠")
    doc.add(m.r.choice(["メール：", "E-mail ", "連絡は ", "mail: "])).secret(value).add(" へ。\n")


def _account(m: Maker, doc: Doc) -> None:
    bank, branch = m.r.choice(BANKS), m.r.choice(BRANCHES)
    number = m.digits(7)
    form = m.r.randrange(7)
    if form == 6:
        doc.add("ゆうちょ銀行 記号").secret(m.digits(5)).add(
            m.r.choice(["-", " 番号 ", "、番号："])
        )
        doc.secret(m.digits(8))
    elif form == 0:
        doc.add(f"振込先：{bank} ").secret(f"{branch}支店").add(" （普）").secret(number)
    elif form == 1:
        doc.add(f"{bank} ").secret(f"{branch}支店").add(" 普通預金 ").secret(number)
    elif form == 2:
        doc.add(f"{bank}　").secret(f"{branch}支店").add("　口座番号：").secret(number)
    elif form == 3:
        doc.add(f"お振込は {bank} ").secret(f"{branch}支店").add(" 普通 ").secret(number)
    elif form == 4:
        doc.add(f"銀行名 {bank}／支店名 ").secret(branch).add("／口座番号 ").secret(number)
    else:
        doc.add(f"{bank} ").secret(f"{branch}支店").add(" 当座 No.").secret(number)
    if m.r.random() < 0.3:
        doc.add(" 口座名義 ").keep(m.r.choice(PAYERS)).add("\n")  # a company's account
    else:
        doc.add(" 名義 ").secret(*_named(m)).add("\n")


def _named(m: Maker) -> list[str]:
    name, parts = m.person()
    return [name, *parts]


def _my_number(m: Maker, doc: Doc) -> None:
    value = m.with_check(m.digits(11), my_number_valid)
    sep = m.r.choice(["", " ", "-", "　"])
    text = m.wide(sep.join((value[:4], value[4:8], value[8:])))
    doc.add(m.r.choice(["マイナンバー：", "個人番号 ", "マイナンバー（個人番号）"])).secret(text)
    doc.add(" の提出を確認しました。法人番号 ")
    body = m.digits(12)
    check = 9 - sum(int(d) * (1 + i % 2) for i, d in enumerate(reversed(body))) % 9
    doc.keep(f"{check}{body}")
    doc.add(" の取引先です。\n")


def _card(m: Maker, doc: Doc) -> None:
    prefix = m.r.choice(["4", "53", "35"])
    value = m.with_check(prefix + m.digits(15 - len(prefix)), luhn_valid)
    sep = m.r.choice([" ", "  ", "-", ""])
    text = m.wide(sep.join(value[i : i + 4] for i in range(0, 16, 4)))
    doc.add(m.r.choice(["カード番号 ", "法人カード：", "VISA "])).secret(text).add(" で決済。\n")


def _greeting(m: Maker, doc: Doc) -> None:
    name, parts = m.person()
    doc.add(m.r.choice(["", "いつもお世話になっております。", "経理部の"]))
    doc.secret(name, *parts).add(m.r.choice(HONORIFICS))
    doc.add("、請求書を送付します。社員番号 ").secret(m.digits(6)).add(" で登録済みです。\n")


SPLIT_HEADERS = [
    "社員番号",
    "姓",
    "名",
    "セイ",
    "メイ",
    "電話(市外)",
    "電話(市内)",
    "電話(番号)",
    "金額",
]


def _split_cells(m: Maker, doc: Doc) -> None:
    sep = m.r.choice([",", "\t", " | "])
    doc.add(sep.join(SPLIT_HEADERS) + "\n")
    for _ in range(3):
        sur, given, ksur, kgiven, _, _ = m.r.choice(PEOPLE)
        area, local, line = "03", m.digits(4), m.digits(4)
        doc.secret(m.digits(6)).add(sep).secret(sur).add(sep).secret(given).add(sep)
        doc.secret(ksur).add(sep).secret(kgiven).add(sep).add(area).add(sep)
        doc.secret(local).add(sep).secret(line).add(sep).keep(str(m.r.randint(1000, 99999)))
        doc.add("\n")


def _csv(m: Maker, doc: Doc) -> None:
    doc.add("No,ご担当者,TEL（携帯）,E-mail,〒,ご住所,法人番号,請求金額\n")
    for index in range(3):
        name, parts = m.person()
        pref, city, town = m.r.choice(PLACES)
        mobile = f"090{m.digits(8)}"
        doc.add(f"{index + 1},").secret(name, *parts).add(",").secret(mobile).add(",")
        doc.secret(f"user{m.digits(3)}@example.jp").add(",").secret(f"{m.digits(3)}-{m.digits(4)}")
        doc.add(",").secret(f"{pref}{city}{town}{m.r.randint(1, 9)}-{m.r.randint(1, 30)}").add(",")
        doc.keep(f"{m.r.randint(1, 9)}{m.digits(12)}").add(",").keep(str(m.r.randint(1000, 99999)))
        doc.add("\n")


def _bank_lines(m: Maker, doc: Doc) -> None:
    doc.add("日付,摘要,お支払金額,お預り金額,残高\n")
    for day in range(1, 5):
        if m.r.random() < 0.5:
            payer = m.r.choice(PAYERS)
            doc.add(f"2025/04/{day:02d},振込 ").keep(payer)
        else:
            _, _, ksur, kgiven, _, _ = m.r.choice(PEOPLE)
            payer = half_kana(f"{ksur} {kgiven}")
            doc.add(f"2025/04/{day:02d},{m.r.choice(['振込 ', 'ﾌﾘｺﾐ ', ''])}").secret(payer)
        doc.add(f",,{m.r.randint(1000, 500000)},{m.r.randint(100000, 9000000)}\n")


SHAPES: dict[str, Callable[[Maker, Doc], None]] = {
    "phone": _phone,
    "address": _address,
    "email": _email,
    "account": _account,
    "my_number": _my_number,
    "card": _card,
    "name": _greeting,
    "split_cells": _split_cells,
    "csv": _csv,
    "bank_lines": _bank_lines,
}


def make_docs(
    seed: int,
    per_shape: int,
    shapes: Iterable[str] | None = None,
    table: Mapping[str, Callable[[Any, Doc], None]] = SHAPES,
    writer: Callable[[int], Maker] = Maker,
    kind: Callable[[str], Doc] = Doc,
) -> list[Doc]:
    """``per_shape`` documents of each of ``shapes`` (all of ``table`` by default), written by
    ``table``'s functions with ``writer``'s values into a ``kind`` each; deterministic for
    ``seed``."""
    maker = writer(seed)
    docs: list[Doc] = []
    for name in table if shapes is None else shapes:
        for _ in range(per_shape):
            doc = kind(name)
            table[name](maker, doc)
            docs.append(doc)
    return docs


# An Excel register as offices keep them: a title row above the header, a header cut by a line
# break (電話\n番号), 姓 and 名 in their own columns, 〒 alone, 法人番号 and amounts beside them.
SHEET_HEADERS = ["社員番号", "姓", "名", "フリガナ", "電話\n番号", "メール", "〒", "ご住所", "法人番号", "立替金額"]  # fmt: skip


def make_sheet(seed: int, rows: int) -> tuple[list[list[str]], Doc]:
    """The rows of a register (title row and header first) and what must (not) leak."""
    m = Maker(seed)
    doc = Doc("sheet")
    table: list[list[str]] = [["社員名簿（2025年4月1日現在）"], SHEET_HEADERS]
    for _ in range(rows):
        sur, given, ksur, kgiven, rsur, _ = m.r.choice(PEOPLE)
        pref, city, town = m.r.choice(PLACES)
        values = [
            m.digits(6),
            sur,
            given,
            f"{ksur} {kgiven}",
            m.r.choice([f"090-{m.digits(4)}-{m.digits(4)}", f"080{m.digits(8)}"]),
            f"{rsur.lower()}{m.digits(2)}@example.co.jp",
            f"{m.digits(3)}-{m.digits(4)}",
            f"{pref}{city}{town}{m.kanji_number(m.r.randint(1, 9))}丁目{m.r.randint(1, 30)}番",
            f"{m.r.randint(1, 9)}{m.digits(12)}",
            str(m.r.randint(1000, 99999)),
        ]
        doc.kept += [values[8], values[9]]
        doc.secrets += [*values[:8], ksur, kgiven]
        table.append(values)
    return table, doc
