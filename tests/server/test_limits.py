"""Request size limits: an oversized body is refused with 413 and a Japanese message, whether
its size is declared or only counted as it arrives, and nothing starts."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.server.conftest import LiveServer, make_settings

LIMIT = 2_000


def _oversized() -> bytes:
    body = {"kind": "plan", "plan": "duplicate_invoice_check", "request": "あ" * LIMIT}
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def _assert_refused(live: LiveServer, status: int, body: dict[str, str]) -> None:
    assert status == 413
    assert body["code"] == "REQUEST_TOO_LARGE"
    assert body["message"] == f"リクエストが大きすぎます（上限 {LIMIT:,} バイト）。"
    assert "KEIRI_MAX_REQUEST_BYTES" in body["hint"]
    assert live.registry.list() == []


def test_a_declared_oversized_body_is_refused(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    live = serve(make_settings(tmp_path, keiri_max_request_bytes=LIMIT))
    with live.client() as client:
        response = client.post(
            "/agent/run", content=_oversized(), headers={"Content-Type": "application/json"}
        )
    _assert_refused(live, response.status_code, response.json())


def test_a_chunked_oversized_body_is_refused_while_it_arrives(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    live = serve(make_settings(tmp_path, keiri_max_request_bytes=LIMIT))
    data = _oversized()

    def chunks() -> Iterator[bytes]:  # no Content-Length: sent with chunked encoding
        for start in range(0, len(data), 500):
            yield data[start : start + 500]

    with live.client() as client:
        response = client.post(
            "/agent/run", content=chunks(), headers={"Content-Type": "application/json"}
        )
    assert "content-length" not in response.request.headers
    _assert_refused(live, response.status_code, response.json())


def test_a_body_within_the_limit_is_accepted(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    live = serve(make_settings(tmp_path, keiri_max_request_bytes=LIMIT))
    with live.client() as client:
        response = client.post(
            "/agent/run", json={"kind": "plan", "plan": "duplicate_invoice_check"}
        )
    assert response.status_code == 202
    live.wait_finished(response.json()["task_id"])
