"""The pages a user reads (README.md, docs/, examples/README.md) stand on their own: every link
leads to a file of this repository that exists (or to an address on this machine), no path
points outside the repository, and no design-document jargon ("seed 002 §10") is left; the
design documents are cited in ARCHITECTURE.md, for engineers."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "examples" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
JARGON = re.compile(r"\bseeds?\b|§|DESIGN\.md", re.IGNORECASE)
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
# A path that climbs out of its folder, as a link or a `code` span would name it.
CLIMBING = re.compile(r"(?<![.\w])\.\./\S*")


def _links(page: Path) -> list[str]:
    tokens = MarkdownIt("commonmark").enable("table").parse(page.read_text(encoding="utf-8"))
    found = []
    for token in tokens:
        for child in token.children or []:
            if child.type == "link_open":
                found.append(str(child.attrGet("href")))
            elif child.type == "image":
                found.append(str(child.attrGet("src")))
    return found


def _ids(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.parametrize("page", PAGES, ids=_ids)
def test_every_link_stays_in_the_repository(page: Path) -> None:
    outside = []
    for href in _links(page):
        url = urlparse(href)
        if url.scheme in ("http", "https"):
            if url.hostname not in {host.strip("[]") for host in LOOPBACK}:
                outside.append(href)
            continue
        if url.scheme:  # mailto:, file: …
            outside.append(href)
            continue
        if href.startswith("#"):
            continue
        target = (page.parent / unquote(url.path)).resolve()
        if not target.is_relative_to(ROOT) or not target.exists():
            outside.append(href)
    assert outside == []


@pytest.mark.parametrize("page", PAGES, ids=_ids)
def test_no_path_outside_the_repository_and_no_design_jargon(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    climbing = [
        path
        for path in CLIMBING.findall(text)
        if not (page.parent / path.strip("`）)")).resolve().is_relative_to(ROOT)
    ]
    assert climbing == []
    jargon = [line for line in text.splitlines() if JARGON.search(line)]
    assert jargon == []


def test_readme_leads_to_the_first_plan_tutorial() -> None:
    assert "docs/first-plan.md" in _links(ROOT / "README.md")
