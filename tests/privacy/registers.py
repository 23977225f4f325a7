"""A fifth generator: identifiers as back-office registers and mails hold them (session 15).

The other generators write each identifier in the shapes a mail or a statement line gives it.
Here every kind comes in the forms a security review lists, inside the containers a feature
sends (a CSV row, an Excel sheet, a Markdown table, a mail): a マイナンバー with and without
spaces or hyphens, in full width, in a column of its own; phone numbers as ``03-1234-5678``,
``0312345678``, ``(03)1234-5678``, ``+81-3-1234-5678``, ``+81 (0)90 1234 5678``, ``090 1234 5678``
in full width, under headers ``電話`` / ``TEL`` / ``携帯`` / ``連絡先`` / ``緊急連絡先``; mail
addresses with a Japanese display name (``山田 太郎 <yamada@example.co.jp>``); accounts after
``普通``, ``口座番号：`` and as ``店番-口座`` (``123-1234567``); card numbers; birthdays in 和暦; 〒
addresses; 健康保険証 の記号・番号, 被保険者番号; 運転免許証の番号; names in half-width kana under
``ﾌﾘｶﾞﾅ``.

Beside them, the numbers a model needs (by the README's 「マスクしないもの」): invoice numbers,
法人番号 and T-numbers of companies, amounts, dates (令和7年4月1日 is no birthday), product codes,
and tables with no personal column (法人番号, JAN codes that pass Luhn by chance, phone-shaped 品番,
12-digit 伝票番号 with a マイナンバー's check digit).
Each is a :class:`~tests.privacy.backoffice.Doc` (``secrets``, ``kept``, and for the tabular
shapes its ``rows``, a header then the cells, for a workbook). Deterministic for a seed.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.privacy.backoffice import PEOPLE, Doc, Maker, half_kana, make_docs
from tests.support.personal import luhn_valid, my_number_valid

__all__ = ["SHAPES", "Writer", "make_registers"]

COMPANIES = ["青葉商事株式会社", "株式会社みどり電機", "星野商会", "アサヒ工業株式会社"]
PREFECTURES = [
    ("東京都", "千代田区丸の内"),
    ("大阪府", "大阪市北区梅田"),
    ("神奈川県", "横浜市西区みなとみらい"),
    ("愛知県", "名古屋市中村区名駅"),
    ("福岡県", "福岡市博多区博多駅前"),
]
ERAS = [("昭和", "S", 64), ("平成", "H", 31)]
WIDE = str.maketrans("0123456789-()+", "０１２３４５６７８９－（）＋")


class Writer(Maker):
    """The values of the registers, from :class:`~tests.privacy.backoffice.Maker`'s digits."""

    def wide(self, text: str) -> str:
        """``text`` in full width a third of the time (with ー for a hyphen now and then)."""
        if self.r.random() < 2 / 3:
            return text
        return text.translate(WIDE).replace("－", self.r.choice(["－", "ー"]))

    def person(self) -> tuple[str, str, str]:
        """(kanji full name, surname, half-width kana full name)."""
        sur, given, ksur, kgiven, _, _ = self.r.choice(PEOPLE)
        spaced = f"{sur}{self.r.choice(['', ' ', '　'])}{given}"
        return spaced, sur, half_kana(f"{ksur} {kgiven}")

    def romaji(self) -> tuple[str, str]:
        _, _, _, _, rsur, rgiven = self.r.choice(PEOPLE)
        return rsur.lower(), rgiven.lower()

    # --- identifiers ------------------------------------------------------------------------

    def my_number(self) -> str:
        value = self.with_check(self.digits(11), my_number_valid)
        sep = self.r.choice(["", " ", "-", "  "])
        return self.wide(sep.join((value[:4], value[4:8], value[8:])))

    def phone(self) -> str:
        a, b = self.digits(4), self.digits(4)
        mobile = f"0{self.r.choice('789')}0"
        return self.wide(
            self.r.choice(
                [
                    f"03-{a}-{b}",
                    f"03{a}{b}",
                    f"(03){a}-{b}",
                    f"(06) {a}-{b}",
                    f"+81-3-{a}-{b}",
                    f"+81 3 {a} {b}",
                    f"+81-{mobile[1:]}-{a}-{b}",
                    f"+81(0){mobile[1:]}-{a}-{b}",
                    f"{mobile} {a} {b}",
                    f"{mobile}-{a}-{b}",
                    f"{mobile}{a}{b}",
                    f"045-{a[:3]}-{b}",
                    f"0120-{a[:3]}-{b[:3]}",
                ]
            )
        )

    def email(self) -> str:
        sur, given = self.romaji()
        user = self.r.choice(
            [f"{given}.{sur}", f"{sur}", f"{given[0]}-{sur}", f"{sur}{self.digits(2)}"]
        )
        return f"{user}@{self.r.choice(['example.co.jp', 'mail.example.ne.jp', 'example.com'])}"

    def account(self) -> str:
        return self.wide(self.digits(7))

    def card(self) -> str:
        prefix = self.r.choice(["4", "53", "35", "37"])
        length = 15 if prefix == "37" else 16
        value = self.with_check(prefix + self.digits(length - 1 - len(prefix)), luhn_valid)
        sep = self.r.choice([" ", "-", ""])
        groups = (
            [value[:4], value[4:10], value[10:]]
            if length == 15
            else [value[i : i + 4] for i in range(0, 16, 4)]
        )
        return self.wide(sep.join(groups))

    def birth(self) -> str:
        era, short, last = self.r.choice(ERAS)
        year, month, day = self.r.randint(2, last - 1), self.r.randint(1, 12), self.r.randint(1, 28)
        return self.r.choice(
            [
                f"{era}{year}年{month}月{day}日",
                f"{short}{year}.{month}.{day}",
                f"{short}{year:02d}.{month:02d}.{day:02d}",
                f"{era} {year}年 {month}月 {day}日",
                f"{1925 + year + (0 if era == '昭和' else 63)}年{month}月{day}日",
            ]
        )

    def address(self) -> str:
        pref, city = self.r.choice(PREFECTURES)
        block = f"{self.r.randint(1, 9)}-{self.r.randint(1, 30)}-{self.r.randint(1, 20)}"
        postal = f"〒{self.digits(3)}-{self.digits(4)} "
        building = self.r.choice(
            ["", f" 青葉ビル{self.r.randint(2, 9)}F", f" メゾン桜{self.r.randint(101, 909)}"]
        )
        return f"{self.r.choice([postal, ''])}{pref}{city}{self.wide(block)}{building}"

    def insurance(self) -> tuple[str, str]:
        """(記号, 番号) of a 健康保険証."""
        return self.wide(self.digits(self.r.choice([4, 5, 8]))), self.wide(
            self.digits(self.r.randint(3, 6))
        )

    def licence(self) -> str:
        value = self.digits(12)
        return self.wide(
            self.r.choice(
                [
                    value,
                    f"{value[:4]} {value[4:8]} {value[8:]}",
                    f"{value[:2]}-{value[2:4]}-{value[4:10]}-{value[10:]}",
                ]
            )
        )

    # --- what must stay ---------------------------------------------------------------------

    def corporate(self) -> str:
        body = self.digits(12)
        check = 9 - sum(int(d) * (1 + i % 2) for i, d in enumerate(reversed(body))) % 9
        return f"{check}{body}"

    def invoice(self) -> str:
        return self.r.choice(
            [
                f"INV-2025-{self.digits(4)}",
                f"2025{self.digits(4)}-{self.digits(3)}",
                f"No.{self.digits(6)}",
            ]
        )

    def amount(self) -> str:
        value = self.r.randint(1_000, 9_999_999)
        return self.r.choice([f"{value:,}円", f"¥{value:,}", f"{value:,}"])

    def date(self) -> str:
        month, day = self.r.randint(1, 12), self.r.randint(1, 28)
        return self.r.choice(
            [
                f"2025/{month:02d}/{day:02d}",
                f"令和7年{month}月{day}日",
                f"R7.{month}.{day}",
                f"2025-{month:02d}-{day:02d}",
            ]
        )

    def product(self) -> str:
        return self.r.choice(
            [f"ABC-{self.digits(4)}-{self.digits(4)}", f"P{self.digits(8)}", f"KS-{self.digits(3)}"]
        )


