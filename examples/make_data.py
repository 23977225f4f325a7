"""Write the sample data the example plans run on (``examples/data/``).

Everything is made up: a fictional company, 株式会社サンプル商事, its customers' invoices, the
deposits on its bank account, an expense policy with an expense sheet, and half a year of sales.
The files are byte-for-byte reproducible (fixed timestamps, reportlab's invariant mode, a seeded
random generator), and ``tests/examples/test_sample_data.py`` checks that the committed copies
are exactly what this script writes.

    python examples/make_data.py            # rewrites examples/data/
    python examples/make_data.py OUT_DIR    # writes somewhere else

Needs reportlab for the PDFs (installed with ``pip install -e ".[dev]"``). The bank files of
payment_matching are written by the tests' bank-file generator (``tests/documents/bank_files.py``:
payers as banks write them, 全銀協 records field by field), so the sample is the same kind of data
the 入金消込 tests are made of.
"""

from __future__ import annotations

import datetime as dt
import io
import random
import re
import sys
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.styles import Font

REPOSITORY = Path(__file__).resolve().parents[1]
if str(REPOSITORY) not in sys.path:  # run as a script: the tests' generators are importable
    sys.path.insert(0, str(REPOSITORY))

from tests.documents import bank_files  # noqa: E402
from tests.documents.bank_files import Deposit, Withdrawal, bank_payer  # noqa: E402

ROOT = Path(__file__).resolve().parent / "data"
FIXED_TIME = dt.datetime(2025, 3, 1, 9, 0, 0)
ZIP_TIME = (2025, 3, 1, 9, 0, 0)
ISSUER = "株式会社サンプル商事"
CID_FONT = "HeiseiKakuGo-W5"


@dataclass(frozen=True)
class Invoice:
    customer: str  # the folder name in the ZIP (the customer, without its company form)
    legal_name: str  # the name printed on the invoice
    number: str
    issued: dt.date
    due: dt.date
    lines: tuple[tuple[str, int, int], ...]  # item, quantity, unit price (tax excluded)
    kind: str  # "pdf" or "xlsx"

    @property
    def subtotal(self) -> int:
        return sum(qty * price for _, qty, price in self.lines)

    @property
    def tax(self) -> int:
        return self.subtotal // 10

    @property
    def total(self) -> int:
        return self.subtotal + self.tax


D = dt.date
INVOICES = (
    Invoice(
        "青葉商事",
        "株式会社青葉商事",
        "INV-2025-0101",
        D(2025, 1, 10),
        D(2025, 1, 31),
        (("事務用品一式", 10, 20000), ("コピー用紙（A4・5箱）", 20, 5000)),
        "pdf",
    ),
    Invoice(
        "青葉商事",
        "株式会社青葉商事",
        "INV-2025-0102",
        D(2025, 1, 20),
        D(2025, 2, 28),
        (("トナーカートリッジ", 4, 25000),),
        "xlsx",
    ),
    Invoice(
        "北斗運輸",
        "北斗運輸株式会社",
        "INV-2025-0103",
        D(2025, 1, 10),
        D(2025, 1, 31),
        (("配送料（1月分）", 1, 200000),),
        "pdf",
    ),
    Invoice(
        "桜井製作所",
        "有限会社桜井製作所",
        "INV-2025-0104",
        D(2025, 1, 15),
        D(2025, 1, 31),
        (("部品加工", 50, 8000), ("検査費", 1, 100000)),
        "pdf",
    ),
    Invoice(
        "東西システム",
        "東西システム合同会社",
        "INV-2025-0105",
        D(2025, 1, 10),
        D(2025, 1, 31),
        (("保守サポート（1月）", 1, 150000),),
        "xlsx",
    ),
    Invoice(
        "みなと食品",
        "株式会社みなと食品",
        "INV-2025-0106",
        D(2025, 1, 12),
        D(2025, 1, 31),
        (("会議用弁当", 20, 4000),),
        "pdf",
    ),
)

