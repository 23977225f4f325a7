"""Property: whatever a client sends wrong, the API's error body says it in Japanese.

The cases are generated from the app's own routes, the mistakes a client makes: each method a
route does not take; for each POST route malformed JSON, a list or a string for an object, an
empty object, fields of the wrong type, unknown fields, bytes that are not UTF-8, a form or a
broken multipart body, a body over the size limit; for each GET route query parameters of the
wrong type or out of range; and addresses that do not exist. FastAPI, Starlette and Pydantic
answer such requests in English (``Field required``, ``Not Found``, ``Method Not Allowed``,
``Input should be a valid integer``): every error here must be the API's JSON body ``{code,
message, hint}`` whose message, hint and per-field problems hold no English of a library
(Pydantic's own words stay in ``details.errors[].message``, for developers).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.routing import iter_route_contexts

from keiri_agent.config import Settings
from keiri_agent.server import create_app
from tests.server.conftest import LiveServer, make_settings
from tests.support.english import cli_words, english_of

MAX_REQUEST_BYTES = 20_000  # small, so that the oversized body is quick to send
METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH")
JSON = "application/json"
BODIES: dict[str, tuple[bytes, str]] = {
    "malformed JSON": ('{"request": "売上'.encode(), JSON),
    "a list": (b"[1, 2]", JSON),
    "a string": ('"売上を集計"'.encode(), JSON),
    "empty object": (b"{}", JSON),
    "wrong types": (b'{"kind": 5, "request": [1], "plan_id": 3, "answers": "yes"}', JSON),
    "unknown fields": (b'{"kind": "plan", "plan": "x", "vars": "a=1", "color": "red"}', JSON),
    "not UTF-8": ('{"request": "売上"}'.encode("cp932"), JSON),
    "a form": (b"request=x", "application/x-www-form-urlencoded"),
    "broken multipart": (b"--zz\r\nbroken", "multipart/form-data; boundary=zz"),
    "multipart without its JSON": (
        b'--zz\r\nContent-Disposition: form-data; name="files"; filename="a.csv"\r\n\r\nx\r\n--zz--\r\n',
        "multipart/form-data; boundary=zz",
    ),
    "over the limit": (b"x" * (MAX_REQUEST_BYTES + 1), JSON),
}
QUERIES = {"a word for a number": "?limit=十&from=&to=", "out of range": "?limit=-5"}
UNKNOWN = ("/nothing", "/agent/nothing", "/agent/tasks/x/y/z", "/static/none.js", "/agent/run/x")


@dataclass(frozen=True)
class Request:
    """One request a client gets wrong."""

    kind: str
    method: str
    path: str
    sent: tuple[bytes, str] | None = None  # the body and its content type

    def __str__(self) -> str:
        return f"{self.kind}: {self.method} {self.path}"


def _routes(settings: Settings) -> dict[str, set[str]]:
    """Each route's path (parameters filled with ``x``) and the methods it takes."""
    found: dict[str, set[str]] = defaultdict(set)
    for route in iter_route_contexts(create_app(settings).routes):
        if route.methods:
            found[re.sub(r"\{[^}]+\}", "x", route.path)] |= set(route.methods)
    return found


def _requests(settings: Settings) -> Iterator[Request]:
    for path, methods in sorted(_routes(settings).items()):
        for method in METHODS:
            if method not in methods:
                yield Request("wrong method", method, path)
        if "POST" in methods:
            for kind, sent in BODIES.items():
                yield Request(kind, "POST", path, sent)
        if "GET" in methods:
            for kind, query in QUERIES.items():
                yield Request(kind, "GET", path + query)
    for path in UNKNOWN:
        yield Request("no such address", "GET", path)


def _shown(body: dict[str, Any]) -> str:
    """What a person reads of an error body: message, hint, each field's problem."""
    problems = (body.get("details") or {}).get("errors") or []
    texts = [body["message"], body["hint"]]
    texts += [f"{p.get('field', '')}: {p.get('problem', '')}" for p in problems]
    return "\n".join(texts)


def _leak(response: httpx.Response) -> list[str]:
    if response.status_code < 400:
        return []
    try:
        body = response.json()
    except ValueError:
        return [f"not JSON: {response.text[:80]!r}"]
    if not isinstance(body, dict) or not {"code", "message", "hint"} <= body.keys():
        return [f"not the API's error body: {body!r}"[:200]]
    return english_of(_shown(body), allowed=cli_words())


@pytest.fixture
def small_limit(tmp_path: Path) -> Settings:
    return make_settings(tmp_path, keiri_max_request_bytes=MAX_REQUEST_BYTES)


def test_the_generator_covers_every_route_and_kind_of_mistake(small_limit: Settings) -> None:
    requests = list(_requests(small_limit))
    assert {r.kind for r in requests} >= {"wrong method", "no such address", *BODIES, *QUERIES}
    assert len(_routes(small_limit)) > 20
    assert len(requests) > 200


