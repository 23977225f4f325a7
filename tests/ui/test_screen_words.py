"""Property: every page of the app, used as an accountant uses it, shows an accountant's Japanese.

Each page is driven through the whole app (navigation and settings sidebar included) with what a
back office really gives it, drawn from a seeded generator: CSV and Excel ledgers as exported
(CP932 or UTF-8 with a BOM, a title row above the header, a 合計 row, blank cells, a cell of
some thousand characters), an empty upload, a plan that fails, a plan whose run waits for a
person, a cancelled run, no LLM configured, and a scripted LLM that answers badly. Every text
the screen then shows (``tests/ui/screen.py``: alerts, Markdown, buttons, options, expander and
tab titles, the error details, tables' headers and cells...) must hold no Python or library
English, no ``None`` / ``nan`` / ``True`` / ``False``, no dict or list written out, no raw ISO
time and no temporary folder; the plan's node ids and port names appear only where the page
says it shows them (the expanders named 詳細: ...).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from keiri_agent.config import load_settings
from keiri_agent.events.models import PlanComplete
from keiri_agent.events.runlog import list_runs
from keiri_agent.ui import APP_PATH
from tests.schedule.conftest import PLAN_ID, approved_memo
from tests.support import ScriptedLLMServer
from tests.ui.conftest import open_page
from tests.ui.ledgers import Ledger, ledgers
from tests.ui.screen import Shown, leaks, screen_texts
from tests.ui.test_run_page import APPROVAL_PLAN

PAGE_TIMEOUT_S = 180
SALES_SAMPLE = "サンプル: 月次売上レポート"
# The ids of the plans the flows run: found as whole words, they are a leak outside 詳細 (the
# approval plan's node "ask" is left out: an agent's note quotes the value 'ask' of a reply).
PLAN_IDS = ("note", "amount", "collect_inputs", "sales_file", "read_sales")
# Names a person types: the help desk's folder (KEIRI_HELPDESK_INDEX's default) and the values of
# KEIRI_LLM_STRUCTURED_METHOD a hint names. (A reply's fields are said by their labels: llm/repair.)
NAMES = ("helpdesk_index", "json_schema", "function_calling")


def _app(url_path: str) -> AppTest:
    return open_page(AppTest.from_file(str(APP_PATH), default_timeout=PAGE_TIMEOUT_S), url_path)


def _leaks_of(app: AppTest, roots: tuple[Path, ...]) -> list[str]:
    """What the page shows that is not for the screen; the expanders titled 詳細: hold the ids
    for whoever edits the plan's YAML, on purpose."""
    texts = screen_texts(app, skip=lambda label: label.startswith("詳細:"))
    shown = [Shown(s.kind, _without(s.text, roots)) for s in texts]
    return leaks(shown, ids=PLAN_IDS, allowed=NAMES)


def _without(text: str, roots: tuple[Path, ...]) -> str:
    """The text with the folders a person configured (runs, workspace, designs) named as such:
    a path under them is where the person keeps their files, not a temporary folder."""
    for root in roots:
        text = text.replace(str(root), "〈設定したフォルダ〉")
    return text


Flow = Callable[[Path], AppTest]


def _press(app: AppTest, key: str) -> AppTest:
    """Press the button as a person can: a disabled one (no LLM configured) is not pressed."""
    button = app.button(key=key)
    return app if button.disabled else button.click().run()


def _analysis_upload(item: Ledger) -> Flow:
    def flow(_: Path) -> AppTest:
        app = _app("analysis")
        app.run()
        return app.file_uploader[0].set_value((item.name, item.data, "text/csv")).run()

    return flow


def _analysis_question(_: Path) -> AppTest:
    app = _app("analysis")
    app.run()
    csv = "取引先,金額\nあおば商事,120000\n髙橋工業,\n".encode("cp932")
    app.file_uploader[0].set_value(("売上.csv", csv, "text/csv")).run()
    return app.chat_input[0].set_value("取引先別の売上合計は？").run()


def _run_upload(item: Ledger) -> Flow:
    def flow(_: Path) -> AppTest:
        app = _app("run")
        app.run()
        app.selectbox(key="run_plan").set_value(SALES_SAMPLE).run()
        app.file_uploader[0].set_value((item.name, item.data, "text/csv")).run()
        if not app.exception:
            app.button(key="run_start").click().run()
        return app

    return flow


def _run_sample(_: Path) -> AppTest:
    app = _app("run")
    app.run()
    app.selectbox(key="run_plan").set_value(SALES_SAMPLE).run()
    app.button(key="run_use_sample").click().run()
    app.button(key="run_start").click().run()
    return app


def _run_waiting(env: Path) -> AppTest:
    designs = env / "designs"
    designs.mkdir(exist_ok=True)
    (designs / "approval.yaml").write_text(APPROVAL_PLAN, encoding="utf-8")
    app = _app("run")
    app.run()
    app.selectbox(key="run_plan").set_value("approval.yaml").run()
    return app.button(key="run_start").click().run()


