"""read_table: Japanese CSVs and Excel sheets as people make them, into DataFrames."""

from __future__ import annotations

import io
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest
from openpyxl import Workbook

from keiri_agent.documents.tables import read_table, sniff_delimiter
from keiri_agent.errors import FileProcessingError

TITLED_CSV = (
    "2024年度 売上明細,,,,\n"
    ",,,,\n"
    "日付,取引先,金額,税込金額,備考\n"
    '2024-04-01,㈱髙橋商店,"1,234","\\1,357",①初回\n'
    "2024-04-02,ｶ)ﾔﾏﾀﾞ,１２３,￥135,～\n"
    "2024-04-03,株式会社サンプル,▲500,-550,\n"
)


def xlsx_bytes(build: Callable[[Workbook], None]) -> bytes:
    workbook = Workbook()
    build(workbook)
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def test_cp932_csv_with_title_rows_and_yen_amounts() -> None:
    result = read_table(TITLED_CSV.encode("cp932"), name="売上明細.csv")
    df, info = result.df, result.info

    assert list(df.columns) == ["日付", "取引先", "金額", "税込金額", "備考"]
    assert df["取引先"].tolist() == ["㈱髙橋商店", "ｶ)ﾔﾏﾀﾞ", "株式会社サンプル"]
    assert df["金額"].tolist() == [1234, 123, -500]
    assert df["税込金額"].tolist() == [1357, 135, -550]
    assert pd.api.types.is_integer_dtype(df["金額"])
    assert df["日付"].tolist() == [datetime(2024, 4, d) for d in (1, 2, 3)]
    assert df["備考"].tolist()[:2] == ["①初回", "～"]
    assert pd.isna(df["備考"].iloc[2])
    assert (info.encoding, info.delimiter, info.header_row, info.rows) == ("cp932", ",", 2, 3)
    assert info.skipped_title_rows == ["2024年度 売上明細"]
    assert info.converted == {"日付": "date", "金額": "number", "税込金額": "number"}
    assert any("タイトル行" in w and "2024年度 売上明細" in w for w in info.warnings)


def test_utf8_bom_csv_has_a_clean_first_column() -> None:
    result = read_table("\ufeff勘定科目,金額\n交通費,1200\n".encode(), name="a.csv")

    assert list(result.df.columns) == ["勘定科目", "金額"]
    assert result.info.encoding == "utf-8-sig"


def test_euc_jp_csv() -> None:
    text = '部門,担当者,経費\n総務部,渡辺,"12,000"\n営業部,佐藤,3500\n'
    result = read_table(text.encode("euc-jp"), name="経費.csv")

    assert result.info.encoding == "euc-jp"
    assert result.df.to_dict("list") == {
        "部門": ["総務部", "営業部"],
        "担当者": ["渡辺", "佐藤"],
        "経費": [12000, 3500],
    }


@pytest.mark.parametrize(
    ("text", "name", "delimiter"),
    [
        ("科目\t金額\t摘要\n交通費\t1,200\t電車, バス\n会議費\t3,000\t弁当\n", "a.txt", "\t"),
        ("科目\t金額\n交通費\t1200\n", "a.tsv", "\t"),
        ("科目;金額;摘要\n交通費;1,5;a\n会議費;2;b\n", "a.csv", ";"),
        ("科目|金額\n交通費|1200\n会議費|3000\n", "a.txt", "|"),
    ],
)
def test_delimiter_is_sniffed(text: str, name: str, delimiter: str) -> None:
    result = read_table(text.encode("cp932"), name=name)

    assert result.info.delimiter == delimiter
    assert result.df.columns[0] == "科目"
    assert result.df["科目"].iloc[0] == "交通費"


def test_tsv_amounts_with_commas_are_numbers() -> None:
    text = "科目\t金額\n交通費\t1,200\n会議費\t13,000\n"
    df = read_table(text.encode(), name="a.txt").df

    assert df["金額"].tolist() == [1200, 13000]
    assert sniff_delimiter(text) == "\t"


def test_explicit_options_override_detection() -> None:
    text = "メモ;あり\nA,B\n1,2\n"
    result = read_table(text.encode(), name="a.csv", delimiter=",", header_row=1, encoding="utf-8")

    assert result.df.to_dict("list") == {"A": [1], "B": [2]}
    assert result.info.skipped_title_rows == ["メモ;あり"]


def test_bad_delimiter_option_is_an_input_error() -> None:
    with pytest.raises(FileProcessingError) as info:
        read_table(b"a,b\n", name="a.csv", delimiter=", ")
    assert info.value.code == "INPUT_VALIDATION_FAILED"


def test_key_value_lines_above_a_narrow_table_are_not_the_header() -> None:
    text = "会社名,株式会社A\n期間,2024年4月\n\n日付,科目,金額\n2024-04-01,交通費,100\n"
    result = read_table(text.encode(), name="a.csv")

    assert list(result.df.columns) == ["日付", "科目", "金額"]
    assert result.info.skipped_title_rows == ["会社名 株式会社A", "期間 2024年4月"]


