"""What the analysis agent's 判断 says to a person is Japanese: the decision's line in the
progress (``判断: 分析を進める（…）``) and, when the model's decision lacks what it needs, the
error a person reads — never ``act``, ``next_action`` or ``question``.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from keiri_agent.agents.analysis import AnalysisSession
from keiri_agent.errors import LLMError
from keiri_agent.events import read_events
from tests.agents.analysis import test_session as base
from tests.support import ScriptedLLMServer

SALES = pd.DataFrame({"取引先": ["あおば商事", "さくら電機"], "金額": [120000, 30000]})
_ASCII_WORD = re.compile(r"[A-Za-z_]{2,}")


session = base.session  # the session of the end-to-end tests, with the scripted LLM


def test_the_decision_line_says_the_action_in_japanese(
    session: AnalysisSession, llm_server: ScriptedLLMServer
) -> None:
    session.add_frame("sales", SALES)
    llm_server.add_chat(json={"next_action": "finalize", "rationale": "要求を満たした"})
    llm_server.add_chat(
        json={
            "title": "売上",
            "conclusion": "あおば商事が最大です。",
            "evidence": ["120,000円"],
            "sections": [],
            "suggestions": [],
        }
    )
    turn = session.ask("取引先別の売上を比べて")
    assert turn.run_log is not None
    lines = [
        str(getattr(e, "msg", ""))
        for e in read_events(turn.run_log)
        if str(getattr(e, "msg", "")).startswith("判断:")
    ]
    assert lines == ["判断: レポートにまとめる（要求を満たした）"]


@pytest.mark.parametrize(
    ("action", "needed"), [("ask", "ユーザーへの質問"), ("act", "具体的な分析指示")]
)
def test_a_decision_without_what_it_needs_is_said_in_japanese(
    session: AnalysisSession, llm_server: ScriptedLLMServer, action: str, needed: str
) -> None:
    session.add_frame("sales", SALES)
    llm_server.add_chat(json={"next_action": action, "rationale": "考え中"}, repeat=True)
    with pytest.raises(LLMError) as raised:
        session.ask("取引先別の売上を比べて")
    said = f"{raised.value.message} {raised.value.hint}"
    assert needed in said, said
    assert not _ASCII_WORD.findall(raised.value.message.replace("LLM", "")), said
