"""``kind: design`` over the API: a compose conflict comes back with its choices, and the same
request with ``bindings`` completes (invoice_list + duplicate_invoices + excel_report)."""

from __future__ import annotations

from collections.abc import Callable

import yaml

from keiri_agent.config import Settings
from tests.server.conftest import LiveServer

TEMPLATES = ["invoice_list", "duplicate_invoices", "excel_report"]


def _run(live: LiveServer, body: dict[str, object]) -> dict[str, object]:
    with live.client() as client:
        response = client.post("/agent/run", json=body)
        assert response.status_code == 202, response.text
        task_id = response.json()["task_id"]
        live.wait_finished(task_id)
        task = client.get(f"/agent/tasks/{task_id}").json()
        assert isinstance(task, dict)
        return task


def test_compose_conflicts_are_resolved_with_bindings(
    serve: Callable[..., LiveServer], settings: Settings
) -> None:
    live = serve(settings)
    body: dict[str, object] = {
        "kind": "design",
        "instruction": "重複請求を調べて Excel にする",
        "templates": TEMPLATES,
        "apply_mode": "compose",
        "plan_id": "keiri/duplicates",
    }

    stuck = _run(live, body)

    assert stuck["status"] == "failed"
    details = stuck["details"]
    assert isinstance(details, dict)
    (conflict,) = [c for c in details["conflicts"] if c["kind"] == "ambiguous"]
    assert conflict["binding"] == "excel_report.table"
    assert "duplicate_invoices.duplicates" in conflict["choices"]
    assert stuck["files"] == []

    done = _run(live, {**body, "bindings": {conflict["binding"]: "duplicate_invoices.duplicates"}})

    assert done["status"] == "success", done
    (saved,) = done["files"]
    assert isinstance(saved, dict)
    assert saved["name"] == "keiri_duplicates.yaml"
    with live.client() as client:
        plan = yaml.safe_load(client.get(str(saved["url"])).text)
    assert plan["id"] == "keiri/duplicates"
    assert any("duplicate_invoices_" in str(node.get("in")) for node in plan["graph"])


def test_a_bad_design_request_is_refused_before_a_task_starts(
    serve: Callable[..., LiveServer], settings: Settings
) -> None:
    live = serve(settings)
    with live.client() as client:
        response = client.post(
            "/agent/run", json={"kind": "design", "instruction": "", "apply_mode": "magic"}
        )
    assert response.status_code == 422, response.text
    assert live.registry.list() == []