def test_codes_keep_leading_zeros_and_mixed_columns_stay_text() -> None:
    text = "取引先コード,郵便番号,金額,メモ\n0012,100-0001,1000,10\n0345,530-0001,-,x\n"
    result = read_table(text.encode(), name="a.csv")
    df = result.df

    assert df["取引先コード"].tolist() == ["0012", "0345"]
    assert df["郵便番号"].tolist() == ["100-0001", "530-0001"]
    # A lone dash is how accounting formats print zero; the decision is noted.
    assert df["金額"].tolist() == [1000, 0]
    assert any("「-」だけのセル 1 個を 0" in w for w in result.info.warnings)
    assert df["メモ"].tolist() == ["10", "x"]


def test_decimals_and_slash_dates() -> None:
    text = '日付,単価,率\n2024/04/01,"1,234.5",0.1\n2024/04/02,2,\n'
    df = read_table(text.encode(), name="a.csv").df

    assert df["日付"].tolist() == [datetime(2024, 4, 1), datetime(2024, 4, 2)]
    assert df["単価"].tolist() == [1234.5, 2.0]
    assert df["率"].iloc[0] == 0.1
    assert pd.isna(df["率"].iloc[1])


def test_unquoted_comma_near_the_top_becomes_an_extra_column_with_a_warning() -> None:
    text = "科目,単価\n交通費,1,234\n会議費,500\n"
    result = read_table(text.encode(), name="a.csv")

    assert list(result.df.columns) == ["科目", "単価", "列3"]
    assert any("2 行目" in w and "引用符" in w for w in result.info.warnings)


def test_blank_and_duplicate_headers_get_unique_names() -> None:
    text = "日付,金額,,金額,列3\n2024-04-01,1,2,3,4\n"
    result = read_table(text.encode(), name="a.csv")

    assert list(result.df.columns) == ["日付", "金額", "列3_2", "金額_2", "列3"]
    assert any("金額_2" in w for w in result.info.warnings)


def test_empty_columns_and_rows_are_dropped() -> None:
    text = "a,b,,\n1,2,,\n,,,\n3,4,,\n"
    result = read_table(text.encode(), name="a.csv")

    assert result.df.to_dict("list") == {"a": [1, 3], "b": [2, 4]}


def test_header_only_gives_an_empty_frame_with_columns() -> None:
    result = read_table("日付,金額\n".encode("cp932"), name="a.csv")

    assert list(result.df.columns) == ["日付", "金額"]
    assert result.df.empty
    assert result.info.rows == 0


@pytest.mark.parametrize("data", [b"", b"\r\n \n", "\ufeff".encode()])
def test_empty_file_is_unreadable(data: bytes) -> None:
    with pytest.raises(FileProcessingError) as info:
        read_table(data, name="空.csv")
    assert info.value.code == "FILE_UNREADABLE"
    assert "空.csv" in info.value.message


def test_row_with_too_many_fields_names_its_line() -> None:
    # Beyond the first lines that are inspected, pandas reads strictly.
    text = "タイトル\n\na,b\n" + "1,2\n" * 100 + "3,4,5\n"
    with pytest.raises(FileProcessingError) as info:
        read_table(text.encode(), name="a.csv")
    assert info.value.code == "FILE_UNREADABLE"
    assert "104 行目" in info.value.message
    assert "a.csv" in info.value.message
    assert "引用符" in info.value.hint


def test_xls_is_refused_with_a_save_as_xlsx_hint() -> None:
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 512
    with pytest.raises(FileProcessingError) as info:
        read_table(ole, name="旧形式.xls")
    assert info.value.code == "UNSUPPORTED_FORMAT"
    assert "旧形式.xls" in info.value.message
    assert ".xlsx" in info.value.hint


def test_password_protected_workbook_is_encrypted() -> None:
    data = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + "EncryptedPackage".encode("utf-16-le")
    with pytest.raises(FileProcessingError) as info:
        read_table(data, name="給与.xlsx")
    assert info.value.code == "FILE_ENCRYPTED"


def test_xls_that_is_really_text_is_read_with_a_warning() -> None:
    result = read_table("口座\t金額\n普通\t1000\n".encode("cp932"), name="明細.xls")

    assert result.df["金額"].tolist() == [1000]
    assert "中身はテキスト" in result.info.warnings[0]


@pytest.mark.parametrize(
    ("data", "name", "code"),
    [
        (b"not a zip", "a.xlsx", "FILE_UNREADABLE"),
        (b"%PDF-1.4", "a.pdf", "UNSUPPORTED_FORMAT"),
        (b"<html><table></table></html>", "a.csv", "UNSUPPORTED_FORMAT"),
        (b"x", "a.xlsb", "UNSUPPORTED_FORMAT"),
    ],
)
def test_other_formats_are_refused(data: bytes, name: str, code: str) -> None:
    with pytest.raises(FileProcessingError) as info:
        read_table(data, name=name)
    assert info.value.code == code
    assert name in info.value.message


def test_missing_path_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(FileProcessingError) as info:
        read_table(tmp_path / "ない.csv")
    assert info.value.code == "FILE_UNREADABLE"


