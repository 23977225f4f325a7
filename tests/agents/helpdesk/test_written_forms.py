"""A question the help desk answers keeps finding its page however the user writes it (property).

The answerable questions of the project's own lists (``tests/data/helpdesk_paraphrases.yaml``, the
evaluation set) are written in the shapes of :mod:`tests.support.helpdesk_variants` (half-width
kana, full-width letters, other case, hiragana for a kanji word or a loanword, a kana typo, the
other register, a greeting and signature around it, an emoji, a pasted URL, an error code spelled
otherwise), and searched on the sample knowledge base with the default settings and no keys.
``benchmarks/helpdesk_variants.py`` runs every question; these tests a seeded sample of them.
"""

from __future__ import annotations

import json
import logging
import random
import shutil
from collections import Counter
from pathlib import Path

import pytest

from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase, ingest
from keiri_agent.agents.helpdesk.knowledge.semantic import SEMANTIC_FORMAT, SEMANTIC_STAMP
from keiri_agent.config import DEFAULT_HELPDESK_MIN_MARGIN
from tests.agents.helpdesk.conftest import EXAMPLES, semantic_settings
from tests.support.helpdesk_eval import load_cases
from tests.support.helpdesk_paraphrases import Paraphrase, load_lists
from tests.support.helpdesk_variants import both_pages_kept, top, variants

# The first test here may ingest the sample knowledge base for the session (660 texts embedded
# with an empty cache: minutes on a loaded 2-core machine); the tests themselves take seconds.
pytestmark = pytest.mark.timeout(600)

SPLITS = ("dev", "heldout", "dev2", "heldout2", "heldout3", "heldout4", "heldout5")
SAMPLE = 45  # answerable questions whose variants are searched (about 350 variants, ~10 s)
OFF_TOPIC_SAMPLE = 30
# A question this close to the floor is the floor's business, not the writing's: any change of
# wording may move it across (benchmarks/README.md, helpdesk_floor.py).
BORDERLINE = 0.005
# Shapes that change characters only: the question is the same text once normalized.
CHARACTER_SHAPES = frozenset(
    {"halfwidth_kana", "fullwidth_ascii", "lower_ascii", "title_ascii", "emoji", "error_code"}
)
# Shapes that change the words (a kana spelling, a typo, an ending, text around the question):
# a loanword the dictionary reads as grammar (されたら|ちゃっと) or a typo in a two-kana word
# cannot be written back; at most this share may lose its page.
MAX_LOST_SHARE = 0.03
# What is left of a pasted URL's sentence (を開いたところで、) can still move an off-topic question
# near the documents; before, most of them were answered.
MAX_OFF_TOPIC_ANSWERED = 0.06


@pytest.fixture(scope="module")
def kb(semantic_index: tuple[Path, Path]) -> KnowledgeBase:
    index, cache = semantic_index
    return KnowledgeBase.open(index, settings=semantic_settings(cache))


def _answered(kb: KnowledgeBase) -> list[Paraphrase]:
    """A seeded sample of the answerable questions that the default search finds, away from
    the floor."""
    cases = [case for split in SPLITS for case in load_lists(split).answerable]
    cases += [Paraphrase(c.question, c.manual_gold + c.qa_gold) for c in load_cases()]
    random.Random(38).shuffle(cases)
    chosen: list[Paraphrase] = []
    for case in cases:
        covered = kb.coverage(case.question)
        assert covered is not None
        if covered.margin >= DEFAULT_HELPDESK_MIN_MARGIN + BORDERLINE and set(
            top(kb, case.question)
        ) & set(case.gold):
            chosen.append(case)
        if len(chosen) == SAMPLE:
            break
    return chosen


@pytest.fixture(scope="module")
def answered(kb: KnowledgeBase) -> list[Paraphrase]:
    return _answered(kb)


def test_an_answered_question_keeps_its_page_however_it_is_written(
    kb: KnowledgeBase, answered: list[Paraphrase]
) -> None:
    total: Counter[str] = Counter()
    lost: list[tuple[str, str]] = []
    for case in answered:
        for variant in variants(case.question):
            total[variant.shape] += 1
            if not set(top(kb, variant.text)) & set(case.gold):
                lost.append((variant.shape, variant.text))
    assert sum(total.values()) >= 300, total
    assert [item for item in lost if item[0] in CHARACTER_SHAPES] == []
    assert len(lost) <= MAX_LOST_SHARE * sum(total.values()), lost


PDF = "XYZシステム_ユーザーマニュアル.pdf"


