"""Ctrl+C at every point of `keiri-agent analyze` and `keiri-agent convert` that a test can reach
exactly (a real SIGINT to a real process; ``tests.support.stop_points`` holds the run there and
creates a marker file, which the test waits for -- no fixed sleeps).

After each stop: exit code 130, a Japanese message saying what was kept and how to go on, the
folders as before (the output folder byte for byte, no new workspace, no staging or temporary
file) or, where the run had already finished, complete files that parse; and the same command
run again without a stop succeeds. The inputs are generated in shapes back offices send:
Shift_JIS CSV with a title row and a 合計 row, TSV, Excel with a title row, several files at once.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import keiri_agent
from tests.support import ScriptedLLMServer
from tests.support.processes import interrupt, start_interruptible

pytestmark = pytest.mark.timeout(600)

SRC = Path(keiri_agent.__file__).resolve().parents[1]  # the copy of the package under test
ROOT = Path(__file__).resolve().parents[2]  # for `python -m tests.support.stop_points`
REACH_S = 180.0  # until the run reaches its point: imports and start-up on a loaded machine
STOPPED_WITHIN_S = 60.0
LEFTOVERS = (".keiri-staging-", ".keiri-copy-", ".tmp")  # what a half-done write leaves
PAYERS = ["あおば商事", "株式会社ミドリ電機", "（株）さくら物産", "ﾔﾏﾀﾞｼｮｳｼﾞ", "北星運輸 株式会社"]


@dataclass
class Ended:
    exit_code: int
    stdout: str
    stderr: str


def _ledger(rng: random.Random, rows: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "日付": [f"2026/{rng.randint(1, 12)}/{rng.randint(1, 28)}" for _ in range(rows)],
            "取引先": [rng.choice(PAYERS) for _ in range(rows)],
            "金額": [rng.randrange(1_000, 2_000_000, 10) for _ in range(rows)],
        }
    )


def write_inputs(folder: Path, seed: int, count: int) -> list[Path]:
    """``count`` ledgers as back offices send them: Shift_JIS CSV with a title and a 合計 row,
    TSV in UTF-8 with a BOM, Excel with a title row (by turns)."""
    rng = random.Random(seed)
    paths = []
    for i in range(count):
        frame = _ledger(rng, rng.randint(3, 40))
        kind = (seed + i) % 3
        if kind == 0:
            path = folder / f"売上明細_{i + 1}.csv"
            body = frame.to_csv(index=False)
            total = f"合計,,{int(frame['金額'].sum())}\n"
            path.write_bytes(("2026年度 売上明細\n" + body + total).encode("cp932"))
        elif kind == 1:
            path = folder / f"入金一覧_{i + 1}.tsv"
            path.write_bytes(frame.to_csv(index=False, sep="\t").encode("utf-8-sig"))
        else:
            path = folder / f"経費_{i + 1}.xlsx"
            with pd.ExcelWriter(path, engine="openpyxl") as writer:
                frame.to_excel(writer, index=False, startrow=1)
                writer.sheets["Sheet1"]["A1"] = "経費精算 一覧"
        paths.append(path)
    return paths


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative name → bytes)."""
    if not folder.exists():
        return {}
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def leftovers(folder: Path) -> list[str]:
    return [str(p) for p in folder.rglob("*") if any(mark in p.name for mark in LEFTOVERS)]


def _env(public_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": f"{SRC}{os.pathsep}{ROOT}",
        "KEIRI_RUNS_DIR": str(public_dir / "runs"),
        "KEIRI_WORKSPACE_ROOT": str(public_dir / "ws"),
        "KEIRI_LLM_MAX_RETRIES": "0",
    }


def ctrl_c_at(point: str, args: list[str], public_dir: Path) -> Ended:
    """Run ``keiri-agent *args`` held at ``point``; once it is there, send SIGINT."""
    marker = public_dir / f"reached-{time.monotonic_ns()}"
    proc = start_interruptible(
        [sys.executable, "-m", "tests.support.stop_points", point, str(marker), *args],
        cwd=ROOT,
        env=_env(public_dir),
    )
    try:
        deadline = time.monotonic() + REACH_S
        while not marker.exists():
            if proc.poll() is not None:
                out, err = proc.communicate()
                pytest.fail(f"ended before reaching {point}: {proc.returncode}\n{out}\n{err}")
            if time.monotonic() > deadline:
                pytest.fail(f"did not reach {point} within {REACH_S} s")
            time.sleep(0.05)  # polling for the marker file: a condition, not a fixed wait
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    stdout, stderr = interrupt(proc, within_s=STOPPED_WITHIN_S)
    return Ended(proc.returncode, stdout, stderr)


