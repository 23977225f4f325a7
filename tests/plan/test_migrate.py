"""Legacy UI blocks → ui.interactive_input (seed 002 §13): nodes, references, files on disk."""

from __future__ import annotations

import codecs
import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from keiri_agent.blocks.registry import default_registry
from keiri_agent.errors import BlockError
from keiri_agent.plan import migrate_file, validate_text
from keiri_agent.plan._dsl.migrate import migrate_plan, migrate_text


@pytest.fixture
def plans(tmp_path: Path) -> Path:
    """An empty directory of its own (tmp_path also holds the test's working directory)."""
    path = tmp_path / "plans"
    path.mkdir()
    return path


def plan_with(node: dict[str, Any], *downstream: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "id": "legacy", "graph": [node, *downstream]}


def uploader(block: str, inputs: dict[str, Any], out: dict[str, str]) -> dict[str, Any]:
    return {"id": "up", "block": block, "in": inputs, "out": out}


def user(**inputs: Any) -> dict[str, Any]:
    return {"id": "parse", "block": "file.parse_zip_2tier", "in": inputs}


@pytest.mark.parametrize(
    ("block", "inputs", "port", "requirement", "message"),
    [
        (
            "ui.file_uploader",
            {},
            "file",
            {"id": "file", "type": "file", "label": "ファイル", "required": True},
            "ファイルをアップロードしてください。",
        ),
        (
            "ui.file_uploader.single",
            {"label": "請求書", "required": False, "message": "請求書を選んでください"},
            "path",
            {"id": "file", "type": "file", "label": "請求書", "required": False},
            "請求書を選んでください",
        ),
        (
            "ui.file_uploader.multiple@1.2.0",
            {"label": "証跡", "accept": ["pdf", ".PNG"]},
            "files",
            {
                "id": "files",
                "type": "files",
                "label": "証跡",
                "accept": ".pdf,.png",
                "required": True,
            },
            "証跡をアップロードしてください。",
        ),
        (
            "ui.file_uploader",
            {"multiple": True, "accept": "csv, .TSV"},
            "paths",
            {
                "id": "files",
                "type": "files",
                "label": "ファイル（複数可）",
                "accept": ".csv,.tsv",
                "required": True,
            },
            "ファイル（複数可）をアップロードしてください。",
        ),
        (
            "ui.file_uploader.zip",
            {"label": "証跡ZIP", "description": "月次の証跡をまとめた ZIP"},
            "uploaded",
            {"id": "file", "type": "file", "label": "証跡ZIP", "accept": ".zip", "required": True},
            "月次の証跡をまとめた ZIP",
        ),
        (
            "ui.file_uploader.excel",
            {"message": "元帳を選択", "description": "最新版"},
            "file",
            {
                "id": "file",
                "type": "file",
                "label": "ファイル",
                "description": "最新版",
                "accept": ".xlsx,.xlsm,.xls",
                "required": True,
            },
            "元帳を選択",
        ),
    ],
)
def test_file_uploader_shapes_become_collect_nodes(
    block: str, inputs: dict[str, Any], port: str, requirement: dict[str, Any], message: str
) -> None:
    raw = plan_with(
        uploader(block, inputs, {port: "files"}),
        user(zip_bytes="${up.files}", note="件数 ${up.files.length}、先頭 ${up.files.0.name}"),
    )
    result = migrate_plan(raw)

    assert result.problems == []
    node, parse = result.plan["graph"]
    assert node == {
        "id": "up",
        "block": "ui.interactive_input",
        "in": {"mode": "collect", "message": message, "requirements": [requirement]},
        "out": {"collected_data": "files"},
    }
    rid = requirement["id"]
    assert parse["in"]["zip_bytes"] == f"${{up.files.{rid}}}"
    assert (
        parse["in"]["note"] == f"件数 ${{up.files.{rid}.length}}、先頭 ${{up.files.{rid}.0.name}}"
    )
    # One line per node and one per rewritten reference.
    assert len(result.changes) == 4
    assert "ui.interactive_input" in result.changes[0]


