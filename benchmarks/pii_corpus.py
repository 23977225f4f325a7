"""A synthetic corpus of Japanese business text and tables with its personal data marked.

Every document is built from pieces whose kind is known, so the gold spans are exact:
personal data of every kind ``keiri_agent.privacy`` covers (マイナンバー with valid check
digits, Luhn-valid card numbers, account numbers after 普通/当座 and their branches, fixed,
mobile, 0120 and +81 phone numbers, e-mail addresses, postal codes with addresses, dates of
birth, names with and without 様/さん, names in 氏名/担当者 columns) and look-alikes that are
not personal data (amounts, dates, invoice and order numbers, 法人番号 with valid check digits,
registration numbers T+13 digits, phone-shaped product codes, company names that hold a
surname, place names). :func:`make_place_docs` adds documents about places whose names are
surnames too (石川, 長野, 福井): in a list, a column or down the page about places they are
look-alikes (``place``) that must stay, beside a word about people they are people.
:func:`make_card_docs` adds forms with the numbers of 運転免許証 and 健康保険証 (``id_card``), and
beside them a 受付番号 or 会員番号 with a マイナンバー's check digit, the insurer's 保険者番号 and a
未定 under a person's label, which must stay.
Deterministic for a seed; nothing is read from outside.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Doc", "make_card_docs", "make_corpus", "make_place_docs"]

SURNAMES = [
    "佐藤", "鈴木", "高橋", "田中", "伊藤", "渡辺", "山本", "中村", "小林", "加藤",
    "吉田", "山田", "佐々木", "山口", "松本", "井上", "木村", "林", "清水", "山崎",
    "森", "池田", "橋本", "阿部", "石川", "山下", "中島", "石井", "小川", "前田",
    "岡田", "長谷川", "藤田", "後藤", "近藤", "村上", "遠藤", "青木", "坂本", "斎藤",
]  # fmt: skip
GIVEN = [
    "美咲", "翔太", "陽菜", "大輝", "優子", "一郎", "花子", "健太", "由美", "直樹",
    "彩", "拓也", "真由美", "浩二", "恵子", "誠", "愛", "大介", "明美", "裕子",
    "太郎", "結衣", "蓮", "さくら", "和也", "智子", "悠斗", "美穂", "隆", "千尋",
]  # fmt: skip
KANA_NAMES = ["ヤマダ タロウ", "サトウ ハナコ", "スズキ イチロウ", "タナカ ミサキ"]
COMPANIES = [
    "田中工業株式会社", "鈴木商事株式会社", "株式会社山本製作所", "佐藤建設", "前田建設工業",
    "伊藤忠商事", "三井物産", "株式会社ABCテクノロジー", "東京電力", "ヤマト運輸",
]  # fmt: skip
BANKS = ["みずほ銀行", "三菱UFJ銀行", "三井住友銀行", "りそな銀行", "城南信用金庫"]
BRANCHES = ["渋谷支店", "新宿支店", "本店営業部", "池袋支店", "横浜駅前支店", "梅田支店"]
PLACES = [
    ("東京都", "渋谷区渋谷", "150-0002"), ("東京都", "千代田区丸の内", "100-0005"),
    ("大阪府", "大阪市北区梅田", "530-0001"), ("神奈川県", "横浜市西区みなとみらい", "220-0012"),
    ("愛知県", "名古屋市中村区名駅", "450-0002"), ("福岡県", "福岡市博多区博多駅前", "812-0011"),
]  # fmt: skip
REGIONS = ["関東", "関西", "中部", "九州", "東北"]
PRODUCTS = ["コピー用紙A4", "トナーカートリッジ", "ノートPC", "会議室利用料", "保守サービス"]


@dataclass
class Doc:
    """One document: its text, the gold personal spans (start, end, kind) and the spans of
    look-alikes that must stay (start, end, what)."""

    name: str
    text: str = ""
    personal: list[tuple[int, int, str]] = field(default_factory=list)
    lookalikes: list[tuple[int, int, str]] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.text += text

    def pii(self, value: str, kind: str) -> str:
        start = len(self.text)
        self.text += value
        self.personal.append((start, start + len(value), kind))
        return value

    def keep(self, value: str, what: str) -> str:
        start = len(self.text)
        self.text += value
        self.lookalikes.append((start, start + len(value), what))
        return value


class Maker:
    """Random values of every kind (and look-alike) for one seed."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def digits(self, n: int) -> str:
        return "".join(self.r.choice("0123456789") for _ in range(n))

    def name(self) -> str:
        return f"{self.r.choice(SURNAMES)}{self.r.choice(['', ' ', '　'])}{self.r.choice(GIVEN)}"

    def my_number(self) -> str:
        body = [int(d) for d in self.digits(11)]
        reverse = body[::-1]
        total = sum(p * (n + 1 if n <= 6 else n - 5) for n, p in enumerate(reverse, start=1))
        rest = total % 11
        check = 0 if rest <= 1 else 11 - rest
        text = "".join(map(str, body)) + str(check)
        sep = self.r.choice(["", " ", "-"])
        return sep.join((text[:4], text[4:8], text[8:]))

    def card(self) -> str:
        prefix = self.r.choice(["4", "53", "35", "37"])
        length = 15 if prefix == "37" else 16
        body = prefix + self.digits(length - len(prefix) - 1)
        total = 0
        for index, ch in enumerate(reversed(body)):
            digit = int(ch)
            if index % 2 == 0:
                digit *= 2
                digit -= 9 if digit > 9 else 0
            total += digit
        full = body + str((10 - total % 10) % 10)
        sep = self.r.choice(["", " ", "-"])
        if length == 15:
            return sep.join((full[:4], full[4:10], full[10:]))
        return sep.join(full[i : i + 4] for i in range(0, 16, 4))

    def corporate_number(self) -> str:
        """A 法人番号: 12 digits and a leading check digit."""
        body = self.digits(12)
        total = sum(
            int(d) * (1 if i % 2 == 0 else 2) for i, d in enumerate(reversed(body), start=0)
        )
        return str(9 - total % 9) + body

    def phone(self) -> str:
        form = self.r.randrange(6)
        if form == 0:
            return f"090-{self.digits(4)}-{self.digits(4)}"
        if form == 1:
            return f"03-{self.digits(4)}-{self.digits(4)}"
        if form == 2:
            return f"0120-{self.digits(3)}-{self.digits(3)}"
        if form == 3:
            return f"+81-80-{self.digits(4)}-{self.digits(4)}"
        if form == 4:
            return f"080{self.digits(8)}"
        return f"06({self.digits(4)}){self.digits(4)}"

    def email(self, name_hint: str = "user") -> str:
        user = self.r.choice(["misaki", "taro.yamada", "k-sato", "info", "h.tanaka", "y_suzuki"])
        domain = self.r.choice(["example.co.jp", "example.jp", "mail.example.com"])
        return f"{user}{self.r.randrange(100)}@{domain}"

    def address(self) -> str:
        pref, city, postal = self.r.choice(PLACES)
        block = f"{self.r.randint(1, 9)}-{self.r.randint(1, 30)}-{self.r.randint(1, 20)}"
        return f"〒{postal} {pref}{city}{block}"

    def birth(self) -> str:
        if self.r.random() < 0.5:
            return (
                f"{self.r.randint(1950, 2004)}年{self.r.randint(1, 12)}月{self.r.randint(1, 28)}日"
            )
        era = self.r.choice(["昭和", "平成"])
        return f"{era}{self.r.randint(1, 60)}年{self.r.randint(1, 12)}月{self.r.randint(1, 28)}日"

    def amount(self) -> str:
        return f"{self.r.randint(1000, 9_999_999):,}円"

    def date(self) -> str:
        y, m, d = self.r.randint(2023, 2026), self.r.randint(1, 12), self.r.randint(1, 28)
        return self.r.choice([f"{y}-{m:02d}-{d:02d}", f"{y}年{m}月{d}日", f"{y}/{m:02d}/{d:02d}"])

    def order_number(self) -> str:
        return self.digits(12)

    def invoice_number(self) -> str:
        return f"INV-{self.r.randint(2023, 2026)}-{self.r.randint(1, 99999):05d}"

    def product_code(self) -> str:
        return f"0{self.r.randint(1, 9)}-{self.digits(4)}-{self.digits(4)}"


