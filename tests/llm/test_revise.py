"""The shared send-back-once mechanism and the Japanese check behind it."""

from __future__ import annotations

from keiri_agent.llm.revise import is_japanese_text, japanese_ratio, revise_once


def test_japanese_is_told_from_english_by_its_letters() -> None:
    assert is_japanese_text("ログイン画面から再設定できます【出典: manual.pdf p.4】。")
    assert not is_japanese_text("You can reset it from the login screen 【出典: 手引き.pdf p.4】.")
    assert is_japanese_text("12,345 / 6.7%")  # nothing worded: nothing to rewrite
    assert japanese_ratio("") is None


def test_a_reply_without_problems_is_not_sent_back() -> None:
    calls: list[str] = []
    reply, remaining, revised = revise_once(
        "良い", lambda text: [], lambda text, problems: calls.append(text) or text
    )
    assert (reply, remaining, revised, calls) == ("良い", [], False, [])


def test_a_reply_is_sent_back_once_and_what_is_still_wrong_is_returned() -> None:
    sent: list[tuple[str, list[str]]] = []

    def revise(text: str, problems: object) -> str:
        sent.append((text, list(problems)))  # type: ignore[call-overload]
        return text + "!"

    reply, remaining, revised = revise_once("bad", lambda text: ["英語です"], revise)
    assert sent == [("bad", ["英語です"])]
    assert (reply, remaining, revised) == ("bad!", ["英語です"], True)
