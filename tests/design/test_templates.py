"""Plan templates (seed 004 §4): the shipped library loads, and broken files are named clearly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.config import load_settings
from keiri_agent.design.templates import (
    TemplateLibrary,
    TemplateSpec,
    check_template,
    templates_root,
)
from keiri_agent.errors import BlockError

REGISTRY = BlockRegistry()
SOURCE_TEMPLATES = Path(__file__).resolve().parents[2] / "designs" / "templates"


@pytest.fixture(scope="module")
def library() -> TemplateLibrary:
    return TemplateLibrary.load(SOURCE_TEMPLATES, registry=REGISTRY)


def japanese(text: str) -> bool:
    return any("\u3040" <= ch <= "\u9fff" for ch in text)


def write(root: Path, rel: str, data: Any) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    text = data if isinstance(data, str) else yaml.safe_dump(data, allow_unicode=True)
    path.write_text(text, encoding="utf-8")
    return path


def good_template(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": "big_rows",
        "title": "金額の大きい行を抜き出す",
        "tags": ["抽出"],
        "imports": {"rows": {"type": "records"}},
        "exports": {"big_rows": {"type": "records", "from": "pick.rows"}},
        "vars_defaults": {"min_amount": 100000},
        "graph_snippet": [
            {
                "id": "pick",
                "block": "table.filter",
                "in": {
                    "table": "${imports.rows}",
                    "conditions": [{"column": "金額", "op": "ge", "value": "${vars.min_amount}"}],
                },
            }
        ],
    }
    data.update(changes)
    return data


# --- the shipped templates --------------------------------------------------------------------


def test_shipped_templates_load_and_cover_the_example_plans(library: TemplateLibrary) -> None:
    keys = {t.key for t in library.list()}
    assert {
        "input/evidence_zip_invoices",
        "input/bank_statement",
        "reconcile/invoice_payment",
        "output/reconciliation_workbook",
        "check/duplicate_invoices",
        "report/monthly_sales",
    } <= keys
    for spec in library.list():
        assert check_template(spec, REGISTRY) == [], spec.key
        assert spec.source is not None
        assert Path(spec.source).stem == spec.id
        assert spec.category == Path(spec.source).parent.name
        assert all(block in REGISTRY for block in spec.blocks())
        # What a user searches for is Japanese: title, description and some of the tags.
        assert japanese(spec.title), spec.key
        assert japanese(spec.description or ""), spec.key
        assert sum(map(japanese, spec.tags)) >= 3, spec.key


def test_templates_root_prefers_the_designs_dir_then_the_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert templates_root() == SOURCE_TEMPLATES  # the test's cwd has no designs/templates
    (tmp_path / "templates").mkdir()
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(tmp_path))
    assert templates_root(load_settings()) == tmp_path / "templates"
    assert templates_root() == tmp_path / "templates"


def test_summary_gives_an_llm_the_contract_and_the_snippet(library: TemplateLibrary) -> None:
    text = library.get("invoice_payment").summary()
    assert "請求と入金を照合する" in text
    assert "reconcile/invoice_payment" in text
    assert "- invoices: records" in text
    assert "- deposits: records" in text
    assert "- unmatched_invoices: records（reconcile.unmatched_left）" in text
    assert "amount_tolerance: 1000" in text
    snippet = yaml.safe_load(text.split("graph_snippet:\n", 1)[1])
    assert snippet == library.get("invoice_payment").graph_snippet


def test_library_search_by_tag_and_text(library: TemplateLibrary) -> None:
    def ids(specs: list[TemplateSpec]) -> set[str]:
        return {s.id for s in specs}

    assert "invoice_payment" in ids(library.list(tags=["消込"]))
    assert ids(library.list(tags=["消込", "入金明細"])) == set()  # tags are all required
    assert ids(library.list(text="重複")) == {"duplicate_invoices"}
    assert ids(library.list(text="入金 照合")) >= {"invoice_payment", "bank_statement"}
    assert "monthly_sales" in ids(library.list(text="ｍａｒｋｄｏｗｎ"))  # NFKC, no case
    assert ids(library.list(tags=["売上"], text="集計")) == {"monthly_sales", "sales_file"}
    assert library.list(text="存在しない語") == []
    tags = library.tags()
    assert tags == sorted(set(tags))
    assert {"照合", "重複", "売上"} <= set(tags)


def test_get_by_id_or_key_and_unknown_ids_list_the_known_ones(library: TemplateLibrary) -> None:
    assert library.get("reconcile/invoice_payment") is library.get("invoice_payment")
    with pytest.raises(BlockError) as err:
        library.get("invoice_matching")
    assert "invoice_matching" in err.value.message
    assert "reconcile/invoice_payment" in err.value.hint
    assert "invoice_payment" in err.value.details["known"]


def test_blocks_recurse_into_loop_bodies() -> None:
    spec = TemplateSpec.model_validate(
        good_template(
            category="check",
            graph_snippet=[
                {
                    "id": "each",
                    "type": "loop",
                    "foreach": {"input": "${imports.rows}", "itemVar": "row"},
                    "body": {
                        "plan": {
                            "graph": [
                                {"id": "pick", "block": "table.filter@0.1.0", "in": {"table": []}},
                                {"id": "agg", "block": "table.aggregate", "in": {"table": []}},
                            ]
                        }
                    },
                },
                {"id": "pick2", "block": "table.filter", "in": {"table": []}},
            ],
        )
    )
    assert spec.blocks() == ["table.filter", "table.aggregate"]


# --- malformed files --------------------------------------------------------------------------


BROKEN: dict[str, tuple[Any, str]] = {
    "bad_yaml": ("id: bad_yaml\ntitle: [閉じていない\n", "YAML として読めません"),
    "unknown_block": (
        good_template(
            id="unknown_block",
            graph_snippet=[{"id": "pick", "block": "table.magic", "in": {"t": "${imports.rows}"}}],
        ),
        "ブロック 'table.magic' は登録されていません",
    ),
    "undeclared_import": (
        good_template(id="undeclared_import", imports={}),
        "${imports.rows} を使っていますが、imports に 'rows' がありません",
    ),
    "missing_export_node": (
        good_template(
            id="missing_export_node", exports={"big": {"type": "records", "from": "nowhere.rows"}}
        ),
        "exports.big.from 'nowhere.rows' は graph_snippet の最上位ノードの出力",
    ),
    "unknown_output": (
        good_template(
            id="unknown_output", exports={"big": {"type": "records", "from": "pick.rowz"}}
        ),
        "ノード 'pick' に出力 'rowz' はありません",
    ),
    "undeclared_var": (
        good_template(id="undeclared_var", vars_defaults={}),
        "${vars.min_amount} を使っていますが、vars_defaults に 'min_amount' がありません",
    ),
    "unknown_root": (
        good_template(
            id="unknown_root",
            imports={},
            graph_snippet=[{"id": "pick", "block": "table.filter", "in": {"table": "${rows.x}"}}],
            vars_defaults={},
        ),
        "${rows.x} の 'rows' はスニペットのノードでも imports / vars / env / config でもありません",
    ),
    "bad_node": (
        good_template(id="bad_node", graph_snippet=[{"id": "pick", "blok": "table.filter"}]),
        "graph_snippet[0].blok",
    ),
    "wrong_name": (good_template(id="other_name"), "ファイル名 'wrong_name' と同じに"),
    "bad_type": (
        good_template(id="bad_type", imports={"rows": {"type": "table"}}),
        "型 'table' は使えません",
    ),
    "unused_import": (
        good_template(
            id="unused_import", imports={"rows": {"type": "records"}, "x": {"type": "any"}}
        ),
        "'x' は graph_snippet で使われていません",
    ),
    "layout_unknown": (
        good_template(id="layout_unknown", ui_suggestions={"layout": ["pick", "ghost"]}),
        "ui_suggestions.layout の 'ghost' は最上位ノードではありません",
    ),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_malformed_template_is_a_japanese_error_naming_the_file(
    name: str, tmp_path: Path
) -> None:
    data, expected = BROKEN[name]
    write(tmp_path, "check/big_rows.yaml", good_template())
    path = write(tmp_path, f"check/{name}.yaml", data)
    with pytest.raises(BlockError) as err:
        TemplateLibrary.load(tmp_path, registry=REGISTRY)
    assert err.value.code == "PLAN_INVALID"
    assert str(path) in err.value.message
    assert expected in err.value.message
    assert [e["file"] for e in err.value.details["errors"]] == [str(path)]  # the good one is fine
    assert "big_rows" not in err.value.message


def test_every_bad_file_is_listed_in_one_error(tmp_path: Path) -> None:
    write(tmp_path, "check/big_rows.yaml", good_template())
    for name in ("bad_yaml", "unknown_block", "missing_export_node"):
        write(tmp_path, f"check/{name}.yaml", BROKEN[name][0])
    with pytest.raises(BlockError) as err:
        TemplateLibrary.load(tmp_path, registry=REGISTRY)
    assert len(err.value.details["errors"]) == 3
    assert "テンプレートに問題があります（3 ファイル）" in err.value.message


def test_a_good_library_loads_and_duplicates_and_missing_roots_are_refused(tmp_path: Path) -> None:
    write(tmp_path, "check/big_rows.yaml", good_template())
    library = TemplateLibrary.load(tmp_path, registry=REGISTRY)
    assert [t.key for t in library.list()] == ["check/big_rows"]
    write(tmp_path, "report/big_rows.yaml", good_template())
    with pytest.raises(BlockError) as err:
        TemplateLibrary.load(tmp_path, registry=REGISTRY)
    assert "テンプレート ID 'big_rows'" in err.value.message
    assert "重複" in err.value.message
    with pytest.raises(BlockError) as missing:
        TemplateLibrary.load(tmp_path / "nowhere", registry=REGISTRY)
    assert missing.value.code == "CONFIGURATION_ERROR"


def test_category_in_the_file_must_match_its_folder(tmp_path: Path) -> None:
    path = write(tmp_path, "check/big_rows.yaml", good_template(category="report"))
    with pytest.raises(BlockError) as err:
        TemplateLibrary.load(tmp_path, registry=REGISTRY)
    assert str(path) in err.value.message
    assert "フォルダ 'check' と違います" in err.value.message


def test_ui_nodes_must_be_in_the_suggested_layout() -> None:
    collect = {
        "id": "ask",
        "block": "ui.interactive_input",
        "in": {"mode": "collect", "requirements": [{"id": "f", "type": "file"}]},
    }
    spec = TemplateSpec.model_validate(
        good_template(
            category="check",
            graph_snippet=[*good_template()["graph_snippet"], collect],
            ui_suggestions={"layout": ["pick"]},
        )
    )
    assert check_template(spec, REGISTRY) == [
        "UI ノード 'ask' が ui_suggestions.layout にありません。"
    ]