def run_cli(args: list[str], public_dir: Path) -> Ended:
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "keiri-agent"), *args],
        cwd=ROOT,
        env=_env(public_dir),
        capture_output=True,
        text=True,
        timeout=REACH_S,
    )
    return Ended(proc.returncode, proc.stdout, proc.stderr)


def _asks_for(schema: str) -> Any:
    return lambda body: schema in json.dumps(body, ensure_ascii=False)


def script_analysis(llm_server: ScriptedLLMServer) -> None:
    """A turn without code: reason says finalize, the report answers (in Japanese)."""
    llm_server.add_chat(
        json={"next_action": "finalize", "rationale": "集計済み"},
        when=_asks_for("ReasonOutput"),
        repeat=True,
    )
    llm_server.add_chat(
        json={
            "title": "取引先別の売上",
            "conclusion": "売上は取引先ごとに大きな差があります。",
            "evidence": ["読み込んだ明細の金額列による"],
            "sections": [{"section_type": "text", "content": "取引先別に集計しました。"}],
        },
        when=_asks_for("ReportOutput"),
        repeat=True,
    )


# --- keiri-agent analyze -----------------------------------------------------------------

# (point, how many files, seed): every file of a load, the reason call, the report call, the
# report's writing.
ANALYZE_POINTS = [
    ("load:1", 1, 11),
    ("load:1", 3, 12),
    ("load:2", 3, 13),
    ("load:3", 3, 14),
    ("llm:1", 2, 15),
    ("llm:2", 2, 16),
    ("report_write", 1, 17),
]


@pytest.mark.parametrize(("point", "count", "seed"), ANALYZE_POINTS)
def test_ctrl_c_anywhere_in_analyze(
    point: str, count: int, seed: int, public_dir: Path, llm_server: ScriptedLLMServer
) -> None:
    script_analysis(llm_server)
    data_dir = public_dir / "data"
    data_dir.mkdir()
    inputs = write_inputs(data_dir, seed, count)
    root = public_dir / "ws"
    args = ["analyze", *map(str, inputs), "取引先別に集計して", "--workspace-root", str(root)]

    ended = ctrl_c_at(point, args, public_dir)

    assert ended.exit_code == 130, ended.stderr
    assert ended.stdout == ""
    assert "中止しました（Ctrl-C）" in ended.stderr, ended.stderr
    assert leftovers(public_dir) == []
    workspaces = sorted(root.iterdir()) if root.exists() else []
    if point.startswith("load"):
        # Nothing of a stopped load is kept: no workspace, none of the copies.
        assert workspaces == []
        assert "データの読み込みを中止しました（Ctrl-C）" in ended.stderr
        assert "作業ディレクトリは作成していません" in ended.stderr
    else:
        (workspace,) = workspaces
        kept = snapshot(workspace)
        copies = {p.name: p.read_bytes() for p in inputs}
        reports = {name: data for name, data in kept.items() if name.startswith("report")}
        assert {k: v for k, v in kept.items() if k not in reports} == copies  # the data, whole
        assert f"作業ディレクトリ {workspace}" in ended.stderr
        if point == "report_write":  # the report call had returned: the turn had ended well
            (text,) = reports.values()
            assert text.decode("utf-8").startswith("# 取引先別の売上")
            assert "中止の前に終わっていたため" in ended.stderr
            assert "report.md" in ended.stderr
        else:
            assert reports == {}
            assert "このターンのレポートと実行記録は保存していません" in ended.stderr
    assert "もう一度実行してください" in ended.stderr or "レポートを開いて" in ended.stderr

    again = run_cli(args, public_dir)  # the next run accepts what the stop left

    assert again.exit_code in (0, 1), again.stderr  # 1: the report is unverified (no code ran)
    assert "# 取引先別の売上" in again.stdout
    assert leftovers(public_dir) == []


# --- keiri-agent convert -----------------------------------------------------------------