def test_migrated_plan_passes_the_validator(plans: Path) -> None:
    raw = plan_with(
        uploader("ui.file_uploader.zip", {"label": "証跡ZIP"}, {"file": "evidence"}),
        user(zip_bytes="${up.evidence}"),
        {
            "id": "ok",
            "block": "ui.confirmation",
            "in": {"message": "続けますか？"},
            "out": {"confirmed": "go"},
        },
    )
    raw["graph"][1]["when"] = "${ok.go}"
    text, result = migrate_text(yaml.safe_dump(raw, allow_unicode=True))
    assert result.problems == []
    report = validate_text(text, default_registry(), designs_dir=plans, config={})
    assert report.codes() == []
    assert yaml.safe_load(text)["graph"][1]["in"]["zip_bytes"] == "${up.evidence.file}"


def test_unaliased_outputs_and_several_aliases() -> None:
    bare = migrate_plan(
        plan_with(uploader("ui.file_uploader", {}, {}), user(zip_bytes="${up.path}"))
    )
    assert bare.problems == []
    assert "out" not in bare.plan["graph"][0] or bare.plan["graph"][0]["out"] == {}
    assert bare.plan["graph"][1]["in"]["zip_bytes"] == "${up.collected_data.file}"

    both = migrate_plan(
        plan_with(
            uploader("ui.file_uploader", {}, {"file": "a", "path": "b"}),
            user(zip_bytes="${up.b}", other="${up.a}"),
        )
    )
    assert both.plan["graph"][0]["out"] == {"collected_data": "a"}
    assert both.plan["graph"][1]["in"] == {"zip_bytes": "${up.a.file}", "other": "${up.a.file}"}


def test_escapes_exports_and_when_are_rewritten_too() -> None:
    raw = plan_with(
        uploader("ui.file_uploader.multiple", {}, {"files": "files"}),
        user(zip_bytes="$${up.files} は文字どおり、${up.files} は参照"),
    )
    raw["graph"][1]["when"] = {"left": "${up.files.length}", "op": "gt", "right": 0}
    raw["exports"] = [{"from": "up.files", "as": "uploaded"}]
    result = migrate_plan(raw)
    parse = result.plan["graph"][1]
    assert parse["in"]["zip_bytes"] == "$${up.files} は文字どおり、${up.files.files} は参照"
    assert parse["when"]["left"] == "${up.files.files.length}"
    assert result.plan["exports"] == [{"from": "up.files.files", "as": "uploaded"}]


def test_loop_bodies_are_migrated() -> None:
    inner = {
        "id": "ask",
        "block": "ui.file_uploader.single",
        "in": {"label": "${item.name} の請求書"},
        "out": {"file": "invoice"},
    }
    loop = {
        "id": "each",
        "type": "loop",
        "foreach": {"input": "${up.files}", "itemVar": "item"},
        "body": {
            "plan": {
                "graph": [inner, {**user(zip_bytes="${ask.invoice}"), "id": "read"}],
                "exports": [{"from": "ask.invoice", "as": "invoice"}],
            }
        },
    }
    raw = plan_with(uploader("ui.file_uploader.multiple", {}, {"files": "files"}), loop)
    result = migrate_plan(raw)

    assert result.problems == []
    each = result.plan["graph"][1]
    assert each["foreach"]["input"] == "${up.files.files}"
    body = each["body"]["plan"]
    assert body["graph"][0]["block"] == "ui.interactive_input"
    assert body["graph"][0]["in"]["requirements"][0]["label"] == "${item.name} の請求書"
    assert body["graph"][1]["in"]["zip_bytes"] == "${ask.invoice.file}"
    assert body["exports"] == [{"from": "ask.invoice.file", "as": "invoice"}]
    assert any("graph[1].body.plan.graph[0]" in c for c in result.changes)


