"""Test support for the help-desk agent: scripted replies routed by call kind and subtask,
and fake search tools over fixed results.

Subtasks run in parallel, so their requests reach the scripted server in any order. Each
scripted reply therefore carries a ``when=`` predicate naming the call it answers: the kind of
call (plan, tool selection, subtask answer, reflection, final answer, told apart by the request's
tools, its response_format and its system prompt) and, for subtask calls, the subtask.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from keiri_agent.agents.helpdesk.knowledge import SearchOutput
from keiri_agent.agents.helpdesk.prompts import HelpDeskAgentPrompts
from tests.support.llm_server import ScriptedLLMServer
from tests.support.llm_wire import content_text, messages_of

__all__ = [
    "EXAMPLES",
    "USAGE",
    "FakeSearch",
    "HelpDeskScript",
    "build_example_index",
    "hit",
    "request_kind",
    "sample_embedding_cache",
    "subtask_of",
]

CallKind = Literal["plan", "select", "answer", "reflect", "final"]
USAGE = (100, 20)  # tokens of every scripted reply: 120 per call
PROMPTS = HelpDeskAgentPrompts()
_SUBTASK_HEADING = "## あなたのサブタスク\n"


def hit(
    file_name: str,
    content: str,
    *,
    page: int | None = None,
    row: int | None = None,
    source: Literal["manual", "qa"] = "manual",
    score: float = 3.0,
) -> SearchOutput:
    """A search hit; the default score is above the agent's default relevance floor (1.5)."""
    where = page if page is not None else row
    return SearchOutput(
        file_name=file_name,
        content=content,
        page=page,
        row=row,
        chunk_id=f"{file_name}#{where}",
        score=score,
        source=source,
    )


def _schema_name(body: dict[str, Any]) -> str | None:
    response_format = body.get("response_format")
    if isinstance(response_format, dict):
        schema = response_format.get("json_schema")
        if isinstance(schema, dict):
            return str(schema.get("name"))
    return None


def request_kind(body: dict[str, Any]) -> CallKind | None:
    """Which of the agent's calls a chat request is."""
    name = _schema_name(body)
    if name == "Plan":
        return "plan"
    if name == "ReflectionResult":
        return "reflect"
    if body.get("tools"):
        return "select"
    messages = messages_of(body)
    system = content_text(messages[0].get("content")) if messages else ""
    if system == PROMPTS.subtask_system_prompt:
        return "answer"
    if system == PROMPTS.final_answer_system_prompt:
        return "final"
    return None


def subtask_of(body: dict[str, Any]) -> str | None:
    """The subtask a subtask call works on (from its tool-selection prompt)."""
    for message in messages_of(body):
        text = content_text(message.get("content"))
        if _SUBTASK_HEADING in text:
            return text.split(_SUBTASK_HEADING, 1)[1].split("\n", 1)[0]
    return None


def is_call(kind: CallKind, subtask: str | None = None) -> Callable[[dict[str, Any]], bool]:
    def predicate(body: dict[str, Any]) -> bool:
        return request_kind(body) == kind and (subtask is None or subtask_of(body) == subtask)

    return predicate


@dataclass
class HelpDeskScript:
    """Scripts the agent's calls on a scripted server, one method per call kind."""

    server: ScriptedLLMServer
    usage: tuple[int, int] = USAGE

    def plan(self, *subtasks: str) -> None:
        self.server.add_chat(
            json={"subtasks": list(subtasks)}, when=is_call("plan"), usage=self.usage
        )

    def select(self, subtask: str, *calls: dict[str, Any], repeat: bool = False) -> None:
        self.server.add_chat(
            tool_calls=list(calls),
            when=is_call("select", subtask),
            usage=self.usage,
            repeat=repeat,
        )

    def answer(self, subtask: str, text: str, *, repeat: bool = False) -> None:
        self.server.add_chat(text, when=is_call("answer", subtask), usage=self.usage, repeat=repeat)

    def reflect(
        self, subtask: str, completed: bool, advice: str = "十分です", *, repeat: bool = False
    ) -> None:
        self.server.add_chat(
            json={"advice": advice, "is_completed": completed},
            when=is_call("reflect", subtask),
            usage=self.usage,
            repeat=repeat,
        )

    def final(self, text: str) -> None:
        self.server.add_chat(text, when=is_call("final"), usage=self.usage)

    def subtask(
        self,
        subtask: str,
        query: str,
        answer: str,
        tool: str = "search_manual",
        *,
        repeat: bool = False,
    ) -> None:
        """One attempt that the reflection accepts (every attempt, with ``repeat``: a model
        that keeps answering the same way and keeps calling it done)."""
        self.select(subtask, {"name": tool, "arguments": {"query": query}}, repeat=repeat)
        self.answer(subtask, answer, repeat=repeat)
        self.reflect(subtask, True, repeat=repeat)

    def requests(self, kind: CallKind, subtask: str | None = None) -> list[dict[str, Any]]:
        predicate = is_call(kind, subtask)
        return [body for body in self.server.chat_requests() if predicate(body)]


