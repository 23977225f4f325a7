"""Every block that reads or writes a path does it through the run's FileAccess: with a
confined context (what the API server gives each task), a path input that leads outside the
task's files and the shared data is refused with PERMISSION_DENIED naming the input, before
anything is read or written; inside, the same blocks work as before, relative names found in
the task's uploads, outputs and shared data."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from openpyxl import Workbook
from PIL import Image

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import ErrorCode, PathEscapeError
from keiri_agent.file_access import FileAccess
from keiri_agent.plan._run.execute import BlockJob, execute_job
from tests.blocks.conftest import AnswerBook, run_like_runner
from tests.support import ScriptedLLMServer

CSV = "月,売上\n2025-01,100\n2025-02,200\n"
RECORDS = [{"月": "2025-01", "売上": 100}]
INVOICES = [{"請求番号": "INV-1", "取引先コード": "1001", "請求金額": 110000}]
DEPOSITS = [{"勘定日": "2026-02-27", "入金額": 110000, "振込依頼人名": "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ"}]


@dataclass
class Place:
    """A task's folders, the shared data, and files outside both (each a real, readable one)."""

    root: Path

    @property
    def task(self) -> Path:
        return self.root / "workspace" / "tasks" / "mine"

    @property
    def shared(self) -> Path:
        return self.root / "shared"

    @property
    def outside(self) -> Path:
        return self.root / "outside"

    def access(self) -> FileAccess:
        return FileAccess.confined(
            search=(self.task / "uploads", self.task / "files", self.shared),
            writable=(self.task / "files", self.task / "runs"),
        )

    def ctx(self, node_id: str = "node", answers: dict[str, Any] | None = None) -> BlockContext:
        return BlockContext(
            run_id="run-1",
            plan_id="plan-1",
            node_id=node_id,
            block_version="0.1.0",
            workspace=self.task / "runs" / "work",
            inputs=AnswerBook(answers) if answers is not None else None,
            access=self.access(),
        )


def _workbook(path: Path) -> None:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["月", "売上"])
    sheet.append(["2025-01", 100])
    book.save(path)


def _png(path: Path) -> None:
    Image.new("RGB", (4, 4), "white").save(path, format="PNG")


def _zip(path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("A社/請求書.txt", "請求金額 110,000 円")
    path.write_bytes(buffer.getvalue())


@pytest.fixture
def place(tmp_path: Path) -> Place:
    found = Place(tmp_path)
    for folder in (found.task / "uploads", found.task / "files", found.shared, found.outside):
        folder.mkdir(parents=True)
    for folder in (found.task / "uploads", found.outside):
        (folder / "給与.csv").write_text(CSV, encoding="utf-8")
        _workbook(folder / "book.xlsx")
        _png(folder / "chart.png")
        _zip(folder / "証跡.zip")
    (found.shared / "共有.csv").write_text(CSV, encoding="utf-8")
    return found


# (block, inputs with the outside folder as {out}, the input named in the refusal)
OUTSIDE: list[tuple[str, dict[str, Any], str]] = [
    ("file.read_table", {"path": "{out}/給与.csv"}, "path"),
    ("file.extract_text", {"paths": ["{out}/給与.csv"]}, "paths"),
    ("file.list_folder", {"folder": "{out}"}, "folder"),
    ("file.parse_zip_2tier", {"zip_bytes": "{out}/証跡.zip"}, "zip_bytes"),
    ("excel.read_data", {"path": "{out}/book.xlsx"}, "path"),
    ("excel.write", {"workbook": "{out}/book.xlsx", "data": RECORDS}, "workbook"),
    (
        "excel.write",
        {
            "workbook": "book.xlsx",
            "data": RECORDS,
            "output_config": {"output_path": "{out}/w.xlsx"},
        },
        "output_config.output_path",
    ),
    (
        "excel.write_report",
        {"sheets": [{"name": "表", "rows": RECORDS}], "output_path": "{out}/r.xlsx"},
        "output_path",
    ),
    (
        "excel.write_report",
        {"sheets": [{"name": "表", "rows": RECORDS}], "images": [{"path": "{out}/chart.png"}]},
        "images[0].path",
    ),
    ("report.markdown", {"template": "# 報告", "output_path": "{out}/r.md"}, "output_path"),
    (
        "report.chart",
        {"table": RECORDS, "x": "月", "y": "売上", "output_path": "{out}/c.png"},
        "output_path",
    ),
    ("data.convert", {"request": "JSON にして", "out_dir": "{out}/converted"}, "out_dir"),
    ("ai.analyze_data", {"question": "売上は？", "files": ["{out}/給与.csv"]}, "files"),
    ("ai.helpdesk_answer", {"question": "再設定は？", "index_dir": "{out}"}, "index_dir"),
    ("file.read_bank_statement", {"path": "{out}/給与.csv"}, "path"),
    (
        "table.match_payments",
        {"invoices": INVOICES, "deposits": DEPOSITS, "customers": "{out}/給与.csv"},
        "customers",
    ),
    (
        "table.match_payments",
        {"invoices": INVOICES, "deposits": DEPOSITS, "aliases": "{out}/給与.csv"},
        "aliases",
    ),
]


def _fill(value: Any, out: Path) -> Any:
    if isinstance(value, str):
        return value.replace("{out}", str(out))
    if isinstance(value, list):
        return [_fill(v, out) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, out) for k, v in value.items()}
    return value