@pytest.mark.parametrize(
    ("message", "gold", "plain"),
    [
        # Each lost its page before the question was normalized (found by the generator).
        (
            "何日放置されたら上の人にも連絡がいきますか💦",
            (f"{PDF}#p6",),
            "何日放置されたら上の人にも連絡がいきますか",
        ),
        (
            "ﾊﾟｽﾜｰﾄﾞは何日ごとに変える必要がありますか",
            (f"{PDF}#p4", "qa#9"),
            "パスワードは何日ごとに変える必要がありますか",
        ),
        (
            "けいひの申請はいつまでに出せばいいですか",
            (f"{PDF}#p8", f"{PDF}#p13", "qa#12"),
            "経費の申請はいつまでに出せばいいですか",
        ),
        (
            "しょうにんまちのまま何日もたった申請はどうなる",
            (f"{PDF}#p6",),
            "承認待ちのまま何日もたった申請はどうなる",
        ),
        (
            "ばっくあっぷは毎日何時にとられていますか",
            (f"{PDF}#p16",),
            "バックアップは毎日何時にとられていますか",
        ),
        (
            "辞めた人のアカウンはどうなりますか",
            (f"{PDF}#p5", f"{PDF}#p12"),
            "辞めた人のアカウントはどうなりますか",
        ),
        (
            "https://xyz.example.co.jp/expense/list?id=3021 を開いたところで、"
            "お客さんの情報を一度にたくさん登録したい",
            (f"{PDF}#p10",),
            "お客さんの情報を一度にたくさん登録したい",
        ),
        (
            "【至急】部署の管理をする人は何ができますか（総務部 鈴木）",
            (f"{PDF}#p5",),
            "部署の管理をする人は何ができますか",
        ),
    ],
)
def test_shapes_that_lost_their_page_find_it(
    kb: KnowledgeBase, message: str, gold: tuple[str, ...], plain: str
) -> None:
    """The message finds its page, or is searched as the question written plainly is (where the
    plain question sits at the floor's or the fusion's edge, the shape is not what moves it)."""
    hits = top(kb, message)
    assert set(hits) & set(gold) or hits == top(kb, plain), (hits, top(kb, plain))


def test_a_message_with_two_questions_finds_the_page_of_each(
    kb: KnowledgeBase, answered: list[Paraphrase]
) -> None:
    """Each question's own best page is among the message's three hits."""
    pairs, kept = both_pages_kept(kb, [case.question for case in answered], 1)
    assert pairs >= 30
    assert kept >= 0.9 * pairs, (kept, pairs)


def test_text_around_an_off_topic_question_does_not_make_it_answered(kb: KnowledgeBase) -> None:
    """A greeting, a URL or an emoji says nothing about the topic: an off-topic question the
    help desk refuses stays refused (before, a pasted URL had most of them answered)."""
    questions = [q for split in SPLITS for q in load_lists(split).off_topic]
    random.Random(38).shuffle(questions)
    refused: list[str] = []
    for question in questions:
        if len(refused) < OFF_TOPIC_SAMPLE and not top(kb, question):
            refused.append(question)
    shapes = {"greeting", "url", "emoji", "halfwidth_kana", "fullwidth_ascii"}
    wrapped = [v.text for q in refused for v in variants(q) if v.shape in shapes]
    answered = [text for text in wrapped if top(kb, text)]
    assert len(wrapped) >= 90
    assert len(answered) <= MAX_OFF_TOPIC_ANSWERED * len(wrapped), answered


def test_an_index_of_the_earlier_format_is_embedded_again(
    semantic_index: tuple[Path, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Vectors of pieces as written (format 2, before the one character form) are never read as
    current: opening embeds them again (and says so), the next ingest stores them."""
    index, cache = tmp_path / "index", semantic_index[1]
    shutil.copytree(semantic_index[0], index)
    stamp = index / SEMANTIC_STAMP
    earlier = json.loads(stamp.read_text(encoding="utf-8")) | {"format": 2}
    stamp.write_text(json.dumps(earlier), encoding="utf-8")
    questions = (
        "ﾊﾟｽﾜｰﾄﾞは何日ごとに変える必要がありますか",
        "ばっくあっぷは毎日何時にとられていますか",
    )
    with KnowledgeBase.open(semantic_index[0], settings=semantic_settings(cache)) as current:
        expected = [top(current, question) for question in questions]
    with (
        caplog.at_level(logging.WARNING),
        KnowledgeBase.open(index, settings=semantic_settings(cache)) as reopened,
    ):
        # Embedded again, it searches as the current index does.
        assert [top(reopened, question) for question in questions] == expected
    assert "semantic vectors missing or stale" in caplog.text
    result = ingest(
        index,
        manuals=[EXAMPLES / "manual"],
        qa=EXAMPLES / "qa.csv",
        settings=semantic_settings(cache),
    )
    assert result.ok, result.failures
    assert json.loads(stamp.read_text(encoding="utf-8"))["format"] == SEMANTIC_FORMAT == 3