def _inquiry(m: Maker, doc: Doc) -> None:
    doc.add("お世話になっております。")
    doc.pii(m.name(), "person")
    doc.add("です。マイナンバー（")
    doc.pii(m.my_number(), "my_number")
    doc.add("）の登録と、振込口座（")
    doc.add(m.r.choice(BANKS) + " ")
    doc.pii(m.r.choice(BRANCHES), "branch")
    doc.add(" 普通 ")
    doc.pii(m.digits(7), "account")
    doc.add("）の変更方法を教えてください。連絡先は")
    doc.pii(m.phone(), "phone")
    doc.add("、メールは ")
    doc.pii(m.email(), "email")
    doc.add(" です。注文番号 ")
    doc.keep(m.order_number(), "order_number")
    doc.add(" の請求額 ")
    doc.keep(m.amount(), "amount")
    doc.add(" は ")
    doc.keep(m.date(), "date")
    doc.add(" に支払済みです。\n")


def _invoice(m: Maker, doc: Doc) -> None:
    doc.add("請求書\n")
    doc.keep(m.r.choice(COMPANIES), "company")
    doc.add(" 御中\n請求書番号: ")
    doc.keep(m.invoice_number(), "invoice_number")
    doc.add("\n登録番号: T")
    doc.keep(m.corporate_number(), "registration_number")
    doc.add("\n法人番号: ")
    doc.keep(m.corporate_number(), "corporate_number")
    doc.add("\n発行日: ")
    doc.keep(m.date(), "date")
    doc.add("\nご担当: ")
    doc.pii(m.name(), "person")
    doc.add(" 様\n品番 ")
    doc.keep(m.product_code(), "product_code")
    doc.add(f" {m.r.choice(PRODUCTS)} ")
    doc.keep(m.amount(), "amount")
    doc.add("\n合計 ")
    doc.keep(m.amount(), "amount")
    doc.add("（税込）\n振込先: ")
    doc.add(m.r.choice(BANKS) + " ")
    doc.pii(m.r.choice(BRANCHES), "branch")
    doc.add(" 当座 ")
    doc.pii(m.digits(7), "account")
    doc.add("\n")


