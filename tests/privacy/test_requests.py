"""The masking property on what features send besides the cells they read (issue 37: "no
identifier in any request"): file names, sheet names, headers of tables pivoted by person, chart
titles, error texts, documents given to the design chat and help-desk questions, written by a
fourth generator (``tests/privacy/requests.py``). No identifier is left, names are found at the
README's rate or better, and amounts, dates, company names and the words around stay; the same
through the real request path of `keiri-agent analyze` on a workbook whose file and sheets are
named after people. One case per leak the generator found: each failed on the code before."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from openpyxl import Workbook
from typer.testing import CliRunner

from keiri_agent.cli import app
from keiri_agent.privacy import Vault, mask_json_text
from tests.privacy import backoffice
from tests.privacy.backoffice import Doc, leaks
from tests.privacy.requests import SHAPES
from tests.privacy.test_backoffice import assert_reaches_the_model_masked, spans
from tests.support import ScriptedLLMServer
from tests.support.personal import leaked

SEEDS = (1, 2, 3)
PER_SHAPE = 40  # documents of each shape per seed (3 seeds x 7 shapes x 40 = 840 documents)
PER_SHAPE_WIRE = 6  # documents of each shape sent through the scripted server
MIN_NAME_RECALL = 0.97  # issue 37 asks 0.9; what this generator writes is found more often
_IDENTIFIER = re.compile(r"[0-9０-９@＠]")


def _identifiers(doc: Doc) -> Doc:
    """``doc`` with the secrets that are identifiers only (a digit or an at sign in them)."""
    return Doc(doc.shape, doc.text, [s for s in doc.secrets if _IDENTIFIER.search(s)])


@pytest.mark.parametrize("shape", list(SHAPES))
def test_no_identifier_is_left_names_are_found_and_nothing_else_is_touched(shape: str) -> None:
    names = missed_names = 0
    left: dict[str, list[str]] = {}
    touched: dict[str, list[str]] = {}
    for seed in SEEDS:
        for doc in backoffice.make_docs(seed, PER_SHAPE, [shape], SHAPES):
            masked = mask_json_text(Vault(), doc.text, Counter())  # as every prompt
            if found := leaks(_identifiers(doc), masked):
                left[doc.text] = found
            people = [s for s in doc.secrets if not _IDENTIFIER.search(s)]
            names += len(people)
            missed_names += len(leaks(Doc(shape, doc.text, people), masked))
            if lost := [v for v in doc.kept if v not in masked]:
                touched[doc.text] = lost
    assert left == {}
    assert touched == {}
    assert 1 - missed_names / max(names, 1) >= MIN_NAME_RECALL, (missed_names, names)


def test_every_shape_reaches_the_model_masked(llm_server: ScriptedLLMServer) -> None:
    docs = [_identifiers(doc) for doc in backoffice.make_docs(37, PER_SHAPE_WIRE, table=SHAPES)]
    for doc in docs:
        doc.kept = [k for k in doc.kept if not _IDENTIFIER.search(k) or "円" in k or "," in k]
    assert_reaches_the_model_masked(llm_server, docs)


WHOLE = None  # the case's whole text is the value

# One case per leak the generator found (each failed on the code before its fix).
FOUND: list[tuple[str, str, str | None]] = [
    # an underscore parts a file name's words: the number and the names beside it
    ("連絡先_小林由美_09063170669.pdf", "phone", "09063170669"),
    ("/uploads/Kobayashi_Yumi_源泉徴収票_2024.docx", "person", "Kobayashi_Yumi"),
    ("添付: 連絡先_Hasegawa_Misaki_09038738069.xlsx", "person", "Hasegawa_Misaki"),
    ("入力ファイル「松本_恵子_源泉徴収票_2026.csv」", "person", "松本_恵子"),
    ("2025年3月_経費精算_石川_浩二様.pdf", "person", "石川_浩二"),
    # full names in kana with nothing beside them: sheet names, a pivoted header, a file name
    ("シート: コバヤシユミ、Sheet1", "person", "コバヤシユミ"),
    ("部門\tコバヤシ ユミ\tナカジマ ケンタ\t合計", "person", "ナカジマ ケンタ"),
    ("立替金の推移 - わたなべだいき 、縦軸: 金額（円）", "person", "わたなべだいき"),
    ("/uploads/雇用契約書（ﾅｶｼﾞﾏ ｹﾝﾀ）.xlsx", "person", "ﾅｶｼﾞﾏ ｹﾝﾀ"),
    # a surname the tokenizer tags a place, listed beside a name
    ("担当者別売上（井上・松本）", "person", "松本"),
    ("sheets: 松本, 井上真由美、ワタナベダイキ", "person", "松本"),
    # a given name the tokenizer cut into the title after it (浩 + 二部 + 長)
    ("申請者が営業部の石川 浩二部長(内線 1983）に提出", "person", "石川 浩二"),
    # writers introducing themselves in a help-desk question
    ("お疲れさまです。たくやです。住所変更の届け出方法を教えてください", "person", "たくや"),
    ("お疲れさまです。だいきです。", "person", "だいき"),
    ("すみません、松本です！口座番号を変えたいです", "person", "松本"),
    ("経理部のけんたと申します。", "person", "けんた"),
]


@pytest.mark.parametrize(("text", "kind", "value"), FOUND)
def test_each_leak_of_the_requests_generator_is_masked(
    text: str, kind: str, value: str | None
) -> None:
    assert (kind, text if value is WHOLE else value) in spans(text)


# What stays as it is on purpose (a policy case each).
KEPT = [
    "はい、そうです。ダメです。無理です。以上です。ミスです。",  # a sentence ending in です
    "地域別：石川・富山・福井",  # a list of places beside no name found
    "ヤマダデンキ、サトウキビ",  # a kana word that is no surname and given name glued
    "df_Sales_Report.xlsx",  # an underscore after a letter is a code's
    "INV_2026_0012.pdf",
    "取引先名,得意先名,勤務先名,取引先名カナ",  # read 取引 + 先名 (a surname) before
    # a setting's name joins words of a code with underscores: both must be names to be one
    # (KEIRI is read as a given name; the plan generator's catalog names KEIRI_TIMEZONE)
    "時差の付いた日時は KEIRI_TIMEZONE の時刻にそろえます",
    "Keiri_Timezone, timezone_keiri",
]


@pytest.mark.parametrize("text", KEPT)
def test_what_looks_like_a_name_in_a_request_and_is_not_stays(text: str) -> None:
    assert spans(text) == []


runner = CliRunner()
PEOPLE = ["長谷川 美咲", "ナカジマ ケンタ", "松本"]
PHONE = "09012345678"
REPORT = {
    "title": "担当者別の立替金",
    "conclusion": "〔人名1〕さんの立替金が最も多い。",
    "evidence": ["合計 36000 円"],
    "sections": [],
    "suggestions": [],
}
CODE = "print(df.to_string())\n"


def _workbook(path: Path) -> Path:
    """Expenses kept one sheet per person, a pivot by person on the first: the file, its
    sheets and its headers are named after people."""
    book = Workbook()
    pivot = book.active
    assert pivot is not None
    pivot.title = "担当者別"
    pivot.append(["月", *PEOPLE, "合計"])
    pivot.append(["2026-01", 12000, 8000, 4000, 24000])
    pivot.append(["2026-02", 6000, 4000, 2000, 12000])
    for person in PEOPLE:
        sheet = book.create_sheet(person)
        sheet.append(["日付", "摘要", "金額"])
        sheet.append(["2026-01-10", "交通費", 4000])
    book.save(path)
    return path


def test_a_workbook_named_after_people_reaches_the_model_without_them(
    llm_server: ScriptedLLMServer, public_dir: Path
) -> None:
    source = _workbook(public_dir / f"立替金_長谷川美咲_{PHONE}.xlsx")
    llm_server.add_chat(json={"next_action": "act", "instruction": "担当者別", "rationale": "r"})
    llm_server.add_chat(json={"code": CODE, "expected_outputs": []})
    llm_server.add_chat(json={"next_action": "finalize", "rationale": "十分"})
    llm_server.add_chat(json=REPORT)
    args = ["analyze", str(source), "担当者別の立替金を見せて", "--json"]
    result = runner.invoke(app, [*args, "--workspace-root", str(public_dir / "ws")])
    assert result.exit_code == 0, result.output
    bodies = [json.dumps(body, ensure_ascii=False) for body in llm_server.chat_requests()]
    assert bodies
    assert leaked(bodies, [PHONE, "長谷川美咲", *PEOPLE]) == []
    assert len(bodies) == 4
    assert (
        'dfs[\\"立替金_〔人名1〕_〔電話番号1〕\\"]' in bodies[0]
    )  # the file, as the model sees it
    assert "2026-01 | 12000 | 8000 | 4000 | 24000" in bodies[0]  # amounts and dates as they are
    data = json.loads(result.stdout)
    assert data["final_report"]["conclusion"] == "長谷川美咲さんの立替金が最も多い。"
    assert data["masked"] == {"person": 3, "phone": 1}
