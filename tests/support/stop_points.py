"""Hold the analysis agent or the conversion at a chosen point, so a test stops it exactly there.

``install(point, marker)`` wraps one function of the product (tests only; the product has no
hook): when the run reaches ``point`` it creates the file ``marker`` and waits there until it is
stopped -- a Ctrl+C in the thread that waits (loading runs in the CLI's main thread), or the
run's cancel flag (set by ``AnalysisSession.stop`` or by whoever passed ``cancel`` to
``run_convert``) -- and then goes on as the real function would. So the test waits for the
marker (a condition, never a fixed sleep), stops the run, and the run meets the stop at that
very point.

Points:
- ``load:K``        -- the analysis session reading its K-th data file (earlier ones copied);
- ``llm:K``         -- the K-th structured LLM call (analysis: 1 reason, 2 report; convert: 1
  interpret), held before the request is sent;
- ``report_write``  -- the analysis report being written (after the report call);
- ``write:K:before`` / ``write:K:after`` -- the conversion's K-th output file, before it is
  written or once it is (the next one not yet);
- ``savefig``       -- a chart written to its temporary file, not yet under its name.

As a program (``python -m tests.support.stop_points POINT MARKER keiri-agent-args...``) it runs
the CLI with the point installed: the child process of the Ctrl+C tests.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["HOLD_LIMIT_S", "install", "main", "release", "reset", "watch"]

HOLD_LIMIT_S = 300.0  # a held run that nobody stops fails the test instead of hanging it
_POLL_S = 0.02

_released = threading.Event()  # set once a stop reached the run
_cancels: list[threading.Event] = []  # the conversion's cancel flag, once run_convert started


def _stopped() -> bool:
    return _released.is_set() or any(flag.is_set() for flag in _cancels)


def _hold(marker: Path) -> None:
    marker.write_text("reached", encoding="utf-8")
    waited = 0.0
    while not _stopped():  # a Ctrl+C in this thread interrupts the wait
        _released.wait(_POLL_S)
        waited += _POLL_S
        if waited > HOLD_LIMIT_S:
            raise RuntimeError("stop_points: held too long, nobody stopped the run")


def _counting(
    original: Callable[..., Any],
    k: int,
    before: Callable[[], None] | None,
    after: Callable[[], None] | None,
) -> Callable[..., Any]:
    calls = [0]

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == k and before is not None:
            before()
        result = original(*args, **kwargs)
        if calls[0] == k and after is not None:
            after()
        return result

    return wrapper


def watch(cancel: threading.Event) -> None:
    """A held run is released by ``cancel`` too (an in-process test's own flag)."""
    _cancels.append(cancel)


def install(point: str, marker: Path, patch: Callable[[Any, str, Any], None] = setattr) -> None:
    """Wrap the function of ``point`` (see the module docstring); ``marker`` is created there.
    ``patch`` sets an attribute (a test passes ``monkeypatch.setattr`` to have it undone)."""
    from keiri_agent.agents.analysis import graph as analysis_graph
    from keiri_agent.agents.analysis import session as session_module
    from keiri_agent.agents.analysis.report import save_report
    from keiri_agent.agents.convert import formats, pipeline
    from keiri_agent.agents.ledger import read_ledger
    from keiri_agent.llm.client import LLMClient

    hold = functools.partial(_hold, marker)
    stop = session_module.AnalysisSession.stop

    def stop_then_release(self: Any, wait_s: float) -> bool:
        if self._cancel is not None:
            self._cancel.set()  # the flag first: the held step then meets the stop
        _released.set()
        return stop(self, wait_s)

    patch(session_module.AnalysisSession, "stop", stop_then_release)
    run_convert = pipeline.run_convert

    def run_convert_seen(*args: Any, cancel: threading.Event | None = None, **kw: Any) -> Any:
        flag = cancel if cancel is not None else threading.Event()
        watch(flag)
        return run_convert(*args, cancel=flag, **kw)

    patch(pipeline, "run_convert", run_convert_seen)
    kind, _, rest = point.partition(":")
    if kind == "load":
        patch(
            session_module,
            "read_ledger",
            _counting(read_ledger, int(rest), hold, None),
        )
    elif kind == "llm":
        patch(LLMClient, "structured", _counting(LLMClient.structured, int(rest), hold, None))
    elif kind == "report_write":
        patch(analysis_graph, "save_report", _counting(save_report, 1, hold, None))
    elif kind == "write":
        k, _, when = rest.partition(":")
        patch(
            formats,
            "write_table",
            _counting(
                formats.write_table,
                int(k),
                hold if when == "before" else None,
                hold if when == "after" else None,
            ),
        )
    elif kind == "savefig":
        from matplotlib.figure import Figure

        patch(Figure, "savefig", _counting(Figure.savefig, 1, None, hold))
    else:
        raise ValueError(f"unknown stop point {point!r}")


def release() -> None:
    """Let a held run go on without a stop (it then meets, say, its deadline)."""
    _released.set()


def reset() -> None:
    """Forget the stops seen (in-process tests that hold several runs in turn)."""
    _released.clear()
    _cancels.clear()


def main(argv: list[str]) -> None:
    point, marker, *args = argv
    install(point, Path(marker))
    from keiri_agent.cli import app

    app(args=args, prog_name="keiri-agent")


if __name__ == "__main__":
    main(sys.argv[1:])
