"""Property: a block's Japanese reads the same on every surface, with no space where its author
only broke the YAML line.

A spec's texts written as YAML folded blocks (``>-``) are joined at the one place specs are loaded
(``blocks.folded_text.load_yaml``): a fold between two Japanese characters leaves nothing, a
fold next to Latin text leaves its space, a space typed within a line stays. Checked on every
bundled spec (each Japanese pair around a space in a label, description or port text must be one
its author typed on one line) and on seeded generated folded blocks.
"""

from __future__ import annotations

import random
import re
import unicodedata
from pathlib import Path

import pytest
import yaml

from keiri_agent.blocks.folded_text import load_yaml
from keiri_agent.blocks.spec import load_spec_file

BUNDLED = Path(__file__).resolve().parents[2] / "src/keiri_agent/block_specs"
SPECS = sorted(path for path in BUNDLED.rglob("*.yaml") if "schemas" not in path.parts)
WIDE_SPACE_WIDE = re.compile(r"(\S) +(?=(\S))")


def _wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in ("W", "F")


def _texts(path: Path) -> list[str]:
    spec = load_spec_file(path)
    ports = [*spec.inputs.values(), *spec.outputs.values()]
    return [spec.label, spec.description] + [
        str(port.get(key, "")) for port in ports for key in ("label", "description")
    ]


@pytest.mark.parametrize("path", SPECS, ids=lambda path: path.stem)
def test_no_space_between_japanese_but_the_ones_typed(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    for text in _texts(path):
        for match in WIDE_SPACE_WIDE.finditer(text):
            if _wide(match.group(1)) and _wide(match.group(2)):
                typed = text[max(0, match.start() - 3) : match.end() + 3]
                assert any(typed in line for line in lines), (path.name, typed)


JAPANESE = ["得意先ごとに", "金額を", "（税込）", "「合計」の", "集計します。", "行は", "ー", "、"]
LATIN = ["KEIRI_TIMEZONE", "info", "1,234", "sales.csv", "Microsoft Excel", "(株)"]


def _line(rng: random.Random) -> str:
    words = rng.choices(JAPANESE + LATIN, k=rng.randint(1, 6))
    return "".join(word + (" " if rng.random() < 0.3 else "") for word in words).strip()


def _expected(paragraphs: list[list[str]]) -> str:
    joined = []
    for lines in paragraphs:
        text = lines[0]
        for line in lines[1:]:
            text += ("" if _wide(text[-1]) and _wide(line[0]) else " ") + line
        joined.append(text)
    return "\n".join(joined)


def test_a_fold_joins_japanese_without_a_space_and_latin_with_one() -> None:
    rng = random.Random(17)
    for _ in range(300):
        paragraphs = [
            [_line(rng) for _ in range(rng.randint(1, 5))] for _ in range(rng.randint(1, 3))
        ]
        indent = " " * rng.choice([4, 6, 8])
        body = "\n\n".join("\n".join(indent + line for line in lines) for lines in paragraphs)
        source = f"key:\n  - >-\n{body}\nother: {{a: 1}}\n"
        assert yaml.safe_load(source)["key"][0].replace(" ", "") == _expected(paragraphs).replace(
            " ", ""
        )  # the generated block is what it means to be
        assert load_yaml(source) == {"key": [_expected(paragraphs)], "other": {"a": 1}}, source


def test_literal_blocks_and_one_line_texts_are_as_written() -> None:
    source = "a: |\n  日本\n  語\nb: 日本 語\nc: >\n  日本\n  語\n\n  x\n"
    assert load_yaml(source) == {"a": "日本\n語\n", "b": "日本 語", "c": "日本語\nx\n"}
