"""`keiri-agent plan ...` and `keiri-agent blocks ...` as a person at a terminal uses them.

Plans use the test block kit (tests/plan/blockkit) through KEIRI_BLOCK_SPEC_DIRS, exactly as a
user adds their own blocks; runs and designs live under the test's tmp_path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner, Result

from keiri_agent.cli import app
from keiri_agent.cli.common import EXIT_USER_ERROR
from keiri_agent.cli.plan import parse_vars
from tests.plan.blockkit import SPEC_DIR

runner = CliRunner()

CALC = """\
apiVersion: v1
id: calc
vars:
  n: 2
graph:
  - id: first
    block: test.add
    in: {a: "${vars.n}", b: 1}
    out: {sum: total}
  - id: second
    block: test.add
    in: {a: "${first.total}", b: 10}
"""

INVALID = """\
apiVersion: v1
id: broken
graph:
  - id: first
    block: test.add
    in: {b: 1}
  - id: second
    block: test.add
    in: {a: "${missing.value}"}
"""

FAILING = """\
apiVersion: v1
id: failing
graph:
  - id: boom
    block: test.fail
    in: {message: 計算に失敗しました}
"""

SWITCH = """\
apiVersion: v1
id: switch
vars:
  flag: true
  label: none
graph:
  - id: gate
    block: test.fail
    in: {fail: "${vars.flag}", value: "${vars.label}"}
"""

APPROVAL = """\
apiVersion: v1
id: approval
graph:
  - id: first
    block: test.add
    in: {a: 1, b: 2}
  - id: ask
    block: ui.interactive_input
    in:
      mode: mixed
      message: "合計 ${first.sum} を確認し、件数を入力してください"
      requirements:
        - {id: note, type: text, label: メモ}
        - {id: count, type: number, label: 件数}
  - id: after
    block: test.add
    in: {a: "${first.sum}", b: "${ask.collected_data.count}"}
"""

LEGACY = """\
apiVersion: v1
id: legacy
graph:
  - id: first
    block: test.add
    in: {a: 1, b: 2}
  - id: confirm
    block: ui.confirmation
    in:
      title: 確認
      message: "合計 ${first.sum} でよいですか"
    out: {approved: ok}
  - id: after
    block: test.fail
    in: {fail: "${confirm.ok}", value: 1}
