"""The run page and the plan loader share one size limit (issue 23: MAX_PLAN_BYTES was 2 MiB in
the loader and 1,000,000 in the run page)."""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.errors import BlockError
from keiri_agent.plan import MAX_PLAN_BYTES, load_source
from keiri_agent.ui.run.plan_choice import plan_choices


def test_a_file_under_the_loaders_limit_is_read_and_a_larger_one_listed_for_the_loader(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data.yaml"  # not a plan, 1.5 MB: read (the page used to list it unread)
    data.write_text("rows:\n" + "  - 1234567890\n" * 100_000, encoding="utf-8")
    assert 1_000_000 < data.stat().st_size < MAX_PLAN_BYTES
    big = tmp_path / "big.yaml"
    big.write_text("x" * (MAX_PLAN_BYTES + 1), encoding="utf-8")
    listed = set(plan_choices(tmp_path).values())
    assert data not in listed
    assert big in listed  # choosing it says why it cannot be loaded, with the real limit
    with pytest.raises(BlockError) as refused:
        load_source(big)
    assert refused.value.code == "FILE_TOO_LARGE"
    assert f"{MAX_PLAN_BYTES // 1024 // 1024} MB" in refused.value.hint
