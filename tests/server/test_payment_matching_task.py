"""入金消込 through the API (issue 35): the example plan run as a task with its files named in the
shared data, paused on its 要確認 lines with ``confirm``, continued through the answers
endpoint; the confirmed payer name is learned in the server's workspace."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from keiri_agent.examples import example_answers, example_data_dir
from tests.server.conftest import LiveServer, with_shared_data

SAMPLE = example_data_dir() / "payment_matching"
PARENT = "ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ"
BODY = {
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

KEYS = {
    "sato": ("sato-key-0123456789abcdef", "user"),
    "tanaka": ("tanaka-key-0123456789ab", "approver"),
}


def test_review_lines_are_confirmed_through_the_answers_endpoint(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    settings = with_shared_data(tmp_path, {})
    for name in ("請求一覧.csv", "振込入金通知.txt", "取引先マスタ.csv"):
        shutil.copy(SAMPLE / name, tmp_path / "shared" / name)
    live = serve(settings)
    task = _confirm(live)
    assert task["status"] == "success", task["error"]
    store = (settings.keiri_workspace_root / "learned_payer_names.csv").read_text("utf-8")
    assert f"{PARENT},1007" in store


# --- one file for the team: only approvers and admins change it (issue 35's follow-up) --------


def _users_file(root: Path) -> Path:
    lines = ["users:"]
    for name, (key, role) in KEYS.items():
        digest = hashlib.sha256(key.encode()).hexdigest()
        lines += [f"  - name: {name}", f"    key_sha256: {digest}", f"    role: {role}"]
    path = root / "users.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _confirm(live: LiveServer, user: str | None = None) -> dict[str, Any]:
    """The example run (by ``user``: None on a server without keys) up to its 要確認 lines,
    then continued with the shipped answers (remember the parent company's name); the
    continuation's task as the user sees it."""
    headers = {"Authorization": f"Bearer {KEYS[user][0]}"} if user is not None else {}
    with live.client(headers=headers) as client:
        started = client.post("/agent/run", json=BODY)
        assert started.status_code == 202, started.text
        task_id = started.json()["task_id"]
        assert live.wait_finished(task_id) == "waiting_input", live.registry.get(task_id).error
        answers = {"answers": example_answers("payment_matching")}
        continued = client.post(f"/agent/tasks/{task_id}/answers", json=answers)
        assert continued.status_code in (200, 202), continued.text
        next_id = continued.json().get("task_id", task_id)
        live.wait_finished(next_id)
        task: dict[str, Any] = client.get(f"/agent/tasks/{next_id}").json()
        return task


def test_only_an_approver_changes_the_teams_learned_names(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    settings = with_shared_data(
        tmp_path, {}, keiri_api_keys_file=_users_file(tmp_path), keiri_require_approval="off"
    )
    for name in ("請求一覧.csv", "振込入金通知.txt", "取引先マスタ.csv"):
        shutil.copy(SAMPLE / name, tmp_path / "shared" / name)
    store = settings.learned_payer_names_path()
    live = serve(settings)
    # An ordinary user's confirmation does not change what everyone's matching reads.
    refused = _confirm(live, "sato")
    assert refused["status"] == "failed", refused
    assert refused["error"]["code"] == "PERMISSION_DENIED", refused["error"]
    assert "学習済みの名義" in refused["error"]["message"]
    assert "承認者" in refused["error"]["hint"]
    assert not store.exists()
    # An approver's does, recorded under the approver's signed-in name.
    learned = _confirm(live, "tanaka")
    assert learned["status"] == "success", learned["error"]
    rows = list(csv.DictReader(io.StringIO(store.read_text("utf-8-sig"))))
    assert [(r["振込依頼人名"], r["取引先コード"], r["登録者"]) for r in rows] == [
        (PARENT, "1007", "tanaka")
    ]
    # The task names the file by what it is, not where the server keeps it.
    assert str(tmp_path) not in json.dumps(learned, ensure_ascii=False)