"""


@pytest.fixture(autouse=True)
def plan_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("KEIRI_BLOCK_SPEC_DIRS", str(SPEC_DIR))
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(tmp_path / "designs"))
    (tmp_path / "designs").mkdir()
    return tmp_path


def _plan(tmp_path: Path, text: str, name: str = "plan.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _invoke(*args: str | Path) -> Result:
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def _log(path: str) -> list[dict[str, Any]]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _started(log: list[dict[str, Any]]) -> list[str]:
    return [e["node_id"] for e in log if e["event"] == "node_start"]


# --- validate ---------------------------------------------------------------------------------


def test_validate_a_valid_plan(tmp_path: Path) -> None:
    plan = _plan(tmp_path, CALC)
    result = _invoke("plan", "validate", plan)
    assert result.exit_code == 0, result.output
    assert "問題は見つかりませんでした" in result.stdout

    result = _invoke("plan", "validate", plan, "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"valid": True, "errors": [], "warnings": []}


def test_validate_lists_every_error_with_its_line(tmp_path: Path) -> None:
    plan = _plan(tmp_path, INVALID)
    result = _invoke("plan", "validate", plan)
    assert result.exit_code == 1
    assert f"{plan}:6:5 [a + b] MISSING_REQUIRED_INPUT" in result.stdout  # named, not its id
    assert f"{plan}:9:10 [a + b 2] UNRESOLVED_REFERENCE" in result.stdout
    assert "    ヒント: in に a: を追加してください" in result.stdout
    assert "エラー 2 件" in result.stdout

    result = _invoke("plan", "validate", plan, "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["valid"] is False
    assert report["warnings"] == []
    keys = {"code", "message", "node_id", "path", "line", "column", "hint"}
    assert all(set(e) == keys for e in report["errors"])  # `file` only for other files
    located = {(e["code"], e["node_id"], e["line"], e["column"]) for e in report["errors"]}
    assert located == {
        ("MISSING_REQUIRED_INPUT", "first", 6, 5),
        ("UNRESOLVED_REFERENCE", "second", 9, 10),
    }


def test_validate_names_the_file_of_an_error_in_a_subflow(tmp_path: Path) -> None:
    sub = tmp_path / "designs" / "sub.yaml"
    sub.write_text(
        "apiVersion: v1\nid: sub\ngraph:\n  - id: inner\n    block: test.add\n    in: {b: 1}\n",
        encoding="utf-8",
    )
    parent = _plan(
        tmp_path,
        "apiVersion: v1\nid: parent\ngraph:\n  - id: call\n    type: subflow\n"
        "    call: {plan_id: sub}\n",
    )
    result = _invoke("plan", "validate", parent, "--json")
    assert result.exit_code == 1
    (error,) = json.loads(result.stdout)["errors"]
    assert error["node_id"] == "call/inner"
    assert Path(error["file"]).resolve() == sub.resolve()
    assert (error["line"], error["column"]) == (6, 5)

    result = _invoke("plan", "validate", parent)
    assert f"{sub.resolve()}:6:5 [call/inner] MISSING_REQUIRED_INPUT" in result.stdout


def test_validate_a_missing_file_is_a_user_error(tmp_path: Path) -> None:
    result = _invoke("plan", "validate", tmp_path / "none.yaml")
    assert result.exit_code == 2
    assert "見つかりません" in result.stderr
    assert "Traceback" not in result.output


# --- dry-run ----------------------------------------------------------------------------------


def test_dry_run_ok_and_with_a_var_of_the_wrong_type(tmp_path: Path) -> None:
    plan = _plan(tmp_path, CALC)
    result = _invoke("plan", "dry-run", plan)
    assert result.exit_code == 0, result.output
    assert "a + b 2" in result.stdout  # nodes of a block without a label: its description's
    assert "first" not in result.stdout  # first sentence, numbered; never a node's id
    assert "ドライラン成功" in result.stdout

    result = _invoke("plan", "dry-run", plan, "--var", "n=abc", "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["ok"] is False
    statuses = {n["node_id"]: n["status"] for n in report["nodes"]}
    assert statuses["first"] == "failed"
    assert [(f["code"], f["node_id"]) for f in report["findings"]] == [("TYPE_MISMATCH", "first")]


def test_dry_run_of_an_invalid_plan_shows_the_validation_errors(tmp_path: Path) -> None:
    result = _invoke("plan", "dry-run", _plan(tmp_path, INVALID))
    assert result.exit_code == 1
    assert "MISSING_REQUIRED_INPUT" in result.stdout
    assert ":6:5 [a + b]" in result.stdout


# --- run --------------------------------------------------------------------------------------


def test_run_success_prints_outputs_and_progress(tmp_path: Path) -> None:
    plan = _plan(tmp_path, CALC)
    result = _invoke("plan", "run", plan, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["status"] == "success"
    assert data["outputs"] == {"first": {"total": 3}, "second": {"sum": 13}}
    assert data["error"] is None
    assert Path(data["log_path"]).is_relative_to(tmp_path / "runs")

    result = _invoke("plan", "run", plan)
    assert result.exit_code == 0, result.output
    assert "▶ a + b 開始" in result.stderr  # progress goes to stderr, the result to stdout
    assert "✓ a + b 2 完了" in result.stderr
    assert result.stdout.startswith("結果: 成功（")
    assert "実行ログ: " in result.stdout
    assert "▶" not in result.stdout


def test_vars_are_parsed_as_yaml_scalars(tmp_path: Path) -> None:
    assert parse_vars(["n=3", "flag=true", "name=abc", "day=2024-01-31", "empty=", "x=a=b"]) == {
        "n": 3,
        "flag": True,
        "name": "abc",
        "day": "2024-01-31",
        "empty": "",
        "x": "a=b",
    }
    result = _invoke("plan", "run", _plan(tmp_path, CALC), "--var", "n=5", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["outputs"]["second"] == {"sum": 16}

    # `flag=false` is the boolean false (the string "false" would not fit `fail: boolean`).
    switch = _plan(tmp_path, SWITCH, "switch.yaml")
    result = _invoke("plan", "run", switch, "--var", "flag=false", "--var", "label=7", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["outputs"]["gate"] == {"value": 7}


def test_vars_take_yaml_and_json_lists_and_mappings(tmp_path: Path) -> None:
    assert parse_vars(["ids=[1, 2, 3]", 'opts={"mode": "fast", "n": 2}', "tags=[a, b]"]) == {
        "ids": [1, 2, 3],
        "opts": {"mode": "fast", "n": 2},
        "tags": ["a", "b"],
    }
    # Block-style text is not a collection: it stays the string typed.
    assert parse_vars(["note=a: b"]) == {"note": "a: b"}
    switch = _plan(tmp_path, SWITCH, "switch.yaml")
    result = _invoke(
        "plan", "run", switch, "--var", "flag=false", "--var", "label=[1, {a: x}]", "--json"
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["outputs"]["gate"] == {"value": [1, {"a": "x"}]}


def test_vars_file_sets_vars_and_var_overrides_it(tmp_path: Path) -> None:
    items = [{"id": i, "name": f"取引先{i}"} for i in range(500)]
    vars_file = tmp_path / "vars.json"
    vars_file.write_text(json.dumps({"flag": False, "label": items}), encoding="utf-8")
    switch = _plan(tmp_path, SWITCH, "switch.yaml")
    result = _invoke("plan", "run", switch, "--vars", vars_file, "--json")
    assert result.exit_code == 0, result.output
    log = _log(json.loads(result.stdout)["log_path"])
    outputs = next(e for e in log if e["event"] == "node_complete")
    assert len(outputs["outputs"]["value"]) <= 200  # the log shows a display copy ...
    assert parse_vars([], vars_file)["label"] == items  # ... of what the run was given

    yaml_file = _plan(tmp_path, "flag: false\nlabel: [x, y]\n", "vars.yaml")
    result = _invoke("plan", "run", switch, "--vars", yaml_file, "--var", "label=[z]", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["outputs"]["gate"] == {"value": ["z"]}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--var", "ids=[1, 2"], "--var ids の値をリストやマッピングとして読めません"),
        (["--var", "opts={a: [}"], "--var opts の値をリストやマッピングとして読めません"),
        (["--vars", "missing.yaml"], "が見つかりません"),
        (["--vars", "list.yaml"], "はマッピング（vars の名前 → 値）ではありません"),
        (["--vars", "broken.yaml"], "を YAML/JSON として読めません"),
    ],
)
def test_unreadable_vars_are_user_errors(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n", encoding="utf-8")
    (tmp_path / "broken.yaml").write_text("a: [1,\n", encoding="utf-8")
    plan = _plan(tmp_path, CALC)
    paths = [str(tmp_path / a) if a.endswith(".yaml") else a for a in args]
    result = _invoke("plan", "run", plan, *paths)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "ヒント" in result.stderr
    assert not (tmp_path / "runs").exists()  # nothing started


def test_a_malformed_or_unknown_var_is_a_user_error(tmp_path: Path) -> None:
    plan = _plan(tmp_path, CALC)
    result = _invoke("plan", "run", plan, "--var", "n")
    assert result.exit_code == 2
    assert "KEY=VALUE" in result.stderr
    assert "ヒント" in result.stderr
    assert not (tmp_path / "runs").exists()  # nothing started

    result = _invoke("plan", "run", plan, "--var", "zzz=1")
    assert result.exit_code == 2
    assert "指定できる vars: n" in result.stderr


def test_a_failing_plan_exits_1_with_the_error(tmp_path: Path) -> None:
    plan = _plan(tmp_path, FAILING)
    result = _invoke("plan", "run", plan, "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["status"] == "failed"
    assert data["error"]["code"] == "API_ERROR"
    assert data["error"]["message"] == "計算に失敗しました"
    assert data["error"]["details"]["node_id"] == "boom"

    result = _invoke("plan", "run", plan)
    assert result.exit_code == 1
    assert result.stdout.startswith("結果: 失敗（")
    assert "計算に失敗しました" in result.stderr
    assert "ノード: fail が真なら失敗する（boom）" in result.stderr
    assert "ヒント: 入力を確認してください。" in result.stderr


def test_an_invalid_plan_is_not_run(tmp_path: Path) -> None:
    plan = _plan(tmp_path, INVALID)
    result = _invoke("plan", "run", plan)
    assert result.exit_code == 1
    assert f"{plan}:6:5 [a + b] MISSING_REQUIRED_INPUT" in result.stdout
    assert not list((tmp_path / "runs").rglob("*.jsonl"))

    result = _invoke("plan", "run", plan, "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["status"] == "invalid"
    assert data["error"]["code"] == "PLAN_INVALID"
    assert {e["line"] for e in data["error"]["details"]["errors"]} == {6, 9}


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ("missing.yaml", "を読めません: ファイルまたはフォルダがありません"),
        ("start: [1,\n", "を読めません: 2 行 1 列目あたりの YAML の書き方に誤りがあります"),
        ("- tax_rate\n- 0.1\n", "YAML のマッピング）ではありません（いちばん上がリストです）"),
    ],
    ids=["missing", "not YAML", "a list"],
)
def test_a_plan_config_that_cannot_be_read_stops_the_run_in_japanese(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str, said: str
) -> None:
    path = tmp_path / "missing.yaml"
    if config != path.name:
        path = _plan(tmp_path, config, "plan_config.yaml")
    monkeypatch.setenv("KEIRI_PLAN_CONFIG", str(path))

    result = _invoke("plan", "run", _plan(tmp_path, CALC))

    assert result.exit_code == EXIT_USER_ERROR  # a setting to fix, like a mistyped option
    assert f"エラー（設定の誤り）: 設定ファイル {path} " in result.stderr
    assert said in result.stderr
    assert "ヒント: KEIRI_PLAN_CONFIG に YAML ファイルのパスを指定してください。" in result.stderr
    assert not list((tmp_path / "runs").rglob("*.jsonl"))  # nothing run


# --- waiting for input, resume, rerun ---------------------------------------------------------


def test_waiting_input_then_resume_then_rerun(tmp_path: Path) -> None:
    plan = _plan(tmp_path, APPROVAL)
    result = _invoke("plan", "run", plan)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("結果: 入力待ち（")
    assert "  人による入力・確認: 合計 3 を確認し、件数を入力してください" in out
    run_id = out.split("実行 ID: ")[1].split()[0]
    assert f"keiri-agent plan resume {run_id} --answers answers.yaml" in out
    example_text = out.split("書き換えてください）:\n")[1].split("次のコマンドで再開します")[0]
    example = yaml.safe_load(example_text)
    assert example == {"ask": {"note": "（ここに入力）", "count": 0, "approved": True}}
    assert "# 件数（number、必須）" in example_text

    answers = tmp_path / "answers.yaml"
    example["ask"].update(note="確認済み", count=4)
    answers.write_text(yaml.safe_dump(example, allow_unicode=True), encoding="utf-8")
    result = _invoke("plan", "resume", run_id, "--answers", answers, "--json")
    assert result.exit_code == 0, result.output
    resumed = json.loads(result.stdout)
    assert resumed["status"] == "success"
    assert resumed["run_id"] != run_id
    assert resumed["outputs"]["after"] == {"sum": 7}
    assert resumed["outputs"]["ask"]["collected_data"] == {"note": "確認済み", "count": 4}
    log = _log(resumed["log_path"])
    assert _started(log) == ["ask", "after"]  # `first` was reused, not executed again
    reused = [e["node_id"] for e in log if e["event"] == "node_complete" and e.get("reused")]
    assert reused == ["first"]

    result = _invoke("plan", "rerun", resumed["run_id"], "--from", "after", "--json")
    assert result.exit_code == 0, result.output
    rerun = json.loads(result.stdout)
    assert rerun["status"] == "success"
    assert rerun["outputs"]["after"] == {"sum": 7}
    assert _started(_log(rerun["log_path"])) == ["after"]


def test_waiting_input_as_json_includes_an_answers_example(tmp_path: Path) -> None:
    result = _invoke("plan", "run", _plan(tmp_path, APPROVAL), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["status"] == "waiting_input"
    assert [w["node_id"] for w in data["waiting"]] == ["ask"]
    assert data["answers_example"] == {
        "ask": {"note": "（ここに入力）", "count": 0, "approved": True}
    }
    assert data["resume_command"].startswith(f"keiri-agent plan resume {data['run_id']} ")


def test_resume_errors_are_user_errors(tmp_path: Path) -> None:
    result = _invoke("plan", "resume", "run_does_not_exist")
    assert result.exit_code == 2
    assert "見つかりません" in result.stderr

    run_id = json.loads(_invoke("plan", "run", _plan(tmp_path, APPROVAL), "--json").stdout)[
        "run_id"
    ]
    result = _invoke("plan", "resume", run_id, "--answers", tmp_path / "none.yaml")
    assert result.exit_code == 2
    assert "回答ファイル" in result.stderr
    result = _invoke("plan", "rerun", run_id, "--from", "nowhere")
    assert result.exit_code == 2
    assert "nowhere" in result.stderr


# --- migrate ----------------------------------------------------------------------------------


def test_migrate_a_legacy_confirmation(tmp_path: Path) -> None:
    legacy = _plan(tmp_path, LEGACY, "legacy.yaml")
    assert _invoke("plan", "validate", legacy).exit_code == 1  # the old block is refused

    result = _invoke("plan", "migrate", legacy)
    assert result.exit_code == 0, result.output
    assert "ui.confirmation → ui.interactive_input" in result.stdout
    written = tmp_path / "legacy.migrated.yaml"
    assert f"書き込み先: {written}" in result.stdout
    migrated = yaml.safe_load(written.read_text(encoding="utf-8"))
    assert migrated["graph"][1]["block"] == "ui.interactive_input"
    assert migrated["graph"][1]["in"]["mode"] == "confirm"
    assert legacy.read_text(encoding="utf-8") == LEGACY  # the original is untouched
    assert _invoke("plan", "validate", written).exit_code == 0

    result = _invoke("plan", "migrate", written)
    assert result.exit_code == 0
    assert "移行の必要はありません" in result.stdout

    result = _invoke("plan", "migrate", legacy, "--in-place")
    assert result.exit_code == 0, result.output
    assert "ui.interactive_input" in legacy.read_text(encoding="utf-8")
    assert (tmp_path / "legacy.yaml.bak").read_text(encoding="utf-8") == LEGACY


def test_migrate_a_missing_file_is_a_user_error(tmp_path: Path) -> None:
    result = _invoke("plan", "migrate", tmp_path / "none.yaml")
    assert result.exit_code == 2
    assert "Traceback" not in result.output


# --- blocks -----------------------------------------------------------------------------------


def test_blocks_list() -> None:
    result = _invoke("blocks", "list", "--json")
    assert result.exit_code == 0, result.output
    entries = {e["id"]: e for e in json.loads(result.stdout)}
    assert {"test.add", "test.fail", "ui.interactive_input"} <= set(entries)
    assert entries["test.add"]["inputs"]["a"] == {
        "type": "number",
        "required": True,
        "description": "左辺",
    }

    result = _invoke("blocks", "list", "--category", "test", "--json")
    assert {e["category"] for e in json.loads(result.stdout)} == {"test"}

    result = _invoke("blocks", "list")
    assert result.exit_code == 0
    assert "test.items" in result.stdout
    assert "count 件の {n} を返す" in result.stdout

    result = _invoke("blocks", "list", "--category", "nothing")
    assert result.exit_code == 2
    assert "test" in result.stderr  # the known categories are listed


def test_blocks_show() -> None:
    result = _invoke("blocks", "show", "test.add")
    assert result.exit_code == 0, result.output
    assert "test.add@1.0.0" in result.stdout
    assert "左辺" in result.stdout
    assert "必須" in result.stdout

    result = _invoke("blocks", "show", "test.add", "--json")
    detail = json.loads(result.stdout)
    assert detail["ref"] == "test.add@1.0.0"
    assert detail["inputs"]["a"]["required"] is True
    assert detail["inputs"]["b"] == {
        "type": "number",
        "required": False,
        "default": 0,
        "description": "右辺",
    }
    assert detail["outputs"]["sum"]["type"] == "number"

    result = _invoke("blocks", "show", "ui.interactive_input", "--json")
    assert json.loads(result.stdout)["inputs"]["mode"]["enum"] == [
        "collect",
        "confirm",
        "inquire",
        "mixed",
    ]


def test_blocks_show_of_an_unknown_id() -> None:
    result = _invoke("blocks", "show", "test.ad")
    assert result.exit_code == 2
    assert "エラー（ないブロック）: " in result.stderr
    assert "test.add" in result.stderr  # the registry's hint names close matches
    assert "Traceback" not in result.output
