"""The help desk's lexical method: spelling variants meet, scores are calibrated, RRF ranks."""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.errors import FileProcessingError
from keiri_agent.retrieval.hybrid import reciprocal_rank_fusion
from keiri_agent.retrieval.lexical import LexicalIndex, char_ngrams

PASSAGES = {
    "transfer-cancel": "振込依頼を取り消すには、振込一覧で対象を選び「取消」を押します。",
    "expense-deadline": "経費精算の締め日は毎月5日です。締め日を過ぎた分は翌月に処理します。",
    "password": "パスワードを忘れた場合は、ログイン画面から再設定してください。",
    "receipt": "領収書を紛失した場合は、紛失届を提出してください。",
    "error": "エラー E-2101 は利用日が締め済みの月になっていることを示します。",
}


@pytest.fixture(scope="module")
def index() -> LexicalIndex:
    return LexicalIndex.build(list(PASSAGES.values()), ids=list(PASSAGES))


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("ふりこみをとりけしたい", "transfer-cancel"),  # kana for 振込 and 取消
        ("振り込んだのを取り消したい", "transfer-cancel"),  # okurigana
        ("りょうしゅうしょをなくした", "receipt"),  # kana for 領収書
        ("ﾊﾟｽﾜｰﾄﾞを忘れました", "password"),  # half-width katakana
        ("Ｅ－２１０１が出た", "error"),  # full-width code
        ("経費の〆日はいつ", "expense-deadline"),  # 〆日 for 締め日
    ],
)
def test_spelling_variants_find_their_passage(
    index: LexicalIndex, question: str, expected: str
) -> None:
    assert index.search(question, 1)[0].id == expected


def test_scores_and_relevance_are_calibrated_between_zero_and_one(index: LexicalIndex) -> None:
    on_topic = index.search("経費精算の締め日", 1)[0]
    off_topic = index.search("社員食堂のメニュー", 1)
    assert 0 < on_topic.score < 1
    assert 0 < on_topic.relevance <= 1
    assert not off_topic or off_topic[0].relevance < on_topic.relevance / 3


def test_a_saved_index_answers_the_same_and_a_stale_one_is_refused(
    index: LexicalIndex, tmp_path: Path
) -> None:
    index.save(tmp_path / "lexical")
    loaded = LexicalIndex.load(tmp_path / "lexical")
    assert loaded.search("領収書をなくした", 3) == index.search("領収書をなくした", 3)
    (tmp_path / "lexical" / "lexical.json").write_text('{"signature": "old"}', encoding="utf-8")
    with pytest.raises(FileProcessingError, match="作り直して"):
        LexicalIndex.load(tmp_path / "lexical")


def test_char_ngrams_normalize_width_and_case() -> None:
    assert char_ngrams("ＸＹＺ－３００") == ["xy", "yz", "30", "00"]
    assert char_ngrams("経費、a") == ["経費", "a"]


def test_reciprocal_rank_fusion_uses_ranks_not_scores() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "d"]])
    assert list(fused) == ["b", "a", "d", "c"]  # b is in both lists
    assert fused["a"] == pytest.approx(1 / 61)


def test_relevance_is_coverage_or_the_evidence_of_several_specific_words() -> None:
    """A long question whose many other words are nowhere in the corpus still reaches a passage
    that holds several of its specific words (evidence), though they are a small share of the
    question (coverage); a short question needs most of its words; one shared common word
    (社員, メニュー) reaches neither."""
    passages = [
        "請求書の発行には「請求書発行」の権限が必要です。権限は部門の管理者に申請してください。",
        *(f"社員向けの手順 {n}: メニューから設定を開き、内容を確認します。" for n in range(8)),
        "経費精算の締め日は毎月5日です。",
    ]
    index = LexicalIndex.build(passages)
    question = (
        "請求書を発行する権限がほしいのですが、どこから頼めばいいですか、私物の端末でも大丈夫？"
    )
    terms = index.query_fields(question)["words"]
    share = float(index.fields["words"].coverage(terms)[0])
    scores = index.scores(question)
    assert int(scores.score.argmax()) == 0
    assert share < 0.35 <= float(scores.relevance[0])
    (hit,) = index.search("経費精算の締め日", 1)
    assert hit.relevance >= 0.35
    for unrelated in ("社員食堂のメニューは？", "今日の天気"):
        assert float(index.scores(unrelated).relevance.max()) < 0.35, unrelated
