"""Property: the 設計 page names blocks, steps and items as people do, the ids in 詳細 only.

Two things the page shows, driven as a person drives them (AppTest, no LLM):

- the candidate blocks for seeded instructions of the month's work: the ranked table and the
  table of what was cut name each block by its label and its category in words, never by the
  block id or the category's YAML name (``table``, ``excel``); the ids are in the expander
  詳細: YAML での名前 under the tables (the 説明 column, each block spec's own description, is
  not read);
- the 検証/ドライラン of seeded plans of ``tests/design/test_check_words`` (labelled steps broken
  the ways authors break them), pasted into the editor and checked: each finding and note under
  a step names steps and items as ``test_check_words.wrong_words`` wants (the hints, which say
  what to write in the YAML, and the 詳細 expanders are not read).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
import yaml
from streamlit.testing.v1 import AppTest

from keiri_agent.blocks.registry import default_registry
from keiri_agent.ui.design.state import INSTRUCTION_KEY, YAML_KEY
from tests.design.test_check_words import _cases, wrong_words
from tests.ui.screen import node_texts

SEED = 17
INSTRUCTIONS = 6
PLANS = 10
PAGE_TIMEOUT_S = 180
TASKS = (
    "銀行の入出金明細を読み込んで請求一覧と消し込む",
    "経費精算の Excel から部門別に集計してレポートにする",
    "証跡の ZIP から請求書を読み取り、金額の差異を一覧にする",
    "売上の表を取引先ごとに並べ替えてグラフにする",
    "重複している支払いを探して担当者に確認してもらう",
    "月次の残高をまとめて Excel のひな形に書き込む",
    "ヘルプデスクの質問に規程から答える",
    "ファイルをまとめて PDF に変換する",
)
CHECK_SECTION = "検証/ドライランの結果"


def design_page() -> None:
    from keiri_agent.ui.design.page import render

    render()


def _app() -> AppTest:
    return AppTest.from_function(design_page, default_timeout=PAGE_TIMEOUT_S)


def _details(label: str) -> bool:
    return label.startswith("詳細:")


def _candidate_texts(app: AppTest) -> list[str]:
    texts: list[str] = []
    for frame in app.dataframe[:2]:
        texts += [str(c) for c in frame.value.columns]
        texts += [
            str(v)
            for column in frame.value.columns
            if column != "説明"  # the block's own description (its spec's text) is not read
            for v in frame.value[column]
        ]
    return texts + [str(c.value) for c in app.caption]


def _check_texts(app: AppTest) -> list[str]:
    texts: list[str] = []
    section = ""
    for child in app.main.children.values():
        kind = getattr(child, "type", "")
        if kind in ("subheader", "header", "title"):
            section = str(getattr(child, "value", ""))
        elif section == CHECK_SECTION:
            texts += [s.text for s in node_texts(child, skip=_details) if s.kind != "dataframe"]
    return [t for t in texts if not t.startswith("💡") and "💡" not in t]


@pytest.fixture
def offline(design_env: Path, public_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page with the scripted server's settings (no embedding model), in the workspace."""
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(public_dir / "workspace"))


@pytest.mark.usefixtures("offline")
def test_the_candidates_name_blocks_by_label_and_category_in_words() -> None:
    specs = default_registry().list()
    ids = {s.id for s in specs} | {s.category for s in specs}
    words = re.compile(
        r"(?<![\w.])(?:"
        + "|".join(map(re.escape, sorted(ids, key=len, reverse=True)))
        + r")(?![\w])"
    )
    found: dict[str, list[str]] = {}
    for task in random.Random(SEED).sample(TASKS, INSTRUCTIONS):
        app = _app()
        app.run()
        app.text_area(key=INSTRUCTION_KEY).set_value(task).run()
        assert not app.exception, app.exception
        wrong = [t for t in _candidate_texts(app) if t == "ID" or words.search(t)]
        if wrong:
            found[task] = wrong[:6]
    assert not found, found


@pytest.mark.usefixtures("offline")
def test_the_check_names_steps_and_items_as_people_do() -> None:
    cases = random.Random(SEED).sample(_cases(), PLANS)
    found: dict[str, list[str]] = {}
    shown = 0
    for case in cases:
        app = _app()
        app.run()
        app.text_area(key=YAML_KEY).set_value(
            yaml.safe_dump(case.plan, allow_unicode=True, sort_keys=False)
        )
        app.button(key="design_check_button").click().run()
        assert not app.exception, (case.name, app.exception)
        texts = _check_texts(app)
        shown += len(texts)
        problems = [p for t in texts for p in wrong_words(t, case.names)]
        if problems:
            found[case.name] = problems[:6]
    assert shown, "the check showed nothing"
    assert not found, f"{len(found)} of {PLANS} checked plans name YAML names: {found}"
