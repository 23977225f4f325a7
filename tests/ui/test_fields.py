"""``render_fields``: one widget per requirement type, values kept by the Session State contract
(seed 002 §8.2) across reruns and page switches, uploads saved as paths, merge warnings when the
requirements change, and nothing cleared except by ``reset_fields``.

The app function reads its requirements and options from Session State, which the tests set
before the first run; a "page switch" is a run that does not draw the fields, which is what
makes Streamlit drop their widgets' state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from streamlit.testing.v1 import AppTest

from keiri_agent.examples import example_data_dir, example_names, example_plan
from keiri_agent.ui.fields import widget_key
from tests.ui.conftest import APP_TIMEOUT_S

STORE = "plan:p::node:ask::v0.1.0"
EXTERNAL: dict[str, Any] = {}  # the ``state`` mapping of the test that passes one
REQUIREMENTS: list[dict[str, Any]] = [
    {"id": "evidence", "type": "file", "label": "証跡", "accept": ".zip"},
    {"id": "many", "type": "files", "label": "明細ファイル", "required": False},
    {"id": "folder", "type": "folder", "label": "フォルダ", "required": False},
    {"id": "period", "type": "text", "label": "対象月", "hint": "2025-01", "description": "締める月"},
    {"id": "memo", "type": "chat", "label": "メモ", "required": False},
    {"id": "company", "type": "select", "label": "会社", "options": ["A社", {"value": "b", "label": "B社"}]},
    {"id": "kind", "type": "enum", "label": "区分", "options": ["売上", "仕入"], "default": "仕入"},
    {"id": "final", "type": "boolean", "label": "確定"},
    {"id": "amount", "type": "number", "label": "金額", "validation": {"min": 0, "max": 1000}},
    {"id": "rate", "type": "number", "label": "税率", "validation": {"min": 0.0}, "required": False},
    {"id": "rows", "type": "table", "label": "明細", "default": [{"品目": "紙", "数量": 2}]},
    {"id": "extra", "type": "table", "label": "追加の表", "required": False},
]  # fmt: skip


def fields_app() -> None:
    from pathlib import Path

    import streamlit as st

    from keiri_agent.ui.fields import render_fields, reset_fields
    from tests.ui.test_fields import EXTERNAL, STORE

    if st.session_state.get("page", "fields") != "fields":
        st.write("別のページ")
        return
    state = EXTERNAL if st.session_state.get("external") else None
    if st.button("リセット", key="reset"):
        reset_fields(STORE, state=state)
    upload_dir = st.session_state.get("upload_dir")
    st.session_state["returned"] = render_fields(
        st.session_state["reqs"],
        store_key=STORE,
        state=state,
        upload_dir=Path(upload_dir) if upload_dir else None,
        disabled=bool(st.session_state.get("disabled")),
    )


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(tmp_path / "workspace"))
    test = AppTest.from_function(fields_app, default_timeout=APP_TIMEOUT_S)
    test.session_state["reqs"] = REQUIREMENTS
    return test


def _key(field: str, part: str = "value") -> str:
    return widget_key(STORE, field, part)


def test_each_type_has_its_widget_with_japanese_labels_and_initial_values(app: AppTest) -> None:
    app.run()

    assert not app.exception, app.exception
    assert app.session_state["returned"] == {
        "evidence": None, "many": [], "folder": None, "period": None, "memo": None,
        "company": None, "kind": "仕入", "final": False, "amount": None, "rate": None,
        "rows": [{"品目": "紙", "数量": 2}], "extra": [],
    }  # fmt: skip
    assert app.file_uploader[0].label == "証跡（必須）"
    assert app.text_input(key=_key("evidence", "path")).label == "またはサーバー上のパス"
    assert app.text_area(key=_key("many", "path")).label.startswith("またはサーバー上のパス")
    assert app.text_input(key=_key("folder")).label == "フォルダ"
    period = app.text_input(key=_key("period"))
    assert (period.label, period.placeholder, period.help) == (
        "対象月（必須）",
        "例: 2025-01",
        "2025-01",
    )
    assert "締める月" in [c.value for c in app.caption]
    assert app.text_area(key=_key("memo")).label == "メモ"
    company = app.selectbox(key=_key("company"))
    assert company.options == ["A社", "B社"]  # labels of {value, label} options are shown
    assert company.value is None
    assert app.selectbox(key=_key("kind")).value == "仕入"
    assert app.radio(key=_key("final")).options == ["はい", "いいえ"]
    amount = app.number_input(key=_key("amount"))
    assert (amount.min, amount.max, amount.value) == (0, 1000, None)
    assert app.number_input(key=_key("rate")).min == 0.0
    (editor,) = app.dataframe  # the table editor, starting from the default row
    assert editor.value.to_dict("records") == [{"品目": "紙", "数量": 2}]
    assert app.text_area(key=_key("extra", "csv")).label == "追加の表"


def test_values_are_stored_at_once_and_survive_reruns_and_page_switches(
    app: AppTest, tmp_path: Path
) -> None:
    data = tmp_path / "workspace" / "data"
    app.run()
    app.text_input(key=_key("period")).set_value("2025-02")
    app.selectbox(key=_key("company")).set_value("b")
    app.radio(key=_key("final")).set_value(True)
    app.number_input(key=_key("amount")).set_value(120)
    app.text_area(key=_key("many", "path")).set_value(f"{data}/a.pdf\n\n{data}/b.pdf\n")
    app.text_area(key=_key("extra", "csv")).set_value("取引先,金額\nA社,100\n")
    app.run()
    expected = {
        "period": "2025-02", "company": "b", "final": True, "amount": 120,
        "many": [str(data / "a.pdf"), str(data / "b.pdf")],
        "extra": [{"取引先": "A社", "金額": "100"}],
    }  # fmt: skip
    stored = app.session_state[STORE]
    assert {k: stored[k] for k in expected} == expected
    app.run()
    assert {k: app.session_state["returned"][k] for k in expected} == expected

    app.session_state["page"] = "other"
    app.run()
    assert _key("period") not in app.session_state  # Streamlit dropped the widget's state
    app.session_state["page"] = "fields"
    app.run()

    assert not app.exception, app.exception
    assert {k: app.session_state["returned"][k] for k in expected} == expected
    assert app.text_input(key=_key("period")).value == "2025-02"
    assert app.selectbox(key=_key("company")).value == "b"
    assert app.radio(key=_key("final")).value is True
    assert app.number_input(key=_key("amount")).value == 120


def test_an_upload_is_saved_and_its_path_becomes_the_value(app: AppTest, tmp_path: Path) -> None:
    app.session_state["upload_dir"] = str(tmp_path / "uploads")
    app.run()
    app.file_uploader[0].set_value(("証跡.zip", b"PK\x05\x06" + bytes(18), "application/zip"))
    app.run()

    path = Path(app.session_state["returned"]["evidence"])
    assert path.name == "証跡.zip"
    assert path.is_relative_to(tmp_path / "uploads" / "evidence")
    assert path.read_bytes().startswith(b"PK")
    # The field names the file it uses; the folder the app keeps it in is not shown.
    assert app.text_input(key=_key("evidence", "path")).value == ""
    assert "アップロードしたファイル: 証跡.zip" in [c.value for c in app.caption]
    assert str(tmp_path) not in " ".join(str(c.value) for c in app.caption)
    # A path typed on the server replaces it.
    typed = tmp_path / "workspace" / "data" / "証跡.zip"
    app.text_input(key=_key("evidence", "path")).set_value(str(typed)).run()
    assert app.session_state["returned"]["evidence"] == str(typed)
    # Emptied again, the field uses the upload.
    app.text_input(key=_key("evidence", "path")).set_value("").run()
    assert app.session_state["returned"]["evidence"] == str(path)


def test_an_upload_survives_a_page_switch_and_the_reruns_after_it(
    app: AppTest, tmp_path: Path
) -> None:
    app.session_state["upload_dir"] = str(tmp_path / "uploads")
    app.run()
    app.file_uploader[0].set_value(("証跡.zip", b"PK\x05\x06" + bytes(18), "application/zip"))
    app.run()
    app.session_state["page"] = "other"
    app.run()
    app.session_state["page"] = "fields"
    app.run()  # the uploader is drawn anew, empty: that is no upload removed
    app.run()

    assert Path(app.session_state["returned"]["evidence"]).name == "証跡.zip"
    assert "アップロードしたファイル: 証跡.zip" in [c.value for c in app.caption]


def test_uploads_default_to_a_session_folder_under_the_workspace(
    app: AppTest, tmp_path: Path
) -> None:
    app.run()
    app.file_uploader[1].set_value(("a.csv", b"x\n1\n", "text/csv")).run()

    (path,) = map(Path, app.session_state["returned"]["many"])
    assert path.is_relative_to(tmp_path / "workspace")
    assert path.parent.parent.parent.name == "uploads"


def test_changed_requirements_merge_the_values_with_a_warning(app: AppTest) -> None:
    app.run()
    app.text_input(key=_key("period")).set_value("2025-03")
    app.selectbox(key=_key("company")).set_value("A社")
    app.run()
    kept = [r for r in REQUIREMENTS if r["id"] != "memo"]
    changed = [{**r, "options": ["C社"]} if r["id"] == "company" else r for r in kept]
    app.session_state["reqs"] = [*changed, {"id": "note", "type": "text", "label": "備考"}]
    app.run()

    assert not app.exception, app.exception
    (warning,) = app.warning
    lines = warning.value.splitlines()
    assert any("会社" in line and "選択肢" in line for line in lines)
    assert any("メモ" in line and "削除" in line for line in lines)
    assert any("備考" in line and "追加" in line for line in lines)
    assert app.session_state["returned"]["period"] == "2025-03"
    assert app.session_state["returned"]["company"] is None
    assert app.selectbox(key=_key("company")).value is None
    app.run()
    assert not app.warning  # said once, on the rerun that saw the change


def test_only_reset_clears_the_values(app: AppTest) -> None:
    app.run()
    app.text_input(key=_key("period")).set_value("2025-04").run()
    app.run()
    assert app.session_state["returned"]["period"] == "2025-04"

    app.button(key="reset").click().run()

    assert app.session_state["returned"]["period"] is None
    assert app.text_input(key=_key("period")).value == ""
    assert app.selectbox(key=_key("kind")).value == "仕入"


def test_values_go_to_the_given_state_mapping(app: AppTest) -> None:
    EXTERNAL.clear()
    app.session_state["external"] = True
    app.run()
    app.text_input(key=_key("period")).set_value("2025-05").run()

    assert EXTERNAL[STORE]["period"] == "2025-05"
    assert STORE not in app.session_state
    EXTERNAL.clear()


def test_disabled_fields_cannot_be_edited(app: AppTest) -> None:
    app.session_state["disabled"] = True
    app.run()

    assert app.text_input(key=_key("period")).disabled
    assert app.selectbox(key=_key("company")).disabled
    assert app.file_uploader[0].disabled


def test_a_table_typed_as_csv_that_cannot_be_read_is_said(app: AppTest) -> None:
    app.run()
    app.text_area(key=_key("extra", "csv")).set_value('a,b\n"1,2\n').run()

    assert not app.exception, app.exception
    assert any("「追加の表」を表として読めません" in w.value for w in app.warning)
    assert app.session_state["returned"]["extra"] == []


EXAMPLE_PATHS = {  # (plan, field) → the example path shown in its server-path box
    ("duplicate_invoice_check", "invoice_list"): "例: {workspace}/請求書一覧.xlsx",
    ("expense_policy_check", "rules"): "例: {workspace}/経費規程.pdf",
    ("expense_policy_check", "expenses"): "例: {workspace}/経費明細.xlsx",
    ("invoice_reconciliation", "evidence_zip"): "例: {workspace}/請求書.zip",
    ("invoice_reconciliation", "bank_statement"): "例: {workspace}/入金明細.xlsx",
    ("invoice_reconciliation_llm", "evidence_zip"): "例: {workspace}/証跡.zip",
    ("invoice_reconciliation_llm", "bank_statement"): "例: {workspace}/入金明細.xlsx",
    ("invoice_reconciliation_llm", "workbook"): "例: {workspace}/差異を書き込む.xlsx",
    ("monthly_sales_report", "sales_file"): "例: {workspace}/売上明細.csv",
}


def _file_requirements(name: str) -> list[dict[str, Any]]:
    plan = yaml.safe_load(example_plan(name).read_text(encoding="utf-8"))
    return [
        req
        for node in plan["graph"]
        if node.get("block") == "ui.interactive_input"
        if isinstance(node["in"]["requirements"], list)  # not computed during the run
        for req in node["in"]["requirements"]
        if req["type"] in ("file", "files")
    ]


@pytest.mark.parametrize("name", example_names())
def test_each_server_path_box_shows_an_example_that_fits_its_field(
    app: AppTest, name: str, tmp_path: Path
) -> None:
    """The example is in the workspace, where a typed path is accepted."""
    workspace = (tmp_path / "workspace").as_posix()
    reqs = _file_requirements(name)
    app.session_state["reqs"] = reqs
    app.run()

    assert not app.exception, app.exception
    shown = {
        (name, req["id"]): app.text_input(key=_key(req["id"], "path")).placeholder for req in reqs
    }
    assert shown == {
        key: path.format(workspace=workspace)
        for key, path in EXAMPLE_PATHS.items()
        if key[0] == name
    }
    for req in reqs:  # the example has an extension the field accepts
        assert shown[(name, req["id"])].endswith(req["accept"].split(",")[0])


def test_a_multi_file_box_without_accepted_types_shows_a_path_named_after_it(
    app: AppTest, tmp_path: Path
) -> None:
    app.run()
    placeholder = app.text_area(key=_key("many", "path")).placeholder
    assert placeholder == f"例: {(tmp_path / 'workspace').as_posix()}/明細"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the workspace with a file in it, and a link to it from the workspace."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.csv").write_text("secret\n", encoding="utf-8")
    (tmp_path / "workspace").mkdir(exist_ok=True)
    (tmp_path / "workspace" / "link").symlink_to(folder, target_is_directory=True)
    return folder


REFUSED = [
    "/etc/passwd",
    "{tmp}/outside/secret.csv",
    "{tmp}/outside/ない.csv",
    "{tmp}/workspace/../outside/secret.csv",
    "{tmp}/workspace/link/secret.csv",
    "~/secret.csv",
]


@pytest.mark.parametrize("typed", REFUSED)
def test_a_typed_path_outside_the_workspace_is_refused_under_its_field(
    app: AppTest, tmp_path: Path, outside: Path, typed: str
) -> None:
    accepted = tmp_path / "workspace" / "証跡.zip"
    app.run()
    app.text_input(key=_key("evidence", "path")).set_value(str(accepted)).run()
    assert app.session_state["returned"]["evidence"] == str(accepted)

    app.text_input(key=_key("evidence", "path")).set_value(typed.format(tmp=tmp_path)).run()

    assert not app.exception, app.exception
    assert app.session_state["returned"]["evidence"] is None  # not the path accepted before
    assert app.session_state[STORE]["evidence"] is None
    (error,) = app.error
    assert error.value.startswith("「証跡」のパス「")
    assert (
        "作業ディレクトリ（KEIRI_WORKSPACE_ROOT）・サンプルデータの中のファイルだけ" in error.value
    )
    assert str(outside) not in error.value.replace(typed.format(tmp=tmp_path), "")


def test_one_refused_line_of_a_multi_file_box_leaves_it_empty(
    app: AppTest, tmp_path: Path, outside: Path
) -> None:
    app.run()
    lines = f"{tmp_path}/workspace/a.csv\n{outside}/secret.csv\n"
    app.text_area(key=_key("many", "path")).set_value(lines).run()

    assert not app.exception, app.exception
    assert app.session_state["returned"]["many"] == []
    (error,) = app.error
    assert error.value.startswith("「明細ファイル」のパス「")


def test_a_folder_field_takes_only_folders_inside(app: AppTest, tmp_path: Path) -> None:
    app.run()
    app.text_input(key=_key("folder")).set_value("/etc").run()
    assert app.session_state["returned"]["folder"] is None
    (error,) = app.error
    assert error.value.startswith("「フォルダ」のパス「/etc」は使えません。")

    app.text_input(key=_key("folder")).set_value(f"{tmp_path}/workspace/月次").run()
    assert not app.error
    assert app.session_state["returned"]["folder"] == str(tmp_path / "workspace" / "月次")


def test_the_example_data_may_be_typed(app: AppTest) -> None:
    sample = next(p for p in sorted(example_data_dir().rglob("*.zip")))
    app.run()
    app.text_input(key=_key("evidence", "path")).set_value(str(sample)).run()

    assert not app.error
    assert app.session_state["returned"]["evidence"] == str(sample.resolve())
