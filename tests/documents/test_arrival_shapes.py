"""Files as they arrive (``arrival_corpus``): every one is read to the right cells, or refused
with a Japanese error that names the problem; never silently wrong text or shifted columns.

Property runs over seeded cases, then one test per shape that the reader got wrong before
(each failed on the code before this change).
"""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from openpyxl import Workbook
from openpyxl.styles import Font
from openpyxl.utils.datetime import CALENDAR_MAC_1904

from keiri_agent.documents.excel import ExcelManager
from keiri_agent.documents.tables import TableResult, read_table
from keiri_agent.errors import ErrorCode, FileProcessingError
from tests.documents.arrival_corpus import (
    HEADER,
    expected_records,
    text_case,
    workbook_case,
)

# 80 text files draw every value of every shape key that 160 did; on the code before cd316d5
# 11 of them were read wrong (UTF-16, and UTF-8 with a BOM, joined lines and quoted breaks).
TEXT_CASES = 80
WORKBOOK_CASES = 60
# The seeds run in chunks, each its own test: the same 140 cases, and no one test near the
# per-test timeout on a loaded machine (160 files in one test once took 120 s at load 12).
CHUNK = 40


def _records(
    result: TableResult, header: tuple[str, ...] = HEADER
) -> list[tuple[str, str, str, int]]:
    frame = result.df
    assert list(frame.columns[:4]) == list(header), frame.columns
    out = []
    for day, name, code, amount in frame[list(header)].itertuples(index=False):
        assert isinstance(day, pd.Timestamp), (day, result.info.converted)
        out.append((day.date().isoformat(), str(name), str(code), int(amount)))
    return out


def _wrong_text_cases(seeds: range) -> list[str]:
    wrong = []
    for seed in seeds:
        case = text_case(seed)
        try:
            result = read_table(case.data, name=case.name)
            got = _records(result, case.header)
        except (FileProcessingError, AssertionError, TypeError, ValueError) as exc:
            wrong.append(f"seed {seed} {case.shape}: {type(exc).__name__} {str(exc)[:200]}")
            continue
        expected = expected_records(case.ledger)
        if got != expected:
            padded = [*got, *[None] * len(expected)]
            first = next(i for i, e in enumerate(expected) if padded[i] != e)
            wrong.append(
                f"seed {seed} {case.shape}: row {first}: {padded[first]}"
                f" != {expected[first]} ({len(got)} rows, {len(expected)} expected)"
            )
        elif case.shape["padding"] and not any("0x1A" in w for w in result.info.warnings):
            wrong.append(f"seed {seed}: the padding left out is not noted")
    return wrong


@pytest.mark.parametrize("first", range(0, TEXT_CASES, CHUNK))
def test_text_files_are_read_to_the_right_cells(first: int) -> None:
    seeds = range(first, min(first + CHUNK, TEXT_CASES))
    wrong = _wrong_text_cases(seeds)
    assert not wrong, f"{len(wrong)} of {len(seeds)} wrong:\n" + "\n".join(wrong[:10])


def _workbook_outcome(seed: int) -> str | None:
    case = workbook_case(seed)
    try:
        result = read_table(case.data, name=case.name)
    except FileProcessingError as exc:
        if case.uncomputed and exc.code == ErrorCode.FILE_UNREADABLE:
            said = exc.message
            if (
                case.uncomputed[0] in said
                and "計算結果" in said
                and f"{len(case.uncomputed)} 個" in said
            ):
                return None
        return f"seed {seed} {case.shape}: {exc}"
    if case.uncomputed:
        return f"seed {seed} {case.shape}: formulas without a result read as {result.df.iloc[0].to_dict()}"
    if result.info.sheet != case.sheet:
        return f"seed {seed} {case.shape}: read sheet {result.info.sheet}"
    try:
        got = _records(result)
    except (AssertionError, TypeError, ValueError) as exc:
        return f"seed {seed} {case.shape}: {type(exc).__name__} {exc}"
    if got != expected_records(case.ledger):
        return f"seed {seed} {case.shape}: {got[:2]} != {expected_records(case.ledger)[:2]}"
    said = " ".join(result.info.warnings)
    if case.hidden_rows and f"{case.hidden_rows[0]} 行目" not in said:
        return f"seed {seed} {case.shape}: hidden rows not named: {said}"
    return None