# Deposits on the bank account: who paid (振込依頼人, as the payer's bank writes it), when, how
# much (see README.md for the story).
DEPOSITS = (
    (D(2025, 1, 27), bank_payer("オオゾラブッサン", "株式会社", suffix=True), 77000, "振込"),
    (D(2025, 1, 31), bank_payer("アオバショウジ", "株式会社"), 330000, "振込 INV-2025-0101"),
    (
        D(2025, 1, 31),
        bank_payer("ホクトウンユ", "株式会社", suffix=True),
        219340,
        "振込（手数料差引）",
    ),
    (D(2025, 1, 31), bank_payer("サクライセイサクショ", "有限会社"), 500000, "振込"),
    (D(2025, 2, 20), bank_payer("トウザイシステム", "合同会社", suffix=True), 165000, "振込"),
    (D(2025, 2, 27), bank_payer("アオバショウジ", "株式会社"), 110000, "振込 INV-2025-0102"),
)

# 入金消込 (payment_matching): the customer master, the open invoices, and February's deposits
# on the account as the bank reports them (see README.md for the story of each line).
CUSTOMERS = (
    # 取引先コード, 取引先名, 取引先名カナ ("": the master has none; the reading of the name is used)
    ("1001", "株式会社青葉商事", "アオバショウジ"),
    ("1002", "北斗運輸株式会社", "ホクトウンユ"),
    ("1003", "有限会社桜井製作所", "サクライセイサクショ"),
    ("1004", "東西システム合同会社", "トウザイシステム"),
    ("1005", "株式会社みなと食品", ""),
    ("1006", "医療法人さくら歯科", "サクラシカ"),
    ("1007", "株式会社山田商事", "ヤマダショウジ"),
    (
        "1008",
        "日本国際ロジスティクスアンドサプライチェーンマネジメントソリューションズジャパン株式会社",
        "ニッポンコクサイロジスティクスアンドサプライチェーンマネジメントソリューションズジャパン",
    ),
    ("1009", "株式会社山田工業", "ヤマダコウギョウ"),
    ("1010", "株式会社山田興業", "ヤマダコウギョウ"),
)
OPEN_INVOICES = (
    # 請求番号, 取引先コード, 請求金額, 支払期日
    ("INV-2025-0101", "1001", 330000, D(2025, 1, 31)),
    ("INV-2025-0102", "1001", 110000, D(2025, 2, 28)),
    ("INV-2025-0103", "1002", 220000, D(2025, 1, 31)),
    ("INV-2025-0104", "1003", 550000, D(2025, 1, 31)),
    ("INV-2025-0105", "1004", 165000, D(2025, 1, 31)),
    ("INV-2025-0106", "1005", 88000, D(2025, 1, 31)),
    ("INV-2025-0107", "1006", 44000, D(2025, 2, 28)),
    ("INV-2025-0108", "1007", 275000, D(2025, 2, 28)),
    ("INV-2025-0109", "1008", 1320000, D(2025, 2, 28)),
    ("INV-2025-0110", "1009", 198000, D(2025, 2, 28)),
    ("INV-2025-0111", "1010", 198000, D(2025, 2, 28)),
)
PARENT_PAYER = bank_payer("ヤマトホールディングス", "株式会社")  # pays for 1007 山田商事
BANK_DEPOSITS = (
    # 青葉商事 pays both its invoices in one transfer (まとめ入金)
    Deposit(D(2025, 2, 3), 440000, bank_payer("アオバショウジ", "株式会社")),
    # 北斗運輸 takes the bank fee off (手数料差引 660 円); the form written after the name
    Deposit(D(2025, 2, 3), 219340, bank_payer("ホクトウンユ", "株式会社", suffix=True)),
    # 桜井製作所 pays in two parts (分割入金)
    Deposit(D(2025, 2, 5), 300000, bank_payer("サクライセイサクショ", "有限会社")),
    # 東西システム: its customer code put first
    Deposit(D(2025, 2, 7), 165000, bank_payer("トウザイシステム", "合同会社", code="1004")),
    # さくら歯科: the invoice number in the EDI information, less a 440 円 fee
    Deposit(D(2025, 2, 10), 43560, bank_payer("サクラシカ", "医療法人"), edi="INV-2025-0107"),
    # a person nobody knows (不明入金)
    Deposit(D(2025, 2, 12), 77000, bank_payer("タナカ\u3000タロウ")),
    # the parent company of 山田商事 pays its invoice (要確認 until the name is learned)
    Deposit(D(2025, 2, 14), 275000, PARENT_PAYER),
    # a name of 56 half-width characters cut at 48 by the bank, less an 880 円 fee
    Deposit(
        D(2025, 2, 17),
        1319120,
        bank_payer(CUSTOMERS[7][2], "株式会社", long_vowel="ｰ"),
    ),
    # 山田工業 or 山田興業? Both read ヤマダコウギョウ and owe 198,000 円 (要確認)
    Deposit(D(2025, 2, 20), 198000, bank_payer("ヤマダコウギョウ", "株式会社")),
    # 桜井製作所's second part
    Deposit(D(2025, 2, 25), 250000, bank_payer("サクライセイサクショ", "有限会社")),
    # a company that is not a customer (不明入金)
    Deposit(D(2025, 2, 26), 55000, bank_payer("オオゾラブッサン", "株式会社", suffix=True)),
)
BANK_WITHDRAWALS = (
    Withdrawal(D(2025, 2, 10), 660, "ﾌﾘｺﾐﾃｽｳﾘﾖｳ"),
    Withdrawal(D(2025, 2, 25), 38500, "ﾃﾞﾝｷﾀﾞｲ"),
)
BANK_ACCOUNT = bank_files.Account(name="ｶ)ｻﾝﾌﾟﾙｼﾖｳｼﾞ", opening_balance=2_500_000)
LEARNED_NAMES = ((PARENT_PAYER, "1007"),)  # what a person confirmed once (学習済みの名義.csv)

