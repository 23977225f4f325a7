"""入金消込 through the API (issue 35): the example plan run as a task with its files named in the
shared data, paused on its 要確認 lines with ``confirm``, continued through the answers
endpoint; the confirmed payer name is learned in the server's workspace."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from keiri_agent.examples import example_answers, example_data_dir
from tests.server.conftest import LiveServer, with_shared_data

SAMPLE = example_data_dir() / "payment_matching"
PARENT = "ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ"


def test_review_lines_are_confirmed_through_the_answers_endpoint(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    settings = with_shared_data(tmp_path, {})
    for name in ("請求一覧.csv", "振込入金通知.txt", "取引先マスタ.csv"):
        shutil.copy(SAMPLE / name, tmp_path / "shared" / name)
    body = {
        "kind": "plan",
        "plan": "payment_matching",
        "vars": {
            "invoices": "請求一覧.csv",
            "bank": "振込入金通知.txt",
            "customers": "取引先マスタ.csv",
            "confirm": True,
        },
        "answers": {},
    }
    live = serve(settings)
    with live.client() as client:
        started = client.post("/agent/run", json=body)
        assert started.status_code in (200, 202), started.text
        task_id = started.json()["task_id"]
        assert live.wait_finished(task_id) == "waiting_input", live.registry.get(task_id).error

        answers = {"answers": example_answers("payment_matching")}
        continued = client.post(f"/agent/tasks/{task_id}/answers", json=answers)
        assert continued.status_code in (200, 202), continued.text
        next_id = continued.json().get("task_id", task_id)
        assert live.wait_finished(next_id) == "success", live.registry.get(next_id).error

    store = (settings.keiri_workspace_root / "learned_payer_names.csv").read_text("utf-8")
    assert f"{PARENT},1007" in store
