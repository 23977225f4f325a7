"""``${...}`` references: parsing, error positions, path walking without getattr, rendering."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd
import pytest

from keiri_agent.errors import BlockError
from keiri_agent.plan import Reference, find_references, iter_references, single_reference
from keiri_agent.plan._dsl.refs import (
    ReferencePathError,
    ReferenceSyntaxError,
    ReferenceValueError,
    render,
    resolve_path,
)


def ref(text: str) -> Reference:
    found = single_reference(text)
    assert found is not None
    return found


@pytest.mark.parametrize(
    ("text", "root", "path", "length"),
    [
        ("${vars.instruction}", "vars", ("instruction",), False),
        ("${env.API_KEY}", "env", ("API_KEY",), False),
        ("${config.task_configs.t-1.output}", "config", ("task_configs", "t-1", "output"), False),
        ("${node.items.0.name}", "node", ("items", 0, "name"), False),
        ("${node.items.12}", "node", ("items", 12), False),
        ("${file}", "file", (), False),
        ("${parse.evidence.files.length}", "parse", ("evidence", "files"), True),
        ("${length}", "length", (), False),
        ("${ a.b }", "a", ("b",), False),
        ("${収集.結果.請求書}", "収集", ("結果", "請求書"), False),
        ("${a.１２}", "a", ("１２",), False),  # full-width digits stay a key
        ("${a.-1}", "a", ("-1",), False),
    ],
)
def test_parse(text: str, root: str, path: tuple[Any, ...], length: bool) -> None:
    (found,) = find_references(text)
    assert (found.root, found.path, found.length) == (root, path, length)
    assert (found.text, found.start, found.end) == (text, 0, len(text))
    assert str(found) == text


def test_dotted_and_offsets() -> None:
    first, second = find_references("件数 ${a.items.length} / ${b.0}")
    assert first.dotted == "a.items"
    assert (first.start, first.end) == (3, 20)
    assert second.dotted == "b.0"
    assert second.path == (0,)


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("${}", 2),
        ("${  }", 4),
        ("x ${a..b}", 6),
        ("${a.}", 4),
        ("${.a}", 2),
        ("前文 ${a", 3),
        ("${a b}", 3),
        ("${a.b!}", 5),
        ("${a.${b}}", 4),
    ],
)
def test_syntax_error_points_at_the_character(text: str, position: int) -> None:
    with pytest.raises(ReferenceSyntaxError) as caught:
        find_references(text)
    error = caught.value
    assert isinstance(error, BlockError)
    assert error.code == "INVALID_REFERENCE"
    assert error.details["text"] == text
    assert error.details["position"] == position
    assert error.hint
    # The caret sits under the character, counting full-width characters as two columns.
    pad = sum(2 if ord(ch) > 0x2E7F else 1 for ch in text[:position])
    assert f"\n  {text}\n  {' ' * pad}^" in error.message


def test_escape_is_not_a_reference() -> None:
    assert find_references("$${not} ${yes}") == [Reference("yes", (), False, "${yes}", 8, 14)]
    assert single_reference("$${a}") is None
    assert find_references("cost $5 and $$") == []


@pytest.mark.parametrize(
    ("text", "is_single"),
    [("${a.b}", True), ("  ${a.b}\n", True), ("x${a}", False), ("${a}${b}", False), ("a", False)],
)
def test_single_reference(text: str, is_single: bool) -> None:
    assert (single_reference(text) is not None) is is_single


def test_iter_references_walks_values_but_not_keys() -> None:
    value = {"${key}": "${a.b}", "list": ["x", {"deep": "${c} and ${d.0}"}], "n": 3}
    found = [(loc, r.text) for loc, r in iter_references(value)]
    assert found == [
        (("${key}",), "${a.b}"),
        (("list", 1, "deep"), "${c}"),
        (("list", 1, "deep"), "${d.0}"),
    ]


DATA: dict[str, Any] = {
    "files": [{"name": "a.pdf"}, {"name": "b.pdf"}],
    "summary": {"total": 2, "by_type": {"pdf": 2}},
    "none": None,
    "text": "請求書",
    "numbered": {1: "int key", "2": "str key"},
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("${n.files.1.name}", "b.pdf"),
        ("${n.summary.by_type.pdf}", 2),
        ("${n.files.length}", 2),
        ("${n.summary.length}", 2),
        ("${n.text.length}", 3),
        ("${n.numbered.1}", "int key"),
        ("${n.numbered.2}", "str key"),
        ("${n.none}", None),
        ("${n}", DATA),
    ],
)
def test_resolve_path(text: str, expected: Any) -> None:
    assert resolve_path(DATA, ref(text)) == expected


def test_length_of_a_dataframe_uses_len_only() -> None:
    frame = pd.DataFrame({"a": [1, 2, 3]})
    assert resolve_path({"df": frame}, ref("${n.df.length}")) == 3


def test_missing_key_lists_available_keys() -> None:
    with pytest.raises(ReferencePathError) as caught:
        resolve_path(DATA, ref("${n.summary.count}"))
    error = caught.value
    assert error.code == "DEPENDENCY_NOT_FOUND"
    assert "「count」" in error.message
    assert "${n.summary.count}" in error.message
    assert error.hint == "n.summary にあるキー: total, by_type"
    assert error.details["available_keys"] == ["total", "by_type"]


def test_available_keys_are_capped() -> None:
    many = {f"k{i}": i for i in range(30)}
    with pytest.raises(ReferencePathError) as caught:
        resolve_path(many, ref("${n.missing}"))
    assert len(caught.value.details["available_keys"]) == 20
    assert "ほか 10 件" in caught.value.hint


@pytest.mark.parametrize(
    "text",
    [
        "${n.files.2}",  # index out of range
        "${n.files.name}",  # a key on a list
        "${n.none.x}",  # null in the middle
        "${n.none.length}",  # length of null
        "${n.summary.total.x}",  # into a number
        "${n.text.0}",  # strings are not walked into
        "${n.summary.total.length}",  # a number has no length
    ],
)
def test_path_errors(text: str) -> None:
    with pytest.raises(ReferencePathError) as caught:
        resolve_path(DATA, ref(text))
    assert caught.value.code == "DEPENDENCY_NOT_FOUND"
    assert text in caught.value.message
    assert caught.value.hint


def test_no_attribute_access_on_user_objects() -> None:
    class Secretive:
        def __init__(self) -> None:
            self.secret = "leaked"

        def __getattr__(self, name: str) -> str:
            return "leaked"

    with pytest.raises(ReferencePathError):
        resolve_path({"obj": Secretive()}, ref("${n.obj.secret}"))
    with pytest.raises(ReferencePathError):
        resolve_path({"obj": Secretive()}, ref("${n.obj.__class__}"))


def resolver(values: dict[str, Any]) -> Any:
    return lambda r: resolve_path(values[r.root], r)


def test_render_keeps_types_of_single_references_and_interpolates_the_rest() -> None:
    values = {"a": {"list": [1, 2], "none": None, "flag": True, "n": 1.5, "d": {"k": "値"}}}
    template = {
        "typed": "${a.list}",
        "typed_none": " ${a.none} ",
        "text": "n=${a.n} none=${a.none} flag=${a.flag} d=${a.d} list=${a.list}",
        "escaped": "$${literal} ${a.n}",
        "nested": [{"x": "${a.flag}"}, 3, None],
        "${a.n}": "keys stay",
    }
    rendered = render(template, resolver(values))
    assert rendered == {
        "typed": [1, 2],
        "typed_none": None,
        "text": 'n=1.5 none=null flag=true d={"k": "値"} list=[1, 2]',
        "escaped": "${literal} 1.5",
        "nested": [{"x": True}, 3, None],
        "${a.n}": "keys stay",
    }
    assert rendered["typed"] is values["a"]["list"]
    assert template["typed"] == "${a.list}"  # the template itself is untouched


def test_render_dates_inside_text_and_refuses_binary() -> None:
    values = {"a": {"day": dt.date(2025, 1, 31), "blob": b"%PDF"}}
    assert render("期日 ${a.day}", resolver(values)) == "期日 2025-01-31"
    assert render("${a.blob}", resolver(values)) == b"%PDF"
    with pytest.raises(ReferenceValueError):
        render("添付 ${a.blob}", resolver(values))


def test_render_propagates_resolver_errors() -> None:
    def failing(r: Reference) -> Any:
        raise ReferencePathError("見つかりません")

    with pytest.raises(ReferencePathError):
        render({"x": ["${a}"]}, failing)
    assert render("no refs $ here", failing) == "no refs $ here"
