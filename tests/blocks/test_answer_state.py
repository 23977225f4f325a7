"""Session State contract of ui.interactive_input (seed 002 §3, §8.2): keys, initial values,
persistence across reruns, merge warnings when requirements change, explicit reset only."""

from __future__ import annotations

from typing import Any

import pytest

from keiri_agent.blocks.ui.answer_state import (
    SessionStateStore,
    initial_values,
    merge_values,
    session_key,
)
from keiri_agent.errors import BlockError

REQS: list[dict[str, Any]] = [
    {"id": "evidence", "type": "file", "label": "証跡ZIP", "accept": ".zip"},
    {"id": "period", "type": "select", "label": "対象月", "options": ["4月", "5月"]},
    {"id": "amount", "type": "number", "label": "金額"},
    {"id": "note", "type": "text", "label": "備考", "required": False},
]
KEY = "plan:monthly::node:collect::v0.1.0"


def test_session_key_is_the_seed_format() -> None:
    assert session_key("monthly", "collect", "0.1.0") == KEY
    assert (
        session_key("a/b", "loop/child", "2.0.0-rc.1") == "plan:a/b::node:loop/child::v2.0.0-rc.1"
    )


def test_initial_values_per_type_and_defaults() -> None:
    types = ["file", "files", "folder", "text", "select", "boolean", "number", "chat", "table"]
    reqs: list[dict[str, Any]] = [{"id": f"f_{t}", "type": t, "label": t} for t in types]
    reqs.append({"id": "f_enum", "type": "enum", "label": "e", "options": ["a", "b"]})
    reqs[4]["options"] = ["x"]
    assert initial_values(reqs) == {
        "f_file": None,
        "f_files": [],
        "f_folder": None,
        "f_text": None,
        "f_select": None,
        "f_boolean": False,
        "f_number": None,
        "f_chat": None,
        "f_table": [],
        "f_enum": None,
    }
    default_rows = [{"科目": "旅費"}]
    with_defaults = initial_values(
        [
            {"id": "n", "type": "number", "label": "n", "default": 3},
            {"id": "t", "type": "table", "label": "t", "default": default_rows},
        ]
    )
    assert with_defaults == {"n": 3, "t": [{"科目": "旅費"}]}
    with_defaults["t"].append({"科目": "交際費"})  # editing a value never edits the plan
    assert default_rows == [{"科目": "旅費"}]


def test_values_survive_reruns_and_updates() -> None:
    state: dict[str, Any] = {}
    store = SessionStateStore(state)
    first = store.get("monthly", "collect", "0.1.0", REQS)
    assert first.values == {"evidence": None, "period": None, "amount": None, "note": None}
    assert first.warnings == []
    assert state[KEY] == first.values

    store.update("monthly", "collect", "0.1.0", "amount", 1200)
    store.update("monthly", "collect", "0.1.0", "period", "5月")
    assert state[KEY]["amount"] == 1200  # reflected at once
    for _ in range(3):  # every Streamlit rerun calls get() again with the same requirements
        again = store.get("monthly", "collect", "0.1.0", REQS)
        assert again.values["amount"] == 1200
        assert again.values["period"] == "5月"
        assert again.warnings == []
    assert store.values("monthly", "collect", "0.1.0")["amount"] == 1200
    assert store.collected_data("monthly", "collect", "0.1.0") == {
        "evidence": None,
        "period": "5月",
        "amount": 1200,
        "note": None,
    }


def test_removed_added_and_retyped_fields_are_merged_with_warnings() -> None:
    store = SessionStateStore({})
    store.get("monthly", "collect", "0.1.0", REQS)
    store.update("monthly", "collect", "0.1.0", "evidence", "/data/ev.zip")
    store.update("monthly", "collect", "0.1.0", "amount", 1200)
    store.update("monthly", "collect", "0.1.0", "note", "至急")

    changed = [
        REQS[0],  # unchanged: its value is kept
        {"id": "amount", "type": "text", "label": "金額"},  # number → text
        {"id": "approver", "type": "text", "label": "承認者"},  # new
        {"id": "note", "type": "chat", "label": "備考"},  # text → chat: the text still fits
    ]  # period was removed
    result = store.get("monthly", "collect", "0.1.0", changed)

    assert result.values == {
        "evidence": "/data/ev.zip",
        "amount": None,
        "approver": None,
        "note": "至急",
    }
    assert result.added == ["approver"]
    assert result.retyped == ["amount", "note"]
    assert result.dropped == {"amount": 1200, "period": None}
    for words in [
        ("金額", "数値（number）", "テキスト（text）", "初期値に戻しました"),
        ("承認者", "追加"),
        ("対象月", "削除"),
        ("備考", "引き継ぎ"),
    ]:
        assert any(all(w in line for w in words) for line in result.warnings), words
    assert len(result.warnings) == 4
    # The change is reported once; the next rerun is quiet and keeps new input.
    store.update("monthly", "collect", "0.1.0", "amount", "千二百円")
    later = store.get("monthly", "collect", "0.1.0", changed, previous_requirements=REQS)
    assert later.warnings == []
    assert later.values["amount"] == "千二百円"


