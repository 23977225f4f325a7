"""A fourth generator: the text each feature puts into a request besides the cells it reads.

The other generators write what a table or a mail holds. A request carries more: the name of
the file the user gave (``長谷川美咲_源泉徴収票_2025.pdf``, ``経費精算(ｻｻｷ ｼﾖｳﾀ).csv``), the
sheets of a workbook kept one per employee (``シート: 山田太郎, 佐藤花子, 集計``), the header of a
table pivoted by person (``部門,長谷川 美咲,佐藤 翔太,合計``), the title of a chart
(``長谷川美咲さんの月別経費``), the text of an error a library raised on a cell
(``could not convert string to float: '090-1234-5678'``), a document given to the design
chat (承認経路 with the approvers' names and extensions) and a question to the help desk typed
as employees type them (chat style, a signature, a number in the middle of a sentence).

Each :class:`~tests.privacy.backoffice.Doc` says what must never reach a model and what must
(amounts, dates, 法人番号, invoice numbers, company names, the file's extension and kind).
``backoffice.make_docs(seed, per_shape, shapes, SHAPES)`` writes them, deterministic for a seed.
"""

from __future__ import annotations

from collections.abc import Callable

from keiri_agent.sudachi import TO_HIRAGANA
from tests.privacy.backoffice import PEOPLE, Doc, Maker, half_kana
from tests.support.personal import luhn_valid, my_number_valid

__all__ = ["SHAPES"]

DOC_KINDS = ["源泉徴収票", "給与明細", "経費精算", "立替金精算", "扶養控除等申告書", "雇用契約書"]
EXTENSIONS = [".pdf", ".xlsx", ".csv", ".docx"]
COMPANIES = ["青葉商事", "株式会社みどり電機", "星野商会", "アサヒ工業"]
DEPARTMENTS = ["営業部", "経理部", "総務部", "開発部"]


def _name(m: Maker) -> tuple[str, list[str]]:
    """A person as a file or sheet name writes one: glued, with _ or a space, in kana."""
    sur, given, ksur, kgiven, rsur, rgiven = m.r.choice(PEOPLE)
    form = m.r.randrange(6)
    if form == 0:
        return sur + given, [sur + given]
    if form == 1:
        return f"{sur}_{given}", [sur, given]
    if form == 2:
        return f"{sur} {given}", [f"{sur} {given}"]
    if form == 3:
        return f"{ksur}{kgiven}", [ksur + kgiven]
    if form == 4:
        half = half_kana(f"{ksur} {kgiven}")
        return half, [half]
    return f"{rsur}_{rgiven}", [rsur, rgiven]


def _file_name(m: Maker, doc: Doc) -> None:
    """The file a user gave, as the analysis, conversion and design prompts name it."""
    kind, ext = m.r.choice(DOC_KINDS), m.r.choice(EXTENSIONS)
    name, parts = _name(m)
    year = str(m.r.randint(2023, 2026))
    form = m.r.randrange(4)
    lead = m.r.choice(["ファイル: ", "入力ファイル「", "/uploads/", "添付: "])
    doc.add(lead)
    if form == 0:
        doc.secret(name, *parts).add("_").keep(kind).add(f"_{year}{ext}")
    elif form == 1:
        doc.keep(kind).add("（").secret(name, *parts).add(f"）{ext}")
    elif form == 2:
        doc.keep(f"{year}年{m.r.randint(1, 12)}月").add("_").keep(kind).add("_")
        doc.secret(name, *parts).add(m.r.choice(["様", "さん", ""])).add(ext)
    else:
        mobile = f"0{m.r.choice('789')}0{m.digits(8)}"
        doc.add("連絡先_").secret(name, *parts).add("_").secret(mobile).add(ext)
    doc.add("」 " if lead.endswith("「") else " ").add("を読み込みました。")
    doc.keep(f"{m.r.randint(1, 999):,}円")


