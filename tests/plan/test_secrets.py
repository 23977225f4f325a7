"""Secrets from the environment, the config and the settings never reach run logs or events
(issue 18): every file under the runs directory and every event a listener saw is searched."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pydantic import SecretStr

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.config import Settings
from keiri_agent.events import MASK, NodeComplete, RunEvent
from keiri_agent.plan import PlanRunner

WritePlan = Callable[[str, str], Path]

ENV_SECRET = "tok-3f9a1c77e2b4"
CONFIG_SECRET = "pw-8d2e55aa91"
API_KEY = "sk-live-0c4b7e19d6"
SHORT_SECRET = "xy"  # masked only where a whole value equals it

PLAN = """
id: leaky
vars:
  token: "${env.K18_TOKEN}"
policy: {on_error: continue}
graph:
  - id: echo
    block: test.sleep
    in: {value: "Bearer ${vars.token}"}
  - id: db
    block: test.sleep
    in: {value: "${config.db}"}
  - id: short
    block: test.sleep
    in: {value: "${env.K18_SHORT}"}
  - id: each
    type: loop
    foreach: {input: ["${vars.token}", "plain"], itemVar: item}
    body:
      plan:
        graph:
          - {id: inner, block: test.sleep, in: {value: "${item}"}}
        exports: [{from: inner.value, as: v}]
    out: {collect: v}
  - id: boom
    block: test.fail
    in:
      message: "認証に失敗しました: ${env.K18_TOKEN}"
      value: {auth: "${env.K18_TOKEN}", key: "${vars.api}"}
"""


def test_secrets_are_masked_in_every_log_file_and_event(
    registry: BlockRegistry, tmp_path: Path, designs: Path, write_plan: WritePlan
) -> None:
    plan = write_plan("leaky", PLAN.replace("  token:", "  api: null\n  token:"))
    runs = tmp_path / "runs"
    settings = Settings(_env_file=None, openai_api_key=SecretStr(API_KEY))  # type: ignore[call-arg]
    seen: list[RunEvent] = []
    env = {"K18_TOKEN": ENV_SECRET, "K18_SHORT": SHORT_SECRET}
    config = {"db": {"host": "db.example", "password": CONFIG_SECRET}}
    with PlanRunner(
        registry, settings=settings, runs_dir=runs, designs_dir=designs, config=config, env=env
    ) as runner:
        result = runner.run(plan, vars={"api": API_KEY}, on_event=seen.append)

    assert result.status == "partial"  # boom failed under on_error: continue
    files = [p for p in runs.rglob("*") if p.is_file()]
    assert any(p.suffix == ".jsonl" for p in files)
    texts = [(p, p.read_bytes().decode("utf-8", "replace")) for p in files]
    texts += [("events", "\n".join(e.to_json() for e in seen))]
    texts += [("result", json.dumps(result.to_dict(), ensure_ascii=False))]
    for secret in (ENV_SECRET, CONFIG_SECRET, API_KEY):
        leaks = [str(where) for where, text in texts if secret in text]
        assert not leaks, f"{secret} in {leaks}"
    assert f'"{SHORT_SECRET}"' not in texts[-2][1]
    # The values were there and are shown masked, not dropped.
    log = next(text for where, text in texts if str(where).endswith(".jsonl"))
    assert f"Bearer {MASK}" in log
    assert f"認証に失敗しました: {MASK}" in log
    assert '"host": "db.example"' in log
    # The node whose output holds the secret is not stored, so a resume runs it again.
    echo = next(e for e in seen if isinstance(e, NodeComplete) and e.node_id == "echo")
    assert isinstance(echo, NodeComplete)
    assert echo.stored is None
    assert echo.outputs_file is None
    # The caller's own objects keep the real values.
    assert result.outputs["echo"] == {"value": f"Bearer {ENV_SECRET}"}
