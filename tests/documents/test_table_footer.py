"""Footer lines under a table (``※ 金額は税込です``, ``以上``, ``出力日: …``) are set aside with
their place, in CSV and in workbooks, while rows that only look like notes stay data: a row
with amounts (whatever its 摘要 says), rows after a 小計, a note with neither a total nor a
blank line above it, and the rows of a table without amounts."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence

import pytest
from openpyxl import Workbook

from keiri_agent.documents.tables import TableResult, read_table

Rows = list[list[str]]


def csv_bytes(rows: Rows) -> bytes:
    lines = [",".join(f'"{c}"' if "," in c or "\n" in c else c for c in row) for row in rows]
    return ("\r\n".join(lines) + "\r\n").encode("cp932")


def xlsx_bytes(rows: Rows, *, merges: Sequence[str] = ()) -> bytes:
    """``rows`` as text cells of a workbook's sheet, with the cell ranges ``merges`` merged."""
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    for r, row in enumerate(rows, start=1):
        for c, value in enumerate(row, start=1):
            if value:
                sheet.cell(row=r, column=c, value=value).data_type = "s"
    for merged in merges:
        sheet.merge_cells(merged)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


WRITERS: dict[str, Callable[[Rows], bytes]] = {"csv": csv_bytes, "xlsx": xlsx_bytes}
HEADER = ["日付", "部門", "摘要", "金額"]
# The header and the two sales rows most cases start with (file lines / sheet rows 1-3).
SALES = [
    HEADER,
    ["2026/02/02", "営業", "商品A", "1,000"],
    ["2026/02/03", "営業", "商品B", "2,000"],
]


def read(rows: Rows, fmt: str) -> TableResult:
    return read_table(WRITERS[fmt](rows), name=f"明細.{fmt}")


def footer(result: TableResult) -> list[tuple[int, str]]:
    return [(f["position"], f["text"]) for f in result.info.footer]


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_notes_under_the_total_are_set_aside_at_their_lines(fmt: str) -> None:
    rows = [
        ["売上明細"],
        HEADER,
        ["2026/02/02", "営業", "商品A", "12,000"],
        ["2026/02/03", "営業", "返品", "1,200-"],
        ["営業 小計", "", "", "10,800"],
        ["2026/02/04", "総務", "以上", "500"],  # after a 小計, 以上 in the 摘要: data
        ["合計", "", "", "11,300"],
        [],
        ["※ 金額は税込です"],
        ["以上"],
        ["出力日", "2026/02/05 09:30"],
        ["担当: 経理部"],
    ]
    result = read(rows, fmt)

    assert result.df["摘要"].tolist() == ["商品A", "返品", "以上"]
    assert result.df["金額"].tolist() == [12000, -1200, 500]
    assert result.positions is not None
    assert result.positions.tolist() == [3, 4, 6]
    assert [t["position"] for t in result.info.totals] == [5, 7]
    assert footer(result) == [
        (9, "※ 金額は税込です"),
        (10, "以上"),
        (11, "出力日 2026/02/05 09:30"),
        (12, "担当: 経理部"),
    ]
    assert result.info.converted["日付"] == "date"  # the notes no longer spoil the column
    assert result.info.unreadable == []
    note = next(w for w in result.info.warnings if "注記" in w)
    assert f"明細.{fmt}" in note
    assert "9 行目" in note
    assert "footer" in note


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_a_row_with_amounts_after_the_total_stays_data(fmt: str) -> None:
    rows = [
        *SALES,
        ["合計", "", "", "3,000"],
        ["2026/02/04", "総務", "以上", "700"],
        [],
        ["※ 金額は税込です"],
    ]
    result = read(rows, fmt)

    assert result.df["摘要"].tolist() == ["商品A", "商品B", "以上"]
    assert result.df["金額"].tolist() == [1000, 2000, 700]
    assert [t["position"] for t in result.info.totals] == [4]
    assert footer(result) == [(7, "※ 金額は税込です")]


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_notes_after_a_blank_line_under_the_data_are_set_aside(fmt: str) -> None:
    rows = [
        HEADER,
        ["2026/02/02", "営業", "商品A", "1,000"],
        ["2026/02/03", "営業", "商品B", "2,000-"],
        [],
        [],
        ["※ この明細は請求書ではありません"],
        ["ページ 1/1"],
    ]
    result = read(rows, fmt)

    assert result.df["金額"].tolist() == [1000, -2000]
    assert footer(result) == [(6, "※ この明細は請求書ではありません"), (7, "ページ 1/1")]
    assert result.info.totals == []


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_a_total_without_a_label_is_found_above_the_notes(fmt: str) -> None:
    rows = [
        *SALES,
        ["", "", "", "3,000"],
        ["出力日: 2026/02/05"],
    ]
    result = read(rows, fmt)

    assert result.df["金額"].tolist() == [1000, 2000]
    assert [t["position"] for t in result.info.totals] == [4]
    assert footer(result) == [(5, "出力日: 2026/02/05")]


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_a_note_right_under_the_data_stays_data(fmt: str) -> None:
    """With neither a total nor a blank line above it, a line without amounts may be a data
    row whose amount is still blank: it is kept, and listed as what it is."""
    rows = [
        *SALES,
        ["2026/02/04", "営業", "未確定", ""],
    ]
    result = read(rows, fmt)

    assert len(result.df) == 3
    assert footer(result) == []


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_a_table_without_amounts_has_no_footer(fmt: str) -> None:
    rows = [
        ["社員番号", "氏名", "部署"],
        ["0012", "山田 太郎", "経理部"],
        ["0013", "佐藤 花子", "総務部"],
        [],
        ["0014", "鈴木 一郎", "営業部"],
    ]
    result = read(rows, fmt)

    assert result.df["氏名"].tolist() == ["山田 太郎", "佐藤 花子", "鈴木 一郎"]
    assert footer(result) == []


def test_a_line_break_inside_a_quoted_cell_is_no_blank_line() -> None:
    rows = [
        HEADER,
        ["2026/02/02", "営業", "商品A", "1,000"],
        ["2026/02/03", "営業", "出張旅費\n（大阪・2泊）", "2,000"],
        ["2026/02/04", "営業", "未確定", ""],
    ]
    result = read(rows, "csv")

    assert result.df["摘要"].tolist()[-1] == "未確定"
    assert footer(result) == []


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_an_unreadable_amount_above_the_notes_is_named_at_its_line(fmt: str) -> None:
    rows = [
        ["売上明細"],
        *SALES[:2],
        ["2026/02/03", "営業", "商品B", "2,0O0"],
        ["2026/02/04", "営業", "商品C", "3,000-"],
        ["合計", "", "", "2,000"],
        ["※ 金額は税込です"],
    ]
    result = read(rows, fmt)

    assert [(c["position"], c["value"]) for c in result.info.unreadable] == [(4, "2,0O0")]
    assert footer(result) == [(7, "※ 金額は税込です")]