def test_a_stored_value_that_no_longer_fits_is_reset_with_both_types_named() -> None:
    stored = {"amount": "1,200", "period": "6月", "flag": True}
    reqs = [
        {"id": "amount", "type": "number", "label": "金額"},
        {"id": "period", "type": "select", "label": "対象月", "options": ["4月", "5月"]},
        {"id": "flag", "type": "boolean", "label": "確認済み"},
    ]
    previous = [{"id": "period", "type": "select", "options": ["5月", "6月"]}]
    result = merge_values(stored, reqs, previous)
    assert result.values == {"amount": None, "period": None, "flag": True}
    assert result.reset == ["amount", "period"]
    assert result.dropped == {"amount": "1,200", "period": "6月"}
    amount, period = result.warnings
    assert all(w in amount for w in ("金額", "'1,200'", "文字列", "数値（number）"))
    assert all(w in period for w in ("対象月", "選択肢が変わり", "'6月'"))


def test_options_change_keeps_a_value_that_is_still_an_option() -> None:
    store = SessionStateStore({})
    store.get("monthly", "collect", "0.1.0", REQS)
    store.update("monthly", "collect", "0.1.0", "period", "5月")
    more = [{**REQS[1], "options": ["5月", "6月"]}]
    assert store.get("monthly", "collect", "0.1.0", more).values == {"period": "5月"}
    fewer = [{**REQS[1], "options": ["6月"]}]
    result = store.get("monthly", "collect", "0.1.0", fewer)
    assert result.values == {"period": None}
    assert any("選択肢が変わり" in w for w in result.warnings)


def test_a_removed_field_gets_its_value_back_when_it_returns() -> None:
    store = SessionStateStore({})
    store.get("monthly", "collect", "0.1.0", REQS)
    store.update("monthly", "collect", "0.1.0", "evidence", "/data/ev.zip")
    store.get("monthly", "collect", "0.1.0", REQS[1:])
    back = store.get("monthly", "collect", "0.1.0", REQS)
    assert back.values["evidence"] == "/data/ev.zip"
    assert back.restored == ["evidence"]
    assert any("復元" in w for w in back.warnings)


def test_reset_clears_only_the_targeted_node_or_plan() -> None:
    state: dict[str, Any] = {"unrelated": 1}
    store = SessionStateStore(state)
    for plan, node in [("monthly", "collect"), ("monthly", "confirm"), ("other", "collect")]:
        store.get(plan, node, "0.1.0", REQS)
        store.update(plan, node, "0.1.0", "amount", 5)
    assert store.keys_for_plan("monthly") == [
        "plan:monthly::node:collect::v0.1.0",
        "plan:monthly::node:confirm::v0.1.0",
    ]

    deleted = store.reset("monthly", "collect")
    assert {KEY, f"{KEY}::requirements", f"{KEY}::dropped"} >= set(deleted) >= {KEY}
    assert store.keys_for_plan("monthly") == ["plan:monthly::node:confirm::v0.1.0"]
    assert store.values("monthly", "confirm", "0.1.0")["amount"] == 5

    store.reset("monthly")
    assert store.keys_for_plan("monthly") == []
    assert store.values("other", "collect", "0.1.0")["amount"] == 5
    assert state["unrelated"] == 1
    assert not any(k.startswith("plan:monthly::") for k in state)
    # After a reset the node starts again from its initial values.
    assert store.get("monthly", "collect", "0.1.0", REQS).values["amount"] is None


def test_update_of_an_unknown_field_or_a_wrong_type_raises_with_a_hint() -> None:
    store = SessionStateStore({})
    with pytest.raises(BlockError, match="初期化"):
        store.update("monthly", "collect", "0.1.0", "amount", 1)
    store.get("monthly", "collect", "0.1.0", REQS)
    with pytest.raises(BlockError) as info:
        store.update("monthly", "collect", "0.1.0", "amout", 1)
    assert info.value.code == "INPUT_VALIDATION_FAILED"
    assert "amount" in info.value.hint
    with pytest.raises(BlockError) as wrong:
        store.update("monthly", "collect", "0.1.0", "amount", "1,200")
    assert "数値" in wrong.value.hint
    with pytest.raises(BlockError, match="保存できません"):
        store.update("monthly", "collect", "0.1.0", "period", "12月")
    assert store.values("monthly", "collect", "0.1.0")["amount"] is None


def test_something_else_under_the_key_is_not_overwritten() -> None:
    state: dict[str, Any] = {KEY: "他のページの値"}
    with pytest.raises(BlockError, match="入力値ではない"):
        SessionStateStore(state).get("monthly", "collect", "0.1.0", REQS)
    assert state[KEY] == "他のページの値"


def test_an_empty_field_whose_type_changed_just_takes_the_new_empty_value() -> None:
    result = merge_values(
        {"rows": None},
        [{"id": "rows", "type": "table", "label": "明細"}],
        [{"id": "rows", "type": "text"}],
    )
    assert result.values == {"rows": []}
    assert result.dropped == {}
    assert result.retyped == ["rows"]
    assert "未入力" in result.warnings[0]
