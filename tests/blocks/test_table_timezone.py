"""Every block reads a time with a UTC offset on its day in the configured KEIRI_TIMEZONE.

23:30 UTC on 2026-02-03 is 08:30 on 2026-02-04 in Asia/Tokyo (the default): a ledger exported
with UTC times lands on the same day in ``file.read_table`` and in the table blocks, whichever
zone the settings name."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.config import Settings
from tests.blocks.conftest import ContextFactory, run_like_runner

STAMP = "2026-02-03T23:30:00+00:00"
ROWS = [{"番号": "1", "日時": STAMP, "金額": 1000}]


@pytest.fixture(params=["UTC", "default"])
def zone_and_day(request: pytest.FixtureRequest) -> tuple[Settings, str]:
    if request.param == "UTC":
        return Settings(keiri_timezone="UTC"), "2026-02-03"
    return Settings(), "2026-02-04"


def _run(
    registry: BlockRegistry, make_ctx: ContextFactory, settings: Settings, name: str, **inputs: Any
) -> dict[str, Any]:
    ctx = dataclasses.replace(make_ctx(name), settings=settings)
    return run_like_runner(registry.load(name), inputs, ctx)


def test_read_table_reads_the_day_in_the_configured_zone(
    registry: BlockRegistry,
    make_ctx: ContextFactory,
    tmp_path: Path,
    zone_and_day: tuple[Settings, str],
) -> None:
    settings, day = zone_and_day
    path = tmp_path / "ログ.csv"
    path.write_text(f"番号,日時\n1,{STAMP}\n", encoding="utf-8")
    out = _run(registry, make_ctx, settings, "file.read_table", path=str(path))
    assert out["rows"][0]["日時"].startswith(day)


@pytest.mark.parametrize("written", ["cell", "condition"])
def test_filter_compares_the_day_in_the_configured_zone(
    registry: BlockRegistry,
    make_ctx: ContextFactory,
    zone_and_day: tuple[Settings, str],
    written: str,
) -> None:
    """The offset written in a cell (the day in the condition) or in the condition's value (the
    day in the cell) is read in the zone."""
    settings, day = zone_and_day
    cell, value = (STAMP, day) if written == "cell" else (day, STAMP)
    table = [{**ROWS[0], "日時": cell}]
    conditions = [{"column": "日時", "op": "between", "value": [value, value]}]
    out = _run(registry, make_ctx, settings, "table.filter", table=table, conditions=conditions)
    assert [r["番号"] for r in out["rows"]] == ["1"]


def test_compute_and_aggregate_read_the_day_in_the_configured_zone(
    registry: BlockRegistry, make_ctx: ContextFactory, zone_and_day: tuple[Settings, str]
) -> None:
    settings, day = zone_and_day
    computed = _run(
        registry,
        make_ctx,
        settings,
        "table.compute",
        table=ROWS,
        columns=[{"name": "経過", "expr": f'days([日時], "{day}")'}],
    )
    assert computed["rows"][0]["経過"] == 0
    period = {"column": "日時", "unit": "day", "as": "日"}
    aggregated = _run(
        registry,
        make_ctx,
        settings,
        "table.aggregate",
        table=ROWS,
        group_by=["日"],
        period=period,
        aggregations=[{"column": "金額", "func": "sum", "as": "合計"}],
    )
    assert aggregated["rows"][0]["日"] == day