def _employee(m: Maker, doc: Doc) -> None:
    doc.add("社員情報の変更届\n氏名: ")
    doc.pii(m.name(), "person")
    doc.add("\n社員番号: ")
    doc.pii(m.digits(6), "employee_id")
    doc.add("\n生年月日: ")
    doc.pii(m.birth(), "birth_date")
    doc.add("\n住所: ")
    doc.pii(m.address(), "address")
    doc.add("\n携帯: ")
    doc.pii(m.phone(), "phone")
    doc.add("\n経費精算のカード: ")
    doc.pii(m.card(), "card")
    doc.add("\n上長: ")
    doc.pii(m.r.choice(SURNAMES), "person")
    doc.add("部長\n提出日: ")
    doc.keep(m.date(), "date")
    doc.add("\n")


def _customer_table(m: Maker, doc: Doc, rows: int) -> None:
    delimiter = m.r.choice([",", " | ", "\t"])
    headers = ["顧客ID", "氏名", "フリガナ", "電話番号", "メール", "地域", "売上金額", "最終購入日"]
    doc.add(delimiter.join(headers) + "\n")
    for number in range(rows):
        cells: list[tuple[str, str | None]] = [
            (f"C{number + 1:04d}", "customer_id"),
            (m.name(), "person"),
            (m.r.choice(KANA_NAMES), "person"),
            (m.phone(), "phone"),
            (m.email(), "email"),
            (m.r.choice(REGIONS), None),
            (str(m.r.randint(1000, 999_999)), "amount"),
            (m.date(), "date"),
        ]
        for index, (value, kind) in enumerate(cells):
            if index:
                doc.add(delimiter)
            if kind in ("person", "phone", "email"):
                doc.pii(value, kind)
            elif kind is not None:
                doc.keep(value, kind)
            else:
                doc.add(value)
        doc.add("\n")