# Invoices in free layouts (scans typed up, other issuers' templates): for ai.process_llm.
FREE_FORM = (
    (
        "青葉商事/ご請求のお知らせ.txt",
        "株式会社青葉商事 御中\n\nいつもお世話になっております。\n1月分の事務用品代として、"
        "合計 330,000円（消費税込み）を1月末日までにお振込みくださいますようお願いいたします。\n"
        "請求番号 INV-2025-0101（1月10日発行）\n株式会社サンプル商事 経理部",
    ),
    (
        "北斗運輸/請求明細.txt",
        "御請求書\n北斗運輸株式会社 様\n発行日 令和7年1月10日\n\n配送料 1月分 ............ 200,000\n"
        "消費税 ................... 20,000\n------------------------------\n"
        "合計 金220,000円也\nお支払期限 令和7年1月31日\n伝票番号 INV-2025-0103",
    ),
    (
        "桜井製作所/見積兼請求.txt",
        "有限会社桜井製作所 御中\n部品加工 50個 @8,000 / 検査費 100,000\n小計 500,000 税 50,000\n"
        "総額 ¥550,000-\n期日: 2025/1/31\nNo. INV-2025-0104 (2025/1/15)",
    ),
)

EXPENSE_RULES = (
    "経費精算規程（抜粋）",
    "",
    "第1条（目的）この規程は、株式会社サンプル商事の従業員が業務のために支出した経費の精算について定める。",
    "第2条（領収書）1件 30,000円以上の支出は、領収書の原本を添付しなければならない。",
    "第3条（交通費）交通費は最も経済的な経路の実費とする。タクシーの利用は、深夜（22時以降）",
    "　または荷物の運搬など業務上やむを得ない場合に限る。",
    "第4条（宿泊費）宿泊費の上限は 1泊 12,000円 とする。",
    "第5条（会議費）社内外の打合せの飲食費は、1人あたり 5,000円 以下とする。",
    "第6条（接待交際費）接待交際費は、事前に上長の承認（事前申請）を得たものに限り精算できる。",
    "第7条（対象外）私的な支出、および業務との関係を説明できない支出は精算できない。",
    "第8条（期限）経費は支出日の翌月末までに申請しなければならない。",
)

