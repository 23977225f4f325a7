"""``SandboxExecutor`` as its users see it: inputs, results, files, charts, errors and limits.

What an agent or a block relies on: DataFrames arrive by name with their dtypes, ``result``
comes back as JSON, created files are listed relative to the workdir, Japanese charts render
with a Japanese font, errors point at the user's own lines, each profile enforces its own
limits, every isolation layer is active, concurrent actions do not mix, and the CLI
(``keiri-agent sandbox run|doctor``) exits with the documented codes and leaves nothing running.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from keiri_agent.cli import app
from keiri_agent.errors import BlockError
from keiri_agent.sandbox import ANALYSIS, CODEACT, ExecutionOutcome, SandboxExecutor
from keiri_agent.sandbox.layers import PROPERTY_NAMES
from keiri_agent.sandbox.procs import children
from tests.sandbox.conftest import IS_ROOT, assert_no_survivors

MiB = 1024 * 1024
# Generous for the happy paths; the limit tests below set their own.
QUICK_ANALYSIS = ANALYSIS.with_overrides(cpu_seconds=20, wall_seconds=20.0)
QUICK_CODEACT = CODEACT.with_overrides(cpu_seconds=20, wall_seconds=20.0)


def _run(executor: SandboxExecutor, code: str, workdir: Path, **kwargs: object) -> ExecutionOutcome:
    outcome = executor.run(code, workdir=workdir, **kwargs)  # type: ignore[arg-type]
    assert_no_survivors(executor)
    return outcome


# ---- inputs and results -------------------------------------------------------------------------


def _sales(rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "日付": pd.date_range("2024-04-01", periods=rows, freq="min"),
            "計上時刻": pd.date_range("2024-04-01", periods=rows, freq="s", tz="Asia/Tokyo"),
            "部門": pd.Categorical(rng.choice(["営業部", "経理部", "総務部"], size=rows)),
            "取引先": [f"株式会社{i % 97}" for i in range(rows)],
            "金額": rng.integers(1, 1_000_000, size=rows, dtype=np.int64),
            "単価": rng.random(rows),
            "承認済み": rng.random(rows) > 0.5,
        }
    )


def test_dataframe_inputs_arrive_by_name_with_their_dtypes(
    executor: SandboxExecutor, workdir: Path
) -> None:
    sales = _sales(100_000)
    costs = pd.DataFrame({"費目": ["家賃", "通信費"], "金額": [200_000, 15_000]})
    code = """
sales = dfs["sales"]
result = {
    "names": sorted(dfs),
    "df_is_sales": df is sales,
    "rows": len(sales),
    "columns": list(sales.columns),
    "dtypes": {name: str(dtype) for name, dtype in sales.dtypes.items()},
    "total": int(sales["金額"].sum()),
    "first": str(sales["日付"].iloc[0]),
    "last_stamp": str(sales["計上時刻"].iloc[-1]),
    "departments": sorted(sales["部門"].cat.categories),
    "costs": dfs["costs"]["金額"].tolist(),
}
"""
    outcome = _run(
        executor, code, workdir, profile=QUICK_ANALYSIS, inputs={"sales": sales, "costs": costs}
    )
    assert outcome.success, outcome.error
    result = outcome.result
    assert result["names"] == ["costs", "sales"]
    assert result["df_is_sales"] is True  # ``df`` is the first input
    assert result["rows"] == 100_000
    assert result["columns"] == list(sales.columns)
    assert result["dtypes"] == {name: str(dtype) for name, dtype in sales.dtypes.items()}
    assert result["total"] == int(sales["金額"].sum())
    assert result["first"] == str(sales["日付"].iloc[0])
    assert result["last_stamp"] == str(sales["計上時刻"].iloc[-1])
    assert result["departments"] == sorted(["営業部", "経理部", "総務部"])
    assert result["costs"] == [200_000, 15_000]
    assert not (workdir / ".sandbox").exists(), "the Arrow inputs were left behind"


def test_bad_input_names_and_types_are_refused_before_running(
    executor: SandboxExecutor, workdir: Path
) -> None:
    with pytest.raises(BlockError, match="変数名"):
        executor.run("print(1)", workdir=workdir, inputs={"2024年": pd.DataFrame()})
    with pytest.raises(BlockError, match="DataFrame ではありません"):
        executor.run("print(1)", workdir=workdir, inputs={"sales": [1, 2, 3]})


def test_result_variable_comes_back_as_json(executor: SandboxExecutor, workdir: Path) -> None:
    code = """