def _memo(m: Maker, doc: Doc) -> None:
    doc.add("打合せメモ: ")
    doc.keep(m.r.choice(COMPANIES), "company")
    doc.add("の")
    doc.pii(m.name(), "person")
    doc.add("さんと、")
    doc.keep(m.date(), "date")
    doc.add("に見積（")
    doc.keep(m.amount(), "amount")
    doc.add("）を確認。型番 ")
    doc.keep(m.product_code(), "product_code")
    doc.add(" の納期は受注番号 ")
    doc.keep(m.order_number(), "order_number")
    doc.add(" で管理。")
    doc.pii(m.r.choice(SURNAMES) + m.r.choice(GIVEN), "person")
    doc.add("さんの誕生日は")
    doc.pii(m.birth(), "birth_date")
    doc.add("。連絡は ")
    doc.pii(m.phone(), "phone")
    doc.add(" まで。\n")


def make_corpus(seed: int = 37, documents: int = 60, table_rows: int = 10) -> list[Doc]:
    """``documents`` documents of five shapes (inquiry, invoice, employee form, customer
    table, meeting memo), in turn."""
    maker = Maker(seed)
    shapes = [_inquiry, _invoice, _employee, _memo]
    docs: list[Doc] = []
    for number in range(documents):
        doc = Doc(name=f"doc{number:03d}")
        if number % 5 == 4:
            _customer_table(maker, doc, table_rows)
        else:
            shapes[number % 5](maker, doc)
        docs.append(doc)
    return docs


# Prefectures and cities the dictionary knows as surnames too.
PLACE_SURNAMES = [
    "石川", "長野", "福井", "富山", "宮崎", "岡山", "広島", "千葉", "秋田", "熊本",
    "長崎", "佐賀", "香川", "金沢", "松本", "岡崎", "前橋", "高崎",
]  # fmt: skip


def _place_items(m: Maker, doc: Doc, items: list[str], before: str, between: str) -> None:
    for index, item in enumerate(items):
        doc.add(before.format(n=index + 1) if index == 0 or "\n" in between else "")
        doc.keep(item, "place")
        if index + 1 < len(items):
            doc.add(between)


def _places(m: Maker, doc: Doc) -> None:
    """Places as places: after a word about places, in a column about places, down the page."""
    items = m.r.sample(PLACE_SURNAMES, m.r.randint(2, 4))
    form = m.r.randrange(4)
    if form == 0:
        doc.add(m.r.choice(["地域別売上（", "北陸（", "県別の件数（"]))
        _place_items(m, doc, items, "", m.r.choice(["・", "、"]))
        doc.add("）を前年と比べてください。\n")
    elif form == 1:
        doc.add(m.r.choice(["支店一覧\n", "営業所:\n", "拠点一覧\n\n", "都道府県\n"]))
        _place_items(m, doc, items, m.r.choice(["", "・", "{n}. "]), "\n")
        doc.add("\n\n以上の拠点の売上を集計します。\n")
    elif form == 2:
        doc.add("都道府県,売上金額,件数\n")
        for item in items:
            doc.keep(item, "place")
            doc.add(",")
            doc.keep(m.amount().replace(",", "").removesuffix("円"), "amount")
            doc.add(f",{m.r.randint(1, 40)}\n")
    else:
        doc.add("今期は")
        _place_items(m, doc, items, "", "と")
        doc.add("の各支店で目標を達成しました。\n")
    # the same names as people, beside a word about people
    surname = m.r.choice(PLACE_SURNAMES)
    form = m.r.randrange(4)
    if form == 0:
        doc.add("担当: ")
        doc.pii(surname, "person")
        doc.add("\n")
    elif form == 1:
        doc.pii(surname, "person")
        doc.add(m.r.choice(["様", "さん", "部長"]) + "にご確認ください。\n")
    elif form == 2:
        doc.add("担当者一覧\n")
        doc.pii(surname, "person")
        doc.add("\n")
        doc.pii(m.r.choice(SURNAMES), "person")
        doc.add("\n")
    else:
        doc.add("申請者 ")
        doc.pii(f"{surname} {m.r.choice(GIVEN)}", "person")
        doc.add("\n")


