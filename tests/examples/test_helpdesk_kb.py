"""examples/helpdesk/ is exactly what examples/helpdesk/make_kb.py writes, and reads as described."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from keiri_agent.documents import extract_text
from keiri_agent.documents.pdf import PAGE_SEPARATOR

ROOT = Path(__file__).resolve().parents[2]
KB = ROOT / "examples" / "helpdesk"
OUTPUTS = (
    Path("manual") / "XYZシステム_ユーザーマニュアル.pdf",
    Path("manual") / "リリースノート.md",
    Path("qa.csv"),
)


def test_the_committed_knowledge_base_is_reproduced_byte_for_byte(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(KB / "make_kb.py"), str(tmp_path)], check=True, capture_output=True
    )
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert written == sorted(OUTPUTS)
    for relative in OUTPUTS:
        assert (tmp_path / relative).read_bytes() == (KB / relative).read_bytes(), relative


def test_the_manual_has_one_chapter_per_page() -> None:
    manual = extract_text(KB / OUTPUTS[0], max_pages=100)
    pages = manual.text.split(PAGE_SEPARATOR)
    assert len(pages) == 18
    assert "ユーザーマニュアル" in pages[0]
    for chapter in range(1, 18):
        first_lines = pages[chapter].splitlines()[:3]
        assert any(line.startswith(f"{chapter}. ") for line in first_lines), (chapter, first_lines)
    assert "E-1004" in pages[11]
    assert "E-2001" in pages[12]
    assert "E-5004" in pages[13]


def test_the_qa_csv_is_cp932_with_36_pairs() -> None:
    data = (KB / "qa.csv").read_bytes()
    text = data.decode("cp932")
    assert not data.startswith(b"\xef\xbb\xbf")
    lines = text.split("\r\n")
    assert lines[0] == "Q,A"
    assert len([line for line in lines[1:] if line]) == 36
    notes = (KB / OUTPUTS[1]).read_text(encoding="utf-8")
    assert notes.count("\n## ") == 4
    assert "E-1004" in notes
