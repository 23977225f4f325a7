"""ホーム: what the app does and where to begin, in the words of the person using it.

The first thing a newcomer sees: the product in two sentences, the three steps of a first
session (a bundled example on its sample data needs no API key), and a link to each page with
what it is for.
"""

from __future__ import annotations

from typing import Final

import streamlit as st

from keiri_agent.ui.views import LINKS

__all__ = ["render"]

FIRST_STEPS: Final = (
    "「実行」ページで「サンプル: 月次売上レポート」などを選び、「サンプルデータを使う」を押してから"
    "「実行」を押します（API キーは要りません）。集計表、グラフ入りの報告書、Excel ブックができます。",
    "同じページで入力欄に自分のファイル（売上明細の CSV や Excel など）をアップロードして実行します。",
    "自分の業務の Plan は「設計」ページで、やりたいことを日本語で書いて作ります"
    "（AI の設定が必要です。サイドバーの「設定」を見てください）。",
)
PARTS: Final = (
    (
        "run",
        "実行",
        "Plan（業務の手順）を選び、入力に答えて実行します。結果の表・報告書・ファイル。",
    ),
    ("design", "設計", "やりたいことを日本語で書くと、Plan を作って確かめ、保存します。"),
    ("analysis", "データ分析", "CSV や Excel について質問すると、計算して日本語の報告書にします。"),
    ("helpdesk", "ヘルプデスク", "社内マニュアルと Q&A から、出典付きで答えます。"),
    ("convert", "変換", "ファイルの形式を変えたり、グラフにしたりします。"),
)


def render() -> None:
    """The ホーム page."""
    st.title("keiri-agent")
    st.markdown(
        "経理などバックオフィスの仕事を、手順（Plan）として実行し、結果を表・報告書・Excel で"
        "受け取るための道具です。どの処理も途中経過が見え、うまくいかないときは原因と直し方を"
        "日本語で示します。"
    )
    st.subheader("はじめに")
    st.markdown("\n".join(f"{number}. {step}" for number, step in enumerate(FIRST_STEPS, 1)))
    st.subheader("ページ")
    for url_path, title, what in PARTS:
        page = LINKS.get(url_path)
        if page is not None:
            st.page_link(page, label=title)
        st.caption(what)