EXPENSES = (
    # 日付, 氏名, 費目, 金額, 内容, 領収書, 事前申請
    (D(2025, 1, 6), "佐藤 花子", "交通費", 1280, "顧客訪問（電車 往復）", "有", "不要"),
    (D(2025, 1, 8), "鈴木 一郎", "宿泊費", 15400, "大阪出張 1泊", "有", "不要"),
    (D(2025, 1, 9), "佐藤 花子", "会議費", 12000, "打合せ弁当 4名分", "有", "不要"),
    (D(2025, 1, 14), "高橋 健", "接待交際費", 48000, "取引先との会食", "有", "無"),
    (D(2025, 1, 15), "鈴木 一郎", "交通費", 3600, "タクシー（14時 顧客先へ）", "有", "不要"),
    (D(2025, 1, 20), "田中 美咲", "消耗品費", 35200, "プリンター用トナー", "無", "不要"),
    (D(2025, 1, 22), "高橋 健", "会議費", 18000, "打合せ飲食 5名分", "有", "不要"),
    (D(2025, 1, 27), "田中 美咲", "宿泊費", 11000, "名古屋出張 1泊", "有", "不要"),
)

DUPLICATE_LIST_HEADER = ("請求書番号", "取引先", "請求日", "金額", "担当")
DUPLICATE_LIST = (
    ("R-1001", "株式会社山田商事", D(2025, 1, 10), 165000, "佐藤"),
    ("R-1002", "北斗運輸株式会社", D(2025, 1, 10), 220000, "鈴木"),
    ("R-1003", "(株)山田商事", D(2025, 1, 10), 165000, "田中"),
    ("R-1004", "山田工業株式会社", D(2025, 1, 10), 165000, "高橋"),
    ("R-1005", "みなと食品", D(2025, 1, 12), 88000, "佐藤"),
    ("R-1006", "株式会社みなと食品", D(2025, 1, 12), 88000, "鈴木"),
    ("R-1007", "青葉商事株式会社", D(2025, 1, 20), 110000, "田中"),
    ("R-1008", "東西システム合同会社", D(2025, 1, 10), 165000, "高橋"),
    ("R-1002", "北斗運輸株式会社", D(2025, 1, 10), 220000, "鈴木"),
    ("R-1009", "青葉商事株式会社", D(2025, 1, 21), 110000, "佐藤"),
    ("R-1010", "株式会社 山田商事", D(2025, 1, 10), 165000, "鈴木"),
    ("R-1011", "桜井製作所", D(2025, 1, 15), 550000, "田中"),
)

SALES_CUSTOMERS = ("青葉商事", "北斗運輸", "桜井製作所", "東西システム", "みなと食品", "大空物産")
SALES_PRODUCTS = (
    ("事務用品", "コピー用紙", 500),
    ("事務用品", "ボールペン（10本）", 1200),
    ("事務用品", "ファイル", 300),
    ("OA機器", "トナーカートリッジ", 25000),
    ("OA機器", "シュレッダー", 48000),
    ("サービス", "保守サポート", 150000),
    ("サービス", "設置作業", 30000),
)


def _register_font() -> None:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont

    if CID_FONT not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(UnicodeCIDFont(CID_FONT))


