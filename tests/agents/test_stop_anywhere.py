"""The library's side of "stop at any moment": ``run_convert`` stopped by its cancel flag or its
deadline at every point of a generated set of jobs, and ``AnalysisSession.add_files`` stopped
(Ctrl+C) or failing at every file of a generated load.

Each job is held at its point by ``tests.support.stop_points`` (the test waits for its marker
file, then stops it: no fixed sleeps). Afterwards the output folder / workspace is exactly as
before (byte for byte; a folder the job made is gone), no staging or temporary file is left,
the result says cancelled (or the deadline's TIMEOUT_ERROR), and the same job run again without
a stop succeeds with files that parse.
"""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.agents.analysis import AnalysisSession
from keiri_agent.agents.convert.pipeline import ConvertResult, run_convert
from keiri_agent.errors import BlockError, ErrorCode
from tests.cli.test_stop_anywhere import (
    assert_whole,
    leftovers,
    script_convert,
    snapshot,
    write_inputs,
)
from tests.support import ScriptedLLMServer, stop_points
from tests.support.late_cancel import CancelSeenLate

pytestmark = pytest.mark.timeout(600)

FORMATS = ["csv", "tsv", "xlsx", "parquet", "json", "jsonl"]
REACH_S = 120.0
CASES = 16  # generated conversion jobs per seed; each is stopped at one point


def _wait_for(marker: Path, worker: threading.Thread) -> None:
    deadline = time.monotonic() + REACH_S
    while not marker.exists():
        assert worker.is_alive(), "the job ended before its stop point"
        assert time.monotonic() < deadline, "the job did not reach its stop point"
        time.sleep(0.01)  # polling a condition (the marker file), not a fixed wait