def test_no_english_of_a_library_in_an_error_body(
    serve: Callable[..., LiveServer], small_limit: Settings
) -> None:
    live = serve(small_limit)
    requests = list(_requests(small_limit))
    leaks = {}
    errors = 0
    with live.client() as client:
        for request in requests:
            body, content_type = request.sent or (None, "")
            headers = {"origin": live.url}  # as the progress page sends it: past the CSRF check
            headers |= {"content-type": content_type} if content_type else {}
            response = client.request(request.method, request.path, content=body, headers=headers)
            errors += response.status_code >= 400
            if found := _leak(response):
                leaks[str(request)] = (response.status_code, found)
    assert leaks == {}, f"{len(leaks)} of {len(requests)} requests"
    assert errors > len(requests) * 0.9  # the mistakes are refused, not run


@pytest.mark.parametrize(
    ("method", "path", "body", "expected"),
    [
        ("POST", "/agent/schedules", b"{}", "plan_id: 必須の項目がありません"),
        ("GET", "/agent/tasks?limit=many", None, "URL のパラメータ limit: 整数として読めません"),
        ("GET", "/agent/tasks?limit=0", None, "URL のパラメータ limit: 1 以上にしてください"),
        ("POST", "/agent/run", b'{"request": "x", "color": 1}', "color: 定義にない項目です"),
        ("POST", "/agent/run", b"[1]", "全体: オブジェクト（{...}）ではありません"),
        ("POST", "/agent/run", b'{"kind": "sum"}', "kind の値 'sum' は使えません"),
        ("POST", "/agent/schedules", b'{"plan_id": ', "本文: JSON として読めません"),
    ],
)
def test_a_request_that_fails_its_model_says_which_field_and_why(
    serve: Callable[..., LiveServer],
    settings: Settings,
    method: str,
    path: str,
    body: bytes | None,
    expected: str,
) -> None:
    live = serve(settings)
    with live.client() as client:
        response = client.request(method, path, content=body, headers={"content-type": JSON})
    assert response.status_code == 422
    data = response.json()
    assert data["code"] == "INPUT_VALIDATION_FAILED"
    assert expected in data["message"]
    assert english_of(_shown(data)) == []
    assert all(problem["message"] for problem in data["details"]["errors"])  # Pydantic's own


# --- a server with keys: what a client sends wrong about who it is or what it sends ----------

API_KEY = "test-key-0123456789abcdef"
# How a client gets its key wrong (header name → value; None: no header).
AUTH: dict[str, dict[str, str]] = {
    "no key": {},
    "Bearer with no key": {"authorization": "Bearer"},
    "a wrong key": {"authorization": "Bearer wrong-key"},
    "Basic instead of Bearer": {"authorization": "Basic dXNlcjpwYXNz"},
    "the key alone": {"authorization": API_KEY},
    "a key that is not ASCII": {"authorization": "Bearer 鍵"},
    "a token in the address": {"x-query": "?token=abc"},
}
# A right key with a body of a content type the route does not read.
CONTENT_TYPES = {
    "JSON as text/plain": "text/plain",
    "no content type": "",
    "XML": "application/xml",
    "JSON with a wrong charset": "application/json; charset=shift_jis",
}


def _keyed_requests(settings: Settings) -> Iterator[tuple[str, str, str, dict[str, str], bytes]]:
    """Each route with each wrong key, and each POST route with each wrong content type."""
    for path, methods in sorted(_routes(settings).items()):
        method = "POST" if "POST" in methods else "GET"
        body = b'{"request": "\xe5\xa3\xb2\xe4\xb8\x8a"}' if method == "POST" else b""
        for kind, headers in AUTH.items():
            query = headers.get("x-query", "")
            sent = {k: v for k, v in headers.items() if k != "x-query"}
            yield kind, method, path + query, sent | {"content-type": JSON}, body
        if method == "POST":
            for kind, content_type in CONTENT_TYPES.items():
                sent = {"authorization": f"Bearer {API_KEY}"}
                sent |= {"content-type": content_type} if content_type else {}
                yield kind, method, path, sent, body


def test_no_english_when_the_key_or_content_type_is_wrong(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    settings = make_settings(tmp_path, keiri_api_key=API_KEY)
    live = serve(settings)
    requests = list(_keyed_requests(settings))
    leaks = {}
    refused = 0
    with live.client() as client:
        for kind, method, path, headers, body in requests:
            try:
                response = client.request(method, path, content=body or None, headers=headers)
            except UnicodeEncodeError:  # httpx sends no header that is not ASCII: as raw bytes
                raw = {k: v.encode() for k, v in headers.items()}
                response = client.request(method, path, content=body or None, headers=raw)
            refused += response.status_code >= 400
            if found := _leak(response):
                leaks[f"{kind}: {method} {path}"] = (response.status_code, found)
    assert leaks == {}, f"{len(leaks)} of {len(requests)} requests"
    assert len(requests) > 150
    assert refused > len(requests) * 0.8  # refused (401, 415, 422...), not run