def _sheets(m: Maker, doc: Doc) -> None:
    """A workbook kept one sheet per employee, as the analysis lists its sheets."""
    doc.add(m.r.choice(["シート: ", "sheets: ", "ブック「経費.xlsx」のシート一覧 "]))
    taken = m.r.sample(range(len(PEOPLE)), 3)
    for i in taken:
        sur, given, ksur, kgiven, _, _ = PEOPLE[i]
        written = m.r.choice([sur + given, f"{sur} {given}", f"{ksur}{kgiven}", sur])
        doc.secret(written).add(m.r.choice([", ", "、", " / "]))
    doc.keep(m.r.choice(["集計", "合計", "Sheet1", "2026年2月"]))


def _pivot_header(m: Maker, doc: Doc) -> None:
    """A table pivoted by person: the names are its column headers, nothing says they are."""
    taken = m.r.sample(range(len(PEOPLE)), 3)
    sep = m.r.choice([",", "\t", " | "])
    cells = [m.r.choice(["部門", "月", "科目", "取引先名", "得意先名", "請求先名", "勤務先名"])]
    written: list[str] = []
    for i in taken:
        sur, given, ksur, kgiven, _, _ = PEOPLE[i]
        written.append(m.r.choice([f"{sur} {given}", sur + given, f"{ksur} {kgiven}", sur]))
    doc.keep(cells[0])  # a header word stays whole (取引先名 is no 取引 + 先名 surname)
    for name in written:
        doc.add(sep).secret(name)
    doc.add(f"{sep}合計\n").keep(m.r.choice(DEPARTMENTS))
    for _ in written:
        doc.add(sep).keep(f"{m.r.randint(1, 999) * 1000:,}")
    doc.add("\n")


def _chart_title(m: Maker, doc: Doc) -> None:
    """The title and labels of a chart the model is asked about or wrote."""
    sur, given, ksur, kgiven, _, _ = m.r.choice(PEOPLE)
    form = m.r.randrange(4)
    doc.add(m.r.choice(["グラフ「", "title: ", "図のタイトル："]))
    if form == 0:
        doc.secret(sur + given).add(m.r.choice(["さん", "様", ""])).add("の月別経費")
    elif form == 1:
        doc.add("担当者別売上（").secret(sur).add("・")
        other = m.r.choice([p for p in PEOPLE if p[0] != sur])
        doc.secret(other[0]).add("）")
    elif form == 2:
        doc.add("立替金の推移 - ").secret(f"{ksur}{kgiven}".translate(TO_HIRAGANA))
    else:
        doc.secret(f"{sur} {given}").add(" 残業時間（").keep(f"{m.r.randint(1, 12)}月").add("）")
    doc.add(" 、縦軸: 金額（円）")


def _error_text(m: Maker, doc: Doc) -> None:
    """An error a library raised on a cell, as the agents send it back for a repair."""
    mobile = f"0{m.r.choice('789')}0-{m.digits(4)}-{m.digits(4)}"
    card = m.with_check("4" + m.digits(14), luhn_valid)
    grouped = " ".join(card[i : i + 4] for i in range(0, 16, 4))
    my_number = m.with_check(m.digits(11), my_number_valid)
    sur, given = m.r.choice(PEOPLE)[:2]
    form = m.r.randrange(6)
    if form == 0:
        doc.add("ValueError: could not convert string to float: '").secret(mobile).add("'")
    elif form == 1:
        doc.add("ValueError: invalid literal for int() with base 10: '").secret(grouped)
        doc.add("'")
    elif form == 2:
        doc.add("KeyError: '").secret(f"{sur} {given}").add("'")
    elif form == 3:
        doc.add("Traceback (most recent call last):\n  ...\nTypeError: unsupported operand ")
        doc.add("type(s) for +: 'int' and 'str' (値: '").secret(my_number).add("')")
    elif form == 4:
        doc.add(
            f"pandas.errors.ParserError: Error tokenizing data. C error: line {m.r.randint(2, 99)}: '"
        )
        doc.secret(f"{sur}{given}").add(",").secret(mobile).add(",").keep(
            f"{m.r.randint(1, 99)},000"
        )
        doc.add("'")
    else:
        doc.add("AssertionError: 合計が合いません: ").secret(f"{sur} {given}")
        doc.add(" の ").keep(f"{m.r.randint(1, 99)},{m.digits(3)}")
        doc.add(" 円")
    doc.add(f"\n（{m.r.choice(['analysis', 'convert'])} の試行 {m.r.randint(1, 3)} 回目）")


