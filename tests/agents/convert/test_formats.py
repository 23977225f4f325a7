"""Table conversion among CSV, TSV, Excel, JSON, JSONL and Parquet."""

from __future__ import annotations

import codecs
import json
import os
import tempfile
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from keiri_agent.agents.convert.formats import convert_file, read_table, write_table
from keiri_agent.agents.convert.models import TABLE_FORMATS, UnsupportedFormatError
from keiri_agent.errors import ErrorCode, FileProcessingError

TABLE = pd.DataFrame(
    {
        "取引先": ["株式会社髙橋商店", "㈱ミライ①", "ｶﾌﾞｼｷｶﾞｲｼｬ"],
        "金額": [1_234_567, -500, 0],
        "税率": [0.1, 0.08, 1 / 3],
        "コード": ["0012", "0100", "A-1"],
        "計上日": pd.to_datetime(["2024-04-01", "2024-05-31", "2025-03-31"]),
        "備考": ["=SUM(A1:A3)", None, "改行\nと\tタブ"],
    }
)


def _same(actual: pd.DataFrame, expected: pd.DataFrame = TABLE) -> None:
    # Missing text is None from some readers and NaN from others; both mean "empty".
    normalize = lambda df: df.astype(object).where(df.notna(), None)  # noqa: E731
    pd.testing.assert_frame_equal(normalize(actual), normalize(expected), check_dtype=False)
    assert pd.api.types.is_integer_dtype(actual["金額"])
    assert pd.api.types.is_datetime64_any_dtype(actual["計上日"])


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("sources")
    return {fmt: write_table(TABLE, folder / f"請求.{fmt}", fmt) for fmt in TABLE_FORMATS}


@pytest.mark.parametrize("source", TABLE_FORMATS)
def test_every_direction_round_trips(source: str, sources: dict[str, Path], tmp_path: Path) -> None:
    _same(read_table(sources[source]))
    for target in TABLE_FORMATS:
        out = convert_file(sources[source], target, tmp_path / source)
        assert out == tmp_path / source / f"請求.{target}"
        _same(read_table(out))


def test_csv_is_utf8_with_bom_and_tsv_without(sources: dict[str, Path]) -> None:
    assert sources["csv"].read_bytes().startswith(codecs.BOM_UTF8)
    assert "株式会社髙橋商店" in sources["csv"].read_text(encoding="utf-8-sig")
    assert not sources["tsv"].read_bytes().startswith(codecs.BOM_UTF8)


def test_excel_stores_formula_like_text_as_text(sources: dict[str, Path]) -> None:
    sheet = openpyxl.load_workbook(sources["xlsx"]).worksheets[0]
    cell = sheet["F2"]
    assert cell.value == "=SUM(A1:A3)"
    assert cell.data_type == "s"
    assert sheet["E2"].number_format == "yyyy-mm-dd"


def test_json_is_readable_japanese_records(sources: dict[str, Path]) -> None:
    records = json.loads(sources["json"].read_text(encoding="utf-8"))
    assert records[0]["取引先"] == "株式会社髙橋商店"
    assert records[0]["計上日"] == "2024-04-01"
    assert records[2]["税率"] == 1 / 3  # exact, not rounded to 10 digits
    lines = sources["jsonl"].read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3
    assert json.loads(lines[1])["備考"] is None


def test_cp932_csv_input(tmp_path: Path) -> None:
    source = tmp_path / "売上.csv"
    source.write_bytes('取引先,金額\n㈱髙島屋①,"1,200"\nｶﾌﾞｼｷｶﾞｲｼｬ,300\n'.encode("cp932"))
    out = convert_file(source, "csv", tmp_path / "out")
    text = out.read_bytes()
    assert text.startswith(codecs.BOM_UTF8)
    assert "㈱髙島屋①,1200" in text.decode("utf-8-sig")
    frame = read_table(convert_file(source, "parquet", tmp_path / "out"))
    assert frame["取引先"].tolist() == ["㈱髙島屋①", "ｶﾌﾞｼｷｶﾞｲｼｬ"]
    assert frame["金額"].tolist() == [1200, 300]
    assert read_table(source).attrs["read_info"]["encoding"] == "cp932"