@pytest.mark.parametrize("first", range(0, WORKBOOK_CASES, CHUNK // 2))
def test_workbooks_are_read_to_the_right_cells_or_refused_by_cell(first: int) -> None:
    seeds = range(first, min(first + CHUNK // 2, WORKBOOK_CASES))
    wrong = [found for seed in seeds if (found := _workbook_outcome(seed))]
    assert not wrong, f"{len(wrong)} of {len(seeds)} wrong:\n" + "\n".join(wrong[:10])


# --- the shapes found wrong, one by one -------------------------------------------------------


def _csv(text: str, encoding: str = "cp932") -> bytes:
    return text.encode(encoding)


def test_euc_jp_names_past_an_ascii_head_are_decoded_as_euc_jp() -> None:
    # An export that is ASCII for 300 KB and names its Japanese customers at the end: the
    # encoding is decided by those names, not by the first 256 KB.
    head = "".join(f"2026/04/01,ABC Corp,{n:05d},{n}\n" for n in range(1, 9_000))
    # (Both names also decode as CP932, to other characters.)
    tail = "2026/05/01,株式会社テスト,00001,5\n2026/05/02,佐藤,00002,7\n"
    data = _csv("date,name,code,amount\n" + head + tail, "euc-jp")  # a system's ASCII header
    assert len(data) > 256 * 1024

    result = read_table(data, name="明細.csv")

    assert result.info.encoding == "euc-jp"
    assert result.df["name"].iloc[-2:].tolist() == ["株式会社テスト", "佐藤"]


@pytest.mark.parametrize("padding", [b"\x1a", b"\x00" * 100, b"\x1a" + b"\x00" * 511])
@pytest.mark.parametrize("encoding", ["cp932", "utf-8-sig"])
def test_eof_mark_and_nul_padding_are_no_row(padding: bytes, encoding: str) -> None:
    data = _csv(
        "日付,取引先,金額\r\n2026/04/01,㈱髙橋商事,1200\r\n2026/04/02,﨑山①,3400\r\n", encoding
    )

    result = read_table(data + padding, name="明細.csv")

    assert result.df["取引先"].tolist() == ["㈱髙橋商事", "﨑山①"]
    assert result.df["金額"].tolist() == [1200, 3400]
    assert not result.info.unreadable
    assert any(f"{len(padding):,} バイト" in w and "0x1A" in w for w in result.info.warnings)


def test_a_nul_inside_the_data_is_still_refused() -> None:
    data = _csv("日付,金額\n2026/04/01,1\x00200\n2026/04/02,3\n")

    with pytest.raises(FileProcessingError) as caught:
        read_table(data, name="明細.csv")

    assert caught.value.code == ErrorCode.FILE_UNREADABLE
    assert "NUL" in caught.value.message


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])
def test_two_exports_joined_with_their_boms_are_one_table(encoding: str) -> None:
    # copy /b 4月.csv+5月.csv: the second file's BOM is inside the data, before its header.
    april = "日付,取引先,金額\r\n2026/04/01,㈱髙橋商事,1200\r\n"
    may = "日付,取引先,金額\r\n2026/05/01,﨑山①,3400\r\n"
    if encoding == "utf-16":
        data = b"".join(("\ufeff" + part).encode("utf-16-le") for part in (april, may))
    else:
        data = april.encode(encoding) + may.encode(encoding)

    result = read_table(data, name="4-5月.csv")

    assert result.df["取引先"].tolist() == ["㈱髙橋商事", "﨑山①"]
    assert result.df["金額"].tolist() == [1200, 3400]
    assert [d.date() for d in result.df["日付"]] == [dt.date(2026, 4, 1), dt.date(2026, 5, 1)]
    assert any("途中の BOM" in w for w in result.info.warnings)


@pytest.mark.parametrize(
    ("cell", "encoding"),
    [('="00123"', "cp932"), ('"=""00123"""', "cp932"), ('="00123"', "utf-16")],
)
def test_excel_text_cells_are_read_as_their_text(cell: str, encoding: str) -> None:
    text = f'日付\t口座番号\t金額\r\n2026/04/01\t{cell}\t1200\r\n2026/04/02\t="0045"\t3\r\n'
    data = ("\ufeff" + text).encode("utf-16-le") if encoding == "utf-16" else text.encode(encoding)

    result = read_table(data, name="明細.txt")

    assert result.df["口座番号"].tolist() == ["00123", "0045"]
    assert any("口座番号" in w and '="…"' in w for w in result.info.warnings)


def _book(build: Any) -> bytes:
    book = Workbook()
    build(book)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def _priced(book: Workbook) -> None:
    ws = book.active
    ws.title = "見積"
    ws.append(["品目", "数量", "単価", "金額"])
    ws.append(["A", 2, 100, "=B2*C2"])
    ws.append(["B", 3, 50, "=B3*C3"])


def test_formulas_saved_without_a_result_are_refused_by_cell(tmp_path: Path) -> None:
    data = _book(_priced)

    with pytest.raises(FileProcessingError) as caught:
        read_table(data, name="見積.xlsx")

    assert caught.value.code == ErrorCode.FILE_UNREADABLE
    assert "'見積'" in caught.value.message
    assert "2 個（D2、D3）" in caught.value.message
    assert "計算結果" in caught.value.message
    assert "上書き保存" in caught.value.hint
    path = tmp_path / "見積.xlsx"
    path.write_bytes(data)
    with pytest.raises(FileProcessingError) as by_rows:
        ExcelManager(path).read_rows()
    assert "D2" in by_rows.value.message
    # A range that holds no such formula is read.
    assert ExcelManager(path).read_rows(cell_range="A1:C3")[1] == ["A", 2, 100]


def test_a_hidden_first_sheet_is_not_the_table(tmp_path: Path) -> None:
    def build(book: Workbook) -> None:
        settings = book.active
        settings.title = "設定"
        settings.append(["区分", "値"])
        settings.append(["税率", 10])
        settings.sheet_state = "hidden"
        book.create_sheet("明細").append(["日付", "金額"])
        book["明細"].append([dt.date(2026, 4, 1), 1200])

    data = _book(build)
    result = read_table(data, name="明細.xlsx")

    assert result.info.sheet == "明細"
    assert result.df["金額"].tolist() == [1200]
    assert any("非表示のシート '設定'" in w for w in result.info.warnings)
    assert read_table(data, name="明細.xlsx", sheet="設定").df["値"].tolist() == [10]
    path = tmp_path / "明細.xlsx"
    path.write_bytes(data)
    assert ExcelManager(path).read_rows()[0] == ["日付", "金額"]  # excel.read_data
    assert ExcelManager(path).read_rows("設定")[0] == ["区分", "値"]


def test_serial_dates_of_a_1904_workbook_are_its_own_days() -> None:
    def build(book: Workbook) -> None:
        book.epoch = CALENDAR_MAC_1904
        ws = book.active
        ws.append(["日付", "金額"])
        ws.append([46113 - 1462, 100])  # 2026-04-01 counted from 1904-01-01, under General
        ws.append([dt.date(2026, 4, 2), 200])  # a date cell
        ws["A3"].number_format = "yyyy/mm/dd"

    result = read_table(_book(build), name="mac.xlsx")

    assert [d.date() for d in result.df["日付"]] == [dt.date(2026, 4, 1), dt.date(2026, 4, 2)]
    assert any("1904 年日付システム" in w and "1 個" in w for w in result.info.warnings)


def test_a_formatted_empty_cell_far_away_is_not_the_table() -> None:
    def build(book: Workbook) -> None:
        ws = book.active
        ws.append(["日付", "金額"])
        ws.append([dt.date(2026, 4, 1), 100])
        ws["XFD1048576"].font = Font(bold=True)

    result = read_table(_book(build), name="a.xlsx")

    assert result.df["金額"].tolist() == [100]


def test_hidden_rows_and_columns_are_read_and_named() -> None:
    def build(book: Workbook) -> None:
        ws = book.active
        ws.append(["日付", "金額", "メモ"])
        for day in (1, 2, 3):
            ws.append([dt.date(2026, 4, day), day * 100, "x"])
        ws.row_dimensions[3].hidden = True
        ws.column_dimensions["C"].hidden = True

    result = read_table(_book(build), name="a.xlsx")

    assert result.df["金額"].tolist() == [100, 200, 300]
    said = " ".join(result.info.warnings)
    assert "非表示の行（3 行目）" in said
    assert "非表示の列 「メモ」（C 列）" in said
