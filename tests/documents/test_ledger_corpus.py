"""read_table on the ledgers, bank statements and exports of ``ledger_corpus``: every value,
every row's place in the file, the total rows set aside, the units and the unreadable cells."""

from __future__ import annotations

import functools
import io
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from openpyxl import Workbook

from keiri_agent.documents.tables import TableResult, read_table
from tests.documents.ledger_corpus import LEDGERS, Format, Ledger

CASES = [
    pytest.param(ledger, fmt, id=f"{ledger.slug}-{fmt}")
    for ledger in LEDGERS
    for fmt in ledger.formats
]


BY_SLUG = {ledger.slug: ledger for ledger in LEDGERS}


@functools.cache
def _read_once(slug: str, fmt: Format) -> tuple[TableResult, Any]:
    """Each file is written and read once for the four tests that look at it."""
    ledger = BY_SLUG[slug]
    written = ledger.write(fmt)
    result = read_table(written.data, name=ledger.file_name(fmt))
    return result, ledger.expected(fmt, written)


def _read(ledger: Ledger, fmt: Format) -> tuple[TableResult, Any]:
    return _read_once(ledger.slug, fmt)


@pytest.mark.parametrize(("ledger", "fmt"), CASES)
def test_values_come_back_as_written(ledger: Ledger, fmt: Format) -> None:
    result, expected = _read(ledger, fmt)

    assert result.info.columns == ledger.header
    assert result.table().records() == expected.records
    assert result.info.converted == expected.converted
    assert result.info.units == expected.units


@pytest.mark.parametrize(("ledger", "fmt"), CASES)
def test_every_row_is_named_by_its_place_in_the_file(ledger: Ledger, fmt: Format) -> None:
    result, expected = _read(ledger, fmt)

    assert result.positions is not None
    assert result.positions.tolist() == expected.positions
    assert result.info.position_kind == ("row" if fmt == "xlsx" else "line")
    table = result.table()
    where = table.where(0, ledger.header[-1])
    if fmt == "xlsx":
        letter = result.info.column_letters[ledger.header[-1]]
        assert where.endswith(f"（{letter}{expected.positions[0]} セル）")
        assert f"シート「{ledger.sheet}」の {expected.positions[0]} 行目" in where
    else:
        assert where == (
            f"{ledger.file_name(fmt)} の {expected.positions[0]} 行目の列「{ledger.header[-1]}」"
        )


@pytest.mark.parametrize(("ledger", "fmt"), CASES)
def test_total_rows_are_set_aside_with_their_place(ledger: Ledger, fmt: Format) -> None:
    result, expected = _read(ledger, fmt)

    assert [t["position"] for t in result.info.totals] == expected.total_positions
    assert [t["label"] for t in result.info.totals] == expected.total_labels
    assert len(result.totals_table()) == len(expected.total_positions)
    if expected.total_positions:
        assert result.total_positions is not None
        assert result.total_positions.tolist() == expected.total_positions


@pytest.mark.parametrize(("ledger", "fmt"), CASES)
def test_unreadable_cells_are_listed_where_they_are(ledger: Ledger, fmt: Format) -> None:
    result, expected = _read(ledger, fmt)

    listed = [
        {k: cell[k] for k in ("column", "position", "cell", "value")}
        for cell in result.info.unreadable
    ]
    assert listed == expected.unreadable
    assert all(cell["reason"] for cell in result.info.unreadable)


# --- small shapes that once went wrong ---------------------------------------------------------


def _csv_result(body: str, name: str = "a.csv") -> TableResult:
    return read_table(body.encode("cp932"), name=name)


def test_a_last_row_that_happens_to_add_up_is_data_when_it_fills_every_column() -> None:
    numbered = _csv_result("No,金額\r\n1,100\r\n2,200\r\n3,300\r\n")
    counts = _csv_result("数量\r\n1\r\n1\r\n2\r\n")

    assert numbered.df.to_dict("list") == {"No": [1, 2, 3], "金額": [100, 200, 300]}
    assert counts.df["数量"].tolist() == [1, 1, 2]
    assert numbered.info.totals == counts.info.totals == []


def test_a_header_of_numbered_headings_stays_a_header_and_parentheses_below_are_minus() -> None:
    """Japanese forms number their columns (1), (2), (3): each alone reads as an amount (-1),
    the row of them in sequence is the header; (1,200) in a data row is still -1,200."""
    for header in ("(1),(2),(3)", "（１）,（２）,（３）", "⑴,⑵,⑶"):
        body = f'{header}\r\n100,"(1,200)",300\r\n50,60,(70)\r\n'
        result = read_table(body.encode("utf-8"), name="a.csv")  # ⑴ is not in CP932

        first, second, third = header.split(",")
        assert result.info.header_row == 0, header
        assert result.df.to_dict("list") == {
            first: [100, 50],
            second: [-1200, 60],
            third: [300, -70],
        }, header