def test_confirmation_becomes_confirm_mode() -> None:
    conf = {
        "id": "conf",
        "block": "ui.confirmation.approve",
        "description": "最終確認",
        "in": {"title": "送信前の確認", "message": "送信してよいですか？", "default": False},
        "out": {"confirmed": "ok"},
    }
    send = {"id": "send", "block": "excel.write", "when": "${conf.ok} == true", "in": {}}
    result = migrate_plan(plan_with(conf, send))

    assert result.problems == []
    assert result.plan["graph"][0] == {
        "id": "conf",
        "block": "ui.interactive_input",
        "description": "最終確認",
        "in": {
            "mode": "confirm",
            "message": "送信前の確認\n送信してよいですか？",
            "requirements": [],
        },
        "out": {"approved": "ok"},
    }
    assert result.plan["graph"][1]["when"] == "${conf.ok} == true"  # approved is still boolean
    assert any("default" in c for c in result.changes)  # dropped, but said so

    bare = migrate_plan(
        plan_with(
            {"id": "conf", "block": "ui.confirmation", "in": {"message": "OK?"}},
            {**send, "when": "${conf.confirmed}"},
        )
    )
    assert bare.plan["graph"][1]["when"] == "${conf.approved}"


@pytest.mark.parametrize(
    ("node", "downstream", "fragment"),
    [
        (
            uploader("ui.file_uploader.folder", {}, {"file": "f"}),
            "${up.f}",
            "ui.file_uploader.folder",
        ),
        (uploader("ui.file_uploaderx", {}, {"file": "f"}), "${up.f}", "ui.file_uploaderx"),
        (uploader("ui.file_uploader", {"max_size": 10}, {"file": "f"}), "${up.f}", "in.max_size"),
        (uploader("ui.file_uploader", {}, {"metadata": "m"}), "${up.m}", "out.metadata"),
        (uploader("ui.file_uploader", {"accept": "image/*"}, {"file": "f"}), "${up.f}", "image/*"),
        (uploader("ui.file_uploader.single", {"multiple": True}, {"file": "f"}), "${up.f}", "矛盾"),
        (uploader("ui.file_uploader", {}, {"file": "f"}), "${up.other}", "${up.other}"),
        (uploader("ui.file_uploader", {}, {"file": "f"}), "${up}", "${up}"),
        ({"id": "up", "block": "ui.confirmation", "in": {"title": 3}}, "${up.approved}", "title"),
        ({"id": "up", "block": "ui.confirmation", "in": {}}, "${up.approved}", "message"),
    ],
)
def test_unmappable_legacy_nodes_are_problems_and_nothing_is_written(
    plans: Path, node: dict[str, Any], downstream: str, fragment: str
) -> None:
    raw = plan_with(node, user(zip_bytes=downstream))
    result = migrate_plan(raw)
    assert result.problems
    assert any(fragment in p for p in result.problems), result.problems

    source = plans / "plan.yaml"
    source.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    before = source.read_bytes()
    with pytest.raises(BlockError) as info:
        migrate_file(source)
    assert info.value.code == "INPUT_VALIDATION_FAILED"
    assert info.value.details["problems"] == result.problems
    assert info.value.hint
    assert sorted(p.name for p in plans.iterdir()) == ["plan.yaml"]
    assert source.read_bytes() == before