def _keeps(w: Writer, doc: Doc) -> None:
    """A closing line of what a model must still see."""
    doc.add("\n請求書番号 ").keep(w.invoice()).add("、登録番号 ").keep("T" + w.corporate())
    doc.add("（法人番号 ").keep(w.corporate()).add("）、請求額 ").keep(w.amount())
    doc.add("、支払期日 ").keep(w.date()).add("、品番 ").keep(w.product()).add("\n")


def _my_number_mail(w: Writer, doc: Doc) -> None:
    name, sur, _ = w.person()
    doc.add(f"{COMPANIES[0]} 総務部です。").secret(name, sur).add("さんの")
    doc.add(
        w.r.choice(["個人番号：", "マイナンバー ", "扶養親族の個人番号 ", "マイナンバー（12桁）"])
    )
    doc.secret(w.my_number()).add(" を受け取りました。")
    if w.r.random() < 0.5:
        doc.add("配偶者の番号は ").secret(w.my_number()).add(" です。")
    _keeps(w, doc)


def _phones(w: Writer, doc: Doc) -> None:
    name, sur, _ = w.person()
    doc.add(w.r.choice(["担当：", "差出人: ", ""])).secret(name, sur).add(w.r.choice(["", " 様"]))
    for label in w.r.sample(
        ["TEL ", "TEL：", "Tel.", "電話 ", "携帯：", "連絡先 ", "FAX ", "直通 TEL "], 3
    ):
        doc.add(f"\n{label}").secret(w.phone())
    _keeps(w, doc)