def _workbook(rows: list[list[Any]], number_format: str | None = None) -> bytes:
    """An .xlsx of ``rows``; ``number_format`` on the first row's cells when given."""
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    for row in rows:
        sheet.append(row)
    if number_format is not None:
        for cell in sheet[1]:
            cell.number_format = number_format
    book = io.BytesIO()
    workbook.save(book)
    return book.getvalue()


@pytest.mark.parametrize("header", [["①", "②", "③"], ["(1)", "(2)", "(3)"], ["❶", "❷", "❸"]])
def test_numbered_headings_typed_as_text_are_a_header_in_a_csv_and_a_workbook(
    header: list[str],
) -> None:
    """Circled numbers, which NFKC makes the digits 1, 2, 3, head a form's columns as (1), (2),
    (3) do, whether the file is a CSV or a workbook whose header cells are text."""
    csv = read_table(f"{','.join(header)}\r\n100,200,300\r\n".encode(), name="a.csv")
    xlsx = read_table(_workbook([header, [100, 200, 300]]), name="a.xlsx")
    for result in (csv, xlsx):
        assert result.info.header_row == 0
        assert result.df.to_dict("list") == dict(zip(header, [[100], [200], [300]], strict=True))


def test_a_row_of_negative_numbers_shown_as_parentheses_is_data_not_a_header() -> None:
    """-1, -2, -3 stored as numbers in Excel and shown as (1), (2), (3) by an accounting format
    are amounts: cells are read by value, never by how a format displays them."""
    data = _workbook([[-1, -2, -3], [100, 200, 300]], number_format="#,##0;(#,##0)")
    result = read_table(data, name="a.xlsx")
    assert result.info.header_row is None
    assert result.df.to_dict("list") == {"列1": [-1, 100], "列2": [-2, 200], "列3": [-3, 300]}


def test_a_total_row_without_a_label_is_still_set_aside() -> None:
    result = _csv_result(
        "日付,摘要,お支払金額,お預り金額\r\n"
        "2026/2/2,ﾃｽｳﾘｮｳ,440,\r\n"
        '2026/2/5,ﾌﾘｺﾐ ﾔﾏﾀﾞ,,"100,000"\r\n'
        '2026/2/9,ｶｰﾄﾞ,"1,200",\r\n'
        ',,"1,640","100,000"\r\n'
    )

    assert result.info.rows == 3
    assert result.info.totals == [{"position": 5, "label": "見出しなし・上の行の合計と一致"}]


def test_a_total_label_under_the_fifth_column_is_found() -> None:
    result = _csv_result(
        "No,日付,伝票No,商品コード,商品名,数量,単価,金額\r\n"
        '1,2026/2/3,A-1,0012,ボールペン,10,120,"1,200"\r\n'
        '2,2026/2/4,A-2,0034,ノート,5,200,"1,000"\r\n'
        ',,,,合計,15,,"2,200"\r\n',
        name="請求明細.csv",
    )

    assert result.df["金額"].tolist() == [1200, 1000]
    assert result.info.totals == [{"position": 4, "label": "合計"}]


@pytest.mark.parametrize("word", ["会計", "統計", "時計", "温度計", "設計"])
def test_words_ending_in_kei_are_not_total_labels(word: str) -> None:
    result = _csv_result(f"品目,金額\r\nコピー用紙,100\r\n{word},200\r\n")

    assert result.df["品目"].tolist() == ["コピー用紙", word]
    assert result.info.totals == []


def test_cells_and_lines_of_spaces_are_blank_and_lines_are_still_counted() -> None:
    body = (
        "摘要\t金額\t備考\r\n"
        '"出張\r\n大阪"\t100\t \r\n'  # a quoted line break; a space-only cell
        "\t\t\r\n"  # a line of delimiters: a blank record
        "   \r\n"  # spaces only: skipped
        '会議費\t\u3000\t""\r\n'  # an ideographic space, an empty quoted cell
        '""\r\n'
        "交通費\t300\t済\r\n"
    )
    result = read_table(body.encode("utf-8"), name="経費.tsv")

    assert result.table().records() == [
        {"摘要": "出張\r\n大阪", "金額": 100, "備考": None},
        {"摘要": "会議費", "金額": None, "備考": None},
        {"摘要": "交通費", "金額": 300, "備考": "済"},
    ]
    assert result.positions is not None
    assert result.positions.tolist() == [2, 6, 8]
    assert result.info.unreadable == []