import pandas as pd
total = pd.Series([1, 2, 3]).sum()
result = {"合計": int(total), "items": [1, 2.5, None, "あ"], "when": pd.Timestamp("2024-04-01")}
"""
    outcome = _run(executor, code, workdir, profile=QUICK_ANALYSIS)
    assert outcome.success, outcome.error
    assert outcome.result == {
        "合計": 6,
        "items": [1, 2.5, None, "あ"],
        "when": "2024-04-01 00:00:00",  # not JSON: returned as its str()
    }
    assert _run(executor, "x = 1", workdir, profile=QUICK_ANALYSIS).result is None


def test_files_created_are_listed_relative_to_the_workdir(
    executor: SandboxExecutor, workdir: Path
) -> None:
    (workdir / "existing.csv").write_text("a\n1\n", encoding="utf-8")
    code = """
import pandas as pd
import matplotlib.pyplot as plt
frame = pd.read_csv("existing.csv")
frame["b"] = frame["a"] * 2
frame.to_csv("集計.csv", index=False)
plt.plot(frame["a"], frame["b"])
plt.savefig("chart.png")
"""
    outcome = _run(executor, code, workdir, profile=QUICK_ANALYSIS)
    assert outcome.success, outcome.error
    assert outcome.files_created == ["chart.png", "集計.csv"]
    assert (workdir / "集計.csv").read_text(encoding="utf-8") == "a,b\n1,2\n"
    assert not (workdir / ".sandbox").exists()
    # Copied out by the supervisor, as the caller: no chown, nobody else's files.
    assert {p.stat().st_uid for p in workdir.iterdir()} == {os.geteuid()}
    # A second run that only reads reports nothing new.
    again = _run(executor, 'print(open("集計.csv").read())', workdir, profile=QUICK_ANALYSIS)
    assert again.success
    assert again.files_created == []


def test_japanese_chart_uses_an_ipaex_font(executor: SandboxExecutor, workdir: Path) -> None:
    code = """
