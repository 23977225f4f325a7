"""``ui.screen_words`` and the error details: a value drawn on the page is said in words (no
``None`` / ``nan`` / ``True`` / ``2024-04-01 00:00:00`` / ``['a', 'b']``), while a table's numbers
stay numbers; every error code has its words."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd
import pytest
from pandas.io.formats.style import Styler

from keiri_agent.errors import CODE_WORDS, BlockError, ErrorCode
from keiri_agent.ui.error_view import DETAIL_WORDS, detail_rows
from keiri_agent.ui.screen_words import shown_table, shown_value

TOKYO = ZoneInfo("Asia/Tokyo")


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (None, ""),
        (float("nan"), ""),
        (pd.NA, ""),
        (pd.NaT, ""),
        (np.float64("nan"), ""),
        (True, "はい"),
        (np.bool_(False), "いいえ"),
        (120000.0, "120000"),
        (0.1 + 0.2, "0.3"),
        (np.int64(7), "7"),
        (datetime(2024, 4, 1), "2024-04-01"),
        (pd.Timestamp("2024-04-01 00:00:00"), "2024-04-01"),
        (datetime(2024, 4, 1, 9, 30), "2024-04-01 09:30"),
        (datetime(2026, 12, 6, 3, 15, tzinfo=UTC), "2026-12-06 12:15 JST"),
        (date(2024, 4, 1), "2024-04-01"),
        (["青葉商事", "髙橋工業"], "青葉商事、髙橋工業"),
        ({"取引先": "青葉商事", "金額": 1200}, "取引先: 青葉商事、金額: 1200"),
        (Path("/tmp/keiri-abc/uploads/x/売上.csv"), "売上.csv"),
        ("そのまま", "そのまま"),
    ],
)
def test_a_value_is_said_in_words(value: object, said: str) -> None:
    assert shown_value(value, TOKYO) == said


def test_a_table_is_drawn_in_words_and_keeps_its_numbers() -> None:
    frame = pd.DataFrame(
        {
            "売上日": pd.to_datetime(["2024-04-01", None]),
            "得意先": ["青葉商事", None],
            "金額": [120000.0, float("nan")],
            "確認済み": [True, False],
        }
    )
    styled = shown_table(frame)
    assert isinstance(styled, Styler)
    cells = re.findall(r"<td [^>]*>([^<]*)</td>", styled.hide(axis="index").to_html())
    assert cells == ["2024-04-01", "青葉商事", "120000", "はい", "", "", "", "いいえ"]
    assert styled.data["金額"].dtype == float  # sorted and aligned as numbers


def test_a_table_whose_columns_repeat_is_drawn_in_words_too() -> None:
    frame = pd.DataFrame([[None, True]], columns=["列", "列"])
    drawn = shown_table(frame)
    assert isinstance(drawn, pd.DataFrame)
    assert drawn.values.tolist() == [["", "はい"]]


def test_every_error_code_has_its_words() -> None:
    assert set(CODE_WORDS) == set(ErrorCode)


def test_the_error_details_are_said_in_words_and_the_rest_is_left_to_the_record() -> None:
    error = BlockError(
        "時刻「25時」を読めません。",
        code=ErrorCode.INPUT_VALIDATION_FAILED,
        hint="HH:MM で入力してください。",
        details={
            "problems": [{"field": "at", "problem": "時刻「25時」を読めません。",
                          "message": "Value error, 時刻「25時」を読めません。"}],
            "node_id": "ask_close",
            "cause": "ValueError: invalid literal",
            "line": 3,
            "path": "/srv/keiri/workspace/20261207/uploads/sales_file/0b7c/売上.csv",
        },
        input_snapshot={"at": "25時"},
        recoverable=False,
    )  # fmt: skip
    rows = {row["項目"]: row["内容"] for row in detail_rows(error)}
    assert rows == {
        "エラーの種類": "入力の誤り（INPUT_VALIDATION_FAILED）",
        "もう一度実行すると": "同じ結果になります（ヒントのとおり直してから実行してください）",
        "問題": "時刻「25時」を読めません。",
        "行": "3",
        "ファイル": "売上.csv",
    }
    assert not {"node_id", "cause"} & set(DETAIL_WORDS)  # in the record to download


def _two_errors_and_a_form() -> None:
    import streamlit as st

    from keiri_agent.errors import BlockError
    from keiri_agent.ui.error_view import render_error

    error = BlockError(
        "ファイル「売上.csv」は空です。", hint="中身のあるファイルを選んでください。"
    )
    render_error(error)
    render_error(error)  # an earlier turn of a chat failed the same way
    with st.form("answers"):
        render_error(
            BlockError("「/etc」は使えない場所です。", hint="作業フォルダの中を指定します。")
        )
        st.form_submit_button("送る")


def test_the_record_is_offered_once_and_an_error_in_a_form_is_shown_too() -> None:
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_function(_two_errors_and_a_form, default_timeout=120).run()
    assert not app.exception, app.exception
    assert len(app.error) == 3
    assert len(app.get("download_button")) == 1
    captions = [c.value for c in app.caption]
    assert (
        "サポート用の記録は、上に同じエラーを表示したところからダウンロードできます。" in captions
    )
    assert "この入力欄の中では、サポート用の記録はダウンロードできません。" in captions


LEDGERS = 200


def _drawn(table: Styler | pd.DataFrame) -> list[str]:
    """The cells of a table as the page draws them (a styled table's display values)."""
    if isinstance(table, pd.DataFrame):
        return [str(v) for v in table.to_numpy().ravel()]
    return re.findall(r"<td [^>]*>([^<]*)</td>", table.hide(axis="index").to_html())


def _raw(frame: pd.DataFrame) -> list[str]:
    """The cells of a frame as Streamlit's grid draws it unstyled (the app before shown_table)."""
    from tests.ui.screen import _cell

    return [_cell(v) for v in frame.astype(object).to_numpy().ravel()]


def test_generated_ledgers_are_previewed_in_words(workspace_root: Path) -> None:
    """200 generated ledgers read as the データ分析 page reads an upload, previewed as the page
    previews them: no cell says None / nan / <NA> / 2024-04-01 00:00:00."""
    from keiri_agent.agents.analysis import AnalysisSession
    from keiri_agent.ui.views.analysis import PREVIEW_ROWS
    from tests.ui.ledgers import ledgers
    from tests.ui.screen import Shown, leaks

    session = AnalysisSession()
    before, after = 0, []
    for number, item in enumerate(ledgers(LEDGERS, rich=True)[:LEDGERS]):
        session.add_file(item.data, name=f"{number}_{item.name}")
        frame = list(session.frames.values())[-1].head(PREVIEW_ROWS)  # the one just read
        before += bool(leaks([Shown("table", c) for c in _raw(frame)]))
        if found := leaks([Shown("table", c) for c in _drawn(shown_table(frame))]):
            after.append(f"{item.shape}: {found[:3]}")
    assert before > 0  # the generator makes what the unstyled grid shows as None / a time
    assert after == [], f"{len(after)} of {LEDGERS} ledgers (unstyled: {before})"
