"""Resume and rerun start from exactly the vars of the original run, whatever their size or kind.

The run log's ``plan_start`` keeps a display copy of the vars (long lists, dicts and strings cut,
binaries described); a resumed or rerun run must never read that copy back as its input.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from pydantic import SecretStr

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError
from keiri_agent.events import MAX_LOG_ITEMS, MAX_LOG_STRING_CHARS, read_events
from keiri_agent.events.models import PlanStart
from keiri_agent.plan import PlanRunner

WritePlan = Callable[[str, str], Path]

PLAN = """
id: exact_vars
vars: {big: null}
graph:
  - {id: ask, block: ui.interactive_input, in: {mode: collect, message: 確認, requirements: [{id: wait, type: number, label: 待ち秒}]}}
  - {id: echo, block: test.sleep, in: {seconds: "${ask.collected_data.wait}", value: "${vars.big}"}}
"""
FIXTURES = Path(__file__).parent / "fixtures" / "old_runlog"


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "取引先": [f"株式会社{i}" for i in range(3000)],
            "金額": [i * 1000 + 1 for i in range(3000)],
            "率": [i / 7 for i in range(3000)],
        }
    )


BIG: dict[str, Callable[[], Any]] = {
    "list": lambda: [{"id": i, "name": f"取引先{i}"} for i in range(5 * MAX_LOG_ITEMS)],
    "dict": lambda: {f"k{i:04d}": [i, str(i)] for i in range(5 * MAX_LOG_ITEMS)},
    "string": lambda: "請求書の明細。" * (3 * MAX_LOG_STRING_CHARS),
    "bytes": lambda: os.urandom(300_000),
    "dataframe": _frame,
    "nested": lambda: {"files": [b"%PDF-" + os.urandom(5000)] * 3, "rows": list(range(1000))},
}


def _same(actual: Any, expected: Any) -> None:
    if isinstance(expected, pd.DataFrame):
        pd.testing.assert_frame_equal(actual, expected)
    else:
        assert type(actual) is type(expected)
        assert actual == expected


@pytest.mark.parametrize("kind", sorted(BIG))
def test_resume_and_rerun_use_the_exact_vars(
    runner: PlanRunner, write_plan: WritePlan, kind: str
) -> None:
    plan = write_plan("exact_vars", PLAN)
    value = BIG[kind]()
    straight = runner.run(plan, vars={"big": value}, answers={"ask": {"wait": 0}})
    assert straight.status == "success", straight.error
    _same(straight.outputs["echo"]["value"], value)

    paused = runner.run(plan, vars={"big": value})
    assert paused.status == "waiting_input"
    assert paused.log_path is not None
    start = read_events(paused.log_path)[0]
    assert isinstance(start, PlanStart)
    # The log line stays a display copy: small, JSON, never the whole value.
    assert len(start.to_json()) < 60_000
    resumed = runner.resume(paused.run_id, answers={"ask": {"wait": 0}})
    assert resumed.status == "success", resumed.error
    _same(resumed.outputs["echo"]["value"], value)

    rerun = runner.rerun(resumed.run_id, "echo")
    assert rerun.status == "success", rerun.error
    _same(rerun.outputs["echo"]["value"], value)


def _old_runs(tmp_path: Path) -> Path:
    runs = tmp_path / "old_runs"
    shutil.copytree(FIXTURES, runs)
    return runs


def test_a_log_written_before_exact_vars_still_resumes(runner: PlanRunner, tmp_path: Path) -> None:
    runs = _old_runs(tmp_path)
    log = runs / "exact_vars" / "20261126T023008Z.jsonl"
    assert "vars_file" not in log.read_text(encoding="utf-8")  # the old format
    resumed = runner.resume(log, answers={"ask": {"wait": 0}})
    assert resumed.status == "success", resumed.error
    assert resumed.outputs["echo"]["value"] == {
        "months": ["2024-01", "2024-02"],
        "rate": 0.1,
        "名前": "経理",
    }


def test_an_old_log_whose_vars_were_cut_is_refused_not_resumed_with_the_cut(
    runner: PlanRunner, tmp_path: Path
) -> None:
    runs = _old_runs(tmp_path)
    log = runs / "exact_vars" / "20261126T023008Z-2.jsonl"
    first = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    assert first["inputs"]["vars"]["big"][-1] == "…(全500件)"
    before = sorted(p.name for p in (tmp_path / "runs").rglob("*.jsonl"))
    for attempt in (
        lambda: runner.resume(log, answers={"ask": {"wait": 0}}),
        lambda: runner.rerun(log, "ask"),
    ):
        with pytest.raises(BlockError) as caught:
            attempt()
        assert "正確に復元できない" in caught.value.message
        assert "big" in caught.value.message
        assert "--vars" in (caught.value.hint or "")
    assert sorted(p.name for p in (tmp_path / "runs").rglob("*.jsonl")) == before  # no run


def test_vars_that_cannot_be_stored_make_resume_refuse(
    runner: PlanRunner, write_plan: WritePlan
) -> None:
    plan = write_plan("exact_vars", PLAN)
    paused = runner.run(plan, vars={"big": {1: "数値のキー"}})
    assert paused.status == "waiting_input"
    assert paused.log_path is not None
    warnings = [e for e in read_events(paused.log_path) if e.event == "log"]
    assert any("再開・再実行できません" in getattr(e, "msg", "") for e in warnings)
    with pytest.raises(BlockError) as caught:
        runner.resume(paused.run_id, answers={"ask": {"wait": 0}})
    assert "保存できない値" in caught.value.message


def test_vars_holding_a_secret_are_not_stored_and_resume_refuses(
    registry: BlockRegistry, tmp_path: Path, designs: Path, write_plan: WritePlan
) -> None:
    plan = write_plan("exact_vars", PLAN)
    secret = "sk-live-77aa01bc9e"
    settings = Settings(_env_file=None, openai_api_key=SecretStr(secret))  # type: ignore[call-arg]
    with PlanRunner(
        registry, settings=settings, runs_dir=tmp_path / "runs", designs_dir=designs, config={}
    ) as runner:
        paused = runner.run(plan, vars={"big": ["x", secret]})
        assert paused.status == "waiting_input"
        files = [p for p in (tmp_path / "runs").rglob("*") if p.is_file()]
        assert not [p for p in files if secret in p.read_text(encoding="utf-8", errors="replace")]
        with pytest.raises(BlockError) as caught:
            runner.resume(paused.run_id, answers={"ask": {"wait": 0}})
    assert "保存できない値" in caught.value.message


PERSONAL_PLAN = """
id: personal_outputs
vars: {contact: null}
graph:
  - {id: first, block: test.sleep, in: {seconds: 0, value: "${vars.contact}"}}
  - {id: ask, block: ui.interactive_input, in: {mode: collect, message: 確認, requirements: [{id: wait, type: number, label: 待ち秒}]}}
  - {id: echo, block: test.sleep, in: {seconds: "${ask.collected_data.wait}", value: "${first.value}"}}
"""


def test_a_resume_reads_back_outputs_holding_personal_data_exactly(
    runner: PlanRunner, write_plan: WritePlan
) -> None:
    # The run log masks personal data (issue 37); a resume must still get the real values.
    plan = write_plan("personal_outputs", PERSONAL_PLAN)
    contact = {"氏名": "長谷川 美咲", "電話": "090-4412-7788", "メール": "misaki@example.jp"}
    paused = runner.run(plan, vars={"contact": contact})
    assert paused.status == "waiting_input"
    assert paused.log_path is not None
    log = paused.log_path.read_text(encoding="utf-8")
    assert "090-4412-7788" not in log
    assert "misaki@example.jp" not in log
    resumed = runner.resume(paused.run_id, answers={"ask": {"wait": 0}})
    assert resumed.status == "success", resumed.error
    assert resumed.outputs["echo"]["value"] == contact