def _mail_header(w: Writer, doc: Doc) -> None:
    for label in ("From: ", "To: ", "Cc: "):
        name, sur, kana = w.person()
        shown = w.r.choice([name, sur, f'"{sur} {COMPANIES[1]}"', kana])
        doc.add(label).secret(shown, *([sur] if shown != kana else [])).add(" <")
        doc.secret(w.email()).add(">\n")
    doc.add("件名: Re: 請求書の件\n")
    _keeps(w, doc)


def _bank(w: Writer, doc: Doc) -> None:
    name, sur, kana = w.person()
    form = w.r.randrange(5)
    doc.add("振込先：みずほ銀行 ")
    if form == 0:
        doc.add("普通 ").secret(w.account())
    elif form == 1:
        doc.add("口座番号：").secret(w.account())
    elif form == 2:
        doc.add("店番-口座 ").add(w.digits(3)).add("-").secret(w.account())
    elif form == 3:
        doc.add("店番 ").add(w.digits(3)).add(" 口座番号 ").secret(w.account())
    else:
        doc.add("（普）").secret(w.account())
    doc.add(" 名義 ").secret(kana).add("\n立替者 ").secret(name, sur)
    _keeps(w, doc)


def _card(w: Writer, doc: Doc) -> None:
    doc.add(w.r.choice(["法人カード ", "カード番号：", "決済カード "])).secret(w.card())
    doc.add(w.r.choice([" で決済", "（有効期限 12/27）", ""]))
    _keeps(w, doc)


def _hr_form(w: Writer, doc: Doc) -> None:
    """A 人事 form written label by label: birthday, address, 保険証, 免許証."""
    name, sur, kana = w.person()
    symbol, number = w.insurance()
    doc.add("氏名：").secret(name, sur).add("\nフリガナ：").secret(kana)
    doc.add("\n生年月日：").secret(w.birth()).add("\n現住所：").secret(w.address())
    form = w.r.randrange(3)
    if form == 0:
        doc.add("\n健康保険証 記号 ").secret(symbol).add(" 番号 ").secret(number)
    elif form == 1:
        doc.add("\n被保険者証の記号・番号：").secret(symbol).add("・").secret(number)
    else:
        doc.add("\n被保険者番号 ").secret(symbol + number)
    doc.add("\n運転免許証番号：").secret(w.licence())
    doc.add("\n入社日：").keep(w.date())
    _keeps(w, doc)


