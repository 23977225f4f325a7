"""What one plan run shares: the run context, runtime scopes and the emitter of subflows.

The engine (``_run.engine``) and loops/subflows (``_run.control``) read node outputs, loop
variables and vars through :data:`RunScope`, and everything run-wide (events, backend, answers,
stored outputs from an earlier run, cancellation) through :class:`RunContext`. What the run reads
besides the plan (registry, settings, ``${config.*}`` and ``${env.*}`` sources, the subflow
loader) is the :class:`~keiri_agent.plan._graph.env.PlanEnv` its validation read with, held whole
(``RunContext.env``), never copied field by field.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from keiri_agent.blocks.base import Block, InputProvider
from keiri_agent.blocks.spec import BlockSpec
from keiri_agent.config import DEFAULT_PLAN_MAX_FOREACH_ITEMS
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events import EventStream, Redactor
from keiri_agent.events.models import EventType, RunEvent
from keiri_agent.file_access import FileAccess
from keiri_agent.plan._dsl.refs import Reference, render, resolve_env_config
from keiri_agent.plan._graph.env import PlanEnv
from keiri_agent.plan._graph.scope import Scope
from keiri_agent.plan._run.backends import Backend
from keiri_agent.plan._run.output_store import OutputStore
from keiri_agent.plan._run.workers import Workers
from keiri_agent.stop_flag import StopFlag

__all__ = ["Reused", "RunContext", "RunScope", "TaggedEmitter", "render_vars"]


@dataclass
class Reused:
    """A node's outputs from an earlier run, with where they are stored."""

    outputs: dict[str, Any]
    stored: dict[str, Any] | None
    outputs_file: str | None


@dataclass
class RunContext:
    """What every frame of one run shares."""

    run_id: str
    plan_id: str
    events: EventStream
    env: PlanEnv  # the one the run's validation read with (its subflow loader included)
    backend: Backend
    workers: Workers
    workspace: Path
    answers: InputProvider | None = None
    store: OutputStore | None = None
    reuse: dict[str, Reused] = field(default_factory=dict)
    # node path → files it wrote in the run being resumed or rerun (_run.recovery)
    replaceable: dict[str, frozenset[str]] = field(default_factory=dict)
    cancel: threading.Event = field(default_factory=threading.Event)
    access: FileAccess = field(default_factory=FileAccess)  # where blocks' paths may lead
    sleep: Callable[[float], object] = time.sleep  # the wait between a node's retries
    waiting: list[dict[str, Any]] = field(default_factory=list)
    _semaphores: dict[str, threading.Semaphore] = field(default_factory=dict)
    _sub_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    # Block specs by the name a node gives, block instances by spec ref: looked up once per run,
    # so a loop body run ten thousand times asks the registry once (_run.blocknode).
    _specs: dict[str, BlockSpec] = field(default_factory=dict)
    _blocks: dict[str, Block] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        # The settings' API keys are secrets of every run, referenced or not.
        settings = self.env.settings
        for name in type(settings).model_fields:
            value = getattr(settings, name)
            if isinstance(value, SecretStr):
                self.events.redactor.add(value.get_secret_value())

    def env_config(self, ref: Reference) -> Any:
        """``${env.X}`` / ``${config.a.b}``, registered as a secret of this run's events first.

        Every environment value a plan reads is a secret (it may be a token); a config value is
        one when a key on its path looks like one (``password``, ``api_key``, ...).
        """
        value = resolve_env_config(ref, self.env.environ, self.env.config)
        if ref.root == "env":
            self.events.redactor.add(value)
        else:
            for part in ref.path:
                self.events.redactor.add_named(str(part), value)
            if isinstance(value, Mapping):
                _add_secret_keys(self.events.redactor, value)
        return value

    def too_many_items(self, path: str, count: int) -> BlockError | None:
        """The error for foreach ``path`` over ``count`` items when that is more than the
        run's settings allow (``KEIRI_PLAN_MAX_FOREACH_ITEMS``); None when it is not."""
        limit = self.env.settings.keiri_plan_max_foreach_items
        if count <= limit:
            return None
        return BlockError(
            f"ループ {path} の foreach.input が {count:,} 件あり、上限の {limit:,} 件を超えています。",
            code=ErrorCode.LOOP_LIMIT_REACHED,
            hint="入力を分けて実行するか、環境変数 KEIRI_PLAN_MAX_FOREACH_ITEMS で上限を上げてください"
            f"（既定 {DEFAULT_PLAN_MAX_FOREACH_ITEMS:,} 件。1 件ごとにメモリと実行ログを使います。"
            "docs/limits.md）。",
            details={"node_id": path, "items": count, "limit": limit},
        )

    def block_spec(self, name: str) -> BlockSpec:
        """The spec of block ``name`` (``id`` or ``id@version``), from the registry once per run."""
        spec = self._specs.get(name)
        if spec is None:
            spec = self._specs.setdefault(name, self.env.registry.get(name))
        return spec

    def block(self, spec: BlockSpec) -> Block:
        """The block instance for ``spec``, loaded once per run and shared by its nodes."""
        block = self._blocks.get(spec.ref)
        if block is None:
            block = self._blocks.setdefault(spec.ref, self.env.registry.load(spec.ref))
        return block

    def semaphore(self, key: str, limit: int) -> threading.Semaphore:
        with self._lock:
            if key not in self._semaphores:
                self._semaphores[key] = threading.Semaphore(limit)
            return self._semaphores[key]

    def next_sub_run_id(self, parent: str) -> str:
        with self._lock:
            return f"{parent}.sub#{next(self._sub_ids)}"

    def node_event(self, timeout_s: float | None = None) -> StopFlag:
        """The cancel flag of one block call: set by the run's cancel itself (a block released
        by it meets it at its next check) and, with ``timeout_s``, once that time has passed."""
        deadline = time.monotonic() + timeout_s if timeout_s is not None else None
        return StopFlag(self.cancel, deadline)


class TaggedEmitter:
    """An emitter that marks events of a subflow with its run id."""

    def __init__(self, events: EventStream, sub_run_id: str | None) -> None:
        self._events = events
        self._sub = sub_run_id

    def emit(self, kind: EventType | str, /, **fields: Any) -> RunEvent | None:
        if self._sub is not None:
            fields.setdefault("sub_run_id", self._sub)
        return self._events.emit(kind, **fields)


RunScope = Scope[dict[str, Any] | None, Mapping[str, Any]]
"""The runner's scope (``_graph.scope``): node outputs (None: none), loop values, the vars."""


def render_vars(raw: Mapping[str, Any], ctx: RunContext) -> dict[str, Any]:
    """A plan's vars with their ``${env.*}`` / ``${config.*}`` references resolved."""

    def resolve(ref: Reference) -> Any:
        if ref.root in ("env", "config"):
            return ctx.env_config(ref)
        raise BlockError(
            f"vars の {ref.text} は使えません（vars から参照できるのは env と config だけです）。",
            code=ErrorCode.INVALID_REFERENCE,
            hint="ノードの出力はノードの in で直接参照してください。",
            details={"reference": ref.text},
        )

    return dict(render(dict(raw), resolve))


def _add_secret_keys(redactor: Redactor, value: Mapping[str, Any]) -> None:
    """Register the values under secret-looking keys anywhere inside a config mapping."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            for key, inner in item.items():
                redactor.add_named(str(key), inner)
                stack.append(inner)
        elif isinstance(item, list):
            stack.extend(item)
