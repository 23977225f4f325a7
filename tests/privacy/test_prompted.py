"""The masking property on the requests each agent builds (``tests.privacy.prompted``): no
identifier leaves, and nothing that is not personal data is masked: not the product's own lines
(the agents' prompts mark them, ``privacy.ours``), not a business number after its label, and not
the words a form writes under a person's label where no one is named yet (未定, 同上, 空欄).

On main before session 16 (seed 16, 40 requests of each of the nine builders, 360 requests, 6,560
identifiers): 107 requests sent a card number (13 digits, or 17 to 19, in groups; a マイナンバー's
12 digits masked out of it), every request masked a 未定 or a business number (2,638 values: a
受付番号 or 会員番号 with a マイナンバー's check digit, or a 16-digit one passing Luhn, on the line
below its label or in its column; 1,332 placeholders under person labels as names), and 22 help
desk final prompts had their own line 参照した資料: masked as a name under a user's blank 承認者：
field; now none. One case per mechanism below fails on main too.
"""

from __future__ import annotations

from collections import Counter

import pytest

from keiri_agent.agents.helpdesk.models import Subtask
from keiri_agent.agents.helpdesk.prompts import HelpDeskAgentPrompts, final_answer_messages
from keiri_agent.llm.masking import mask_input
from keiri_agent.privacy import Vault, mask_json_text
from tests.privacy.backoffice import Doc, leaks
from tests.privacy.prompted import BUILDERS, make_requests, own_lines, sent_text

SEED = 16
PER_AGENT = 40
REQUESTS = make_requests(SEED, PER_AGENT)


def _without(text: str, kept: list[str]) -> str:
    """``text`` without the values that must stay (a secret's digits may recur in one)."""
    for value in sorted(kept, key=len, reverse=True):
        text = text.replace(value, "")
    return text


@pytest.mark.parametrize("agent", list(BUILDERS))
def test_each_agents_requests_send_no_identifier_and_mask_nothing_else(agent: str) -> None:
    leaked: dict[int, list[str]] = {}
    lost: dict[int, list[str]] = {}
    own: dict[int, list[str]] = {}
    for number, request in enumerate(r for r in REQUESTS if r.agent == agent):
        raw = sent_text(request.messages)
        masked, _ = mask_input(request.messages, Vault())
        sent = sent_text(masked)
        if found := leaks(Doc(agent, "", request.secrets), _without(sent, request.kept)):
            leaked[number] = found
        if gone := [v for v in dict.fromkeys(request.kept) if sent.count(v) < raw.count(v)]:
            lost[number] = gone
        if lines := [line for line in own_lines(raw) if sent.count(line) < raw.count(line)]:
            own[number] = lines
    assert leaked == {}
    assert lost == {}
    assert own == {}


def test_the_generator_writes_what_the_issue_lists() -> None:
    assert len(REQUESTS) == PER_AGENT * len(BUILDERS) == 400
    assert sum(len(set(r.secrets)) for r in REQUESTS) > 6000
    words = Counter(v for r in REQUESTS for v in r.kept if not any(c.isdigit() for c in v))
    assert {"未定", "なし", "同上", "空欄"} <= set(words)


def _masked(text: str) -> str:
    return mask_json_text(Vault(), text, Counter())


@pytest.mark.parametrize(
    "text",
    [
        "受付番号：1234 5678 9018 の件",  # a マイナンバー's check digit under a business label
        "会員番号\n1234-5678-9018\n",  # on the line below its label
        "お客様番号,金額\n123456789018,1200\n",  # in its column
        "会員番号 4111-1111-1111-1111 で登録済み",  # passes Luhn with a card's prefix
    ],
)
def test_a_business_number_is_what_its_label_says(text: str) -> None:
    assert _masked(text) == text


def test_a_card_number_in_groups_is_read_whole() -> None:
    thirteen = "カード番号：4222 2222 2222 2"  # 13 digits in a card's groups, Luhn-valid
    assert _masked(thirteen) == "カード番号：〔カード番号1〕"
    nineteen = "決済カード 6212-3456-7890-1234-569"
    assert _masked(nineteen) == "決済カード 〔カード番号1〕"
    # 12 of 13 digits are no マイナンバー (1234 5678 9018 has its check digit)
    assert "〔マイナンバー" not in _masked("伝票 1234 5678 9018 1 枚目")


@pytest.mark.parametrize("value", ["未定", "なし", "同上", "空欄", "後日決定", "該当なし"])
def test_a_person_label_over_a_word_that_names_no_one_keeps_it(value: str) -> None:
    for text in (f"担当者：{value}", f"担当者\n{value}\n", f"承認者,金額\n{value},1200\n"):
        assert _masked(text) == text
    assert "長谷川" not in _masked(f"担当者\n長谷川 美咲\n{value}\n")


def test_the_agents_own_lines_stay_beside_a_blank_person_field() -> None:
    """The final answer's 参照した資料: under a subtask answer ending in a blank 承認者：."""
    subtask = Subtask(
        task_name="申請の手順を調べる",
        is_completed=True,
        subtask_answer="申請書に記入します。\n承認者：",
        challenge_count=1,
        verified_citations=["【出典: 手引き.pdf p.3】"],
    )
    messages = final_answer_messages(HelpDeskAgentPrompts(), "申請の手順は？", [subtask])
    masked, _ = mask_input(messages, Vault())
    assert "参照した資料: 【出典: 手引き.pdf p.3】" in sent_text(masked)


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("受付番号：123456789018 09012345678", "受付番号：123456789018 〔電話番号1〕"),
        ("会員番号 1234 5678 9018 090 1234 5678", "会員番号 1234 5678 9018 〔電話番号1〕"),
        ("予約番号 12345678  090-1234-5678", "予約番号 12345678  〔電話番号1〕"),
        ("受付番号：12345678 4111111111111111 の件", "受付番号：12345678 〔カード番号1〕 の件"),
        ("受付番号\n12345678 09012345678\n", "受付番号\n12345678 〔電話番号1〕\n"),
    ],
)
def test_a_number_after_a_business_number_is_judged_on_its_own(text: str, masked: str) -> None:
    """(session 17) A business number's label says what the number after it is, not what the
    next number on the line is."""
    assert _masked(text) == masked
