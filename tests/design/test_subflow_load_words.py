"""Property: the subflow loader names a subflow it cannot use as people read it, in Japanese.

A subflow file that parses but does not describe a plan is refused with a message people read
in ``plan validate``, the 設計 page and a run's failure: it names the subflow by its description's
first sentence (``サブフロー「月次の請求チェック」（lib/check_3）``), as a run's messages do, not by
its path alone, and says what is wrong in Japanese, never Pydantic's English. Generated subflow
files: described or not, each with one of the shape defects people write.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import yaml

from keiri_agent.plan._graph.subflows import SubflowLoader

DESCRIPTIONS = ["月次の請求チェック", "入金の消込。毎月 5 日に使います", "取引先マスタの更新", None]
DEFECTS = [
    {"graph": [{"id": "a", "type": "block"}]},  # a block node without its block
    {"graph": "read"},  # the graph is not a list
    {"graph": [{"type": "block", "block": "table.sort"}]},  # a node without an id
    {"graph": [{"id": "a", "type": "bogus"}]},  # a kind of node that does not exist
    {"graph": [], "id": 3},  # an id that is not a text
    {"graph": [], "vars": "x"},  # vars that are not a mapping
]
ENGLISH = re.compile(r"[A-Za-z]{3,} [a-z]{2,}")  # a phrase of English (Field required, ...)


def test_an_unusable_subflow_is_named_by_its_description_in_japanese(tmp_path: Path) -> None:
    rng = random.Random(21)
    (tmp_path / "lib").mkdir()
    wrong: list[tuple[str, str]] = []
    for index in range(24):
        description, defect = rng.choice(DESCRIPTIONS), rng.choice(DEFECTS)
        plan = {"id": f"check_{index}", **({"description": description} if description else {})}
        text = yaml.safe_dump({**plan, **defect}, allow_unicode=True)
        (tmp_path / "lib" / f"check_{index}.yaml").write_text(text, encoding="utf-8")
        error = SubflowLoader(tmp_path).load(f"lib/check_{index}").error
        assert error is not None, text
        message = error.message
        name = re.split(r"[。\n]", description)[0] if description else None
        named = (
            f"サブフロー「{name}」（lib/check_{index}）"
            if name
            else f"サブフロー 'lib/check_{index}'"
        )
        if named not in message or ENGLISH.search(message):
            wrong.append((text, message))
    assert wrong == [], f"{len(wrong)} of 24 messages: {wrong[:3]}"
