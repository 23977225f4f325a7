"""Why a YAML text could not be read, in Japanese: the one wording of PyYAML's problems.

PyYAML words its problems in English (``mapping values are not allowed here``, ``did not find
expected key``); a plan's author, or a person passing ``--vars``, a settings file or an answers
file, reads them. :func:`yaml_problem` says the same in Japanese with what usually causes it (the
plan loader gives the line and column beside it); :func:`yaml_reason` puts the line and column in
front, for ``errors.reason_of``. A problem without a Japanese wording is said as "the YAML is
wrong near line N, column M"; PyYAML's English stays only in ``details['cause']``
(``errors.cause_of``). Problems this package raises itself
(:class:`~keiri_agent.plan._dsl.yaml_read.YamlLimitError`) are Japanese already and pass
unchanged. The bottom layer (below ``errors``): it imports nothing of this package, and PyYAML
only for type checking.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import yaml

__all__ = ["yaml_problem", "yaml_reason"]

WRONG: Final = "YAML の書き方に誤りがあります"

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
    """What is wrong with the YAML text, in Japanese; the line and column only when there is no
    more to say than that it is wrong there."""
    return _known(exc) or _wrong(exc)


def yaml_reason(exc: yaml.YAMLError) -> str:
    """The line and column and what is wrong there, in Japanese (for ``errors.reason_of``)."""
    known = _known(exc)
    return f"{_wrong(exc)}: {known}" if known is not None else _wrong(exc)


def _wrong(exc: yaml.YAMLError) -> str:
    """``N 行 M 列目あたりの YAML の書き方に誤りがあります`` (without a place when PyYAML has none)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is None:
        return WRONG
    return f"{mark.line + 1} 行 {mark.column + 1} 列目あたりの {WRONG}"


def _known(exc: yaml.YAMLError) -> str | None:
    """PyYAML's problem said in Japanese, or None for a problem without a Japanese wording."""
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
    return None