class _SearchArgs(BaseModel):
    query: str = Field(description="検索語")
    k: int = Field(default=3, ge=1, le=20, description="取得件数")


@dataclass
class FakeSearch:
    """``search_manual`` / ``search_qa`` over fixed results: a query containing a key of
    ``by_query`` gets those results, any other query ``default``. ``barrier`` (if set) is
    waited on by every call, so a test can require calls to be in flight together."""

    by_query: dict[str, list[SearchOutput]] = field(default_factory=dict)
    default: list[SearchOutput] = field(default_factory=list)
    barrier: threading.Barrier | None = None
    fail_with: Exception | None = None
    calls: list[tuple[str, str, int]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _search(self, tool: str, query: str, k: int) -> list[SearchOutput]:
        with self._lock:
            self.calls.append((tool, query, k))
        if self.barrier is not None:
            self.barrier.wait()
        if self.fail_with is not None:
            raise self.fail_with
        for key, results in self.by_query.items():
            if key in query:
                return results[:k]
        return self.default[:k]

    def tools(self, names: Sequence[str] = ("search_manual", "search_qa")) -> list[BaseTool]:
        def make(name: str) -> BaseTool:
            def search(query: str, k: int = 3) -> list[SearchOutput]:
                return self._search(name, query, k)

            return StructuredTool.from_function(
                func=search,
                name=name,
                description=f"{name}: 資料を検索します。",
                args_schema=_SearchArgs,
            )

        return [make(name) for name in names]


EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "helpdesk"


def sample_embedding_cache(tmp_path_factory: Any) -> Path:
    """One embedding cache for every ingest of the sample knowledge base in a test session, shared
    by the xdist workers (the cache is keyed by the text's hash and safe across processes), and
    filled before it is returned: the first worker to ask embeds the 660 texts while the others
    wait on a lock, so they are embedded once, not once per worker at the same time on a two-core
    CI machine. (A test whose fixture asks may wait minutes under load: SAMPLE_KB_FIXTURES.)"""
    base = tmp_path_factory.getbasetemp()
    root = Path(base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base)
    cache = root / "sample-kb-embeddings"
    with (root / "sample-kb-embeddings.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        filled = root / "sample-kb-embeddings.filled"
        if not filled.exists():
            with tempfile.TemporaryDirectory(dir=root) as scratch:
                build_example_index(Path(scratch) / "index", cache)
            filled.touch()
    return cache


def build_example_index(directory: Path, cache: Path | None = None) -> Path:
    """The sample knowledge base (examples/helpdesk) ingested into ``directory`` with the
    default settings and no keys (semantic search with the bundled model), as
    ``keiri-agent helpdesk ingest`` would write it. Its embedding cache is ``cache`` (the
    session's :func:`sample_embedding_cache`), else beside it (never the working directory: a
    session fixture runs in the checkout's root)."""
    from keiri_agent.agents.helpdesk.knowledge import ingest
    from keiri_agent.config import Settings

    settings = Settings(
        _env_file=None,
        keiri_llm_model_embedding=None,
        keiri_cache_dir=cache or directory.parent / "cache",
    )
    result = ingest(
        directory, manuals=[EXAMPLES / "manual"], qa=EXAMPLES / "qa.csv", settings=settings
    )
    assert result.ok, result.failures
    return directory