def _run_cancelled(env: Path) -> AppTest:
    """A run someone cancelled from the CLI, opened from the history."""
    app = _run_waiting(env)
    log = list_runs("tests/approval", runs_dir=env / "runs")[0]  # newest first
    lines = log.read_text(encoding="utf-8").splitlines()
    first, last = json.loads(lines[0]), json.loads(lines[-1])
    end = PlanComplete(
        id=last["id"] + 1,
        run_id=first["run_id"],
        timestamp=datetime.now(UTC),
        status="cancelled",
        total_duration_ms=1234.5,
    )
    with log.open("a", encoding="utf-8") as out:
        out.write(json.dumps(end.to_dict(), ensure_ascii=False) + "\n")
    app.button(key="run_history_open").click().run()
    return app


def _convert(_: Path) -> AppTest:
    app = _app("convert")
    app.run()
    app.text_area(key="convert_request").set_value("この売上表を Excel にして")
    app.file_uploader[0].set_value(
        ("売上.csv", "月,売上\n4月,120000\n".encode("cp932"), "text/csv")
    )
    app.run()
    return _press(app, "convert_run")


def _helpdesk(_: Path) -> AppTest:
    app = _app("helpdesk")
    app.run()
    app.text_area(key="helpdesk_question").set_value("経費精算の締め日はいつですか？")
    return _press(app, "helpdesk_ask")


def _design(_: Path) -> AppTest:
    from keiri_agent.ui.design.state import INSTRUCTION_KEY

    app = _app("design")
    app.run()
    app.text_area(key=INSTRUCTION_KEY).set_value("毎月の売上明細から得意先別の売上集計表を作る")
    app.run()
    return _press(app, "design_generate")


def _schedule(_: Path) -> AppTest:
    approved_memo(load_settings())
    app = _app("schedule")
    app.run()
    app.text_input(key="schedule_plan").set_value(PLAN_ID)
    app.radio(key="schedule_form").set_value("last_business_day").run()
    app.text_input(key="schedule_at").set_value("17:00")
    app.button(key="schedule_add").click().run()
    app.text_input(key="schedule_at").set_value("25時")
    return app.button(key="schedule_add").click().run()


def _home(_: Path) -> AppTest:
    app = _app("")
    app.run()
    return app


BAD_REPLIES = ("これは JSON ではありません", '{"next_action": "どこかへ"}', "")


def _flows(llm: str) -> dict[str, Flow]:
    flows: dict[str, Flow] = {"home": _home, "schedule": _schedule}
    flows |= {f"analysis upload {i} ({x.shape})": _analysis_upload(x) for i, x in
              enumerate(ledgers(6))}  # fmt: skip
    flows |= {f"run upload {i} ({x.shape})": _run_upload(x) for i, x in enumerate(ledgers(4))}
    flows |= {
        "run sample": _run_sample,
        "run waiting": _run_waiting,
        "run cancelled": _run_cancelled,
    }
    flows |= {
        "analysis question": _analysis_question,
        "convert": _convert,
        "helpdesk": _helpdesk,
        "design": _design,
    }
    return {f"{name} [{llm}]": flow for name, flow in flows.items()}


def _sweep(flows: dict[str, Flow], env: Path) -> dict[str, list[str]]:
    import os

    workspace = Path(os.environ["KEIRI_WORKSPACE_ROOT"])
    roots = (env / "runs", workspace, env / "designs", env)
    found = {}
    for name, flow in flows.items():
        app = flow(env)
        if problems := _leaks_of(app, roots):
            found[name] = sorted(set(problems))
    return found


def _report(found: dict[str, list[str]], total: int) -> str:
    lines = [f"{len(found)} of {total} flows show words not for the screen:"]
    for name, problems in found.items():
        lines += [f"  {name}"] + [f"    {p}" for p in problems]
    return "\n".join(lines)


def test_no_llm_configured(env: Path, public_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(public_dir / "workspace"))
    flows = _flows("no LLM")
    found = _sweep(flows, env)
    assert not found, _report(found, len(flows))


def test_an_llm_that_answers_badly(
    env: Path,
    public_dir: Path,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(public_dir / "workspace"))
    monkeypatch.setenv("KEIRI_LLM_MAX_RETRIES", "0")
    monkeypatch.setenv("KEIRI_CODEACT_ROOT", str(public_dir / "codeact"))
    for reply in BAD_REPLIES * 30:
        if reply.startswith("{"):
            llm_server.add_chat(json=json.loads(reply))
        else:
            llm_server.add_chat(reply)
    keep = ("analysis question", "convert", "helpdesk", "design", "run sample")
    flows = {k: v for k, v in _flows("bad LLM").items() if k.startswith(keep)}
    found = _sweep(flows, env)
    assert not found, _report(found, len(flows))