CHARTS = ("png", "svg")
READERS = {
    "csv": pd.read_csv,
    "tsv": lambda path: pd.read_csv(path, sep="\t"),
    "xlsx": pd.read_excel,
    "parquet": pd.read_parquet,
    "json": pd.read_json,
    "jsonl": lambda path: pd.read_json(path, lines=True),
}


def script_convert(llm_server: ScriptedLLMServer, fmt: str, *, repeat: bool = True) -> None:
    """The interpret call's reply: convert the inputs to ``fmt``, or chart them for ``png`` and
    ``svg`` (``repeat``: for every run)."""
    job: dict[str, Any] = {"source": None, "summary_ja": f"明細を {fmt} にします。"}
    if fmt in CHARTS:
        chart = {"kind": "hist", "y": ["金額"], "title": "金額の分布", "format": fmt}
        job |= {"action": "viz", "chart": chart, "output_name": "取引先別"}
    else:
        job |= {"action": "convert", "target_format": fmt, "output_name": "変換結果"}
    llm_server.add_chat(json=job, repeat=repeat)


def assert_whole(path: Path) -> None:
    """The output file is whole: a table reads back by its format with the ledger's rows (a
    half-written file does not parse), a chart ends as a PNG or SVG ends."""
    fmt = path.suffix.lstrip(".")
    if fmt in CHARTS:
        data = path.read_bytes()
        end = b"IEND\xaeB`\x82" if fmt == "png" else b"</svg>"
        assert data.rstrip().endswith(end), f"{path.name} is not a whole {fmt}"
        return
    frame = READERS[fmt](path)
    assert "取引先" in frame.columns, path.name
    assert len(frame) >= 3, path.name


# (point, how many files, target format, seed, an --out folder that already holds files?):
# the interpret call, before and after each output file.
CONVERT_POINTS = [
    ("llm:1", 2, "parquet", 21, True),
    ("write:1:before", 1, "xlsx", 22, False),
    ("write:1:after", 1, "json", 23, True),
    ("write:1:after", 3, "csv", 24, False),
    ("write:2:before", 3, "jsonl", 25, True),
    ("write:2:after", 3, "tsv", 26, True),
    ("write:3:after", 3, "parquet", 27, False),
    ("savefig", 1, "png", 28, True),
    ("savefig", 2, "svg", 29, False),
]


@pytest.mark.parametrize(("point", "count", "fmt", "seed", "existing"), CONVERT_POINTS)
def test_ctrl_c_anywhere_in_convert(
    point: str,
    count: int,
    fmt: str,
    seed: int,
    existing: bool,
    public_dir: Path,
    llm_server: ScriptedLLMServer,
) -> None:
    script_convert(llm_server, fmt)
    data_dir = public_dir / "data"
    data_dir.mkdir()
    inputs = write_inputs(data_dir, seed, count)
    root = public_dir / "ws"  # KEIRI_WORKSPACE_ROOT
    out = public_dir / "out"
    args = ["convert", f"明細を {fmt} に変換して"]
    args += ["--source", str(inputs[0] if count == 1 else data_dir)]
    if existing:  # an earlier result of the same names and a file of the user's own
        out.mkdir()
        for path in inputs:
            (out / f"{path.stem}.{fmt}").write_bytes(b"earlier result")
        for name in ("変換結果", "取引先別"):
            (out / f"{name}.{fmt}").write_bytes(b"earlier result")
        (out / "メモ.txt").write_text("経理部のメモ", encoding="utf-8")
        args += ["--out", str(out)]
    before = snapshot(out)
    ended = ctrl_c_at(point, args, public_dir)

    assert ended.exit_code == 130, ended.stderr
    assert "変換を中止しました（Ctrl-C）" in ended.stderr, ended.stderr
    assert "もう一度実行してください" in ended.stderr
    assert leftovers(public_dir) == []
    assert snapshot(out) == before  # as before, byte for byte
    if existing:
        assert f"出力先 {out} は変換前のままです" in ended.stderr
    else:
        assert not root.exists() or list(root.iterdir()) == []  # no folder made for nothing
        assert "作成していません" in ended.stderr or "まだ何も書いていません" in ended.stderr

    again = run_cli(args, public_dir)  # the next run accepts what the stop left

    assert again.exit_code == 0, again.stderr
    files = [Path(line.strip()) for line in again.stdout.splitlines() if line.startswith("  /")]
    assert len(files) == (1 if fmt in CHARTS else count)
    for path in files:
        assert_whole(path)
    assert leftovers(public_dir) == []
