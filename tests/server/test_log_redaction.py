"""No task token survives in a log line, however the ``token`` parameter is spelled: the name
percent-encoded (any letters, either hex case, twice), in any letter case, with ``+``, repeated,
in a fragment, or inside another URL; the value encoded any way. Checked on the formatters and
filter that ``keiri-agent serve`` configures, text and JSON, for uvicorn's access records and for
messages; and on the real server's access log with ``?%74oken=`` (``test_access_log``)."""

from __future__ import annotations

import functools
import json
import logging
from importlib import import_module
from typing import Any, Literal
from urllib.parse import quote, unquote_plus

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keiri_agent.server.logconfig import log_config
from keiri_agent.server.redaction import TOKEN_PARAM, redact

ACCESS_FORMAT = '%s - "%s %s HTTP/%s" %d'
VALUE_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~+?;#=/:!$'()*,@"


@st.composite
def token_names(draw: st.DrawFn) -> str:
    """``token`` spelled in any way a parser still reads (or nearly reads) as ``token``."""
    out = []
    for char in TOKEN_PARAM:
        char = draw(st.sampled_from([char, char.upper()]))
        form = draw(st.sampled_from(["plain", "hex", "HEX", "twice"]))
        code = f"{ord(char):02x}"
        out.append(
            {"plain": char, "hex": f"%{code}", "HEX": f"%{code.upper()}", "twice": f"%25{code}"}[
                form
            ]
        )
    padding = draw(st.sampled_from(["", "+", "%20"]))
    return "".join(out) + padding


@st.composite
def token_values(draw: st.DrawFn) -> str:
    """A token value as it may stand in a query: plain characters and percent-encoded bytes."""
    parts = draw(
        st.lists(
            st.one_of(
                st.sampled_from(VALUE_CHARS),
                st.integers(0, 255).map(lambda b: f"%{b:02X}"),
                st.integers(0, 255).map(lambda b: f"%{b:02x}"),
            ),
            min_size=16,
            max_size=48,
        )
    )
    return "".join(parts)


@st.composite
def urls(draw: st.DrawFn) -> tuple[str, list[str], str]:
    """A URL with one or more token parameters among others; returns it, the values and
    where the parameters stand (query, fragment, nested)."""
    values = draw(st.lists(token_values(), min_size=1, max_size=3))
    params = [f"{draw(token_names())}={value}" for value in values]
    params += draw(st.sampled_from([[], ["task_id=abcdefghijklmnopqrstuv"], ["last_event_id=7"]]))
    params = draw(st.permutations(params))
    url = "/agent/sse?" + "&".join(params)
    where = draw(st.sampled_from(["query", "fragment", "nested"]))
    if where == "fragment":  # the first one moves into the fragment
        url = url.replace("&", "#", 1) if len(params) > 1 else "/agent/sse#" + params[0]
    elif where == "nested":  # the whole URL is a parameter of another one
        url = "/login?next=" + quote(url, safe="")
    return url, values, where


@functools.cache
def _formatters(fmt: Literal["text", "json"]) -> dict[str, logging.Formatter]:
    """The formatters ``keiri-agent serve`` configures for ``fmt``, built from its config."""
    built = {}
    for name, spec in log_config(fmt)["formatters"].items():
        spec = dict(spec)
        module, _, attr = spec.pop("()").rpartition(".")
        built[name] = getattr(import_module(module), attr)(**spec)
    return built


@functools.cache
def _filters(fmt: Literal["text", "json"]) -> list[logging.Filter]:
    built = []
    for spec in log_config(fmt)["filters"].values():
        module, _, attr = spec["()"].rpartition(".")
        built.append(getattr(import_module(module), attr)())
    return built


def _write(fmt: Literal["text", "json"], logger: str, msg: str, args: Any) -> str:
    """One record through the serve filter and formatter, as a handler writes it."""
    record = logging.LogRecord(logger, logging.INFO, __file__, 1, msg, args, None)
    for log_filter in _filters(fmt):
        assert log_filter.filter(record)
    formatter = _formatters(fmt)["access" if logger == "uvicorn.access" else "default"]
    return formatter.format(record)


def _records(url: str) -> list[tuple[str, str, Any]]:
    return [
        ("uvicorn.access", ACCESS_FORMAT, ("127.0.0.1:5000", "GET", url, "1.1", 200)),
        ("keiri_agent.server", f"リンクを開きました: http://127.0.0.1:8000{url} です", ()),
        ("keiri_agent.server", "URL %s を返しました", (url,)),
        ("uvicorn.error", "%s", ({"url": f"http://h{url}"},)),  # a non-string argument
    ]


def _shown(line: str, fmt: Literal["text", "json"]) -> str:
    return str(json.loads(line)["message"]) if fmt == "json" else line


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(url_and_values=urls(), fmt=st.sampled_from(["text", "json"]))
def test_no_token_value_survives_in_a_log_line(
    url_and_values: tuple[str, list[str], str], fmt: Literal["text", "json"]
) -> None:
    url, values, where = url_and_values
    for logger, msg, args in _records(url):
        shown = _shown(_write(fmt, logger, msg, args), fmt)
        for value in values:
            assert value not in shown, (logger, shown)
            assert unquote_plus(value) not in shown, (logger, shown)
        if "task_id=abcdefghijklmnopqrstuv" in url and where == "query":
            assert "task_id=abcdefghijklmnopqrstuv" in shown  # other parameters stay


def test_ordinary_text_and_other_parameters_are_left_alone() -> None:
    for text in (
        "GET /agent/tasks?limit=5 HTTP/1.1",
        "タスクを受け付けました（plan） status=ok tokens=12 my_token=x",
        "a == b; c=d",
    ):
        assert redact(text) == text


def test_the_access_log_records_the_redacted_request() -> None:
    line = _write("text", "uvicorn.access", ACCESS_FORMAT, _records("/t?%74oken=SECRETVALUE")[0][2])
    assert '"GET /t?%74oken=*** HTTP/1.1" 200' in line
    assert "SECRETVALUE" not in line


def test_personal_data_is_masked_in_log_lines_and_a_tasks_known_names_too() -> None:
    from keiri_agent.privacy import PersonalKind, job_scope

    message = "helpdesk: question %r"
    question = "長谷川 美咲です。連絡先は090-4412-7788、misaki@example.jp です。"
    for fmt in ("text", "json"):
        shown = _shown(_write(fmt, "keiri_agent.agents", message, (question,)), fmt)
        assert "090-4412-7788" not in shown
        assert "misaki@example.jp" not in shown
        assert "〔電話番号〕" in shown
        assert "〔メール〕" in shown
        with job_scope() as vault:  # inside a task whose LLM masking met the name
            vault.learn(PersonalKind.PERSON, "長谷川 美咲")
            shown = _shown(_write(fmt, "keiri_agent.agents", message, (question,)), fmt)
        assert "長谷川" not in shown
        assert "〔人名〕です" in shown
