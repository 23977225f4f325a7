"""The one-pass YAML reader gives exactly what PyYAML's composer and constructor give.

Plain YAML (no anchors, aliases, merge keys, explicit tags or complex keys) is built straight
from the parser's events (issue 25); the rest is composed by PyYAML. For every text below and
every YAML file of the repository, :func:`read_yaml` must give the same data (types and key
order included), the same source map and the same error (type, message, line and column) as
PyYAML's composition, whichever way it took.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from keiri_agent.plan._dsl.issues import Loc
from keiri_agent.plan._dsl.yaml_read import _compose, read_yaml

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(
    path
    for folder in ("designs", "src", "tests", "benchmarks")
    for pattern in ("*.yaml", "*.yml")
    for path in (ROOT / folder).rglob(pattern)
)

TEXTS = {
    "empty": "",
    "empty-document": "---\n",
    "scalar-root": "a",
    "sequence-root": "- 1\n- 2",
    "flow-and-duplicate-keys": "{a: 1, a: 2, b: [1, {c: d}]}",
    "keys-that-are-not-strings": "1: x\ntrue: y\nNo: z\nnull: w\n~: v\n1.5: u\n",
    "quoted-keys": "'1': a\n\"2\": b\n",
    "numbers": "x: .nan\ny: .inf\nz: 0x1F\nw: 1_000\nv: 0o17\nu: 1e3\nt: -0\n",
    "dates": "x: 2026-01-05\ny: 2026-01-05T10:00:00Z\nz: 2026-01-05 10:00:00.5+09:00\n",
    "date-that-does-not-exist": "x: 2026-13-45\n",
    "date-that-does-not-exist-then-a-syntax-error": "x: 2026-13-45\ny: [\n",
    "block-scalars": "a: |\n  text\n  more\nb: >\n  folded\n",
    "nested": "a:\n  - b:\n    - c: [1, [2, [3]]]\n  - - - d\n",
    "empty-values": "a:\nb: []\nc: {}\n? d\n",
    "empty-key": ":\n",
    "directive": "%YAML 1.1\n---\na: 1\n",
    "document-end": "a: 1\n...\n",
    "anchor-and-alias": "a: &a [1, {x: 2}]\nb: *a\nc: {k: *a}\n",
    "merge-key": "base: &b {x: 1, y: 2}\nn:\n  <<: *b\n  y: 3\n",
    "merge-key-list": "a: &a {x: 1}\nb: &b {x: 2, z: 3}\nn: {<<: [*a, *b], w: 4}\n",
    "value-key": "=: 1\n",
    "value-tag-as-value": "x: =\n",
    "explicit-tags": "x: !!str 1\ny: !!binary aGVsbG8=\nz: !!set {a, b}\n",
    "non-specific-tag": "x: ! 1\n",
    "unknown-tag": "x: !foo 1\n",
    "complex-key": "? [a, b]\n: c\n",
    "unhashable-key": "[a, b]: c\n",
    "undefined-alias": "x: *nowhere\n",
    "duplicate-anchor": "a: &a 1\nb: &a 2\n",
    "two-documents": "--- a\n--- b\n",
    "two-documents-with-a-syntax-error": "a: 1\n---\nb: [\n",
    "unclosed-flow": "a: [1, 2\n",
    "bad-indentation": "a: 1\n  b: 2\n",
    "tab-indentation": "a:\n\tb: 1\n",
    "alias-then-limit": "a: &a 1\nb: *a\nc: " + "[" * 150 + "]" * 150 + "\n",
    "too-deep": "x: " + "[" * 150 + "]" * 150 + "\n",
}


def _outcome(read: Any, text: str) -> tuple[Any, ...]:
    positions: dict[Loc, tuple[int, int]] = {}
    try:
        data = read(text, positions)
    except Exception as exc:
        mark = getattr(exc, "problem_mark", None)
        where = (mark.line, mark.column) if mark is not None else None
        return ("error", type(exc).__name__, str(exc), where)
    return ("data", repr(data), positions)


@pytest.mark.parametrize("text", list(TEXTS.values()), ids=list(TEXTS))
def test_edge_cases_read_as_pyyaml_composes_them(text: str) -> None:
    assert _outcome(read_yaml, text) == _outcome(_compose, text)


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_every_yaml_file_of_the_repository_reads_as_pyyaml_composes_it(path: Path) -> None:
    text = path.read_text(encoding="utf-8")  # golden/ holds broken plans too: same errors
    assert _outcome(read_yaml, text) == _outcome(_compose, text)


def test_positions_point_at_keys_and_items_and_merged_keys_at_their_anchor() -> None:
    positions: dict[Loc, tuple[int, int]] = {}
    data = read_yaml("graph:\n  - id: a\n    in: {x: 1}\n", positions)
    assert data == {"graph": [{"id": "a", "in": {"x": 1}}]}
    assert positions[("graph",)] == (1, 1)
    assert positions[("graph", 0)] == (2, 5)
    assert positions[("graph", 0, "in", "x")] == (3, 10)

    merged: dict[Loc, tuple[int, int]] = {}
    data = read_yaml("base: &b {x: 1}\nn:\n  <<: *b\n  y: 2\n", merged)
    assert data["n"] == {"x": 1, "y": 2}
    assert merged[("n", "x")] == (1, 11)  # where x is written: in the anchor