TABLE_HEADERS = {
    "氏名": lambda w: w.person()[0],
    "ﾌﾘｶﾞﾅ": lambda w: w.person()[2],
    "電話": Writer.phone,
    "TEL": Writer.phone,
    "携帯": Writer.phone,
    "連絡先": lambda w: w.r.choice([w.phone(), w.email()]),
    "緊急連絡先": Writer.phone,
    "メールアドレス": Writer.email,
    "住所": Writer.address,
    "生年月日": Writer.birth,
    "個人番号": Writer.my_number,
    "口座番号": Writer.account,
    "保険証番号": lambda w: "".join(w.insurance()),
    "免許証番号": Writer.licence,
}
KEPT_HEADERS = {
    "請求書番号": Writer.invoice,
    "法人番号": Writer.corporate,
    "登録番号": lambda w: "T" + w.corporate(),
    "金額": lambda w: str(w.r.randint(1000, 9_999_999)),
    "日付": Writer.date,
    "品番": Writer.product,
}


def _rows(w: Writer, doc: Doc) -> None:
    personal = w.r.sample(list(TABLE_HEADERS), 4)
    kept = w.r.sample(list(KEPT_HEADERS), 2)
    headers = ["No", *personal, *kept]
    doc.rows.append(headers)
    for index in range(3):
        row = [str(index + 1)]
        for header in personal:
            value = TABLE_HEADERS[header](w)
            row.append(value)
            doc.secrets.append(value)
        for header in kept:
            value = KEPT_HEADERS[header](w)
            row.append(value)
            doc.kept.append(value)
        doc.rows.append(row)
    sep = w.r.choice([",", "\t", " | "])
    lines = [sep.join(row) for row in doc.rows]
    if sep == " | ":
        lines = [f"| {line} |" for line in lines]
        lines.insert(1, "|" + "---|" * len(headers))
    doc.add("\n".join(lines) + "\n")


def _jan(w: Writer) -> str:
    body = w.r.choice(["45", "49"]) + w.digits(10)
    total = sum(int(d) * (3 if i % 2 else 1) for i, d in enumerate(body))
    return body + str(-total % 10)


BUSINESS_HEADERS = {
    "取引先": lambda w: w.r.choice(COMPANIES),
    "法人番号": Writer.corporate,
    "JANコード": _jan,
    "品番": lambda w: w.r.choice(
        [f"0120-{w.digits(3)}-{w.digits(3)}", f"03-{w.digits(4)}-{w.digits(4)}", w.product()]
    ),
    "伝票番号": lambda w: w.with_check(w.digits(11), my_number_valid),
    "請求金額": lambda w: str(w.r.randint(1000, 9_999_999)),
    "請求日": Writer.date,
}


def _business(w: Writer, doc: Doc) -> None:
    """A table with no personal column (a supplier list, an item master) and a line naming a
    company by its 法人番号 alone: nothing in it is personal."""
    headers = w.r.sample(list(BUSINESS_HEADERS), 4)
    doc.rows.append(headers)
    for _ in range(3):
        row = [BUSINESS_HEADERS[h](w) for h in headers]
        doc.kept += [v for v in row if v not in COMPANIES]
        doc.rows.append(row)
    doc.add("\n".join(",".join(row) for row in doc.rows) + "\n")
    doc.add(f"{w.r.choice(COMPANIES)}（").keep(w.corporate()).add("）の品番 ").keep(_jan(w))
    doc.add(" を発注しました。\n")


SHAPES: dict[str, Callable[[Writer, Doc], None]] = {
    "my_number": _my_number_mail,
    "phones": _phones,
    "mail_header": _mail_header,
    "bank": _bank,
    "card": _card,
    "hr_form": _hr_form,
    "table": _rows,
    "business": _business,
}


def make_registers(seed: int, per_shape: int, shapes: list[str] | None = None) -> list[Doc]:
    """``per_shape`` documents of each shape, deterministic for ``seed``."""
    return make_docs(seed, per_shape, shapes, SHAPES, Writer)