def _docs(seed: int, documents: int, prefix: str, shape: Callable[[Maker, Doc], None]) -> list[Doc]:
    maker = Maker(seed)
    docs: list[Doc] = []
    for number in range(documents):
        doc = Doc(name=f"{prefix}{number:03d}")
        shape(maker, doc)
        docs.append(doc)
    return docs


def make_place_docs(seed: int = 37, documents: int = 24) -> list[Doc]:
    """``documents`` documents about places that are surnames too, with people of those names."""
    return _docs(seed, documents, "place", _places)


def _licence(m: Maker) -> str:
    value = m.digits(12)
    return m.r.choice([value, f"{value[:4]} {value[4:8]} {value[8:]}", f"{value[:2]}-{value[2:]}"])


def _cards(m: Maker, doc: Doc) -> None:
    """A 人事 form with the numbers of a 運転免許証 and a 健康保険証 (記号・番号, 被保険者番号),
    a business number after its label that has a マイナンバー's check digit (受付番号, 会員番号),
    the insurer's number (保険者番号, no person's) and a form's 未定 under a person's label."""
    doc.add("資格取得届\n氏名: ")
    doc.pii(m.name(), "person")
    doc.add(m.r.choice(["\n運転免許証番号: ", "\n免許証番号 ", "\n運転免許証 "]))
    written = m.r.choice(["", "第"])  # 第123456789012号: the number is the digits
    doc.add(written)
    doc.pii(_licence(m), "id_card")
    doc.add("号" if written else "")
    symbol, number = m.digits(m.r.choice([4, 5, 8])), m.digits(m.r.randint(3, 6))
    form = m.r.randrange(3)
    if form == 0:
        doc.add("\n健康保険証 記号 ")
        doc.pii(symbol, "id_card")
        doc.add(" 番号 ")
        doc.pii(number, "id_card")
    elif form == 1:
        doc.add("\n被保険者証の記号・番号: ")
        doc.pii(symbol, "id_card")
        doc.add("・")
        doc.pii(number, "id_card")
    else:
        doc.add("\n被保険者番号 ")
        doc.pii(symbol + number, "id_card")
    doc.add("\n保険者番号 ")
    doc.keep(m.digits(8), "insurer_number")
    doc.add(m.r.choice(["\n受付番号: ", "\n会員番号\n", "\nお客様番号 "]))
    doc.keep(m.my_number(), "business_number")  # a マイナンバー's check digit, by chance
    doc.add(m.r.choice(["\n担当者: ", "\n承認者\n"]))
    doc.keep(m.r.choice(["未定", "同上", "空欄", "なし"]), "no_one")
    doc.add("\n提出日: ")
    doc.keep(m.date(), "date")
    doc.add("\n")


def make_card_docs(seed: int = 37, documents: int = 24) -> list[Doc]:
    """``documents`` forms with the numbers of licences and insurance cards, and the numbers
    and words beside them that are no one's (受付番号, 保険者番号, 未定)."""
    return _docs(seed, documents, "card", _cards)