def pdf_bytes(pages: Sequence[Sequence[str]], *, size: int = 11) -> bytes:
    """A Japanese PDF, one line of text per entry, reproducible byte for byte."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    _register_font()
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4, invariant=1)
    pdf.setTitle("sample")
    for lines in pages:
        pdf.setFont(CID_FONT, size)
        y = 800
        for line in lines:
            pdf.drawString(50, y, line)
            y -= size * 1.9
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def workbook_bytes(workbook: Workbook) -> bytes:
    """An xlsx whose bytes do not depend on when it was written."""
    workbook.properties.creator = ISSUER
    workbook.properties.created = FIXED_TIME
    workbook.properties.modified = FIXED_TIME
    buffer = io.BytesIO()
    workbook.save(buffer)
    return _fixed_zip(buffer.getvalue())


def _fixed_zip(data: bytes) -> bytes:
    """The same xlsx with fixed member timestamps and modification date.

    openpyxl stamps ``dcterms:modified`` with the time of saving, whatever the properties say.
    """
    source = zipfile.ZipFile(io.BytesIO(data))
    members = []
    for info in source.infolist():
        content = source.read(info.filename)
        if info.filename == "docProps/core.xml":
            stamp = FIXED_TIME.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
            content = re.sub(rb"(<dcterms:modified[^>]*>)[^<]*", rb"\g<1>" + stamp, content)
        members.append((info.filename, content))
    return zip_bytes(members)


def zip_bytes(members: Sequence[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def _jp_date(day: dt.date) -> str:
    return f"{day.year}年{day.month}月{day.day}日"


def invoice_pdf(invoice: Invoice) -> bytes:
    lines = [
        "請求書",
        "",
        f"{invoice.legal_name} 御中",
        "",
        f"請求書番号: {invoice.number}",
        f"請求日: {_jp_date(invoice.issued)}",
        f"お支払期限: {_jp_date(invoice.due)}",
        "",
        f"ご請求金額 ¥{invoice.total:,}（税込）",
        "",
        "品目　　数量　　単価　　金額",
    ]
    lines += [f"{item}　{qty}　{price:,}　{qty * price:,}" for item, qty, price in invoice.lines]
    lines += [
        f"小計 {invoice.subtotal:,}",
        f"消費税（10%） {invoice.tax:,}",
        "",
        f"発行元: {ISSUER}　東京都千代田区丸の内9-9-9",
        "お振込先: さくら銀行 本店営業部 普通 1234567",
    ]
    return pdf_bytes([lines])


def invoice_xlsx(invoice: Invoice) -> bytes:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "請求書"
    sheet["A1"] = "請求書"
    sheet["A1"].font = Font(size=16, bold=True)
    sheet["A3"] = f"{invoice.legal_name} 御中"
    rows: list[tuple[str, Any]] = [
        ("請求書番号", invoice.number),
        ("請求日", invoice.issued),
        ("お支払期限", invoice.due),
        ("ご請求金額", invoice.total),
    ]
    for offset, (label, value) in enumerate(rows):
        sheet.cell(row=5 + offset, column=1, value=label)
        cell = sheet.cell(row=5 + offset, column=2, value=value)
        cell.number_format = "yyyy-mm-dd" if isinstance(value, dt.date) else "#,##0"
    sheet.append([])
    sheet.append(["品目", "数量", "単価", "金額"])
    for item, qty, price in invoice.lines:
        sheet.append([item, qty, price, qty * price])
    sheet.append(["小計", None, None, invoice.subtotal])
    sheet.append(["消費税（10%）", None, None, invoice.tax])
    sheet.append([])
    sheet.append([f"発行元: {ISSUER}"])
    return workbook_bytes(book)


def invoice_zip() -> bytes:
    members = []
    for invoice in INVOICES:
        name = f"{invoice.customer}/請求書_{invoice.number}.{invoice.kind}"
        data = invoice_pdf(invoice) if invoice.kind == "pdf" else invoice_xlsx(invoice)
        members.append((name, data))
    return zip_bytes(members)


def table_xlsx(title: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> bytes:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = title
    sheet.append(list(header))
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    for row in rows:
        sheet.append(list(row))
    for row in sheet.iter_rows(min_row=2):
        for cell in row:
            if isinstance(cell.value, dt.date):
                cell.number_format = "yyyy-mm-dd"
            elif isinstance(cell.value, int):
                cell.number_format = "#,##0"
    return workbook_bytes(book)


def reconciliation_template() -> bytes:
    """The workbook the LLM variant writes its differences into (seed 002 §5 ``workbook``)."""
    header = ("取引先", "区分", "請求金額", "入金額", "差額", "支払期日", "入金日", "日数差")
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "差異一覧"
    sheet.append(list(header))
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    notes = book.create_sheet("説明")
    notes["A1"] = "照合で見つかった差異を「差異一覧」シートに書き込みます。"
    return workbook_bytes(book)


def sales_csv() -> bytes:
    """Six months of sales lines, as an accounting system exports them (CP932, CRLF)."""
    rng = random.Random(20250101)
    lines = ["売上日,伝票番号,得意先,商品区分,商品名,数量,単価,金額"]
    number = 5000
    for month in range(1, 7):
        for _ in range(40 + month * 5):
            day = D(2025, month, rng.randint(1, 28))
            category, product, price = rng.choice(SALES_PRODUCTS)
            qty = rng.randint(1, 3) if price >= 25000 else rng.randint(1, 40)
            number += 1
            customer = rng.choice(SALES_CUSTOMERS)
            amount = qty * price
            lines.append(
                f'{day:%Y/%m/%d},S{number},{customer},{category},{product},{qty},{price},"{amount:,}"'
            )
    return ("\r\n".join(lines) + "\r\n").encode("cp932")


def build() -> dict[str, bytes]:
    """Every sample file, by its path under examples/data/."""
    deposits = [(d, who, amount, memo) for d, who, amount, memo in DEPOSITS]
    expenses = [(i, *row) for i, row in enumerate(EXPENSES, start=1)]
    free_form = [(name, text.encode("utf-8")) for name, text in FREE_FORM]
    return {
        "invoice_reconciliation/請求書.zip": invoice_zip(),
        "invoice_reconciliation/入金明細.xlsx": table_xlsx(
            "入金明細", ("入金日", "振込依頼人", "入金額", "摘要"), deposits
        ),
        "invoice_reconciliation/請求書_非定型.zip": zip_bytes(free_form),
        "invoice_reconciliation/照合結果_ひな形.xlsx": reconciliation_template(),
        "duplicate_invoice_check/請求書一覧.xlsx": table_xlsx(
            "請求書一覧", DUPLICATE_LIST_HEADER, DUPLICATE_LIST
        ),
        "expense_policy_check/経費規程.pdf": pdf_bytes([EXPENSE_RULES], size=10),
        "expense_policy_check/経費明細.xlsx": table_xlsx(
            "経費明細",
            ("No", "日付", "氏名", "費目", "金額", "内容", "領収書", "事前申請"),
            expenses,
        ),
        "monthly_sales_report/売上明細.csv": sales_csv(),
        **payment_matching_files(),
    }


def csv_bytes(header: Sequence[str], rows: Sequence[Sequence[Any]], encoding: str) -> bytes:
    """A CSV as an accounting system exports it (CR LF, no quoting needed for these cells)."""
    lines = [",".join(header), *(",".join(str(cell) for cell in row) for row in rows)]
    return ("\r\n".join(lines) + "\r\n").encode(encoding)


def payment_matching_files() -> dict[str, bytes]:
    """The customer master, open invoices, learned names and one month of deposits in three
    bank formats (全銀協 振込入金通知 and 入出金取引明細, an Internet banking CSV)."""
    names = {code: name for code, name, _ in CUSTOMERS}
    invoices = [
        (number, code, names[code], amount, due.isoformat())
        for number, code, amount, due in OPEN_INVOICES
    ]
    zengin = bank_files.Options(created=D(2025, 2, 28))
    return {
        "payment_matching/取引先マスタ.csv": csv_bytes(
            ("取引先コード", "取引先名", "取引先名カナ"), CUSTOMERS, "cp932"
        ),
        "payment_matching/請求一覧.csv": csv_bytes(
            ("請求番号", "取引先コード", "取引先名", "請求金額", "支払期日"), invoices, "cp932"
        ),
        "payment_matching/学習済みの名義.csv": csv_bytes(
            ("振込依頼人名", "取引先コード"), LEARNED_NAMES, "utf-8"
        ),
        "payment_matching/振込入金通知.txt": bank_files.transfer_notice(
            BANK_DEPOSITS, BANK_ACCOUNT, zengin
        ),
        "payment_matching/入出金取引明細.txt": bank_files.statement(
            BANK_DEPOSITS, BANK_WITHDRAWALS, BANK_ACCOUNT, zengin
        ),
        "payment_matching/入出金明細.csv": bank_files.bank_csv(
            BANK_DEPOSITS,
            BANK_WITHDRAWALS,
            edi_column=True,
            opening=BANK_ACCOUNT.opening_balance,
        ),
    }


def write(root: Path) -> list[Path]:
    written = []
    for relative, data in build().items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(path)
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    for path in write(target):
        print(path)
