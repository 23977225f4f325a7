"""The ``when``/``while`` expression language: grammar, errors, strict semantics, limits."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pandas as pd
import pytest

from keiri_agent.errors import BlockError
from keiri_agent.plan import Reference, compile_when
from keiri_agent.plan._dsl.expr import (
    MAX_EXPRESSION_CHARS,
    MAX_NESTING,
    ExpressionEvalError,
    ExpressionSyntaxError,
    parse_expression,
    truthy,
)
from keiri_agent.plan._dsl.refs import ReferenceSyntaxError, resolve_path

VALUES: dict[str, Any] = {
    "a": {
        "n": 5,
        "f": 2.5,
        "zero": 0,
        "s": "Done",
        "pad": "  x ",
        "empty": "",
        "list": [1, "two", True],
        "dict": {"k": 1},
        "none": None,
        "yes": True,
        "no": False,
        "files": [{"name": "a.pdf"}, {"name": "b.xlsx"}],
        "frame": pd.DataFrame({"c": [1, 2]}),
        "dec": Decimal("5"),
    },
    "請求": {"件数": 3},
}


def resolve(reference: Reference) -> Any:
    return resolve_path(VALUES[reference.root], reference)


def evaluate(text: str) -> Any:
    return parse_expression(text).evaluate(resolve)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # literals
        ("3", 3),
        ("0.5", 0.5),
        ("1e3", 1000.0),
        ("'it\\'s'", "it's"),
        ('"a\\\\b"', "a\\b"),
        ('"$${not a ref}"', "${not a ref}"),
        ("true", True),
        ("False", False),
        ("null", None),
        ("None", None),
        ("-${a.n}", -5),
        ("--2", 2),
        # equality
        ("${a.n} == 5", True),
        ("${a.n} == 5.0", True),
        ("${a.dec} == 5", True),
        ("${a.n} != 5", False),
        ("${a.yes} == 1", False),
        ("${a.yes} != 1", True),
        ("${a.zero} == false", False),
        ("${a.none} == null", True),
        ("${a.none} != null", False),
        ("${a.s} == 'Done'", True),
        ("${a.n} == '5'", False),
        ("${a.list} == ${a.list}", True),
        ("${a.dict} == ${a.dict}", True),
        ("${a.list} == ${a.dict}", False),
        # ordering
        ("${a.n} > 3", True),
        ("${a.n} >= 5", True),
        ("${a.f} < 3", True),
        ("${a.f} <= 2.4", False),
        ("'abc' < 'abd'", True),
        ("${a.files.length} > 1", True),
        ("${請求.件数} >= 3", True),
        # logic
        ("not true", False),
        ("!false", True),
        ("true and false", False),
        ("true && true", True),
        ("false or true", True),
        ("false || false", False),
        ("${a.s} and ${a.list}", True),
        ("${a.empty} or ${a.zero}", False),
        ("not ${a.none}", True),
        ("(true or false) and not (false)", True),
        # functions
        ("len(${a.list})", 3),
        ("len(${a.s})", 4),
        ("len(${a.frame})", 2),
        ("lower(${a.s})", "done"),
        ("upper(${a.s})", "DONE"),
        ("trim(${a.pad})", "x"),
        ("contains(${a.s}, 'on')", True),
        ("contains(${a.list}, 'two')", True),
        ("contains(${a.list}, 1)", True),
        ("contains(${a.list}, 2)", False),
        ("contains(${a.dict}, 'k')", True),
        ("startswith(${a.files.0.name}, 'a.')", True),
        ("endswith(${a.files.1.name}, '.xlsx')", True),
        ("empty(${a.none})", True),
        ("empty(${a.empty})", True),
        ("empty(${a.s})", False),
        ("empty(${a.zero})", False),
        ("exists(${a.none})", False),
        ("exists(${a.zero})", True),
        ("len(trim(${a.pad})) == 1", True),
    ],
)
def test_evaluate(text: str, expected: Any) -> None:
    result = evaluate(text)
    assert result == expected
    assert type(result) is type(expected)


def test_contains_uses_strict_equality() -> None:
    assert evaluate("contains(${a.list}, true)") is True
    values = {"x": [1]}
    expression = parse_expression("contains(${x}, true)")
    assert expression.evaluate(lambda r: values[r.root]) is False


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # not applies to the whole comparison; and binds tighter than or.
        ("not 1 == 2 and false or true", True),
        ("not 1 == 1 and true", False),
        ("true or false and false", True),
        ("(true or false) and false", False),
        ("-1 < 0", True),
        ("not not true", True),
    ],
)
def test_precedence(text: str, expected: bool) -> None:
    assert evaluate(text) is expected


def test_precedence_of_not_over_comparison_and_logic() -> None:
    values = {"a": 1, "b": 2, "c": False, "d": True}
    expression = parse_expression("not ${a} == ${b} and ${c} or ${d}")
    # ((not (a == b)) and c) or d
    assert expression.evaluate(lambda r: values[r.root]) is True
    values["d"] = False
    assert expression.evaluate(lambda r: values[r.root]) is False


def test_short_circuit_does_not_resolve_the_right_side() -> None:
    seen: list[str] = []

    def tracking(reference: Reference) -> Any:
        seen.append(reference.root)
        if reference.root == "boom":
            raise AssertionError("resolved")
        return reference.root == "t"

    assert parse_expression("${f} and ${boom}").evaluate(tracking) is False
    assert parse_expression("${t} or ${boom}").evaluate(tracking) is True
    assert parse_expression("${f} && ${boom} == 1").evaluate(tracking) is False
    assert seen == ["f", "t", "f"]


def test_references_are_listed_in_order() -> None:
    expression = parse_expression("exists(${a.x}) and ${b.items.length} > ${vars.min}")
    assert [r.text for r in expression.references] == [
        "${a.x}",
        "${b.items.length}",
        "${vars.min}",
    ]
    assert expression.references[1].length
    assert expression.text == "exists(${a.x}) and ${b.items.length} > ${vars.min}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("${a.none} > 1", "null と数値は比較できません"),
        ("${a.s} < 3", "文字列と数値は比較できません"),
        ("3 < ${a.none}", "数値と null は比較できません"),
        ("${a.yes} > 0", "真偽値と数値は比較できません"),
        ("${a.list} >= ${a.list}", "リストとリストは比較できません"),
        ("-${a.s}", "文字列 に - は付けられません"),
        ("len(${a.none})", "len(...) にnullは渡せません"),
        ("lower(${a.n})", "lower(...) に数値は渡せません"),
        ("contains(${a.s}, 1)", "contains(...) に数値は渡せません"),
        ("contains(${a.n}, 1)", "contains(...) に数値は渡せません"),
        ("${a.frame}", ""),  # the value itself is fine; truthiness is asked below
        ("${a.frame} and true", "DataFrame は真偽を判定できません"),
        ("not ${a.frame}", "DataFrame は真偽を判定できません"),
        ("${a.frame} == 1", "DataFrame は == や != で比較できません"),
        ("${a.frame} > 1", "DataFrame と数値は比較できません"),
    ],
)
def test_eval_errors(text: str, message: str) -> None:
    if not message:
        assert isinstance(evaluate(text), pd.DataFrame)
        return
    with pytest.raises(ExpressionEvalError) as caught:
        evaluate(text)
    error = caught.value
    assert error.code == "INVALID_EXPRESSION"
    assert message in error.message
    assert text in error.message
    assert error.details["expression"] == text
    assert error.hint


def test_truthy_refuses_a_dataframe_without_asking_it() -> None:
    cases: list[tuple[Any, bool]] = [
        (True, True),
        (None, False),
        (2.5, True),
        (0, False),
        ("x", True),
        ("", False),
    ]
    cases += [([], False), ({"k": 1}, True), (Decimal("0"), False)]
    assert [truthy(value) for value, _ in cases] == [expected for _, expected in cases]
    with pytest.raises(ExpressionEvalError):
        truthy(pd.DataFrame({"c": [1]}))

    class Boolish:
        def __bool__(self) -> bool:
            raise AssertionError("__bool__ was called")

    with pytest.raises(ExpressionEvalError):
        truthy(Boolish())


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("", 0),
        ("   ", 0),
        ("${a.n} >", 8),
        ("${a.n} = 1", 7),
        ("${a.n} > 1 1", 11),
        ("foo == 1", 0),
        ("(1 == 1", 7),
        ("'unclosed", 0),
        ("len(1, 2)", 0),
        ("exists()", 0),
        ("nope(1)", 0),
        ("len 1", 4),
        ("1 < 2 < 3", 6),
        ("'${a}' == 1", 1),
        ("'\\n'", 1),
        ("true & false", 5),
        ("${a..b} == 1", 4),
        ("1 == ${a", 5),
        ("金額 > 1", 0),
        ("and", 0),
        ("1 ==\n  ) ", 7),
    ],
)
def test_syntax_errors_point_at_the_character(text: str, position: int) -> None:
    with pytest.raises(ExpressionSyntaxError) as caught:
        parse_expression(text)
    error = caught.value
    assert error.code == "INVALID_EXPRESSION"
    assert error.details["expression"] == text
    assert error.details["position"] == position
    assert error.details["column"] == position + 1
    assert f"式の {position + 1} 文字目が不正です" in error.message
    line_start = text.rfind("\n", 0, position) + 1
    line_end = text.find("\n", position)
    line = text[line_start : len(text) if line_end < 0 else line_end]
    pad = sum(2 if ord(ch) > 0x2E7F else 1 for ch in line[: position - line_start])
    assert f"\n  {line}\n  {' ' * pad}^" in error.message
    assert error.hint


def test_length_and_nesting_limits() -> None:
    ok = "(" * MAX_NESTING + "1" + ")" * MAX_NESTING
    assert evaluate(ok) == 1
    for deep in (
        "(" * (MAX_NESTING + 1) + "1" + ")" * (MAX_NESTING + 1),
        "not " * (MAX_NESTING + 1) + "true",
        "!" * 500 + "true",
        "-" * 1500 + "1",
        "len(" * 60 + "'x'" + ")" * 60,
    ):
        with pytest.raises(ExpressionSyntaxError, match="入れ子が深すぎます"):
            parse_expression(deep)
    with pytest.raises(ExpressionSyntaxError, match="長すぎます"):
        parse_expression("1" * (MAX_EXPRESSION_CHARS + 1))
    # A long flat chain is fine: and/or are n-ary, so evaluation does not recurse per operand.
    chain = " and ".join(["true"] * 200)
    assert evaluate(chain) is True


OPS = [("eq", 5, True), ("ne", 5, False), ("gt", 4, True), ("gte", 5, True), ("lt", 6, True)]
OPS += [("lte", 4, False)]


@pytest.mark.parametrize(("op", "right", "expected"), OPS)
def test_compare_form(op: str, right: int, expected: bool) -> None:
    expression = compile_when({"left": "${a.n}", "op": op, "right": right})
    assert expression.evaluate(resolve) is expected
    symbol = {"eq": "==", "ne": "!=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}[op]
    assert expression.text == f"${{a.n}} {symbol} {right}"
    assert [r.text for r in expression.references] == ["${a.n}"]
    # The rendering reads back as the same condition.
    assert parse_expression(expression.text).evaluate(resolve) is expected


@pytest.mark.parametrize(
    ("when", "expected", "text"),
    [
        ({"left": "${a.s}", "op": "eq", "right": "Done"}, True, '${a.s} == "Done"'),
        ({"left": " ${a.none} ", "op": "eq", "right": None}, True, "${a.none} == null"),
        ({"left": "${a.yes}", "op": "ne", "right": False}, True, "${a.yes} != false"),
        ({"left": 'say "$${x}"', "op": "eq", "right": 'say "$${x}"'}, True, None),
        ({"expr": "${a.n} > 3"}, True, "${a.n} > 3"),
        ("${a.n} > 3", True, "${a.n} > 3"),
    ],
)
def test_compile_when_forms(when: Any, expected: bool, text: str | None) -> None:
    expression = compile_when(when)
    assert expression.evaluate(resolve) is expected
    if text is not None:
        assert expression.text == text
    assert parse_expression(expression.text).evaluate(resolve) is expected


@pytest.mark.parametrize(
    "when",
    [
        {"left": "${a.n}", "op": "greater", "right": 1},
        {"left": "${a.n}", "op": "gt"},
        {"left": "${a.n}", "op": "gt", "right": 1, "extra": 1},
        {"expr": 1},
        {},
        {"left": "件数 ${a.n}", "op": "eq", "right": 1},
        {"left": "${a.n}", "op": "eq", "right": [1]},
        {"left": "${a..n}", "op": "eq", "right": 1},
        True,
    ],
)
def test_compile_when_errors(when: Any) -> None:
    with pytest.raises(ExpressionSyntaxError) as caught:
        compile_when(when)
    assert caught.value.code == "INVALID_EXPRESSION"
    assert caught.value.hint


def test_compare_form_type_errors_happen_at_evaluation() -> None:
    expression = compile_when({"left": "${a.none}", "op": "gt", "right": 10})
    with pytest.raises(ExpressionEvalError, match="null と数値は比較できません"):
        expression.evaluate(resolve)


# Mostly well-formed pieces, so that a fair share of the random strings parse and evaluate.
TOKENS = [
    "${a.n}", "${a.s.length}", "${b}", "(", ")", "and", "or", "not", "!", "&&", "||", "==",
    "!=", ">", ">=", "<", "<=", "-", "1", "2.5", "1e3", "'x'", '"y"', "true", "null", "None",
    "len(", "contains(", "exists(", ",",
]  # fmt: skip
NOISE = ["${", "}", "${a..b}", "&", "|", "=", "'", '"', "\\", "$$", "$${", "foo", ".", "あ", "\n"]


def test_fuzz_only_raises_syntax_errors() -> None:
    rng = random.Random(20250101)
    for _ in range(300):
        pieces = [
            rng.choice(NOISE if rng.random() < 0.1 else TOKENS) for _ in range(rng.randint(0, 10))
        ]
        text = " ".join(pieces) if rng.random() < 0.7 else "".join(pieces)
        with contextlib.suppress(ExpressionSyntaxError, ReferenceSyntaxError):
            parse_expression(text)


def random_expression(rng: random.Random, depth: int = 0) -> str:
    if depth > 3 or rng.random() < 0.3:
        return rng.choice(["${v}", "${v.length}", "1", "-2.5", "'x'", "true", "null"])
    left, right = random_expression(rng, depth + 1), random_expression(rng, depth + 1)
    return rng.choice(
        [
            f"({left} {rng.choice(['and', 'or', '&&', '||'])} {right})",
            f"({left}) {rng.choice(['==', '!=', '>', '>=', '<', '<='])} ({right})",
            f"not ({left})",
            f"{rng.choice(['len', 'lower', 'trim', 'empty', 'exists'])}({left})",
            f"contains({left}, {right})",
        ]
    )


def test_random_valid_expressions_parse_and_fail_only_with_block_errors() -> None:
    rng = random.Random(7)
    values: list[Any] = [1, 0.5, "x", "", None, True, [1, "x"], {"k": 2}, pd.DataFrame()]
    outcomes: set[str] = set()
    for _ in range(300):
        expression = parse_expression(random_expression(rng))
        try:
            expression.evaluate(lambda r: len("abc") if r.length else rng.choice(values))
            outcomes.add("value")
        except BlockError:
            outcomes.add("error")
    assert outcomes == {"value", "error"}


def test_errors_are_block_errors() -> None:
    for error_type in (ExpressionSyntaxError, ExpressionEvalError):
        assert issubclass(error_type, BlockError)
    fn: Callable[[str], Any] = parse_expression
    with pytest.raises(BlockError):
        fn("(")
