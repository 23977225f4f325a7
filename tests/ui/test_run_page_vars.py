"""The 実行 page's file vars (設定値 a block reads as a file) as the app's file field: a file
uploaded there is what the run reads, the example's sample default still runs, a typed path
outside the allowed folders is refused in Japanese and nothing runs, and リセット clears the
upload. Driven with Streamlit's AppTest (its ``file_uploader`` takes a file as a browser
sends it)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from streamlit.testing.v1 import AppTest

from keiri_agent.blocks.catalog import example_node
from keiri_agent.blocks.registry import default_registry
from keiri_agent.ui.fields import widget_key
from keiri_agent.ui.run.page import OUTCOMES_KEY
from keiri_agent.ui.run.plan_vars import FILE_FIELD_ID, var_key
from tests.ui.conftest import run_page

PAGE_TIMEOUT_S = 120
PLAN_ID = "tests/ledger_vars"
PLAN = f"""\
apiVersion: v1
id: {PLAN_ID}
version: 1.0.0
vars:
  ledger: examples/data/payment_matching/請求一覧.csv
  month: 2025-01
graph:
  - id: read_ledger
    description: 元帳の読み込み
    block: file.read_table
    in:
      path: ${{vars.ledger}}
    out:
      rows: ledger_rows
"""
UPLOADED = "科目,金額\n売掛金,123456\n普通預金,98765\n".encode()


def _open(env: Path, plan: str) -> AppTest:
    """The 実行 page showing ``plan`` (saved as designs/ledger.yaml)."""
    designs = env / "designs"
    designs.mkdir()
    (designs / "ledger.yaml").write_text(plan, encoding="utf-8")
    app = AppTest.from_function(run_page, default_timeout=PAGE_TIMEOUT_S)
    app.run()
    return app.selectbox(key="run_plan").set_value("ledger.yaml").run()


@pytest.fixture
def page(env: Path) -> AppTest:
    return _open(env, PLAN)


def _part(part: str) -> str:
    return widget_key(var_key("run", PLAN_ID, "ledger"), FILE_FIELD_ID, part)


def _captions(page: AppTest) -> list[str]:
    return [str(c.value) for c in page.caption]


def _table(page: AppTest, column: str) -> pd.DataFrame:
    for frame in page.dataframe:
        if column in frame.value.columns:
            return frame.value
    raise AssertionError(f"no table has the column {column}")


def test_a_file_var_is_an_upload_field_named_as_the_plan_names_its_reader(
    page: AppTest,
) -> None:
    (uploader,) = page.file_uploader
    assert uploader.label == "元帳の読み込み"
    assert page.text_input(key=_part("path")).label == "またはサーバー上のパス"
    assert "サンプルデータ: 請求一覧.csv" in _captions(page)


def _offered(page: AppTest) -> list[str]:
    """The file types the page's one file field takes, as its note under it names them
    (``chrome.file_uploader``: Streamlit itself is told none, so that another type is refused
    in Japanese rather than in Streamlit's English)."""
    notes = [c for c in _captions(page) if c.endswith("ここにドラッグしても選べます。")]
    assert len(notes) == 1, notes
    formats = notes[0].split(" ファイル、")[0] if " ファイル、" in notes[0] else ""
    return [f".{kind.lower()}" for kind in formats.split("・") if kind]


def test_the_uploader_offers_only_the_file_types_the_reading_block_reads(
    page: AppTest,
) -> None:
    # file.read_table reads CSV/TSV/text and Excel workbooks: the uploader offers those only
    assert len(page.file_uploader) == 1
    assert _offered(page) == [".csv", ".tsv", ".txt", ".xlsx", ".xlsm"]
    assert any(c.startswith("CSV・TSV・TXT・XLSX・XLSM ファイル、") for c in _captions(page))


def test_the_run_reads_the_uploaded_file(page: AppTest, env: Path) -> None:
    page.file_uploader[0].set_value(("元帳.csv", UPLOADED, "text/csv")).run()
    assert "アップロードしたファイル: 元帳.csv" in _captions(page)

    page.button(key="run_start").click().run()

    assert not page.exception, page.exception
    assert any("成功しました" in str(s.value) for s in page.success)
    shown = _table(page, "科目")
    assert list(shown["科目"]) == ["売掛金", "普通預金"]
    assert [int(v) for v in shown["金額"]] == [123456, 98765]
    saved = Path(page.session_state[var_key("run", PLAN_ID, "ledger")][FILE_FIELD_ID])
    assert saved.is_relative_to(env / "workspace")  # where the page may read
    assert saved.read_bytes() == UPLOADED


def test_the_sample_default_is_shown_as_sample_data_and_runs(page: AppTest) -> None:
    # the bundled file is named as sample data, not by the folder it sits in
    assert "サンプルデータ: 請求一覧.csv" in _captions(page)
    assert page.text_input(key=_part("path")).value == ""
    page.button(key="run_start").click().run()

    assert not page.exception, page.exception
    assert any("成功しました" in str(s.value) for s in page.success)
    assert "INV-2025-0101" in set(_table(page, "請求番号")["請求番号"].astype(str))


def test_a_typed_path_outside_the_allowed_folders_is_refused_and_nothing_runs(
    page: AppTest, env: Path
) -> None:
    outside = env / "elsewhere" / "元帳.csv"
    outside.parent.mkdir()
    outside.write_bytes(UPLOADED)
    page.text_input(key=_part("path")).set_value(str(outside)).run()

    assert not page.exception, page.exception
    (error,) = page.error
    assert "「元帳の読み込み」のパス" in str(error.value)
    assert "作業ディレクトリ" in str(error.value)
    page.button(key="run_start").click().run()
    assert PLAN_ID not in page.session_state[OUTCOMES_KEY]
    assert not (env / "runs" / "tests" / "ledger_vars").exists()


def test_a_typed_path_in_the_workspace_is_read(page: AppTest, env: Path) -> None:
    inside = env / "workspace" / "元帳.csv"
    inside.parent.mkdir(parents=True, exist_ok=True)
    inside.write_bytes(UPLOADED)
    page.text_input(key=_part("path")).set_value(str(inside)).run()
    page.button(key="run_start").click().run()

    assert not page.exception, page.exception
    assert list(_table(page, "科目")["科目"]) == ["売掛金", "普通預金"]


def test_reset_clears_the_upload(page: AppTest) -> None:
    page.file_uploader[0].set_value(("元帳.csv", UPLOADED, "text/csv")).run()
    assert "アップロードしたファイル: 元帳.csv" in _captions(page)

    page.button(key="run_reset").click().run()

    assert not page.exception, page.exception
    assert "アップロードしたファイル: 元帳.csv" not in _captions(page)
    assert "サンプルデータ: 請求一覧.csv" in _captions(page)
    page.button(key="run_start").click().run()
    assert "INV-2025-0101" in set(_table(page, "請求番号")["請求番号"].astype(str))


def test_the_upload_is_kept_for_the_plan_while_another_plan_is_shown(page: AppTest) -> None:
    # the field is drawn anew on return: its empty uploader is no upload removed
    page.file_uploader[0].set_value(("元帳.csv", UPLOADED, "text/csv")).run()
    page.selectbox(key="run_plan").set_value("サンプル: 入金消込").run()
    assert "アップロードしたファイル: 元帳.csv" not in _captions(page)

    page.selectbox(key="run_plan").set_value("ledger.yaml").run()

    assert "アップロードしたファイル: 元帳.csv" in _captions(page)
    page.button(key="run_start").click().run()
    assert list(_table(page, "科目")["科目"]) == ["売掛金", "普通預金"]


@pytest.mark.parametrize("upload", [False, True], ids=["sample", "uploaded"])
def test_a_file_var_may_have_a_name_no_input_field_may_have(env: Path, upload: bool) -> None:
    # approved / response are refused as interactive-input field ids, not as var names
    plan = PLAN.replace("  ledger:", "  approved:").replace("vars.ledger", "vars.approved")
    page = _open(env, plan)
    assert not page.error, [e.value for e in page.error]
    if upload:
        page.file_uploader[0].set_value(("元帳.csv", UPLOADED, "text/csv")).run()
    page.button(key="run_start").click().run()

    assert not page.exception, page.exception
    assert any("成功しました" in str(s.value) for s in page.success)
    if upload:
        assert list(_table(page, "科目")["科目"]) == ["売掛金", "普通預金"]
    else:
        assert "INV-2025-0101" in set(_table(page, "請求番号")["請求番号"].astype(str))


def _reader(block: str, port: str, node_id: str, description: str) -> str:
    """A node of ``block`` (its declared examples as inputs: the plan validates) reading var
    ``ledger`` at ``port``, as YAML lines of a plan's graph."""
    node = example_node(default_registry().get(block), node_id)
    node = {"id": node_id, "description": description, **node}
    node["in"][port] = "${vars.ledger}"
    text = yaml.safe_dump([node], allow_unicode=True, sort_keys=False)
    return "".join(f"  {line}\n" for line in text.splitlines())


@pytest.mark.parametrize(
    ("block", "port", "offered"),
    [
        ("excel.read_data", "path", [".xlsx", ".xlsm"]),  # what both read: Excel workbooks
        # a bank file may also be a fixed-length .dat, which file.read_table does not take
        ("file.read_bank_statement", "path", [".csv", ".tsv", ".txt", ".xlsx", ".xlsm"]),
        ("data.convert", "source", []),  # a place of any kind: any file
    ],
)
def test_a_file_var_two_blocks_read_offers_what_both_accept(
    env: Path, block: str, port: str, offered: list[str]
) -> None:
    page = _open(env, PLAN + _reader(block, port, "read_again", "元帳の再読み込み"))
    assert len(page.file_uploader) == 1
    assert _offered(page) == offered


TABLES = [".csv", ".tsv", ".txt", ".xlsx", ".xlsm"]  # what documents.read_table reads
# Each port that reads a file -> the types the app offers for a var given to it (what the
# block's code reads there).
FILE_PORTS = {
    ("file.read_table", "path"): TABLES,
    ("excel.read_data", "path"): [".xlsx", ".xlsm"],
    ("excel.write", "workbook"): [".xlsx", ".xlsm"],
    ("file.read_bank_statement", "path"): [".txt", ".dat", ".csv", ".tsv", ".xlsx", ".xlsm"],
    ("file.parse_zip_2tier", "zip_bytes"): [".zip"],
    ("file.extract_text", "paths"): [
        *[".pdf", ".docx", ".xlsx", ".xlsm", ".pptx"],
        *[".txt", ".md", ".csv", ".tsv", ".json", ".html", ".htm"],
    ],
    ("ai.analyze_data", "files"): TABLES,
    ("table.match_payments", "customers"): TABLES,
    ("table.match_payments", "aliases"): [".csv"],  # a learned-names CSV
}


def test_the_table_covers_every_port_that_names_file_types() -> None:
    assert set(FILE_PORTS) == {
        (spec.id, name)
        for spec in default_registry().list()
        for name, port in spec.inputs.items()
        if port.get("path") == "read" and port.get("accept")
    }


ONLY_READER = f"""\
apiVersion: v1
id: {PLAN_ID}
version: 1.0.0
vars:
  ledger: null
graph:
"""


@pytest.mark.parametrize(
    ("block", "port"), list(FILE_PORTS), ids=[f"{b}.{p}" for b, p in FILE_PORTS]
)
def test_each_file_port_s_var_is_offered_only_the_types_its_block_reads(
    env: Path, block: str, port: str
) -> None:
    reader = _reader(block, port, "read_given", "渡したファイルの読み込み")
    page = _open(env, ONLY_READER + reader)
    (uploader,) = page.file_uploader
    assert uploader.label == "渡したファイルの読み込み"
    assert _offered(page) == FILE_PORTS[block, port]


def test_a_var_whose_yaml_cannot_be_read_is_refused_in_japanese(env: Path) -> None:
    plan = PLAN.replace("  month: 2025-01", "  accounts: [売掛金, 普通預金]")
    page = _open(env, plan)
    field = page.text_input(key=var_key("run", PLAN_ID, "accounts"))
    page = field.set_value("[売掛金, 普通預金").run()
    page.button(key="run_start").click().run()

    shown = [str(e.value) for e in page.error]
    assert any(
        "accounts の値を YAML として読めません" in text and "行" in text for text in shown
    ), shown
    assert not any(word in text for text in shown for word in ("expected", "flow sequence")), shown
    assert not page.success  # nothing ran


LABELLED = PLAN.replace(
    "  month: 2025-01\n",
    "  month: 2025-01\n  fee: 880\n  confirm: false\n"
    "ui:\n  vars:\n    ledger: 元帳（CSV）\n    fee: 差し引かれてもよい振込手数料の上限（円）\n"
    "    confirm: 要確認の入金を人に尋ねる\n",
)


def test_vars_labelled_by_the_plan_show_their_labels_with_the_id_in_the_help(env: Path) -> None:
    page = _open(env, LABELLED)
    assert not page.exception, page.exception
    (uploader,) = page.file_uploader
    assert uploader.label == "元帳（CSV）"  # the plan's label wins over its reader's name
    fee = page.number_input(key=widget_key_of("fee"))
    assert fee.label == "差し引かれてもよい振込手数料の上限（円）"
    assert fee.value == 880
    assert "--var fee=" in str(fee.help)  # the id only where the CLI's name is explained
    confirm = page.checkbox(key=widget_key_of("confirm"))
    assert confirm.label == "要確認の入金を人に尋ねる"
    month = page.text_input(key=widget_key_of("month"))
    assert month.label == "month"  # an unlabelled var keeps its name


def widget_key_of(name: str) -> str:
    return var_key("run", PLAN_ID, name)
