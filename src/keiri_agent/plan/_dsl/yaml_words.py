"""Why a YAML text could not be read, in Japanese.

PyYAML words its problems in English (``mapping values are not allowed here``, ``did not find
expected key``); a plan's author, or a person passing ``--vars`` or an answers file, reads them.
:func:`yaml_problem` says the same in Japanese with what usually causes it. A problem without a
Japanese wording keeps PyYAML's own sentence after a Japanese lead
(``YAML の書き方に誤りがあります（原文: …）``), never silently dropped. Problems this package
raises itself (:class:`~keiri_agent.plan._dsl.yaml_read.YamlLimitError`) are Japanese already
and pass unchanged.
"""

from __future__ import annotations

import re
from typing import Final

import yaml

__all__ = ["yaml_problem"]

# PyYAML's Python parser names the character or alias; libyaml's (the one load_yaml uses) not.
_CHARACTER: Final = re.compile(r"found character (?:'(.+)' )?that cannot start any token")
_ALIAS: Final = re.compile(r"found undefined alias(?: '(.+)')?")
_ESCAPE: Final = re.compile(r"found unknown escape character(?: '(.+)')?")
_TAG: Final = re.compile(r"could not determine a constructor for the tag '(.+)'")
_JAPANESE: Final = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
# PyYAML's fixed sentences (the start of ``problem``) and what they mean to a person.
_FIXED: Final = (
    (
        "mapping values are not allowed",
        "ここに「キー: 値」は書けません（値の中の「: 」は引用符で囲みます。"
        "インデントのずれでも起きます）",
    ),
    (
        "did not find expected key",
        "キーのあるはずの位置に別のものがあります（インデントのずれか、引用符の閉じ忘れ）",
    ),
    (
        "did not find expected '-' indicator",
        "リストの要素（「- 」で始まる行）のあるはずの位置に別のものがあります（インデントのずれ）",
    ),
    (
        "could not find expected ':'",
        "「キー: 値」の「:」が見つかりません（コロンの後の空白か、引用符の閉じ忘れ）",
    ),
    (
        "expected <block end>",
        "インデントがそろっていません（同じ階層の行は同じ数の空白で始めます）",
    ),
    ("expected ',' or ']'", "リスト [ … ] が閉じていないか、要素の間に「,」がありません"),
    ("expected ',' or '}'", "マッピング { … } が閉じていないか、要素の間に「,」がありません"),
    ("found unexpected end of stream", "引用符か括弧が閉じないままファイルが終わっています"),
    ("but found another document", "1 つのファイルに「---」で区切った文書が 2 つ以上あります"),
    ("<document start>", "文書の終わりのあとに余分な文字があります（括弧の数を確認）"),
    (
        "expected alphabetic or numeric character",
        "アンカー（&名前）かエイリアス（*名前）の名前がありません",
    ),
)


def yaml_problem(exc: yaml.YAMLError) -> str:
    """What is wrong with the YAML text, in Japanese (without the line and column)."""
    problem = str(getattr(exc, "problem", None) or exc).strip()
    if _JAPANESE.search(problem):  # our own limits (YamlLimitError) speak Japanese already
        return problem
    if found := _CHARACTER.search(problem):
        char = found.group(1)
        if char is None:
            return (
                "ここに書けない文字があります（タブ文字か、「@」「`」などで始まる値。"
                "インデントには空白を使い、値は引用符で囲みます）"
            )
        if char == "\\t":
            return "タブ文字は使えません（インデントには空白を使います）"
        return f"「{char}」で始まる値はそのまま書けません（値全体を引用符で囲みます）"
    if found := _ALIAS.search(problem):
        name = found.group(1) or "名前"
        return f"エイリアス *{name} の元になるアンカー &{name} がありません"
    if found := _ESCAPE.search(problem):
        escape = f"「\\{found.group(1)}」" if found.group(1) else "「\\ と文字」の組み合わせ"
        return (
            f"二重引用符の中で使えない{escape}があります"
            "（\\ をそのまま書くには一重引用符で囲みます）"
        )
    if found := _TAG.search(problem):
        return f"タグ {found.group(1)} は使えません（! で始まるタグは書けません）"
    for start, said in _FIXED:
        if start in problem:
            return said
    first = problem.splitlines()[0] if problem else type(exc).__name__
    return f"YAML の書き方に誤りがあります（原文: {first[:200]}）"