def write_legacy(plans: Path, name: str = "plan.yaml") -> Path:
    raw = plan_with(
        uploader("ui.file_uploader.zip", {}, {"file": "files"}), user(zip_bytes="${up.files}")
    )
    path = plans / name
    path.write_text("# 旧形式の Plan\n" + yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    return path


def test_default_output_is_written_next_to_the_input(plans: Path) -> None:
    source = write_legacy(plans)
    before = source.read_bytes()
    result = migrate_file(source)

    target = plans / "plan.migrated.yaml"
    assert result.written == target
    assert result.backup is None
    assert source.read_bytes() == before
    migrated = yaml.safe_load(target.read_text(encoding="utf-8"))
    assert migrated["graph"][1]["in"]["zip_bytes"] == "${up.files.file}"
    assert sorted(p.name for p in plans.iterdir()) == ["plan.migrated.yaml", "plan.yaml"]

    chosen = plans / "out" / "new.yaml"
    chosen.parent.mkdir()
    assert migrate_file(source, output=chosen).written == chosen
    assert yaml.safe_load(chosen.read_text(encoding="utf-8")) == migrated


def test_in_place_keeps_a_backup_of_the_original(plans: Path) -> None:
    source = write_legacy(plans)
    original = source.read_bytes()
    result = migrate_file(source, in_place=True)

    assert result.written == source
    assert result.backup == plans / "plan.yaml.bak"
    assert result.backup.read_bytes() == original
    assert yaml.safe_load(source.read_text(encoding="utf-8"))["graph"][0]["block"] == (
        "ui.interactive_input"
    )
    assert not [p for p in plans.iterdir() if p.name.endswith(".tmp")]

    # A second legacy file migrated in place never overwrites an earlier backup.
    source.write_bytes(original)
    assert migrate_file(source, in_place=True).backup == plans / "plan.yaml.bak.2"
    assert (plans / "plan.yaml.bak").read_bytes() == original


def test_plan_without_legacy_nodes_is_left_alone(plans: Path) -> None:
    raw = plan_with(user(zip_bytes="${vars.zip}"))
    result = migrate_plan(raw)
    assert (result.changes, result.problems, result.changed) == ([], [], False)
    assert result.plan == raw

    text = "# コメントも残る\n" + yaml.safe_dump(raw)
    assert migrate_text(text)[0] == text
    source = plans / "plan.yaml"
    source.write_text(text, encoding="utf-8")
    assert migrate_file(source).written is None
    assert [p.name for p in plans.iterdir()] == ["plan.yaml"]


def test_input_dict_is_not_mutated() -> None:
    raw = plan_with(
        uploader("ui.file_uploader.multiple", {"accept": ["zip"]}, {"files": "files"}),
        user(zip_bytes="${up.files}"),
    )
    snapshot = copy.deepcopy(raw)
    result = migrate_plan(raw)
    assert raw == snapshot
    assert result.plan is not raw
    assert result.plan["graph"][1]["in"]["zip_bytes"] == "${up.files.files}"


def test_bad_files_and_arguments_are_clear_errors(plans: Path) -> None:
    broken = plans / "broken.yaml"
    broken.write_text("graph: [\n", encoding="utf-8")
    with pytest.raises(BlockError, match="YAML"):
        migrate_file(broken)
    with pytest.raises(BlockError) as info:
        migrate_file(plans / "missing.yaml")
    assert info.value.details["file"].endswith("missing.yaml")
    with pytest.raises(BlockError, match="同時"):
        migrate_file(write_legacy(plans), output=plans / "x.yaml", in_place=True)
    assert migrate_plan(["not", "a", "plan"]).problems


def test_a_bad_byte_in_a_bom_plan_is_named_where_an_editor_shows_it(plans: Path) -> None:
    # Saved by a Windows editor as "UTF-8 (BOM)", one byte on line 3 is no UTF-8: the 43rd
    # byte of the file as a person counts, BOM included (utf-8-sig's own error counts 3 bytes early).
    text = "# 旧形式の Plan\nid: legacy\n".encode()
    source = plans / "bom.yaml"
    source.write_bytes(codecs.BOM_UTF8 + text + b"graph: [\xff]\n")
    bad = len(codecs.BOM_UTF8 + text) + len("graph: [")
    assert (bad, source.read_bytes()[bad]) == (42, 0xFF)

    with pytest.raises(BlockError) as info:
        migrate_file(source)

    assert info.value.code == "FILE_UNREADABLE"
    assert "3 行目（先頭から 43 バイト目）以降を読めません" in info.value.message
    assert (info.value.details["position"], info.value.details["line"]) == (42, 3)
    assert list(plans.iterdir()) == [source]  # nothing written