def test_json_shapes(tmp_path: Path) -> None:
    columns = tmp_path / "columns.json"
    columns.write_text(
        json.dumps({"名前": ["あ", "い"], "数": [1, 2]}, ensure_ascii=False), "utf-8"
    )
    assert read_table(columns)["名前"].tolist() == ["あ", "い"]
    nested = tmp_path / "nested.jsonl"
    nested.write_text('{"社員": {"氏名": "山田"}, "タグ": ["経理", "総務"]}\n\n', "utf-8")
    frame = read_table(nested)
    assert frame["社員.氏名"].tolist() == ["山田"]
    out = convert_file(nested, "csv", tmp_path / "out")
    assert '"[""経理"", ""総務""]"' in out.read_text(encoding="utf-8-sig")
    scalar = tmp_path / "scalar.json"
    scalar.write_text("[1, 2, 3]", "utf-8")
    with pytest.raises(UnsupportedFormatError) as shape:
        read_table(scalar)
    assert shape.value.fmt == "json"
    assert "表の形ではありません" in shape.value.message
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"a": 1}\n{"a": \n', "utf-8")
    with pytest.raises(FileProcessingError) as bad:
        read_table(broken)
    assert "2 行目" in bad.value.message
    assert bad.value.code == ErrorCode.FILE_UNREADABLE


def test_unsupported_formats(sources: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFormatError) as target:
        convert_file(sources["csv"], "pdf", tmp_path)
    assert isinstance(target.value, ValueError)
    assert target.value.fmt == "pdf"
    assert target.value.hint
    assert "pdf" in target.value.message
    assert "対応していません" in target.value.message
    assert target.value.to_dict()["details"] == {"fmt": "pdf"}
    legacy = tmp_path / "古い.xls"
    legacy.write_bytes(b"\xd0\xcf\x11\xe0")
    with pytest.raises(UnsupportedFormatError) as source:
        convert_file(legacy, "csv", tmp_path / "out")
    assert source.value.fmt == "xls"
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_aliases_and_output_names(sources: dict[str, Path], tmp_path: Path) -> None:
    out = convert_file(sources["csv"], "Excel", tmp_path, output_name="../../結果.xlsx")
    assert out == tmp_path / "結果.xlsx"
    assert convert_file(sources["csv"], ".NDJSON", tmp_path).suffix == ".jsonl"


def test_refuses_to_overwrite_the_input(tmp_path: Path) -> None:
    source = write_table(TABLE, tmp_path / "a.csv", "csv")
    before = source.read_bytes()
    with pytest.raises(FileProcessingError) as info:
        convert_file(source, "csv", tmp_path)
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert source.read_bytes() == before


def test_failed_write_leaves_nothing_half_written(tmp_path: Path) -> None:
    target = tmp_path / "out.parquet"
    target.write_bytes(b"previous result")
    odd = pd.DataFrame({"値": [object(), object()]})
    with pytest.raises(UnsupportedFormatError) as parquet:
        write_table(odd, target, "parquet")
    assert parquet.value.fmt == "parquet"
    assert target.read_bytes() == b"previous result"
    with pytest.raises(UnsupportedFormatError):
        write_table(pd.DataFrame({"x": [float("inf")]}), tmp_path / "inf.json", "json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cwd", "out.parquet"]


def test_failed_excel_write_leaves_no_workbook_and_no_temporary_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A control character Excel cannot hold, in the last of many rows: the sheet had started
    writing (openpyxl's temporary file in the system's temporary folder) when it failed."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    out = tmp_path / "out"
    out.mkdir()
    target = out / "請求.xlsx"
    target.write_bytes(b"previous result")
    odd = pd.DataFrame({"摘要": ["保守料"] * 500 + ["請求\x01書"], "金額": range(501)})
    with pytest.raises(UnsupportedFormatError) as info:
        write_table(odd, target, "xlsx")
    assert info.value.fmt == "xlsx"
    assert "制御文字" in info.value.message
    assert "請求.xlsx" in info.value.message
    assert info.value.hint
    assert target.read_bytes() == b"previous result"
    assert os.listdir(out) == ["請求.xlsx"]
    assert os.listdir(scratch) == []
    fresh = out / "新規.xlsx"
    with pytest.raises(UnsupportedFormatError):
        write_table(odd, fresh, "xlsx")
    assert not fresh.exists()
    assert os.listdir(scratch) == []


def test_excel_named_sheet(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    book.active.append(["表紙"])
    data = book.create_sheet("明細")
    data.append(["品目", "数量"])
    data.append(["りんご", 3])
    book.save(tmp_path / "book.xlsx")
    frame = read_table(tmp_path / "book.xlsx", sheet="明細")
    assert frame.to_dict("records") == [{"品目": "りんご", "数量": 3}]