import matplotlib.pyplot as plt
import seaborn as sns
from matplotlib import font_manager
import pandas as pd
frame = pd.DataFrame({"部門": ["営業部", "経理部", "総務部"], "売上": [120, 80, 45]})
fig, ax = plt.subplots(figsize=(6, 4))
sns.barplot(data=frame, x="部門", y="売上", ax=ax)
ax.set_title("部門別売上（2024年度）")
ax.set_xlabel("部門名")
ax.set_ylabel("売上（百万円）")
fig.savefig("売上.png", dpi=100)
props = font_manager.FontProperties(family=plt.rcParams["font.family"])
print(font_manager.findfont(props))
"""
    outcome = _run(executor, code, workdir, profile=QUICK_ANALYSIS)
    assert outcome.success, outcome.error
    assert "missing from font" not in outcome.stderr
    assert "Glyph" not in outcome.stderr
    font = outcome.stdout.strip()
    assert "ipaex" in Path(font).name.lower(), font
    png = workdir / "売上.png"
    assert outcome.files_created == ["売上.png"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 10_000


# ---- errors -------------------------------------------------------------------------------------


def test_runtime_error_points_at_the_users_lines_only(
    executor: SandboxExecutor, workdir: Path
) -> None:
    code = "def ratio(a, b):\n    return a / b\n\nx = 1\nprint(ratio(x, 0))\n"
    outcome = _run(executor, code, workdir, profile=QUICK_ANALYSIS)
    assert not outcome.success
    assert outcome.killed_by is None
    assert outcome.error is not None
    assert outcome.error.type == "ZeroDivisionError"
    assert outcome.error.message == "division by zero"
    assert outcome.error.traceback == ["5 行目: print(ratio(x, 0))", "2 行目: return a / b"]
    assert outcome.error.line == 2


def test_error_inside_a_library_shows_no_library_frames(
    executor: SandboxExecutor, workdir: Path
) -> None:
    code = 'import pandas as pd\nframe = pd.DataFrame({"金額": [1]})\nprint(frame["売上"])\n'
    outcome = _run(executor, code, workdir, profile=QUICK_ANALYSIS)
    assert outcome.error is not None
    assert outcome.error.type == "KeyError"
    assert "売上" in outcome.error.message
    assert outcome.error.traceback == ['3 行目: print(frame["売上"])']
    assert outcome.error.line == 3
    assert "site-packages" not in outcome.model_dump_json()


def test_syntax_error_is_reported_without_running(executor: SandboxExecutor, workdir: Path) -> None:
    outcome = executor.run("x = 1\ny = (2,\nprint(x)\n", workdir=workdir)
    assert not outcome.success
    assert outcome.killed_by is None
    assert outcome.error is not None
    assert outcome.error.type == "SyntaxError"
    assert outcome.error.line == 2
    assert "構文エラー" in outcome.error.message
    assert "2 行目" in outcome.error.message
    assert outcome.layers == []
    assert outcome.duration_s == 0.0
    assert not any(workdir.iterdir())


def test_policy_refusal_explains_in_japanese(executor: SandboxExecutor, workdir: Path) -> None:
    outcome = executor.run("import pandas as pd\nimport subprocess\n", workdir=workdir)
    assert outcome.killed_by == "policy"
    assert outcome.error is not None
    assert outcome.error.line == 2
    assert "'subprocess' の import は許可されていません" in outcome.error.message
    assert outcome.error.traceback[0].startswith("2 行目: モジュール 'subprocess'")
    assert outcome.warnings
    assert "許可されたモジュール" in outcome.warnings[0]
    assert "安全ポリシー" in outcome.summary_ja()


# ---- limits of the two profiles -----------------------------------------------------------------

WRITE_11_MIB = 'with open("big.bin", "wb") as f:\n    f.write(b"0" * (11 * 2**20))\n'


def test_codeact_refuses_an_11_mib_file_that_analysis_accepts(
    executor: SandboxExecutor, workdir: Path
) -> None:
    refused = _run(executor, WRITE_11_MIB, workdir, profile=QUICK_CODEACT)
    assert refused.killed_by == "fsize", refused.error
    assert (workdir / "big.bin").stat().st_size <= CODEACT.fsize_bytes
    accepted = _run(executor, WRITE_11_MIB, workdir, profile=QUICK_ANALYSIS)
    assert accepted.success, accepted.error
    assert (workdir / "big.bin").stat().st_size == 11 * MiB


ALLOCATE_700_MB = "import numpy as np\na = np.ones(700 * 10**6 // 8)\nprint(int(a.sum()))\n"


def test_codeact_refuses_700_mb_that_analysis_allows(
    executor: SandboxExecutor, workdir: Path
) -> None:
    # 700 MB is within analysis' 1 GiB and beyond codeact's 512 MiB; this machine has the RAM
    # (the limit is address space on top of the warm interpreter's own, not free memory).
    refused = _run(executor, ALLOCATE_700_MB, workdir, profile=QUICK_CODEACT)
    assert refused.killed_by == "memory", refused.error
    assert refused.error is not None
    assert refused.error.type == "MemoryError"
    accepted = _run(executor, ALLOCATE_700_MB, workdir, profile=QUICK_ANALYSIS)
    assert accepted.success, accepted.error
    assert accepted.stdout.strip() == str(700 * 10**6 // 8)
    assert accepted.peak_memory_bytes >= 700 * 10**6  # the pages were really touched


def test_memory_override_applies(executor: SandboxExecutor, workdir: Path) -> None:
    small = ANALYSIS.with_overrides(memory_mb=100, cpu_seconds=20, wall_seconds=20.0)
    code = "x = bytearray(200 * 2**20)\n"
    assert _run(executor, code, workdir, profile=small).killed_by == "memory"
    assert _run(executor, code, workdir, profile=QUICK_ANALYSIS).success


def test_cpu_override_stops_a_busy_loop(executor: SandboxExecutor, workdir: Path) -> None:
    # The wall limit is far beyond what one CPU second takes even on a loaded machine.
    profile = ANALYSIS.with_overrides(cpu_seconds=1, wall_seconds=60.0)
    started = time.monotonic()
    outcome = _run(executor, "while True:\n    pass\n", workdir, profile=profile)
    assert outcome.killed_by == "cpu"
    assert outcome.error is not None
    assert "CPU 時間の上限（1 秒）" in outcome.error.message
    assert time.monotonic() - started < 60 + 30  # did not hang
    assert outcome.duration_s >= 0.9


def test_wall_override_stops_a_sleep(executor: SandboxExecutor, workdir: Path) -> None:
    profile = ANALYSIS.with_overrides(cpu_seconds=20, wall_seconds=1.5)
    started = time.monotonic()
    outcome = _run(executor, "import time\ntime.sleep(60)\n", workdir, profile=profile)
    assert time.monotonic() - started < 1.5 + 30  # did not hang
    assert outcome.killed_by == "wall", outcome.error
    assert outcome.error is not None
    assert "実行時間の上限（1.5 秒）" in outcome.error.message
    assert 1.4 <= outcome.duration_s < 60


def test_overrides_must_be_positive() -> None:
    for bad in ({"cpu_seconds": 0}, {"wall_seconds": -1.0}, {"memory_mb": 0}):
        with pytest.raises(BlockError, match="正の数"):
            ANALYSIS.with_overrides(**bad)


# ---- layers, measurements, concurrency ----------------------------------------------------------


def test_every_layer_is_active_and_measurements_are_sensible(
    executor: SandboxExecutor, workdir: Path
) -> None:
    started = time.monotonic()
    outcome = _run(executor, "import time\ntime.sleep(0.3)\n", workdir, profile=QUICK_ANALYSIS)
    elapsed = time.monotonic() - started
    assert outcome.success, outcome.error
    assert [layer.name for layer in outcome.layers] == list(PROPERTY_NAMES)
    inactive = {layer.name for layer in outcome.layers if not layer.active}
    # An ordinary user without a delegated cgroup v2 has no memory/pids cgroup: said, not hidden.
    assert inactive <= (set() if IS_ROOT else {"memory_cgroup", "pids_cgroup"})
    assert all(layer.detail for layer in outcome.layers)
    assert outcome.peak_memory_bytes > 0
    assert 0.3 <= outcome.duration_s <= elapsed
    assert outcome.profile == "analysis"
    assert outcome.summary_ja().startswith("成功")


def _running_workers(sandbox: SandboxExecutor) -> int:
    """Jails with a running action (a supervisor and its worker) right now."""
    busy = 0
    for jail in list(sandbox._jails.values()):  # the jails have no public listing
        if len(jail.action_pids()) >= 2:
            busy += 1
    return busy


def test_concurrent_actions_keep_their_own_outputs() -> None:
    """Four actions submitted at the same moment from four threads, in four workdirs (jails)."""
    # An executor of its own: should an action get stuck, closing it releases the waiting threads
    # without holding up the session's executor.
    sandbox = SandboxExecutor()
    profile = ANALYSIS.with_overrides(cpu_seconds=60, wall_seconds=120.0)
    base = Path(tempfile.mkdtemp(prefix="keiri-sbx-concurrent-"))
    workdirs = [base / f"w{i}" for i in range(4)]
    outcomes: dict[int, ExecutionOutcome] = {}
    errors: dict[int, str] = {}
    for path in workdirs:
        sandbox.warm(path)  # four jails up front: the rendezvous below is about actions
    barrier = threading.Barrier(4)

    def act(index: int) -> None:
        # The actions cannot see anything of the host to wait on; each sleeps long enough for
        # the test to watch all four supervisors with a running action at the same moment, even
        # when a loaded machine starts the last action seconds after the first (8 s was not).
        code = (
            "import time\n"
            "import pandas as pd\n"
            f"pd.DataFrame({{'n': [{index}]}}).to_csv('out{index}.csv', index=False)\n"
            "time.sleep(30)\n"
            f"print('action {index}')\n"
            f"result = {index}\n"
        )
        barrier.wait()
        try:
            outcomes[index] = sandbox.run(code, workdir=workdirs[index], profile=profile)
        except Exception as exc:  # reported below; a thread's exception is otherwise lost
            errors[index] = repr(exc)

    threads = [threading.Thread(target=act, args=(i,), daemon=True) for i in range(4)]
    try:
        for thread in threads:
            thread.start()
        seen = 0
        while any(thread.is_alive() for thread in threads) and seen < 4:
            seen = max(seen, _running_workers(sandbox))
            time.sleep(0.02)
        for thread in threads:
            thread.join(timeout=profile.wall_seconds + 30)
        stuck = sorted(i for i, thread in enumerate(threads) if thread.is_alive())
        assert not stuck, f"actions {stuck} never came back (finished: {sorted(outcomes)})"
        assert not errors, errors
        assert seen == 4, f"only {seen} actions ran at the same time"
        for index, outcome in outcomes.items():
            assert outcome.success, outcome.error
            assert outcome.stdout == f"action {index}\n"
            assert outcome.result == index
            assert outcome.files_created == [f"out{index}.csv"]
            assert sorted(p.name for p in workdirs[index].iterdir()) == [f"out{index}.csv"]
    finally:
        sandbox.close()
        for thread in threads:
            thread.join(timeout=5)
        shutil.rmtree(base, ignore_errors=True)


# ---- the command line ---------------------------------------------------------------------------


@pytest.fixture
def cli_files(workdir: Path) -> Iterator[dict[str, Path]]:
    base = Path(str(workdir) + "-cli")
    base.mkdir()
    csv = base / "売上.csv"
    csv.write_text("部門,金額\n営業部,100\n経理部,250\n", encoding="utf-8")
    good = base / "good.py"
    good.write_text(
        textwrap.dedent(
            """
            print(dfs["sales"]["金額"].sum())
            try:
                bound = sales is df  # `--input NAME=PATH` promises a variable NAME
            except NameError:
                bound = False
            result = {"columns": list(df.columns), "bound_by_name": bound}
            """
        ),
        encoding="utf-8",
    )
    bad = base / "bad.py"
    bad.write_text('raise ValueError("わざと失敗")\n', encoding="utf-8")
    yield {"csv": csv, "good": good, "bad": bad, "base": base}
    for item in base.iterdir():
        item.unlink()
    base.rmdir()


def _no_cli_processes_left(executor: SandboxExecutor, before: set[int]) -> None:
    # The CLI starts and closes its own fork server: no child of ours is new afterwards
    # (servers of other suites' executors, started earlier in this session, may remain).
    assert children(os.getpid()) <= before | {executor.server_pid}
    assert_no_survivors(executor)


def test_cli_run_reports_the_outcome_as_json(
    executor: SandboxExecutor, workdir: Path, cli_files: dict[str, Path]
) -> None:
    before = children(os.getpid())
    runner = CliRunner()
    args = ["sandbox", "run", str(cli_files["good"]), "--workdir", str(workdir)]
    ok = runner.invoke(app, [*args, "--input", f"sales={cli_files['csv']}", "--json"])
    assert ok.exit_code == 0, ok.output
    outcome = ExecutionOutcome.model_validate(json.loads(ok.stdout))
    assert outcome.success
    assert outcome.stdout == "350\n"
    assert outcome.result["columns"] == ["部門", "金額"]
    assert len(outcome.layers) == len(PROPERTY_NAMES)
    failed = runner.invoke(
        app, ["sandbox", "run", str(cli_files["bad"]), "--workdir", str(workdir), "--json"]
    )
    assert failed.exit_code == 1
    failure = ExecutionOutcome.model_validate(json.loads(failed.stdout))
    assert failure.error is not None
    assert failure.error.type == "ValueError"
    assert failure.error.traceback == ['1 行目: raise ValueError("わざと失敗")']
    _no_cli_processes_left(executor, before)
    # The --input help says the DataFrame is passed "as the variable NAME"; checked last so
    # that everything above is verified either way.
    assert outcome.result["bound_by_name"], "--input sales=... did not bind the name `sales`"


def test_cli_run_rejects_bad_usage_with_exit_2(
    executor: SandboxExecutor, workdir: Path, cli_files: dict[str, Path]
) -> None:
    before = children(os.getpid())
    runner = CliRunner()
    base = ["sandbox", "run", str(cli_files["good"]), "--workdir", str(workdir)]
    bad_spec = runner.invoke(app, [*base, "--input", "sales"])
    assert bad_spec.exit_code == 2
    assert "NAME=PATH" in bad_spec.output
    missing_input = runner.invoke(app, [*base, "--input", f"sales={cli_files['base']}/none.csv"])
    assert missing_input.exit_code == 2
    missing_file = runner.invoke(
        app, ["sandbox", "run", str(cli_files["base"] / "none.py"), "--workdir", str(workdir)]
    )
    assert missing_file.exit_code == 2
    unknown = runner.invoke(app, [*base, "--profile", "turbo"])
    assert unknown.exit_code == 2
    assert "turbo" in unknown.output
    assert not any(workdir.iterdir())
    _no_cli_processes_left(executor, before)


def test_cli_doctor_lists_every_property() -> None:
    result = CliRunner().invoke(app, ["sandbox", "doctor", "--json"])
    assert result.exit_code == 0, result.output
    layers = json.loads(result.stdout)
    assert [layer["name"] for layer in layers] == list(PROPERTY_NAMES)
    inactive = {layer["name"] for layer in layers if not layer["active"]}
    assert inactive <= (set() if IS_ROOT else {"memory_cgroup", "pids_cgroup"})
