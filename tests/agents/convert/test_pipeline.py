"""run_convert end to end: scripted LLM, real fetch/convert/viz, the real sandbox for CodeAct.

Every fallback trigger of seed 003 §2 is produced and must route to CodeAct, whose scripted
code writes the output file inside the sandbox; that file is the job's result. LLM API errors
are raised, not routed; cancelling stops the sandbox process.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd
import psutil
import pytest

from keiri_agent.agents.convert.fetch import fetch_sources
from keiri_agent.agents.convert.graph import ConvertSteps
from keiri_agent.agents.convert.pipeline import STEPS, ConvertResult, run_convert
from keiri_agent.errors import ErrorCode, LLMError
from keiri_agent.events import CodeExec, CodeGen, EventStream, Log, RunEvent, Stage, read_events
from keiri_agent.file_access import FileAccess
from keiri_agent.sandbox import SandboxExecutor
from tests.support import ScriptedLLMServer, prompt_contains

SALES_CSV = "月,売上\n2024-04,120000\n2024-05,80000\n2024-06,95000\n"
XML_CODE = """rows = ["<rows>"]
for record in df.to_dict(orient="records"):
    rows.append("<row>" + "".join(f"<{k}>{v}</{k}>" for k, v in record.items()) + "</row>")
rows.append("</rows>")
with open("sales.xml", "w", encoding="utf-8") as handle:
    handle.write("\\n".join(rows))
