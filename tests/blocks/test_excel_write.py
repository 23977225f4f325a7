"""excel.write: records land in the right cells of a copy; the source workbook never changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from openpyxl import Workbook, load_workbook

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.documents.table_value import Table
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner

RECORDS = [
    {"vendor": "A社", "amount": 110000, "date": "2025-01-31"},
    {"vendor": "B社", "amount": 55000, "date": "2025-02-28"},
]


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("excel.write")


@pytest.fixture
def template(tmp_path: Path) -> Path:
    """A ledger with headers in row 1 and one existing row."""
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "明細"
    sheet.append(["日付", "取引先", "金額"])
    sheet.append(["2024-12-31", "既存", 1])
    book.create_sheet("メモ")
    path = tmp_path / "ledger.xlsx"
    book.save(path)
    return path


def rows(path: Path, sheet: str = "明細") -> list[tuple[Any, ...]]:
    book = load_workbook(path)
    try:
        return [tuple(r) for r in book[sheet].iter_rows(values_only=True)]
    finally:
        book.close()


def test_append_by_header_names_writes_a_copy_and_leaves_the_source_alone(
    block: Block, make_ctx: ContextFactory, template: Path
) -> None:
    before = template.read_bytes()
    ctx = make_ctx("write_excel")
    config = {
        "sheet": "明細",
        "column_mapping": {"date": "日付", "vendor": "取引先", "amount": "金額"},
    }
    out = run_like_runner(
        block, {"workbook": str(template), "data": RECORDS, "output_config": config}, ctx
    )
    summary = out["write_summary"]
    output = Path(summary["output_path"])
    assert output == ctx.work_dir() / "ledger_output.xlsx"
    assert (summary["sheet"], summary["rows_written"], summary["mode"]) == ("明細", 2, "append")
    assert summary["first_row"] == 3
    assert rows(output) == [
        ("日付", "取引先", "金額"),
        ("2024-12-31", "既存", 1),
        ("2025-01-31", "A社", 110000),
        ("2025-02-28", "B社", 55000),
    ]
    assert template.read_bytes() == before


def test_records_whose_keys_are_the_headers_need_no_mapping(
    block: Block, make_ctx: ContextFactory, template: Path
) -> None:
    data = {"items": [{"金額": 500, "日付": "2025-03-01", "取引先": "C社"}]}
    out = run_like_runner(block, {"workbook": str(template), "data": data}, make_ctx())
    summary = out["write_summary"]
    assert summary["columns"] == {"金額": "C", "日付": "A", "取引先": "B"}
    assert rows(Path(summary["output_path"]))[-1] == ("2025-03-01", "C社", 500)


def test_overwrite_from_a_start_cell_with_column_letters(
    block: Block, make_ctx: ContextFactory, template: Path, tmp_path: Path
) -> None:
    config = {
        "start_cell": "A2",
        "mode": "overwrite",
        "column_mapping": {"date": "A", "vendor": "b", "amount": "C"},
        "output_path": str(tmp_path / "out" / "result.xlsx"),
    }
    inputs = {"workbook": str(template), "data": {"rows": RECORDS[:1]}, "output_config": config}
    out = run_like_runner(block, inputs, make_ctx())
    assert out["write_summary"]["output_path"] == str(tmp_path / "out" / "result.xlsx")
    assert rows(tmp_path / "out" / "result.xlsx") == [
        ("日付", "取引先", "金額"),
        ("2025-01-31", "A社", 110000),
    ]
    assert rows(template)[1] == ("2024-12-31", "既存", 1)


@pytest.mark.parametrize(
    "data",
    [{"result": RECORDS}, [RECORDS[0], "B社"], "A社,110000"],
    ids=["no-list-key", "non-record-item", "text"],
)
def test_data_of_the_wrong_shape_is_refused_with_a_hint(
    block: Block, make_ctx: ContextFactory, template: Path, data: Any
) -> None:
    ctx = make_ctx()
    with pytest.raises(BlockError) as info:
        block.check_inputs({"workbook": str(template), "data": data})
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "items / records / rows" in info.value.hint
    with pytest.raises(BlockError):
        block.run({"workbook": str(template), "data": data, "output_config": {}}, ctx)
    assert list(ctx.work_dir().iterdir()) == []


def test_unknown_header_names_the_headers_and_writes_nothing(
    block: Block, make_ctx: ContextFactory, template: Path
) -> None:
    ctx = make_ctx()
    config = {"column_mapping": {"amount": "税込金額"}}
    with pytest.raises(BlockError) as info:
        run_like_runner(
            block, {"workbook": str(template), "data": RECORDS, "output_config": config}, ctx
        )
    assert "税込金額" in info.value.message
    assert "日付, 取引先, 金額" in info.value.hint
    assert list(ctx.work_dir().iterdir()) == []


def test_missing_sheet_lists_the_sheets(
    block: Block, make_ctx: ContextFactory, template: Path
) -> None:
    config = {"sheet": "集計"}
    with pytest.raises(BlockError) as info:
        run_like_runner(
            block, {"workbook": str(template), "data": RECORDS, "output_config": config}, make_ctx()
        )
    assert "明細, メモ" in info.value.hint


def test_misspelled_setting_is_refused(block: Block, template: Path) -> None:
    with pytest.raises(BlockError) as info:
        block.check_inputs(
            {"workbook": str(template), "data": RECORDS, "output_config": {"start": "B2"}}
        )
    assert "start" in info.value.message
    assert "start_cell" in info.value.hint


def test_output_over_the_source_is_refused(
    block: Block, make_ctx: ContextFactory, template: Path
) -> None:
    before = template.read_bytes()
    config = {"output_path": str(template)}
    with pytest.raises(BlockError) as info:
        run_like_runner(
            block, {"workbook": str(template), "data": RECORDS, "output_config": config}, make_ctx()
        )
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert template.read_bytes() == before


def test_rows_past_excels_last_row_are_refused_and_nothing_is_written(
    block: Block, make_ctx: ContextFactory, template: Path, tmp_path: Path
) -> None:
    output = tmp_path / "out" / "result.xlsx"
    config = {"start_cell": "A1048575", "mode": "overwrite", "output_path": str(output)}
    inputs = {"workbook": str(template), "data": RECORDS + RECORDS[:1], "output_config": config}
    with pytest.raises(BlockError) as info:
        run_like_runner(block, inputs, make_ctx())
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "1,048,575 行目から 3 行" in info.value.message
    assert "最終行（1,048,576 行目）" in info.value.message
    assert "分けて" in (info.value.hint or "")
    assert not output.exists()
    assert not output.parent.exists() or list(output.parent.iterdir()) == []


def test_a_table_is_written_without_making_all_its_records_at_once(
    block: Block,
    make_ctx: ContextFactory,
    template: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    size = 3_000
    frame = pd.DataFrame({"取引先": [f"T{i}" for i in range(size)], "金額": range(size)})
    made: list[int] = []
    records = Table.records

    def counted(self: Table, start: int = 0, stop: int | None = None) -> list[dict[str, Any]]:
        made.append(len(result := records(self, start, stop)))
        return result

    monkeypatch.setattr(Table, "records", counted)
    output = tmp_path / "out.xlsx"
    inputs = {
        "workbook": str(template),
        "data": Table(frame),
        "output_config": {"output_path": str(output)},
    }
    out = run_like_runner(block, inputs, make_ctx())
    assert out["write_summary"]["rows_written"] == size
    assert out["write_summary"]["columns"] == {"取引先": "B", "金額": "C"}
    assert max(made) < size  # a chunk at a time (Table's iteration)
    written = rows(output)
    assert len(written) == size + 2
    assert written[-1] == (None, f"T{size - 1}", size - 1)