def _design_document(m: Maker, doc: Doc) -> None:
    """A page of a procedure a user gives the design chat: approvers, extensions, a sample."""
    sur, given = m.r.choice(PEOPLE)[:2]
    sur2, given2 = m.r.choice([p for p in PEOPLE if p[0] != sur])[:2]
    ext = m.digits(4)
    doc.add("## 承認経路\n1. 申請者が").keep(m.r.choice(DEPARTMENTS)).add("の")
    doc.secret(f"{sur}{m.r.choice(['', ' '])}{given}", sur).add(m.r.choice(["課長", "部長", ""]))
    doc.add(m.r.choice(["（内線", "(内線 ", " 内線"])).add(ext).add("）に提出\n")
    doc.add("2. 経理の").secret(sur2).add(m.r.choice(["さん", "が", "担当が"]))
    doc.add("確認し、").keep(f"{m.r.randint(1, 99)}万円").add("以上は")
    doc.add(m.r.choice(["社長", "役員"])).add("決裁\n例：").keep(f"2026/{m.r.randint(1, 12)}/1")
    doc.add(" 交通費 ").keep(f"{m.r.randint(1, 99) * 100:,}円").add(" 申請者 ")
    doc.secret(f"{sur2} {given2}", sur2).add("\n")


def _helpdesk_question(m: Maker, doc: Doc) -> None:
    """A question to the help desk as an employee types it."""
    sur, given, _, kgiven, _, _ = m.r.choice(PEOPLE)
    form = m.r.randrange(5)
    if form == 0:
        doc.add("すみません、").secret(sur).add("です！口座番号").secret(m.digits(7))
        doc.add("に変えたいんですがどうすれば？")
    elif form == 1:
        doc.add("マイナンバー変わった場合って何出せばいい？ 新しいのは ")
        doc.secret(m.with_check(m.digits(11), my_number_valid)).add(" です")
    elif form == 2:
        doc.add("交通費の精算ってどこから？？\n--\n").keep(m.r.choice(DEPARTMENTS)).add(" ")
        doc.secret(f"{sur} {given}").add("\n携帯 ").secret(f"0{m.r.choice('789')}0{m.digits(8)}")
    elif form == 3:
        doc.add("お疲れさまです。").secret(kgiven.translate(TO_HIRAGANA)).add("です。")
        doc.add("住所変更（〒").secret(f"{m.digits(3)}-{m.digits(4)}").add(
            "）の届け出方法を教えてください"
        )
    else:
        doc.add("立替えた").keep(f"{m.r.randint(1, 99) * 100:,}円").add("の精算、")
        doc.secret(f"{sur}{given}").add(m.r.choice(["さん", "様", "課長"]))
        doc.add("の承認待ちです。連絡先は ").secret(
            f"{m.r.choice(['misaki', 'kenta', 'yuko'])}.{m.digits(2)}@example.co.jp"
        )
    doc.add(" ").keep(m.r.choice(COMPANIES)).add("の件も")


SHAPES: dict[str, Callable[[Maker, Doc], None]] = {
    "file_name": _file_name,
    "sheets": _sheets,
    "pivot_header": _pivot_header,
    "chart_title": _chart_title,
    "error_text": _error_text,
    "design_document": _design_document,
    "helpdesk_question": _helpdesk_question,
}
