"""examples/data/ is exactly what examples/make_data.py writes (no stale or hand-edited files)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from keiri_agent.documents import extract_text, parse_zip_2tier

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "examples" / "data"


def test_the_committed_sample_data_is_reproduced_byte_for_byte(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "examples" / "make_data.py"), str(tmp_path)],
        check=True,
        capture_output=True,
    )
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(DATA) for p in DATA.rglob("*") if p.is_file())
    assert written == committed
    for relative in written:
        assert (tmp_path / relative).read_bytes() == (DATA / relative).read_bytes(), relative


def test_the_invoices_read_as_the_story_says() -> None:
    evidence = parse_zip_2tier(DATA / "invoice_reconciliation" / "請求書.zip")
    assert sorted(evidence.groups) == [
        "みなと食品",
        "北斗運輸",
        "東西システム",
        "桜井製作所",
        "青葉商事",
    ]
    assert {f.ext for f in evidence.files} == {".pdf", ".xlsx"}
    assert not evidence.errors
    rules = extract_text(DATA / "expense_policy_check" / "経費規程.pdf").text
    assert "宿泊費の上限は 1泊 12,000円" in rules
