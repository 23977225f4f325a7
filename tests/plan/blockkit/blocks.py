"""Test blocks: sleep (with a concurrency gauge), flaky, fail, items, add."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.errors import BlockError


class Gauge:
    """Counts blocks running at the same time (threads backend only)."""

    lock = threading.Lock()
    current = 0
    peak = 0

    @classmethod
    def reset(cls) -> None:
        with cls.lock:
            cls.current = 0
            cls.peak = 0


# How long a block given ``together`` waits for the others before it goes on alone (the test's
# assertion on Gauge.peak then fails): generous, a loaded machine may start a thread late.
TOGETHER_WAIT_S = 60.0


class SleepBlock(ProcessingBlock):
    """Waits until ``together`` of these blocks have run at once (if given), then ``seconds``.

    A test that asserts how many nodes ran at the same time waits for them to meet: fixed sleeps
    meant to overlap did not when a loaded machine started one thread a sleep later."""

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        with Gauge.lock:
            Gauge.current += 1
            Gauge.peak = max(Gauge.peak, Gauge.current)
        try:
            met = time.monotonic() + TOGETHER_WAIT_S
            while Gauge.peak < int(inputs.get("together") or 0) and time.monotonic() < met:
                ctx.check_cancelled()
                time.sleep(0.005)
            deadline = time.monotonic() + float(inputs["seconds"])
            while time.monotonic() < deadline:
                ctx.check_cancelled()
                time.sleep(0.005)
        finally:
            with Gauge.lock:
                Gauge.current -= 1
        return {"value": inputs.get("value")}


class FlakyBlock(ProcessingBlock):
    """Fails until it has been called ``failures`` times for ``key`` (counted in a file)."""

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        counter = Path(inputs["state_dir"]) / f"{inputs['key']}.count"
        calls = int(counter.read_text()) if counter.exists() else 0
        counter.write_text(str(calls + 1))
        if calls < int(inputs["failures"]):
            raise BlockError(
                f"一時的な失敗（{calls + 1} 回目）", code="API_ERROR", hint="再試行してください。"
            )
        return {"calls": calls + 1}


class FailBlock(ProcessingBlock):
    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        if inputs.get("fail", True):
            raise BlockError(
                inputs.get("message", "失敗しました"),
                code="API_ERROR",
                hint="入力を確認してください。",
            )
        return {"value": inputs.get("value")}


class ItemsBlock(ProcessingBlock):
    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        items = [{"n": i} for i in range(int(inputs["count"]))]
        return {"items": items, "count": len(items)}


class AddBlock(ProcessingBlock):
    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        return {"sum": inputs["a"] + inputs.get("b", 0)}


class PidBlock(ProcessingBlock):
    """Returns the id of the process it ran in (to prove where a backend ran it)."""

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        import os

        return {"pid": os.getpid(), "value": inputs.get("value")}


class ThreadsBlock(ProcessingBlock):
    """Samples ``threading.active_count()`` while it runs (a short overlap with its siblings)."""

    lock = threading.Lock()
    peak = 0

    @classmethod
    def reset(cls) -> None:
        with cls.lock:
            cls.peak = 0

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        with Gauge.lock:
            Gauge.current += 1
            Gauge.peak = max(Gauge.peak, Gauge.current)
        try:
            deadline = time.monotonic() + float(inputs["seconds"])
            while time.monotonic() < deadline:
                with ThreadsBlock.lock:
                    ThreadsBlock.peak = max(ThreadsBlock.peak, threading.active_count())
                time.sleep(0.002)
        finally:
            with Gauge.lock:
                Gauge.current -= 1
        return {"value": inputs.get("value")}


class HeldBlock(ProcessingBlock):
    """Waits at ``reached`` until the test sets ``release``, then checks its cancel and writes
    ``out`` (a block publishing its result)."""

    reached = threading.Event()
    release = threading.Event()

    @classmethod
    def reset(cls) -> None:
        cls.reached.clear()
        cls.release.clear()

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        HeldBlock.reached.set()
        assert HeldBlock.release.wait(300), "nobody released the held block"
        ctx.check_cancelled()
        Path(inputs["out"]).write_text("published", encoding="utf-8")
        return {"path": inputs["out"]}
