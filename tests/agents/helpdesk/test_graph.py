"""The help-desk graph against the scripted LLM server, with fake search tools injected.

Each test scripts every LLM call with a predicate naming the call it answers (subtasks run in
parallel, so their requests arrive in any order) and checks what a user would see: the answer,
its sources, which subtasks stayed unresolved, and what was sent to the model.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import ToolException

from keiri_agent.agents.helpdesk.agent import HelpDeskAgent
from keiri_agent.agents.helpdesk.graph import finish_answer
from keiri_agent.agents.helpdesk.models import MAX_CHALLENGE_COUNT, Subtask, ToolResult, citation
from keiri_agent.agents.helpdesk.prompts import HelpDeskAgentPrompts
from keiri_agent.config import load_settings
from keiri_agent.errors import LLMError, LLMOutputError
from keiri_agent.events import ErrorEvent, Stage, read_events
from tests.support.helpdesk import USAGE, FakeSearch, HelpDeskScript, hit
from tests.support.llm_wire import messages_of

RESET = "パスワード再設定の手順を調べる"
LOCK = "アカウントロックの解除方法を調べる"
QUESTION = "パスワードを忘れてロックされました。どうすればよいですか？"
RESET_HIT = hit(
    "操作マニュアル.pdf", "ログイン画面の「パスワードを忘れた方」から再設定します。", page=12
)
LOCK_HIT = hit(
    "よくある質問.csv",
    "Q: ロックされた A: 30 分後に自動で解除されます。",
    row=7,
    source="qa",
)
RESET_CITE = "【出典: 操作マニュアル.pdf p.12】"
PROMPTS = HelpDeskAgentPrompts()
LOCK_CITE = "【出典: Q&A よくある質問.csv 7 行目】"


@pytest.fixture
def script(helpdesk_script: HelpDeskScript) -> HelpDeskScript:
    return helpdesk_script


def make_agent(search: FakeSearch, **kwargs: Any) -> HelpDeskAgent:
    return HelpDeskAgent(tools=search.tools(), settings=load_settings(), **kwargs)


def all_text(body: dict[str, Any]) -> str:
    return json.dumps(messages_of(body), ensure_ascii=False)


def test_two_subtasks_run_concurrently_and_the_answer_cites_both(
    script: HelpDeskScript,
) -> None:
    # Each search waits until the other subtask's search is in flight too: run one after the
    # other, the first would wait alone until the barrier breaks and its search would fail.
    search = FakeSearch(
        by_query={"再設定": [RESET_HIT], "ロック": [LOCK_HIT]},
        barrier=threading.Barrier(2, timeout=30),
    )
    script.plan(RESET, LOCK)
    script.subtask(RESET, "パスワード 再設定", f"再設定はログイン画面から行います{RESET_CITE}")
    script.subtask(LOCK, "ロック 解除", f"30 分後に自動解除されます{LOCK_CITE}", tool="search_qa")
    script.final(
        f"ログイン画面から再設定できます{RESET_CITE}。ロックは 30 分で解除されます{LOCK_CITE}。"
    )

    result = make_agent(search).run_agent(QUESTION)

    assert script.server.pending() == 0
    assert sorted(call[:2] for call in search.calls) == [
        ("search_manual", "パスワード 再設定"),
        ("search_qa", "ロック 解除"),
    ]
    assert [s.task_name for s in result.subtasks] == [RESET, LOCK]
    for subtask in result.subtasks:
        assert subtask.is_completed
        assert subtask.challenge_count == 1
        ((tool_result,),) = subtask.tool_results
        assert tool_result.error is None, tool_result.error
        assert len(tool_result.results) == 1
    assert result.unresolved == []
    assert [s.citation for s in result.sources] == [RESET_CITE, LOCK_CITE]
    assert result.sources[1].model_dump(include={"file_name", "row", "source"}) == {
        "file_name": "よくある質問.csv",
        "row": 7,
        "source": "qa",
    }
    # The events show the branches interleaved: both subtasks started before either finished.
    assert result.run_log is not None
    stages = [e for e in read_events(result.run_log) if isinstance(e, Stage)]
    order = [(e.node_id, e.status) for e in stages if e.step == "execute_subtasks"]
    assert {order[0], order[1]} == {("subtask[0]", "start"), ("subtask[1]", "start")}


def test_subtask_completes_on_its_second_reflection_without_stale_tool_output(
    script: HelpDeskScript,
) -> None:
    stale = hit("古い手引き.pdf", "STALE-TEXT: 関係のない記述", page=3)
    search = FakeSearch(by_query={"最初": [stale], "再設定": [RESET_HIT]})
    script.plan(RESET)
    script.select(RESET, {"name": "search_manual", "arguments": {"query": "最初の検索"}})
    script.answer(RESET, "FIRST-ANSWER: 資料に記載がありません")
    script.reflect(RESET, False, advice="ADVICE-1: 「パスワード 再設定」で検索し直す")
    script.select(RESET, {"name": "search_manual", "arguments": {"query": "パスワード 再設定"}})
    script.answer(RESET, f"ログイン画面から再設定します{RESET_CITE}")
    script.reflect(RESET, True)
    # The model also cites the stale result, which no subtask answer was written from: the
    # draft is sent back once, and the model drops it.
    script.final(f"再設定できます{RESET_CITE}（参考: 【出典: 古い手引き.pdf p.3】）。")
    script.final(f"再設定できます{RESET_CITE}。")

    result = make_agent(search).run_agent("パスワードの再設定方法は？")

    (subtask,) = result.subtasks
    assert subtask.is_completed
    assert subtask.challenge_count == 2
    assert [r.is_completed for r in subtask.reflection_results] == [False, True]
    assert len(subtask.tool_results) == 2
    first, second = script.requests("select", RESET)
    assert "tool" not in [m.get("role") for m in messages_of(first)]
    retry = all_text(second)
    for expected in ("FIRST-ANSWER", "ADVICE-1", RESET):
        assert expected in retry
    assert "STALE-TEXT" not in retry
    assert all(m.get("role") != "tool" and not m.get("tool_calls") for m in messages_of(second))
    _, second_answer = script.requests("answer", RESET)
    assert "STALE-TEXT" not in all_text(second_answer)
    assert "「パスワードを忘れた方」" in all_text(second_answer)
    # Only the last attempt's results back the answer, so only they are its sources.
    assert [s.citation for s in result.sources] == [RESET_CITE]
    _, revision = script.requests("final")
    assert "【出典: 古い手引き.pdf p.3】。調査結果に付いている出典ラベルだけを使い" in all_text(
        revision
    )
    assert result.revised
    assert result.answer == f"再設定できます{RESET_CITE}。"
    assert result.removed_citations == []


def test_subtask_gives_up_after_three_reflections_and_the_answer_says_so(
    script: HelpDeskScript,
) -> None:
    search = FakeSearch(by_query={"再設定": [RESET_HIT]})
    script.plan(RESET, LOCK)
    script.subtask(RESET, "パスワード 再設定", f"ログイン画面から再設定します{RESET_CITE}")
    for attempt in range(MAX_CHALLENGE_COUNT):
        script.select(LOCK, {"name": "search_qa", "arguments": {"query": f"ロック {attempt}"}})
        script.answer(LOCK, "資料に記載がありません")
        script.reflect(LOCK, False, advice="別の語で探す")
    # The model forgets to mention the unresolved subtask; the agent adds the note itself.
    script.final(f"ログイン画面から再設定できます{RESET_CITE}。")

    result = make_agent(search).run_agent(QUESTION)

    assert script.server.pending() == 0
    assert len(script.requests("select", LOCK)) == MAX_CHALLENGE_COUNT
    locked = result.subtasks[1]
    assert not locked.is_completed
    assert locked.challenge_count == MAX_CHALLENGE_COUNT
    assert result.unresolved == [LOCK]
    assert locked.unresolved_reason == "no_results"
    assert result.status == "partial"
    # The answer does not open with a confident claim: it says first that part is unconfirmed.
    assert result.answer.startswith(PROMPTS.partial_lead)
    assert "ログイン画面から再設定できます" in result.answer
    assert result.answer.endswith(
        f"- {LOCK}（検索しても該当する資料が 1 件も見つかりませんでした）"
    )
    assert result.answer.count("【未解決の項目】") == 2  # the lead points at it; the note itself
    (final,) = script.requests("final")
    final_text = all_text(final).replace("\\n", "\n")
    assert f"{LOCK}\n状態: 未解決（3 回試行しても" in final_text
    assert "資料に記載がありません" not in final_text  # the unresolved answer is not passed on


def test_the_unresolved_note_comes_from_the_subtask_status_not_the_model_wording() -> None:
    resolved = Subtask(
        index=0,
        task_name=RESET,
        tool_results=[[ToolResult(tool_name="search_manual", args="{}", results=[RESET_HIT])]],
        is_completed=True,
        subtask_answer=f"再設定します{RESET_CITE}",
        challenge_count=1,
        verified_citations=[RESET_CITE],
    )
    locked = Subtask(
        index=1,
        task_name=LOCK,
        is_completed=False,
        subtask_answer="",
        challenge_count=3,
        unresolved_reason="not_completed",
    )
    prompts = HelpDeskAgentPrompts()
    # A model that paraphrases the task (or names it exactly) gets the note once, either way.
    for text in (
        f"再設定できます{RESET_CITE}。ロックの件は未解決です。",
        f"再設定できます{RESET_CITE}。未解決: {LOCK}",
    ):
        answer, check = finish_answer(text, [resolved, locked], prompts)
        assert answer.count(f"- {LOCK}（") == 1
        assert check.status == "partial"
    answer, check = finish_answer(f"再設定できます{RESET_CITE}。", [resolved], prompts)
    assert answer == f"再設定できます{RESET_CITE}。"
    assert check.status == "answered"
    assert [citation(hit) for hit in check.cited] == [RESET_CITE]


def test_tool_calls_with_bad_arguments_are_reported_to_the_model(
    script: HelpDeskScript,
) -> None:
    search = FakeSearch(by_query={"再設定": [RESET_HIT]})
    script.plan(RESET)
    script.select(
        RESET,
        {"name": "search_manual", "arguments": {"k": "たくさん"}},  # no query, k not a number
        {"name": "search_everything", "arguments": {"query": "再設定"}},  # no such tool
        {"name": "search_qa", "arguments": "{not json"},  # unparseable arguments
        {"name": "search_manual", "arguments": {"query": "パスワード 再設定", "k": 1}},
    )
    script.answer(RESET, f"ログイン画面から再設定します{RESET_CITE}")
    script.reflect(RESET, True)
    script.final(f"ログイン画面から再設定できます{RESET_CITE}。")

    result = make_agent(search).run_agent("パスワードの再設定方法は？")

    # Parsed calls come first, then the ones whose arguments were not JSON.
    ((bad_args, unknown, good, unparseable),) = result.subtasks[0].tool_results
    assert bad_args.results == []
    assert "引数が不正です（query: 必須の項目がありません" in str(bad_args.error)
    assert 'k: 整数として読めません（受け取った値: "たくさん"）' in str(bad_args.error)
    assert "Field required" not in str(bad_args.error)
    assert "'search_everything' はありません" in str(unknown.error)
    assert "JSON として読み取れません" in str(unparseable.error)
    assert unparseable.results == []
    assert good.error is None
    assert good.results == [RESET_HIT]
    assert search.calls == [("search_manual", "パスワード 再設定", 1)]
    (answer_request,) = script.requests("answer", RESET)
    text = all_text(answer_request)
    for error in (bad_args.error, unknown.error, unparseable.error):
        assert str(error).split("（")[0] in text
    (reflection,) = script.requests("reflect", RESET)
    assert "search_everything" in all_text(reflection)
    assert result.answer.startswith("ログイン画面から再設定できます")


def test_a_failing_tool_is_reported_to_the_model_and_its_done_is_not_trusted(
    script: HelpDeskScript,
) -> None:
    search = FakeSearch(fail_with=ToolException("検索語（query）が空です。"))
    script.plan(RESET)
    # Every attempt: the search fails, the model answers anyway, the reflection says done.
    script.subtask(RESET, "再設定", f"ログイン画面から再設定します{RESET_CITE}", repeat=True)

    result = make_agent(search).run_agent("パスワードの再設定方法は？")

    (subtask,) = result.subtasks
    assert len(subtask.tool_results) == MAX_CHALLENGE_COUNT
    failed = subtask.tool_results[0][0]
    assert failed.error == "ツール 'search_manual' がエラーを返しました: 検索語（query）が空です。"
    first_answer = script.requests("answer", RESET)[0]
    assert failed.error in all_text(first_answer)
    # The second attempt is told why the first did not count.
    second_select = script.requests("select", RESET)[1]
    assert "ツールの呼び出しがすべてエラーでした" in all_text(second_select)
    assert subtask.unresolved_reason == "tool_errors"
    assert subtask.removed_citations == [RESET_CITE]  # never retrieved
    assert result.status == "unresolved"
    assert result.sources == []
    assert script.requests("final") == []  # no guess is asked for
    assert RESET_CITE not in result.answer
    assert "ヘルプデスク担当者" in result.answer


def test_a_search_backend_failure_stops_the_run(script: HelpDeskScript) -> None:
    # The real tools wrap a BlockError in a ToolException; an API outage is not the model's
    # mistake, so it is raised instead of being retried three times and called "unresolved".
    outage = ToolException("検索に失敗しました: 埋め込みモデルの呼び出しに失敗しました")
    outage.__cause__ = LLMError("埋め込みモデルの呼び出しに失敗しました（HTTP 503）")
    script.plan(RESET)
    script.select(RESET, {"name": "search_qa", "arguments": {"query": "再設定"}})
    with pytest.raises(LLMError, match="HTTP 503"):
        make_agent(FakeSearch(fail_with=outage)).run_agent("パスワードの再設定方法は？")
    assert script.requests("answer") == []


def test_file_names_reach_the_final_prompt_and_sources_are_listed_when_not_cited(
    script: HelpDeskScript,
) -> None:
    search = FakeSearch(by_query={"再設定": [RESET_HIT]})
    script.plan(RESET)
    script.subtask(RESET, "パスワード 再設定", f"ログイン画面から再設定します{RESET_CITE}")
    script.final("ログイン画面から再設定できます。")  # the model cites nothing
    script.final("ログイン画面から再設定できます。")  # and still nothing when sent back

    result = make_agent(search).run_agent("パスワードの再設定方法は？")

    final, revision = script.requests("final")
    assert RESET_CITE in all_text(final)  # file name and page kept before the answer
    assert "「ログイン画面から再設定できます。」" in all_text(revision)  # asked to cite it
    # An answer with no citation at all keeps its text: it was written from the subtask
    # answers, whose verified sources are named.
    assert result.answer.endswith(f"参照した資料: {RESET_CITE}")
    assert result.removed_sentences == []
    (source,) = result.sources
    assert (source.file_name, source.page) == ("操作マニュアル.pdf", 12)


UNCITED = "なお、パスワードは 90 日ごとに変更が必要です。"


def test_an_uncited_sentence_is_sent_back_once_and_kept_when_cited(
    script: HelpDeskScript,
) -> None:
    search = FakeSearch(by_query={"再設定": [RESET_HIT]})
    script.plan(RESET)
    script.subtask(RESET, "パスワード 再設定", f"ログイン画面から再設定します{RESET_CITE}")
    script.final(f"ログイン画面から再設定できます{RESET_CITE}。\n\n{UNCITED}")
    script.final(
        f"ログイン画面から再設定できます{RESET_CITE}。\n\nなお、再設定の URL は 30 分有効です{RESET_CITE}。"
    )

    result = make_agent(search).run_agent("パスワードの再設定方法は？")

    _, revision = script.requests("final")
    assert f"「{UNCITED}」" in all_text(revision)
    assert result.revised
    assert result.removed_sentences == []
    assert "30 分有効です" in result.answer
    assert result.status == "answered"


def test_an_uncited_sentence_left_after_the_revision_is_removed_and_said(
    script: HelpDeskScript,
) -> None:
    search = FakeSearch(by_query={"再設定": [RESET_HIT]})
    script.plan(RESET)
    script.subtask(RESET, "パスワード 再設定", f"ログイン画面から再設定します{RESET_CITE}")
    draft = f"ログイン画面から再設定できます{RESET_CITE}。\n\n{UNCITED}"
    script.final(draft)
    script.final(draft)  # the model does not fix it

    result = make_agent(search).run_agent("パスワードの再設定方法は？")

    assert len(script.requests("final")) == 2  # sent back once, not more
    assert result.removed_sentences == [UNCITED]
    assert "90 日" not in result.answer
    assert f"ログイン画面から再設定できます{RESET_CITE}。" in result.answer
    assert "出典の示されていない記述が 1 文あったため" in result.answer
    assert [s.citation for s in result.sources] == [RESET_CITE]


def test_a_plan_without_subtasks_is_a_japanese_error(script: HelpDeskScript) -> None:
    script.plan()
    with pytest.raises(LLMOutputError) as caught:
        make_agent(FakeSearch()).run_agent("こんにちは")
    assert "サブタスクがありません" in caught.value.message
    assert "質問を具体的に" in caught.value.hint
    assert len(script.server.chat_requests()) == 1


def test_llm_api_errors_inside_a_subtask_are_raised_and_logged(
    script: HelpDeskScript, tmp_path: Path
) -> None:
    script.plan(RESET)
    script.server.add_error(500, "upstream exploded")
    with pytest.raises(LLMError) as caught:
        make_agent(FakeSearch()).run_agent("パスワードの再設定方法は？")
    assert "HTTP 500" in caught.value.message
    (log,) = (tmp_path / "runs" / "helpdesk").iterdir()
    errors = [e for e in read_events(log) if isinstance(e, ErrorEvent)]
    assert [e.error["code"] for e in errors if e.error is not None] == ["API_ERROR"]


def test_tokens_per_question_are_recorded(script: HelpDeskScript) -> None:
    search = FakeSearch(by_query={"再設定": [RESET_HIT], "ロック": [LOCK_HIT]})
    script.plan(RESET, LOCK)
    script.subtask(RESET, "パスワード 再設定", f"再設定します{RESET_CITE}")
    script.subtask(LOCK, "ロック 解除", f"自動解除されます{LOCK_CITE}", tool="search_qa")
    script.final(f"再設定できます{RESET_CITE}{LOCK_CITE}")

    result = make_agent(search).run_agent(QUESTION)

    calls = 1 + 2 * 3 + 1  # plan, (select, answer, reflect) per subtask, final
    assert result.usage.calls == calls == len(script.server.chat_requests())
    assert result.usage.input_tokens == calls * USAGE[0]
    assert result.usage.total_tokens == calls * sum(USAGE)
    assert result.usage.failed_calls == 0
