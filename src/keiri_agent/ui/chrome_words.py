"""Streamlit's English that no style sheet reaches, said in Japanese by a script in the page.

:mod:`keiri_agent.ui.chrome` puts the texts Streamlit draws in its elements in Japanese with a
style sheet. Three kinds of text are out of a style sheet's reach (streamlit 1.67):

- the tooltips of a table's toolbar ("Download as CSV", "Search", "Fullscreen",
  "Show/hide columns") and its menus ("Select all", "Sort ascending"): drawn in a floating layer
  that shares its elements and classes with the app's own tooltips and menus, with nothing that
  tells them apart;
- what a screen reader says and the browser shows on pointing: ``aria-label``, ``title`` and
  ``placeholder`` attributes ("Collapse sidebar", "Link to heading", "Help for Plan",
  "Decrement", "Choose an option", "cancel icon") and the "Skip to main content" link;
- the dialog Streamlit opens when the app's server stops answering ("Connection error", "Streamlit
  server is not responding. Are you connected to the internet?"): the page is then cut off from
  the server, and only what is already in the page can say it.

One table (:data:`SAID`: Streamlit's exact English → Japanese, with :data:`PATTERNS` for the
texts that carry a name) is said by one script (:func:`script`) that the app puts in the page
once (``st.html`` with JavaScript; the element holding it takes no space). It rewrites those
attributes anywhere and the text outside the app's own elements (its own elements hold the
app's Japanese and the user's data, which it never touches), now and whenever Streamlit draws
them again (a ``MutationObserver``). Streamlit offers no setting for any of these texts
(streamlit/streamlit#13500 asks for one).
"""

from __future__ import annotations

import json
from typing import Final

__all__ = ["PATTERNS", "SAID", "SCRIPT_ID", "script"]

SCRIPT_ID: Final = "keiri-chrome-words"
RESTART: Final = (
    "アプリのサーバーが応答しません。keiri-agent ui を起動した端末でアプリが動いているかを"
    "確かめ、止まっていれば起動し直してから、このページを再読み込みしてください。"
)
# Streamlit's English, word for word (its frontend, streamlit 1.67) -> what it says instead.
SAID: Final[dict[str, str]] = {
    # a table's toolbar (tooltip and aria-label) and a code block's copy button
    "Download as CSV": "CSV でダウンロード",
    "Search": "表の中を検索",
    "Fullscreen": "全画面で表示",
    "Close fullscreen": "全画面表示を閉じる",
    "Show/hide columns": "列の表示・非表示",
    "Copy to clipboard": "クリップボードにコピー",
    "Clear selection": "選択を解除",
    # the list of "Show/hide columns" and a column's menu (a header's ⋮)
    "Select all": "すべて選ぶ",
    "(index)": "（行の見出し）",
    "Sort ascending": "小さい順に並べる",
    "Sort descending": "大きい順に並べる",
    "Format": "表示形式",
    "Autosize": "幅を合わせる",
    "Pin column": "列を固定",
    "Unpin column": "列の固定をやめる",
    "Hide column": "列を隠す",
    "Automatic": "自動",
    "Localized": "地域の書き方",
    "Plain": "そのまま",
    "Compact": "短く（1.2K など）",
    "Dollar": "ドル",
    "Euro": "ユーロ",
    "Yen": "円",
    "Percent": "パーセント",
    "Scientific": "指数表記",
    "Accounting": "会計",
    "Duration": "期間",
    "Distance": "今からの時間",
    "Calendar": "カレンダー",
    # the page's frame
    "Skip to main content": "本文へ移動",
    "Sidebar": "サイドバー",
    "Collapse sidebar": "サイドバーを閉じる",
    "Expand sidebar": "サイドバーを開く",
    "App pages": "ページの一覧",
    "Main menu": "メニュー",
    "Link to heading": "この見出しへのリンク",
    "Scroll tabs left": "タブを左へ",
    "Scroll tabs right": "タブを右へ",
    # widgets
    "Help": "説明",
    "Open": "開く",
    "Close": "閉じる",
    "Clear value": "値を消す",
    "Selected values": "選んだ値",
    "Choose an option": "選んでください",
    "Choose options": "選んでください（複数可）",
    "Choose date": "日付を選ぶ",
    "Previous month": "前の月",
    "Next month": "次の月",
    "Increment": "1 増やす",
    "Decrement": "1 減らす",
    "file upload": "ファイルを選ぶ",
    # the dialog shown when the server stops answering
    "Connection error": "サーバーにつながりません",
    "Streamlit server is not responding. Are you connected to the internet?": RESTART,
    "Is Streamlit still running? If you accidentally stopped Streamlit, just restart it in"
    " your terminal:": RESTART,
    "streamlit run yourscript.py": "keiri-agent ui",
}
# Texts with a name in them (JavaScript regular expressions; $1 is the name). A text of the form
# "<one of SAID>: <name>" (a table's toolbar button names its table) is said as "<said>（<name>）".
PATTERNS: Final[tuple[tuple[str, str], ...]] = (
    (r"^Help for (.+)$", "$1 の説明"),
    (r"^[a-z_]+ icon$", "アイコン"),  # a Material icon's name read out: "check_circle icon"
)

_SCRIPT: Final = """(() => {
  if (window.keiriChromeWords) return;
  window.keiriChromeWords = true;
  const SAID = %(said)s;
  const PATTERNS = %(patterns)s.map(([pattern, to]) => [new RegExp(pattern), to]);
  const ATTRIBUTES = ["aria-label", "title", "placeholder"];
  const OWN = '[data-testid="stElementContainer"], script, style';
  const said = (text) => {
    const key = text.trim();
    if (Object.hasOwn(SAID, key)) return SAID[key];
    for (const [pattern, to] of PATTERNS) if (pattern.test(key)) return key.replace(pattern, to);
    const cut = key.indexOf(": ");
    const head = key.slice(0, cut);
    return cut > 0 && Object.hasOwn(SAID, head) ? `${SAID[head]}（${key.slice(cut + 2)}）` : null;
  };
  const element = (el) => {
    for (const name of ATTRIBUTES) {
      const value = el.getAttribute(name);
      const now = value && said(value);
      if (now && now !== value) el.setAttribute(name, now);
    }
  };
  const text = (node) => {
    const parent = node.parentElement;
    if (!parent || parent.closest(OWN)) return;
    const now = said(node.nodeValue);
    if (now && now !== node.nodeValue) node.nodeValue = now;
  };
  const tree = (node) => {
    if (node.nodeType === Node.TEXT_NODE) return text(node);
    if (node.nodeType !== Node.ELEMENT_NODE) return;
    element(node);
    node.querySelectorAll("[aria-label], [title], [placeholder]").forEach(element);
    const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
    for (let next = walker.nextNode(); next; next = walker.nextNode()) text(next);
  };
  new MutationObserver((records) => {
    for (const record of records) {
      if (record.type === "childList") record.addedNodes.forEach(tree);
      else if (record.type === "attributes") element(record.target);
      else text(record.target);
    }
  }).observe(document.documentElement, {
    subtree: true, childList: true, characterData: true, attributes: true,
    attributeFilter: ATTRIBUTES,
  });
  tree(document.body);
})();"""


def script() -> str:
    """The ``<script>`` element saying :data:`SAID` and :data:`PATTERNS` in the page."""
    body = _SCRIPT % {
        "said": json.dumps(SAID, ensure_ascii=False),
        "patterns": json.dumps(PATTERNS, ensure_ascii=False),
    }
    return f'<script id="{SCRIPT_ID}">{body}</script>'