def _jobs(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    jobs = []
    for i in range(CASES):
        count = rng.randint(1, 4)
        k = rng.randint(1, count)
        fmt = rng.choice([*FORMATS, "png", "svg"])
        point = f"write:{k}:{rng.choice(['before', 'after'])}"
        jobs.append(
            {
                "seed": 100 + i,
                "count": count,
                "fmt": fmt,
                "point": "savefig" if fmt in ("png", "svg") else point,
                "existing": rng.random() < 0.5,
                "deadline": i % 6 == 5,  # every sixth job meets its deadline instead
            }
        )
    return jobs


def _run(args: dict[str, Any], cancel: threading.Event | None = None) -> ConvertResult:
    return run_convert(f"明細を {args['fmt']} に変換して", cancel=cancel, **args["kw"])


def _start(
    args: dict[str, Any], cancel: threading.Event, ended: threading.Event | None = None
) -> tuple[threading.Thread, dict[str, ConvertResult]]:
    """The job run in a thread; its result in the dict, ``ended`` set once it has returned."""
    outcome: dict[str, ConvertResult] = {}

    def work() -> None:
        try:
            outcome["r"] = _run(args, cancel)
        finally:
            if ended is not None:
                ended.set()

    worker = threading.Thread(target=work)
    worker.start()
    return worker, outcome


@pytest.mark.parametrize("seed", [1, 2])
def test_a_conversion_stopped_anywhere_leaves_its_folder_as_before(
    seed: int,
    tmp_path: Path,
    convert_env: Path,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wrong: list[str] = []
    for job in _jobs(seed):
        case = tmp_path / f"case-{seed}-{job['seed']}"
        (case / "data").mkdir(parents=True)
        inputs = write_inputs(case / "data", job["seed"], job["count"])
        out = case / "out"
        if job["existing"]:
            out.mkdir()
            for name in [*(path.stem for path in inputs), "変換結果", "取引先別"]:
                (out / f"{name}.{job['fmt']}").write_bytes(b"earlier result")
            (out / "メモ.txt").write_text("経理部のメモ", encoding="utf-8")
        source = inputs[0] if job["count"] == 1 else case / "data"
        job["kw"] = {"source": str(source), "out_dir": out}
        before = snapshot(out)
        script_convert(llm_server, job["fmt"], repeat=False)  # one reply per run
        marker = case / "reached"
        cancel = threading.Event()
        with monkeypatch.context() as patch:
            stop_points.reset()
            stop_points.install(job["point"], marker, patch.setattr)
            stop_points.watch(cancel)
            if job["deadline"]:
                patch.setenv("KEIRI_CONVERT_TIMEOUT_S", "1")
            started = time.monotonic()
            worker, outcome = _start(job, cancel)
            _wait_for(marker, worker)
            if job["deadline"]:
                while time.monotonic() - started < 1.5:  # until the deadline has passed
                    time.sleep(0.05)
                stop_points.release()
            else:
                cancel.set()
            worker.join(REACH_S)
        result = outcome["r"]
        expected = ErrorCode.TIMEOUT_ERROR if job["deadline"] else ErrorCode.CANCELLED
        status = "failed" if job["deadline"] else "cancelled"
        problems = []
        if (result.status, (result.error or {}).get("code")) != (status, expected):
            problems.append(f"status {result.status} {result.error}")
        if snapshot(out) != before:
            problems.append(f"folder changed: {sorted(snapshot(out))} (was {sorted(before)})")
        if not job["existing"] and out.exists():
            problems.append("a folder made for nothing is left")
        if leftovers(case):
            problems.append(f"left: {leftovers(case)}")
        if result.files:
            problems.append(f"files reported: {result.files}")
        if problems:
            wrong.append(f"{job['point']} {job['count']} files → {job['fmt']}: {problems}")
            continue
        script_convert(llm_server, job["fmt"], repeat=False)
        again = _run(job)  # the same job, not stopped
        made = 1 if job["fmt"] in ("png", "svg") else job["count"]
        if again.status != "success" or len(again.files) != made:
            wrong.append(f"re-run of {job}: {again.status} {again.error}")
            continue
        for path in again.files:
            assert_whole(path)
    assert wrong == [], "\n".join(wrong)


def test_a_conversion_released_by_its_cancel_ends_cancelled_before_any_waiter_wakes(
    tmp_path: Path,
    convert_env: Path,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The caller's cancel set while the run is held: the run meets it at its very next check,
    with no thread in between to copy it (the CI flake of the test above, made certain)."""
    rng = random.Random(3)
    wrong: list[str] = []
    for i, fmt in enumerate([*FORMATS, "png", "svg"]):
        case = tmp_path / f"case-{i}"
        (case / "data").mkdir(parents=True)
        count = rng.randint(1, 3)
        inputs = write_inputs(case / "data", 200 + i, count)
        out = case / "out"
        if rng.random() < 0.5:
            out.mkdir()
            (out / "メモ.txt").write_text("経理部のメモ", encoding="utf-8")
        before = snapshot(out)
        source = inputs[0] if count == 1 else case / "data"
        job = {"fmt": fmt, "kw": {"source": str(source), "out_dir": out}}
        when = rng.choice(["before", "after"])
        point = "savefig" if fmt in ("png", "svg") else f"write:{rng.randint(1, count)}:{when}"
        script_convert(llm_server, fmt, repeat=False)
        ended = threading.Event()
        cancel = CancelSeenLate(ended, REACH_S)
        with monkeypatch.context() as patch:
            stop_points.reset()
            stop_points.install(point, case / "reached", patch.setattr)
            stop_points.watch(cancel)  # the held run reads is_set(): released at once
            worker, outcome = _start(job, cancel, ended)
            _wait_for(case / "reached", worker)
            cancel.set()  # returns once the run has ended
            worker.join(REACH_S)
        result = outcome["r"]
        if (result.status, (result.error or {}).get("code")) != ("cancelled", "CANCELLED"):
            wrong.append(f"{point} → {fmt}: {result.status} {result.files}")
        if snapshot(out) != before or leftovers(case):
            wrong.append(f"{point} → {fmt}: folder {sorted(snapshot(out))} {leftovers(case)}")
    assert wrong == [], "\n".join(wrong)


# --- AnalysisSession.add_files -----------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_a_load_stopped_or_failing_at_any_file_keeps_nothing_of_it(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    count = rng.randint(1, 4)
    (tmp_path / "data").mkdir()
    inputs = write_inputs(tmp_path / "data", seed, count)
    root = tmp_path / "ws"
    for k in range(1, count + 1):
        for how in ("ctrl-c", "broken"):
            session = AnalysisSession(workspace_root=root)
            if seed % 2:  # a session that already has data: its workspace stays as it was
                session.add_files(write_inputs(tmp_path / "data", seed + 50, 1))
            before = snapshot(root)
            files = list(inputs)
            if how == "broken":
                broken = tmp_path / "data" / f"壊れた_{k}.xlsx"
                broken.write_bytes(b"PK\x03\x04 not a workbook")
                files.insert(k - 1, broken)
            with monkeypatch.context() as patch:
                if how == "ctrl-c":
                    _interrupt_at(patch, k)
                expected = KeyboardInterrupt if how == "ctrl-c" else BlockError
                with pytest.raises(expected):
                    session.add_files(files)
            assert snapshot(root) == before, (k, how)
            assert leftovers(tmp_path) == [], (k, how)
            assert (session.workspace is None) == (seed % 2 == 0)
            assert len(session.frames) == (seed % 2)  # none of the stopped load's frames
            infos = session.add_files(inputs)  # the same load again goes through
            assert [info.shape[0] > 0 for info in infos] == [True] * count
            assert session.workspace is not None
            assert {p.name for p in inputs} <= {p.name for p in session.workspace.iterdir()}
            for path in inputs:
                assert (session.workspace / path.name).read_bytes() == path.read_bytes()


def _interrupt_at(patch: pytest.MonkeyPatch, k: int) -> None:
    """Ctrl+C (KeyboardInterrupt, as the CLI's main thread gets it) while reading file ``k``."""
    from keiri_agent.agents.analysis import session as session_module

    original = session_module.read_ledger
    calls = [0]

    def reading(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == k:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    patch.setattr(session_module, "read_ledger", reading)