def test_a_row_wider_than_the_header_is_named_by_its_file_line() -> None:
    result = _csv_result('摘要,金額\r\n"出張\r\n大阪",100\r\n会議費,200,余分\r\n')

    assert any(w.startswith("4 行目はヘッダー（2 列）より値が多い") for w in result.info.warnings)


def test_a_date_header_with_an_amount_word_reads_dates_first() -> None:
    result = _csv_result("支払日,売上日,入金額\r\n20260203,46057,100\r\n20260210,46064,200\r\n")

    assert result.info.converted == {"支払日": "date", "売上日": "date", "入金額": "number"}
    assert [r["支払日"] for r in result.table()] == ["2026-02-03", "2026-02-10"]
    assert [r["売上日"] for r in result.table()] == ["2026-02-04", "2026-02-11"]


def test_a_long_column_of_iso_dates_is_a_date_column_in_a_csv_and_a_workbook() -> None:
    days = [f"2026-{m:02d}-{d:02d}" for m in range(1, 13) for d in range(1, 26)]
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append(["日付", "金額"])
    for n, day_text in enumerate(days):
        sheet.append([day_text, n])
    book = io.BytesIO()
    workbook.save(book)
    csv_text = "日付,金額\r\n" + "".join(f"{d},{n}\r\n" for n, d in enumerate(days))
    for result in (_csv_result(csv_text), read_table(book.getvalue(), name="a.xlsx")):
        assert result.info.converted == {"日付": "date", "金額": "number"}
        assert [r["日付"] for r in result.table()] == days


FRESH_READ = """
import sys
from tests.documents.ledger_corpus import LEDGERS
from keiri_agent.documents.tables import read_table
for ledger in LEDGERS:
    result = read_table(ledger.write("xlsx").data, name=ledger.file_name("xlsx"))
    assert result.info.rows > 0, ledger.slug
print("read", len(LEDGERS))
"""


def test_workbooks_read_in_a_fresh_process_stay_within_the_reader_memory_bound() -> None:
    """An Arrow string kernel in the reader makes pyarrow reserve its allocator's first GiB
    of address space; inside the memory-bounded child that reads a workbook, that fails the
    read as too large -- which a test process that has already read a CSV never shows."""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", FRESH_READ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == f"read {len(LEDGERS)}"


def _with_stored_values(book: bytes, values: dict[str, str]) -> bytes:
    """``book`` with the stored text of some numbers replaced, as Excel writes a formula's
    cached value with all 17 digits of the double (openpyxl writes fewer)."""
    source = zipfile.ZipFile(io.BytesIO(book))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                text_xml = data.decode()
                for placeholder, stored in values.items():
                    text_xml = text_xml.replace(f"<v>{placeholder}</v>", f"<v>{stored}</v>")
                data = text_xml.encode()
            target.writestr(item, data)
    return out.getvalue()


def test_formula_results_are_read_as_excel_shows_them() -> None:
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append(["品目", "税抜金額", "消費税", "単価"])
    sheet.append(["コピー用紙", 1100, 999001, 999011])
    sheet.append(["トナー", 3300, 999002, 999012])
    sheet.append(["文具", 12800, 999003, 999013])
    book = io.BytesIO()
    workbook.save(book)
    stored = {
        "999001": "110.00000000000001",  # =B2*0.1
        "999002": "330.00000000000006",
        "999003": "1280.0000000000002",
        "999011": "0.30000000000000004",  # =0.1+0.2
        "999012": "1.1000000000000001",
        "999013": "2.675",
    }
    result = read_table(_with_stored_values(book.getvalue(), stored), name="税額.xlsx")

    assert result.df["消費税"].tolist() == [110, 330, 1280]
    assert result.df["消費税"].dtype == "int64"
    assert result.df["単価"].tolist() == [0.3, 1.1, 2.675]


def test_a_unit_in_the_title_is_not_the_unit_of_a_count() -> None:
    result = _csv_result(
        "（単位：千円）\r\n品目,数量,件数,単価,金額\r\nA,3,1,100,300\r\nB,2,1,50,100\r\n"
    )

    assert result.info.units == {"単価": "千円", "金額": "千円"}
    assert result.df["数量"].tolist() == [3, 2]