def _titled_sheet(wb: Workbook) -> None:
    ws = wb.active
    ws.title = "明細"
    ws["A1"] = "2024年度 売上明細"
    ws.merge_cells("A1:D1")
    ws["A2"] = "作成日: 2024-05-01"
    ws.append([])
    ws.append(["日付", "取引先", "金額", None, "備考"])
    ws.append([datetime(2024, 4, 1), "㈱髙橋商店", 1234, None, None])
    ws.append([datetime(2024, 4, 2), "ｶ)ﾔﾏﾀﾞ", "1,500", None, "手入力"])
    ws.append([])
    second = wb.create_sheet("集計")
    second.append(["科目", "合計"])
    second.append(["売上", 2734])


def test_xlsx_title_rows_and_merged_title_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "売上.xlsx"
    path.write_bytes(xlsx_bytes(_titled_sheet))

    result = read_table(path)
    df, info = result.df, result.info

    assert list(df.columns) == ["日付", "取引先", "金額", "備考"]
    assert df["金額"].tolist() == [1234, 1500]
    assert df["日付"].tolist() == [datetime(2024, 4, 1), datetime(2024, 4, 2)]
    assert (info.format, info.sheet, info.header_row, info.rows) == ("xlsx", "明細", 3, 2)
    assert info.sheets == ["明細", "集計"]
    assert info.skipped_title_rows == ["2024年度 売上明細", "作成日: 2024-05-01"]


def test_xlsx_sheet_by_name_and_index() -> None:
    data = xlsx_bytes(_titled_sheet)

    assert read_table(data, name="a.xlsx", sheet="集計").df.to_dict("list") == {
        "科目": ["売上"],
        "合計": [2734],
    }
    assert read_table(data, name="a.xlsx", sheet=1).info.sheet == "集計"
    with pytest.raises(FileProcessingError) as info:
        read_table(data, name="a.xlsx", sheet="存在しない")
    assert info.value.code == "INPUT_VALIDATION_FAILED"
    assert "明細" in info.value.message
    assert "集計" in info.value.message


def _merged_header(wb: Workbook) -> None:
    ws = wb.active
    ws["A1"] = "部門別 売上"
    ws["A2"] = "部門"
    ws.merge_cells("A2:A3")
    ws["B2"] = "売上"
    ws.merge_cells("B2:C2")
    ws["D2"] = "費用"
    ws.merge_cells("D2:E2")
    for col, text in zip("BCDE", ["上期", "下期", "上期", "下期"], strict=True):
        ws[f"{col}3"] = text
    ws.append(["営業部", 100, 200, 10, 20])
    ws.append([None, 110, 210, 11, 21])
    ws.merge_cells("A4:A5")  # one department written once for two rows
    ws.append(["総務部", 5, 6, 7, 8])


def test_xlsx_merged_two_row_header_is_expanded_and_joined() -> None:
    result = read_table(xlsx_bytes(_merged_header), name="部門別.xlsx")
    df = result.df

    assert list(df.columns) == ["部門", "売上_上期", "売上_下期", "費用_上期", "費用_下期"]
    assert df["部門"].tolist() == ["営業部", "営業部", "総務部"]
    assert df["売上_下期"].tolist() == [200, 210, 6]
    assert result.info.header_row == 1
    assert any("2〜3 行目" in w for w in result.info.warnings)


def test_xlsx_single_row_merged_header_cell_covers_each_column() -> None:
    def build(wb: Workbook) -> None:
        ws = wb.active
        ws.append(["科目", "金額", None, "備考"])
        ws.merge_cells("B1:C1")
        ws.append(["交通費", 100, 8, "a"])

    result = read_table(xlsx_bytes(build), name="a.xlsx")
    assert list(result.df.columns) == ["科目", "金額", "金額_2", "備考"]


def test_xlsx_empty_sheet_is_unreadable_and_names_other_sheets() -> None:
    def build(wb: Workbook) -> None:
        wb.active.title = "空"
        wb.create_sheet("データ").append(["a"])

    with pytest.raises(FileProcessingError) as info:
        read_table(xlsx_bytes(build), name="a.xlsx")
    assert info.value.code == "FILE_UNREADABLE"
    assert "空" in info.value.message
    assert "データ" in info.value.hint


def test_million_row_csv_is_read_whole() -> None:
    # Speed is a benchmark's business (benchmarks/); a quadratic reader still trips the suite's
    # per-test timeout here.
    rows = 1_000_000
    body = "\n".join(
        f"2024-04-{1 + i % 28:02d},取引先{i % 997},{(i * 37) % 100_000}" for i in range(rows)
    )
    data = ("2024年度 取引一覧\n\n日付,取引先,金額\n" + body + "\n").encode("cp932")

    result = read_table(data, name="大量.csv")

    assert result.info.rows == rows
    assert len(result.df) == rows
    assert result.info.encoding == "cp932"
    assert result.info.header_row == 2
    assert pd.api.types.is_integer_dtype(result.df["金額"])
    assert result.df["金額"].iloc[-1] == ((rows - 1) * 37) % 100_000