print("rows", len(df))
"""
PIE_CODE = """import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.pie(df["売上"], labels=df["月"])
fig.savefig("chart.png", dpi=50)
plt.close(fig)
print("saved")
"""
PARQUET_CODE = """df.to_parquet("sales.parquet", index=False)
print(len(df))
"""


def fenced(code: str) -> str:
    return f"```python\n{code}```"


def convert_job(fmt: str, source: str | None = None) -> dict[str, Any]:
    return {
        "action": "convert",
        "source": source,
        "target_format": fmt,
        "output_name": "sales",
        "summary_ja": f"売上表を {fmt} に変換します。",
    }


def viz_job(kind: str, source: str | None = None) -> dict[str, Any]:
    return {
        "action": "viz",
        "source": source,
        "chart": {"kind": kind, "x": "月", "y": ["売上"], "title": "月別売上"},
        "summary_ja": "月別の売上をグラフにします。",
    }


@pytest.fixture
def env(llm_server: ScriptedLLMServer, convert_env: Path) -> Path:
    """Conversion settings under tmp_path (convert_env) and a sales CSV there."""
    source = convert_env / "sales.csv"
    source.write_text(SALES_CSV, encoding="utf-8")
    return source


def run(
    source: Path, executor: SandboxExecutor, request: str = "変換して", **kw: Any
) -> ConvertResult:
    return run_convert(
        request, source=str(source), out_dir=source.parent / "out", executor=executor, **kw
    )


def events_of(result: ConvertResult) -> list[RunEvent]:
    assert result.run_log is not None
    return read_events(result.run_log)


def stages(events: list[RunEvent]) -> list[tuple[str, str]]:
    return [(e.step, e.status) for e in events if isinstance(e, Stage)]


def test_csv_to_parquet_without_the_fallback(
    env: Path, llm_server: ScriptedLLMServer, sandbox_executor: SandboxExecutor
) -> None:
    llm_server.add_chat(json=convert_job("parquet"))

    result = run(env, sandbox_executor, "売上.csv を Parquet にして")

    assert result.status == "success", result.error
    assert [p.name for p in result.files] == ["sales.parquet"]
    assert pd.read_parquet(result.files[0])["売上"].tolist() == [120000, 80000, 95000]
    assert not result.used_fallback
    assert result.fallback_reason is None
    assert "sales.parquet" in result.answer
    assert "PARQUET" in result.answer
    events = events_of(result)
    assert stages(events) == [
        ("interpret", "start"),
        ("interpret", "done"),
        ("fetch", "start"),
        ("fetch", "done"),
        ("convert", "start"),
        ("convert", "done"),
        ("finish", "start"),
        ("finish", "done"),
    ]
    progress = [e.progress for e in events if isinstance(e, Stage)]
    assert progress == sorted(progress)
    assert progress[-1] == 1.0
    assert not any(isinstance(e, CodeGen | CodeExec) for e in events)
    assert len(llm_server.chat_requests()) == 1
    assert STEPS == ("interpret", "fetch", "convert", "viz", "finish")


def test_bar_chart_png_without_the_fallback(
    env: Path, llm_server: ScriptedLLMServer, sandbox_executor: SandboxExecutor
) -> None:
    llm_server.add_chat(json=viz_job("bar"))

    result = run(env, sandbox_executor, "月別の売上を棒グラフにして")

    assert result.status == "success", result.error
    (chart,) = result.files
    assert chart.suffix == ".png"
    assert chart.read_bytes().startswith(b"\x89PNG")
    assert ("viz", "done") in stages(events_of(result))
    assert not result.used_fallback


def _failing(exc: BaseException) -> Callable[..., Path]:
    def step(*args: Any, **kwargs: Any) -> Path:
        raise exc

    return step


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("trigger", "job", "code", "output"),
    [
        ("UnsupportedFormatError", convert_job("xml"), XML_CODE, "sales.xml"),
        ("UnsupportedVizParamError", viz_job("pie"), PIE_CODE, "chart.png"),
        ("ValueError", convert_job("parquet"), PARQUET_CODE, "sales.parquet"),
        ("KeyError", convert_job("parquet"), PARQUET_CODE, "sales.parquet"),
        ("NotImplementedError", convert_job("parquet"), PARQUET_CODE, "sales.parquet"),
    ],
    ids=lambda value: value if isinstance(value, str) and value.endswith("Error") else "",
)
def test_each_trigger_routes_to_codeact_which_makes_the_file(
    env: Path,
    llm_server: ScriptedLLMServer,
    sandbox_executor: SandboxExecutor,
    trigger: str,
    job: dict[str, Any],
    code: str,
    output: str,
) -> None:
    llm_server.add_chat(json=job)
    llm_server.add_chat(fenced(code), when=prompt_contains("You are CodeAct"))
    injected = {
        "ValueError": ValueError("金額に数値でない値があります"),
        "KeyError": KeyError("AIRTMP"),
        "NotImplementedError": NotImplementedError("この変換は未実装です"),
    }
    steps = ConvertSteps(convert=_failing(injected[trigger])) if trigger in injected else None

    result = run(env, sandbox_executor, steps=steps)

    assert result.status == "success", result.error
    assert [p.name for p in result.files] == [output]
    assert result.files[0].parent == env.parent / "out"
    assert result.files[0].stat().st_size > 0
    assert result.used_fallback
    assert trigger in (result.fallback_reason or "")
    assert "CodeAct" in result.answer
    events = events_of(result)
    step = job["action"]
    assert (step, "failed") in stages(events)
    assert (step, "fallback") in stages(events)
    assert stages(events)[-3:] == [(step, "done"), ("finish", "start"), ("finish", "done")]
    (gen,) = [e for e in events if isinstance(e, CodeGen)]
    assert gen.code == code
    (exec_,) = [e for e in events if isinstance(e, CodeExec)]
    assert exec_.success is True
    warnings = [e.msg for e in events if isinstance(e, Log) and e.level == "warning"]
    assert any(trigger in msg and "CodeAct" in msg for msg in warnings)
    assert llm_server.pending() == 0
    codeact_prompt = llm_server.chat_requests()[1]["messages"][1]["content"]
    assert "inputs/sales.csv" in codeact_prompt
    assert trigger in codeact_prompt
    assert list(Path(os.environ["KEIRI_CODEACT_ROOT"]).iterdir()) == []  # scratch removed


def test_s3_503_after_retries_fails_with_fetch_error_and_never_reaches_codeact(
    env: Path,
    llm_server: ScriptedLLMServer,
    sandbox_executor: SandboxExecutor,
    s3_env: str,
    s3_proxy: Any,
    s3_admin: Any,
    s3_bucket: str,
) -> None:
    s3_admin.put_object(Bucket=s3_bucket, Key="2024/sales.csv", Body=SALES_CSV.encode())
    s3_proxy.fail(-1, status=503, code="ServiceUnavailable")  # every try
    source = f"s3://{s3_bucket}/2024/"
    llm_server.add_chat(json=convert_job("csv", source=source))
    invented = 'open("sales.csv", "w").write("月,売上\\n2024-04,999999\\n")\n'
    llm_server.add_chat(fenced(invented), when=prompt_contains("You are CodeAct"))

    result = run_convert(
        f"{source} の売上を CSV にして",
        out_dir=env.parent / "out",
        executor=sandbox_executor,
        steps=ConvertSteps(fetch=partial(fetch_sources, backoff_s=0.01)),  # the real fetch
    )

    assert result.status == "failed"
    assert result.files == []
    assert not result.used_fallback
    assert result.error is not None
    assert result.error["code"] == ErrorCode.API_ERROR
    assert result.error["details"]["attempts"] == 4  # the first try and 3 retries
    assert "4 回失敗しました" in result.error["message"]
    assert result.error["hint"]
    assert len(llm_server.chat_requests()) == 1  # interpret only: CodeAct was never asked
    assert not (env.parent / "out").exists() or not list((env.parent / "out").iterdir())
    assert ("fetch", "start") in stages(events_of(result))


def test_a_missing_input_is_the_users_error_not_a_fallback(
    env: Path, llm_server: ScriptedLLMServer, sandbox_executor: SandboxExecutor
) -> None:
    llm_server.add_chat(json=convert_job("parquet"))

    result = run(env.parent / "nothing.csv", sandbox_executor)

    assert result.status == "failed"
    assert result.error is not None
    assert result.error["code"] == ErrorCode.FILE_UNREADABLE
    assert "見つかりません" in result.answer
    assert "ヒント" in result.answer
    assert not result.used_fallback
    assert len(llm_server.chat_requests()) == 1  # no CodeAct call
    errors = [e for e in events_of(result) if e.event == "error"]
    assert len(errors) == 1


@pytest.mark.parametrize("ending", ["missing input", "cancelled"])
def test_a_run_without_out_dir_that_ends_with_nothing_leaves_no_session_folder(
    ending: str, env: Path, llm_server: ScriptedLLMServer, sandbox_executor: SandboxExecutor
) -> None:
    workspace = env.parent / "workspace"  # KEIRI_WORKSPACE_ROOT (convert_env)
    llm_server.add_chat(json=convert_job("parquet"))
    cancel = threading.Event()
    if ending == "cancelled":
        cancel.set()
    source = env.parent / "nothing.csv" if ending == "missing input" else env

    result = run_convert("変換して", source=str(source), executor=sandbox_executor, cancel=cancel)

    assert result.status == ("failed" if ending == "missing input" else "cancelled")
    assert not result.files
    assert sorted(workspace.iterdir()) == []  # no empty session folder left behind

    llm_server.add_chat(json=convert_job("parquet"))
    done = run_convert("変換して", source=str(env), executor=sandbox_executor)

    assert done.status == "success", done.error
    [session] = workspace.iterdir()  # a run that made something keeps its folder
    assert [path.parent for path in done.files] == [session]


def test_access_confines_a_path_written_in_the_request(
    env: Path, llm_server: ScriptedLLMServer, sandbox_executor: SandboxExecutor
) -> None:
    # The API server passes each task's FileAccess: a path the request names elsewhere
    # (here /etc/passwd, read by the interpreter from the request text) is refused.
    llm_server.add_chat(json=convert_job("json", source="/etc/passwd"))

    result = run_convert(
        "/etc/passwd を JSON にして",
        out_dir=env.parent / "out",
        executor=sandbox_executor,
        access=FileAccess.confined(search=[env.parent / "workspace"]),
    )

    assert result.status == "failed"
    assert result.error is not None
    assert result.error["code"] == ErrorCode.PERMISSION_DENIED
    assert not result.used_fallback
    assert list((env.parent / "out").glob("*")) == []


def test_codeact_that_never_makes_the_file_fails_with_its_reason(
    env: Path, llm_server: ScriptedLLMServer, sandbox_executor: SandboxExecutor
) -> None:
    llm_server.add_chat(json=convert_job("xml"))
    llm_server.add_chat(
        fenced("print(df['存在しない列'])\n"), repeat=True, when=prompt_contains("You are CodeAct")
    )

    result = run(env, sandbox_executor)

    assert result.status == "failed"
    assert result.used_fallback
    assert result.files == []
    assert result.error is not None
    # Not the trigger's UNSUPPORTED_FORMAT: CodeAct's code failed, and the hint says so.
    assert result.error["code"] == ErrorCode.CODE_EXECUTION_FAILED
    assert "。。" not in result.error["message"] + result.error["hint"]
    assert "KeyError" in result.error["message"]
    assert "最後のエラー" in result.error["hint"]
    assert result.error["details"]["code_turns"] == 3
    assert [run["success"] for run in result.code_runs] == [False, False, False]
    failed = [e for e in events_of(result) if isinstance(e, CodeExec)]
    assert all("KeyError" in e.stderr for e in failed)  # the user sees what the model saw
    assert "KeyError" in result.error["details"]["last_error"]
    assert not list((env.parent / "out").glob("*"))
    feedback = llm_server.chat_requests()[2]["messages"][-1]["content"]
    assert "実行結果: 失敗" in feedback
    assert "KeyError" in feedback


def test_an_llm_api_error_in_interpret_is_raised(
    env: Path, llm_server: ScriptedLLMServer, sandbox_executor: SandboxExecutor, tmp_path: Path
) -> None:
    llm_server.add_error(500, "upstream exploded")

    with pytest.raises(LLMError) as caught:
        run(env, sandbox_executor)

    assert caught.value.code == ErrorCode.API_ERROR
    (log,) = (tmp_path / "runs" / "convert").glob("*.jsonl")
    (error,) = [e for e in read_events(log) if e.event == "error"]
    assert error.step == "interpret"  # type: ignore[attr-defined]


def test_an_llm_api_error_in_codeact_is_raised_not_routed(
    env: Path, llm_server: ScriptedLLMServer, sandbox_executor: SandboxExecutor
) -> None:
    llm_server.add_chat(json=convert_job("xml"))
    llm_server.add_error(500, "claude is down", when=prompt_contains("You are CodeAct"))

    with pytest.raises(LLMError) as caught:
        run(env, sandbox_executor)

    assert "HTTP 500" in caught.value.message
    assert not (env.parent / "out").exists() or not list((env.parent / "out").iterdir())


def test_codeact_runs_on_anthropic(
    env: Path,
    llm_server: ScriptedLLMServer,
    sandbox_executor: SandboxExecutor,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MODEL_CODEACT", "anthropic:claude-3-sonnet-scripted")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", llm_server.root_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-scripted")
    llm_server.add_chat(json=convert_job("xml"))
    llm_server.add_chat(fenced(XML_CODE), when=prompt_contains("You are CodeAct"))

    result = run(env, sandbox_executor)

    assert result.status == "success", result.error
    assert [p.name for p in result.files] == ["sales.xml"]
    assert "<売上>120000</売上>" in result.files[0].read_text(encoding="utf-8")
    assert len(llm_server.chat_requests()) == 1  # interpret, on the default OpenAI model
    (message,) = llm_server.message_requests()
    assert message["model"] == "claude-3-sonnet-scripted"
    calls = [e for e in events_of(result) if e.event == "llm_call"]
    assert [(c.provider, c.role) for c in calls] == [  # type: ignore[attr-defined]
        ("openai", "interpret"),
        ("anthropic", "codeact"),
    ]


def test_cancelling_stops_the_sandbox_process(env: Path, llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat(json=convert_job("xml"))
    llm_server.add_chat(
        fenced("import time\nwhile True:\n    time.sleep(0.05)\n"),
        when=prompt_contains("You are CodeAct"),
    )
    executor = SandboxExecutor()
    cancel = threading.Event()
    outcome: dict[str, Any] = {}
    with EventStream("run-cancel", "convert") as stream:
        worker = threading.Thread(
            target=lambda: outcome.update(result=run(env, executor, events=stream, cancel=cancel))
        )
        worker.start()
        try:
            sandbox_pids = _wait_for_action(executor, worker)
            cancel.set()
            worker.join(timeout=30)
        finally:
            executor.close()
        events = stream.events()

    result: ConvertResult = outcome["result"]
    assert result.status == "cancelled"
    assert result.error is not None
    assert result.error["code"] == ErrorCode.CANCELLED
    assert result.files == []
    assert not (env.parent / "out").exists()  # the folder made for the run: not left behind
    for pid in sandbox_pids:
        assert not _alive(pid), f"sandbox process {pid} survived the cancellation"
    assert ("convert", "cancelled") in stages(events)
    assert any(isinstance(e, CodeGen) for e in events)


def _wait_for_action(executor: SandboxExecutor, worker: threading.Thread) -> list[int]:
    """The pids of the supervisor and worker running the generated code, once they run."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and worker.is_alive():
        running = executor.action_pids()  # not the spare forked for the next action
        if len(running) >= 2:  # the supervisor and the worker running the loop
            time.sleep(0.3)
            return running
        time.sleep(0.05)
    raise AssertionError("the generated code never started in the sandbox")


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_ledger_whose_total_is_not_its_rows_sum_is_refused_not_handed_to_codeact(
    env: Path, llm_server: ScriptedLLMServer, sandbox_executor: SandboxExecutor
) -> None:
    # 小計 rows nobody labelled read as data: the file's 合計 (950) is not the rows' sum.
    source = env.parent / "経費明細.csv"
    source.write_bytes(
        "日付,部門,金額\r\n2026/1/5,営業部,1200\r\n2026/2/3,営業部,(200)\r\n,,1000\r\n"
        "2026/2/10,管理部,△50\r\n,,△50\r\n合計,,950\r\n".encode("cp932")
    )
    llm_server.add_chat(json=convert_job("xlsx"))

    result = run(source, sandbox_executor)

    assert result.status == "failed"
    assert result.error is not None
    assert result.error["code"] == ErrorCode.INPUT_VALIDATION_FAILED
    assert (
        "経費明細.csv の 7 行目の列「金額」の合計 950 が、明細の行の合計 1,900 と一致しません"
        in (result.answer)
    )
    assert not result.used_fallback
    assert len(llm_server.chat_requests()) == 1  # no CodeAct call
    assert not (source.parent / "out").exists() or not list((source.parent / "out").iterdir())


def test_a_ledger_in_thousands_is_converted_in_yen_and_the_log_says_so(
    env: Path, llm_server: ScriptedLLMServer, sandbox_executor: SandboxExecutor
) -> None:
    source = env.parent / "経費明細.csv"
    source.write_bytes(
        '部門別経費（単位：千円）\r\n部門,金額\r\n営業部,"1,200"\r\n管理部,(300)\r\n合計,900\r\n'.encode(
            "cp932"
        )
    )
    llm_server.add_chat(json=convert_job("json"))

    result = run(source, sandbox_executor)

    assert result.status == "success", result.answer
    (out,) = result.files
    records = json.loads(Path(out).read_text(encoding="utf-8"))
    assert records == [
        {"部門": "営業部", "金額（円）": 1_200_000},
        {"部門": "管理部", "金額（円）": -300_000},
    ]
    logs = [e.msg for e in events_of(result) if isinstance(e, Log)]
    assert any("経費明細.csv" in m and "1,000 倍して円にしてあります" in m for m in logs), logs
    assert any("合計・小計の行 1 行はデータから除いてあります" in m for m in logs), logs
