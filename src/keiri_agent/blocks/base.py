"""Block base classes and the context a block runs in (seed 002 §10 ``blocks/base.py``).

A block is one unit of work with a YAML contract (:class:`~keiri_agent.blocks.spec.BlockSpec`).
The runner resolves its inputs, checks them against the contract, calls :meth:`Block.run` with a
:class:`BlockContext`, and checks the outputs. Blocks never know about plans, loops or logs.

- :class:`ProcessingBlock` computes outputs from inputs.
- :class:`UIBlock` asks a person: it gets answers through ``context.inputs`` (the Streamlit
  session state in the app, an answers file when headless). When no answer is there yet it
  raises :class:`InputRequired`, and the runner pauses the run (status ``waiting_input``).
"""

from __future__ import annotations

import secrets
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol
from zoneinfo import ZoneInfo

from keiri_agent.config import load_settings
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events import EventEmitter, NodeEvents, NullEmitter
from keiri_agent.file_access import FileAccess

if TYPE_CHECKING:
    from keiri_agent.blocks.spec import BlockSpec
    from keiri_agent.config import LLMRole, Settings
    from keiri_agent.llm import LLMClient

__all__ = [
    "Block",
    "BlockContext",
    "InputProvider",
    "InputRequired",
    "ProcessingBlock",
    "UIBlock",
    "given",
]


class InputProvider(Protocol):
    """Where a UI block finds a person's answers.

    ``node_path`` is the node's qualified id (``loop[2]/approve`` inside a foreach); providers
    look it up first and fall back to the plain ``node_id`` (answers for every iteration).
    Returns None when nobody has answered yet.
    """

    def answers_for(self, node_path: str, node_id: str) -> Mapping[str, Any] | None: ...


class InputRequired(Exception):  # noqa: N818 - a pause, not an error
    """Raised by a UI block whose answers are not there yet; the runner pauses on it.

    Not a BlockError: waiting for a person is not a failure.
    """

    def __init__(self, node_path: str, request: Mapping[str, Any]) -> None:
        super().__init__(f"ノード {node_path} は入力待ちです")
        self.node_path = node_path
        self.request = dict(request)


@dataclass
class BlockContext:
    """What a running block may use: ids, its work directory, events, LLMs, cancellation,
    and ``access``: where the paths it is given may lead (every path input goes through it,
    by ``blocks.inputs``; unrestricted unless the caller confines the run, as the server does)."""

    run_id: str
    plan_id: str
    node_id: str  # qualified: "loop[3]/extract" inside loops, "sub/x" inside subflows
    block_version: str
    workspace: Path
    events: EventEmitter = field(default_factory=NullEmitter)
    cancel_event: threading.Event = field(default_factory=threading.Event)
    settings: Settings | None = None
    inputs: InputProvider | None = None
    # Files this node was writing in the run being resumed or rerun: its own, so replaceable.
    replaceable: frozenset[str] = frozenset()
    access: FileAccess = field(default_factory=FileAccess)

    @property
    def local_node_id(self) -> str:
        """The node id as written in the plan (without loop/subflow qualifiers)."""
        tail = self.node_id.rsplit("/", 1)[-1]
        return tail.split("[", 1)[0]

    @property
    def zone(self) -> ZoneInfo:
        """The zone times with a UTC offset are read in (``KEIRI_TIMEZONE`` of ``settings``, or
        of the environment when the caller gave none): every block's dates, one way."""
        return (self.settings or load_settings()).keiri_timezone

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    def check_cancelled(self) -> None:
        """Long blocks call this between steps; raises BlockError(CANCELLED) once cancelled."""
        if self.cancel_event.is_set():
            raise BlockError(
                f"ノード {self.node_id} は取り消されました。",
                code=ErrorCode.CANCELLED,
                hint="必要であれば、このノードから再実行してください。",
                details={"node_id": self.node_id, "run_id": self.run_id},
                recoverable=True,
            )

    def log(self, message: str, level: str = "info") -> None:
        self.events.emit("log", node_id=self.node_id, msg=message, level=level)

    def agent_events(self) -> NodeEvents:
        """The emitter for an agent this block runs: its events become this node's, and each
        step it starts is a cancellation point (``events.node_events``)."""
        return NodeEvents(self.events, self.check_cancelled, node_id=self.node_id)

    def llm(self, role: LLMRole | str | None = None) -> LLMClient:
        """A chat client whose calls are logged as this node's ``llm_call`` events.

        Cancelling the node (a run's cancel, a node timeout) aborts its LLM call in flight.
        """
        from keiri_agent.config import LLMRole
        from keiri_agent.llm import get_llm

        return get_llm(
            role or LLMRole.PROCESS,
            settings=self.settings,
            events=self.events,
            node_id=self.node_id,
            cancel=self.cancel_event,
        )

    def claim_output(self, target: Path) -> str:
        """Log that this node is about to write ``target``; returns the temp-file prefix to
        give ``atomic_path``. A resume of a run killed mid-write then removes the leftover
        temporary file and lets the node replace the file it had already renamed into place."""
        prefix = f".{target.stem}.{secrets.token_hex(4)}."
        self.events.emit(
            "file_write", node_id=self.node_id, path=str(target.absolute()), temp_prefix=prefix
        )
        return prefix

    def may_replace(self, target: Path) -> bool:
        """Whether ``target`` is this node's own output from the run being resumed or rerun."""
        return str(target.absolute()) in self.replaceable

    def work_dir(self) -> Path:
        """A directory for this node's files (created on demand, inside the run's workspace)."""
        safe = self.node_id.replace("/", "__").replace("[", "_").replace("]", "").replace("#", "_")
        path = self.workspace / safe
        path.mkdir(parents=True, exist_ok=True)
        return path


def given(inputs: Mapping[str, Any], name: str, default: Any) -> Any:
    """An optional input's value, or ``default`` when it is absent or null (left empty).

    The runner already fills a port's default for a null optional input; blocks called
    directly (from Python, or from another block) get the same rule here.
    """
    value = inputs.get(name)
    return default if value is None else value


class Block(ABC):
    """Base of every block. Subclasses implement :meth:`run`; the registry sets ``spec``."""

    kind: ClassVar[str] = "processing"

    def __init__(self, spec: BlockSpec) -> None:
        self.spec = spec

    @abstractmethod
    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        """Compute the outputs (keys from the spec's ``outputs``) from resolved inputs."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:  # noqa: B027 - optional hook
        """Checks beyond the JSON Schema of the ports (raise BlockError); none by default."""


class ProcessingBlock(Block):
    """A block that computes; it must not wait for a person."""

    kind: ClassVar[str] = "processing"


class UIBlock(Block):
    """A block that asks a person (seed 002 §3). Subclasses build the request and the outputs."""

    kind: ClassVar[str] = "ui"

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        answers = ctx.inputs.answers_for(ctx.node_id, ctx.local_node_id) if ctx.inputs else None
        if answers is None:
            raise InputRequired(ctx.node_id, self.describe_request(inputs))
        return self.build_outputs(inputs, dict(answers), ctx)

    @abstractmethod
    def describe_request(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """What the person is asked (message, requirements...), JSON-serializable."""

    @abstractmethod
    def build_outputs(
        self, inputs: dict[str, Any], answers: dict[str, Any], ctx: BlockContext
    ) -> dict[str, Any]:
        """Validate the answers (BlockError on bad ones) and turn them into outputs."""