def _written(folder: Path) -> set[Path]:
    return set(folder.rglob("*"))


@pytest.mark.parametrize(
    ("block_id", "inputs", "field"), OUTSIDE, ids=[f"{b}:{f}" for b, _i, f in OUTSIDE]
)
def test_a_path_outside_is_refused_naming_the_input(
    registry: BlockRegistry, place: Place, block_id: str, inputs: dict[str, Any], field: str
) -> None:
    before = _written(place.outside)
    block = registry.load(block_id)
    with pytest.raises(PathEscapeError) as info:
        run_like_runner(block, _fill(inputs, place.outside), place.ctx())
    error = info.value
    assert error.code == ErrorCode.PERMISSION_DENIED
    assert error.details["field"] == field
    assert error.message.startswith(f"{field} のパス「")
    assert _written(place.outside) == before  # nothing written where the task may not write


def test_an_image_named_in_evidence_data_is_refused_outside(
    registry: BlockRegistry, place: Place, llm_server: ScriptedLLMServer
) -> None:
    evidence = {"files": [{"name": "chart.png", "text": "図", "local_path": "{out}/chart.png"}]}
    inputs = {
        "evidence_data": evidence,
        "prompt": "要約して",
        "output_schema": {"s": "string"},
        "max_images": 1,
    }
    with pytest.raises(PathEscapeError) as info:
        run_like_runner(registry.load("ai.process_llm"), _fill(inputs, place.outside), place.ctx())
    assert info.value.details["field"] == "evidence_data.files.local_path"
    assert llm_server.chat_requests() == []  # the image never reached the model


def test_an_answer_naming_a_path_outside_stops_the_input_node(
    registry: BlockRegistry, place: Place
) -> None:
    inputs = {
        "mode": "collect",
        "message": "ファイルを選んでください",
        "requirements": [{"id": "f", "type": "file"}],
    }
    answers = {"collect": {"f": str(place.outside / "給与.csv")}}
    with pytest.raises(PathEscapeError) as info:
        run_like_runner(
            registry.load("ui.interactive_input"), inputs, place.ctx("sub/collect", answers)
        )
    assert info.value.details["field"] == "sub/collect.f"


def test_a_block_on_a_remote_worker_is_confined_too(registry: BlockRegistry, place: Place) -> None:
    job = BlockJob(
        spec=registry.get("file.read_table"),
        spec_root=None,
        inputs={"path": str(place.outside / "給与.csv")},
        run_id="run-1",
        plan_id="plan-1",
        node_path="read",
        workspace=str(place.task / "runs" / "work"),
        access=place.access(),
    )
    result = execute_job(job)
    assert result.outputs is None
    assert result.error is not None
    assert result.error["code"] == ErrorCode.PERMISSION_DENIED


# --- inside, the blocks work as before ------------------------------------------------------


def test_relative_names_are_found_in_uploads_and_shared_data(
    registry: BlockRegistry, place: Place
) -> None:
    upload = run_like_runner(registry.load("file.read_table"), {"path": "給与.csv"}, place.ctx())
    shared = run_like_runner(registry.load("file.read_table"), {"path": "共有.csv"}, place.ctx())
    assert upload["rows"][0]["売上"] == 100
    assert shared["rows"][1]["売上"] == 200


def test_outputs_are_written_in_the_runs_own_folder_and_read_back(
    registry: BlockRegistry, place: Place
) -> None:
    ctx = place.ctx("write")
    written = run_like_runner(
        registry.load("excel.write"),
        {"workbook": "book.xlsx", "data": RECORDS, "output_config": {"output_path": "結果.xlsx"}},
        ctx,
    )
    output = Path(written["write_summary"]["output_path"])
    assert output.is_relative_to(place.task / "runs" / "work")
    read = run_like_runner(registry.load("excel.read_data"), {"path": str(output)}, place.ctx())
    assert read["summary"]["rows"] == 2


def test_an_answer_naming_an_upload_is_the_upload(registry: BlockRegistry, place: Place) -> None:
    inputs = {
        "mode": "collect",
        "message": "ファイルを選んでください",
        "requirements": [{"id": "f", "type": "file"}],
    }
    out = run_like_runner(
        registry.load("ui.interactive_input"),
        inputs,
        place.ctx("collect", {"collect": {"f": "給与.csv"}}),
    )
    assert out["collected_data"]["f"] == str((place.task / "uploads" / "給与.csv").resolve())
