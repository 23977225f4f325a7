"""Change control at the terminal: `plan save|versions|diff|approve|reject`, runs that name their
version and refuse an unapproved one, and `audit verify|export` over the run history.

Plans use the test block kit (KEIRI_BLOCK_SPEC_DIRS) and, for the audit export, the built-in
file blocks; designs, versions and runs live under the test's tmp_path.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from typer.testing import CliRunner, Result

from keiri_agent.cli import app
from keiri_agent.events.chain import GENESIS, chain_line, split_line
from keiri_agent.users import key_hash, os_user
from tests.plan.blockkit import SPEC_DIR

runner = CliRunner()

CLOSE = """\
apiVersion: v1
id: keiri/close
vars:
  n: 2
graph:
  - id: first
    block: test.add
    in: {a: "${vars.n}", b: 1}
  - id: check
    block: test.add
    in: {a: "${first.sum}", b: 0}
  - id: second
    block: test.add
    in: {a: "${first.sum}", b: 10}
    when: "${vars.n} > 1"
"""
# The same plan, reviewed: an input changed, a node removed, a condition changed.
CLOSE_V2 = (
    CLOSE.replace('in: {a: "${first.sum}", b: 10}', 'in: {a: "${first.sum}", b: 20}')
    .replace('  - id: check\n    block: test.add\n    in: {a: "${first.sum}", b: 0}\n', "")
    .replace('when: "${vars.n} > 1"', 'when: "${vars.n} > 0"')
)
PAUSING = """\
apiVersion: v1
id: pausing
graph:
  - id: first
    block: test.add
    in: {a: 1, b: 2}
  - id: ask
    block: ui.interactive_input
    in:
      mode: collect
      message: 件数を入力してください
      requirements:
        - {id: count, type: number, label: 件数}
  - id: after
    block: test.add
    in: {a: "${first.sum}", b: "${ask.collected_data.count}"}
"""
USERS = {"sato": "user", "suzuki": "approver", "kato": "approver", "ops": "admin"}


@pytest.fixture(autouse=True)
def plan_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("KEIRI_BLOCK_SPEC_DIRS", str(SPEC_DIR))
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(tmp_path / "designs"))
    monkeypatch.setenv("KEIRI_RUN_LOG_FSYNC", "false")
    (tmp_path / "designs").mkdir()
    return tmp_path


def _invoke(*args: str | Path, env: dict[str, str] | None = None) -> Result:
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200", **(env or {})})


def _json(result: Result) -> Any:
    return json.loads(result.stdout)


def _write(tmp_path: Path, text: str, name: str = "close.yaml") -> Path:
    path = tmp_path / "designs" / name
    path.write_text(text, encoding="utf-8")
    return path


def _team(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A users file with a user, two approvers and an admin; keys are ``<name>-key``."""
    path = tmp_path / "users.yaml"
    lines = ["users:"] + [
        f"  - {{name: {name}, key_sha256: {key_hash(name + '-key')}, role: {role}}}"
        for name, role in USERS.items()
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setenv("KEIRI_API_KEYS_FILE", str(path))


def _as(name: str) -> dict[str, str]:
    return {"KEIRI_USER_KEY": f"{name}-key"}


# --- versions and the diff ---------------------------------------------------------------------


def test_each_save_is_a_version_with_its_author_and_hash(tmp_path: Path) -> None:
    plan = _write(tmp_path, CLOSE)
    saved = _invoke("plan", "save", plan, "-m", "初版", "--json")
    assert saved.exit_code == 0, saved.output
    first = _json(saved)
    assert first["created"] is True
    assert first["version"]["version"] == hashlib.sha256(CLOSE.encode()).hexdigest()
    assert first["version"]["author"] == os_user()  # no users file: the OS user
    assert first["version"]["message"] == "初版"

    again = _json(_invoke("plan", "save", plan, "--json"))
    assert again["created"] is False
    assert again["version"]["version"] == first["version"]["version"]

    _write(tmp_path, CLOSE_V2)
    text = _invoke("plan", "save", plan, "-m", "許容差を変更")
    assert text.exit_code == 0, text.output
    assert "Plan keiri/close の版 v2（" in text.stdout

    listed = _json(_invoke("plan", "versions", "keiri/close", "--json"))["versions"]
    assert [(v["number"], v["author"], v["status"]) for v in listed] == [
        (1, os_user(), "pending"),
        (2, os_user(), "pending"),
    ]
    assert listed[1]["version"] == hashlib.sha256(CLOSE_V2.encode()).hexdigest()
    human = _invoke("plan", "versions", "keiri/close")
    assert "v2  " + listed[1]["short"] in human.stdout
    assert "承認待ち  許容差を変更" in human.stdout


def test_an_invalid_plan_is_not_saved_as_a_version(tmp_path: Path) -> None:
    plan = _write(
        tmp_path,
        CLOSE.replace(
            'block: test.add\n    in: {a: "${vars.n}"', 'block: no.such\n    in: {a: "${vars.n}"'
        ),
    )
    result = _invoke("plan", "save", plan)
    assert result.exit_code == 1
    assert "版として登録しませんでした" in result.output
    assert "UNKNOWN_BLOCK ブロック 'no.such' は登録されていません" in result.output
    assert _json(_invoke("plan", "versions", "keiri/close", "--json"))["versions"] == []
    # One report of an invalid plan (cli.plan.plan_invalid): save and run differ in their verb.
    saved, ran = (_invoke("plan", verb, plan, "--json") for verb in ("save", "run"))
    assert (saved.exit_code, ran.exit_code) == (1, 1)
    assert _json(saved) == _json(ran)
    assert _json(saved)["status"] == "invalid"
    assert (
        "Plan に検証エラーがあるため、実行しませんでした。" in _invoke("plan", "run", plan).stderr
    )


def test_the_diff_names_a_changed_input_a_removed_node_and_a_changed_when(tmp_path: Path) -> None:
    plan = _write(tmp_path, CLOSE)
    _invoke("plan", "save", plan)
    _write(tmp_path, CLOSE_V2)
    _invoke("plan", "save", plan)

    found = _json(_invoke("plan", "diff", "keiri/close", "v1", "v2", "--json"))

    assert found["from"]["label"].startswith("版 v1（")
    nodes = {n["node"]: n for n in found["nodes"]}
    assert set(nodes) == {"check", "second"}
    assert nodes["check"]["kind"] == "removed"
    changes = {c["field"]: (c.get("before"), c.get("after")) for c in nodes["second"]["changes"]}
    assert changes == {"in.b": (10, 20), "when": ("${vars.n} > 1", "${vars.n} > 0")}

    human = _invoke("plan", "diff", "keiri/close", "v1", "latest")
    assert human.exit_code == 0, human.output
    assert human.stdout.splitlines()[1:] == [
        "ノード check を削除",
        "ノード second を変更（2 項目）",
        "  - 実行条件（when）: ${vars.n} > 1 → ${vars.n} > 0",
        "  - 入力 b: 10 → 20",
    ]
    # Against the working copy on disk: nothing changed since v2 but a comment.
    plan.write_text("# 見直し済み\n" + CLOSE_V2, encoding="utf-8")
    same = _invoke("plan", "diff", "keiri/close", "v2", plan)
    assert "Plan としての違いはありません" in same.stdout


def test_a_version_that_is_not_there_is_named_with_the_ones_that_are(tmp_path: Path) -> None:
    _invoke("plan", "save", _write(tmp_path, CLOSE))
    for args in (("diff", "keiri/close", "v1", "v7"), ("approve", "keiri/close", "abc")):
        result = _invoke("plan", *args)
        assert result.exit_code == 2
        assert "版はハッシュの先頭 4 文字以上" in result.output
        assert "v1（" in result.output


# --- reviews -----------------------------------------------------------------------------------


def test_only_an_approver_approves_and_never_their_own_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _team(monkeypatch, tmp_path)
    plan = _write(tmp_path, CLOSE)
    saved = _json(_invoke("plan", "save", plan, "--json", env=_as("suzuki")))
    assert saved["version"]["author"] == "suzuki"  # the key's user, not the OS user

    no_key = _invoke("plan", "approve", "keiri/close", "v1")
    assert no_key.exit_code == 2
    assert "KEIRI_USER_KEY" in no_key.output
    wrong_key = _invoke("plan", "approve", "keiri/close", "v1", env={"KEIRI_USER_KEY": "x"})
    assert "KEIRI_USER_KEY のキーに当たる利用者がいません" in wrong_key.output
    by_user = _invoke("plan", "approve", "keiri/close", "v1", env=_as("sato"))
    assert by_user.exit_code == 2
    assert "sato さん（role: user）は版を承認できません" in by_user.output
    by_admin = _invoke("plan", "approve", "keiri/close", "v1", env=_as("ops"))
    assert "role: admin" in by_admin.output
    own = _invoke("plan", "approve", "keiri/close", "v1", env=_as("suzuki"))
    assert own.exit_code == 2
    assert "suzuki さん自身が登録した版なので承認できません" in own.output
    assert _json(_invoke("plan", "versions", "keiri/close", "--json"))["versions"][0]["status"] == (
        "pending"
    )

    approved = _invoke("plan", "approve", "keiri/close", "v1", "-c", "確認済み", env=_as("kato"))
    assert approved.exit_code == 0, approved.output
    assert "承認済みにしました（kato）" in approved.stdout
    version = _json(_invoke("plan", "versions", "keiri/close", "--json"))["versions"][0]
    assert version["approval"]["by"] == "kato"
    assert version["approval"]["comment"] == "確認済み"
    assert version["approval"]["self_approved"] is False

    rejected = _json(_invoke("plan", "reject", "keiri/close", "v1", "--json", env=_as("suzuki")))
    assert rejected["version"]["status"] == "rejected"  # withdrawing one's own is allowed


def test_a_team_of_one_may_approve_its_own_version_recorded_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = _write(tmp_path, CLOSE)
    _invoke("plan", "save", plan)
    refused = _invoke("plan", "approve", "keiri/close", "v1")
    assert refused.exit_code == 2
    assert "KEIRI_ALLOW_SELF_APPROVAL=true" in refused.output

    monkeypatch.setenv("KEIRI_ALLOW_SELF_APPROVAL", "true")
    done = _invoke("plan", "approve", "keiri/close", "v1")
    assert done.exit_code == 0, done.output
    assert "自己承認として記録しました" in done.stdout
    version = _json(_invoke("plan", "versions", "keiri/close", "--json"))["versions"][0]
    assert version["approval"] == {**version["approval"], "by": os_user(), "self_approved": True}
    assert "自己承認" in _invoke("plan", "versions", "keiri/close").stdout


# --- runs --------------------------------------------------------------------------------------


def test_with_approval_required_an_unapproved_version_does_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _team(monkeypatch, tmp_path)  # the users file names approvers: approval is required
    plan = _write(tmp_path, CLOSE)

    unsaved = _invoke("plan", "run", plan, "--json")
    assert unsaved.exit_code == 2
    error = _json(unsaved)["error"]
    assert error["code"] == "APPROVAL_REQUIRED"
    assert "版として登録されていません" in error["message"]
    assert not (tmp_path / "runs").exists() or not list((tmp_path / "runs").rglob("*.jsonl"))

    short = _json(_invoke("plan", "save", plan, "--json", env=_as("suzuki")))["version"]["short"]
    pending = _json(_invoke("plan", "run", plan, "--json"))["error"]
    assert pending["message"] == (
        f"Plan keiri/close の版 {short} は承認されていないため実行できません（承認待ち）。"
    )
    assert "承認できる人: kato" in pending["hint"]  # suzuki saved it: the other approver
    assert f"keiri-agent plan approve keiri/close {short}" in pending["hint"]

    _invoke("plan", "approve", "keiri/close", short, env=_as("kato"))
    ran = _invoke("plan", "run", plan, "--json", env=_as("sato"))
    assert ran.exit_code == 0, ran.output
    runs = _json(_invoke("plan", "runs", "--json"))["runs"]
    assert runs[0]["plan_hash"] == hashlib.sha256(CLOSE.encode()).hexdigest()
    assert runs[0]["approval"]["by"] == "kato"
    assert runs[0]["started_by"] == "sato"
    assert f"版 v1（{short}、承認: kato）・実行者 sato" in _invoke("plan", "runs").stdout


def test_a_resumed_run_runs_the_version_it_started_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_REQUIRE_APPROVAL", "on")
    monkeypatch.setenv("KEIRI_ALLOW_SELF_APPROVAL", "true")
    plan = _write(tmp_path, PAUSING, "pausing.yaml")
    _invoke("plan", "save", plan)
    _invoke("plan", "approve", "pausing", "v1")
    paused = _json(_invoke("plan", "run", plan, "--json"))
    assert paused["status"] == "waiting_input"

    # The working copy changes (first now adds 100), and is not approved.
    plan.write_text(PAUSING.replace("in: {a: 1, b: 2}", "in: {a: 1, b: 100}"), encoding="utf-8")
    assert _json(_invoke("plan", "run", plan, "--json"))["error"]["code"] == "APPROVAL_REQUIRED"
    answers = tmp_path / "answers.yaml"
    answers.write_text("ask:\n  count: 4\n", encoding="utf-8")
    resumed = _invoke("plan", "resume", paused["run_id"], "--answers", answers, "--json")

    assert resumed.exit_code == 0, resumed.output
    done = _json(resumed)
    assert done["status"] == "success"
    assert done["outputs"]["after"] == {"sum": 7}  # 1 + 2 + 4: the version it started with
    start = json.loads(Path(done["log_path"]).read_text(encoding="utf-8").splitlines()[0])
    assert start["plan_hash"] == hashlib.sha256(PAUSING.encode()).hexdigest()
    assert start["resume_of"] == paused["run_id"]


def test_a_rerun_runs_the_version_it_started_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_REQUIRE_APPROVAL", "on")
    monkeypatch.setenv("KEIRI_ALLOW_SELF_APPROVAL", "true")
    plan = _write(tmp_path, CLOSE)
    _invoke("plan", "save", plan)
    _invoke("plan", "approve", "keiri/close", "v1")
    first = _json(_invoke("plan", "run", plan, "--json"))
    assert first["outputs"]["second"] == {"sum": 13}

    _write(tmp_path, CLOSE_V2)  # the working copy changes (b: 20), and is not approved
    rerun = _invoke("plan", "rerun", first["run_id"], "--from", "second", "--json")

    assert rerun.exit_code == 0, rerun.output
    done = _json(rerun)
    assert done["outputs"]["second"] == {"sum": 13}  # 3 + 10: the version it started with
    start = json.loads(Path(done["log_path"]).read_text(encoding="utf-8").splitlines()[0])
    assert start["plan_hash"] == hashlib.sha256(CLOSE.encode()).hexdigest()
    assert start["approval"]["by"] == os_user()


SUB = """\
apiVersion: v1
id: lib/bump
vars:
  x: 0
graph:
  - id: step
    block: test.add
    in: {a: "${vars.x}", b: 1}
exports:
  - {from: step.sum, as: result}
"""
CALLING = """\
apiVersion: v1
id: calling
graph:
  - id: ask
    block: ui.interactive_input
    in:
      mode: collect
      message: 件数を入力してください
      requirements:
        - {id: count, type: number, label: 件数}
  - id: call
    type: subflow
    call: {plan_id: lib/bump, inputs: {x: "${ask.collected_data.count}"}}
    out:
      exports: [{from: result, as: bumped}]
"""


@pytest.mark.parametrize("required", ["off", "on"])
def test_a_resumed_run_calls_the_subflow_version_it_started_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, required: str
) -> None:
    monkeypatch.setenv("KEIRI_REQUIRE_APPROVAL", required)
    monkeypatch.setenv("KEIRI_ALLOW_SELF_APPROVAL", "true")
    (tmp_path / "designs" / "lib").mkdir()
    sub = _write(tmp_path, SUB, "lib/bump.yaml")
    plan = _write(tmp_path, CALLING, "calling.yaml")
    for path, plan_id in ((sub, "lib/bump"), (plan, "calling")):
        _invoke("plan", "save", path)
        _invoke("plan", "approve", plan_id, "v1")
    paused = _json(_invoke("plan", "run", plan, "--json"))
    assert paused["status"] == "waiting_input", paused

    # The subflow's working copy changes (it now adds 100), and is not approved.
    sub.write_text(SUB.replace("b: 1}", "b: 100}"), encoding="utf-8")
    answers = tmp_path / "answers.yaml"
    answers.write_text("ask:\n  count: 4\n", encoding="utf-8")
    resumed = _invoke("plan", "resume", paused["run_id"], "--answers", answers, "--json")

    assert resumed.exit_code == 0, resumed.output
    done = _json(resumed)
    assert done["outputs"]["call"] == {"bumped": 5}  # 4 + 1: the subflow it started with
    start = json.loads(Path(done["log_path"]).read_text(encoding="utf-8").splitlines()[0])
    assert start["subflow_versions"] == {"lib/bump": hashlib.sha256(SUB.encode()).hexdigest()}
    # A new run reads the working copy (and, with approval required, refuses it).
    again = _json(_invoke("plan", "run", plan, "--answers", answers, "--json"))
    if required == "on":
        assert again["error"]["code"] == "APPROVAL_REQUIRED"
        assert "lib/bump" in again["error"]["message"]
    else:
        assert again["outputs"]["call"] == {"bumped": 104}


# --- audit verify --------------------------------------------------------------------------------


def _run_log(tmp_path: Path) -> tuple[str, Path]:
    result = _invoke("plan", "run", _write(tmp_path, CLOSE), "--json")
    assert result.exit_code == 0, result.output
    data = _json(result)
    return data["run_id"], Path(data["log_path"])


def _verify(*args: str) -> tuple[int, dict[str, Any]]:
    result = _invoke("audit", "verify", *args, "--json")
    return result.exit_code, _json(result)


def _findings(report: dict[str, Any]) -> list[tuple[str, int]]:
    (run,) = report["runs"]
    return [(f["kind"], f["line"]) for f in run["findings"]]


def test_audit_verify_passes_an_untouched_log_and_names_each_tampered_line(tmp_path: Path) -> None:
    run_id, log = _run_log(tmp_path)
    original = log.read_bytes()
    lines = original.decode("utf-8").splitlines(keepends=True)
    assert len(lines) >= 8

    code, report = _verify(run_id)
    assert code == 0
    assert report["runs"][0]["status"] == "intact"
    assert report["runs"][0]["lines"] == len(lines)
    human = _invoke("audit", "verify", "--all")
    assert human.exit_code == 0
    assert f"✓ {run_id}  keiri/close  改ざんなし" in human.stdout

    changed = list(lines)
    changed[3] = changed[3].replace('"id": 4,', '"id": 5,', 1)  # one character
    log.write_text("".join(changed), encoding="utf-8")
    code, report = _verify(run_id)
    assert code == 1
    assert report["runs"][0]["status"] == "tampered"
    assert _findings(report) == [("altered", 4)]

    log.write_text("".join(lines[:4] + lines[5:]), encoding="utf-8")  # line 5 removed
    code, report = _verify(run_id)
    assert code == 1
    (finding,) = report["runs"][0]["findings"]
    assert (finding["kind"], finding["line"], finding["first_missing_id"]) == ("removed", 5, 5)

    extra = lines[-1].replace('"plan_complete"', '"log"')
    log.write_text("".join([*lines, extra]), encoding="utf-8")  # one line appended
    assert _findings(_verify(run_id)[1]) == [("appended", len(lines) + 1)]

    log.write_text("".join(lines[:-1]), encoding="utf-8")  # the end cut off
    assert _findings(_verify(run_id)[1]) == [("truncated", len(lines))]

    # All three at once: each is named at its own line.
    both = list(lines)
    both[2] = both[2].replace('"id": 3,', '"id": 3 ,', 1)
    del both[5]
    log.write_text("".join([*both, extra]), encoding="utf-8")
    code, report = _verify(run_id)
    assert code == 1
    assert _findings(report) == [("altered", 3), ("removed", 6), ("appended", len(lines))]
    human = _invoke("audit", "verify", run_id)
    assert "3 行目（イベント id 3）が書き換えられています" in human.stdout
    assert "6 行目の前の 1 行が削除されています（イベント id 6）" in human.stdout
    assert f"{len(lines)} 行目は実行の終了後に書き足された行です" in human.stdout

    log.write_bytes(original)
    assert _verify(run_id)[0] == 0


def test_a_removed_run_record_is_reported(tmp_path: Path) -> None:
    run_id, log = _run_log(tmp_path)
    record = log.with_suffix(".files") / "record.json"
    assert record.is_file()
    record.unlink()
    code, report = _verify(run_id)
    assert code == 1
    assert "実行記録（.files/record.json）がありません" in report["runs"][0]["problems"][0]


def test_a_log_from_before_the_chain_is_named_not_blamed(tmp_path: Path) -> None:
    run_id, log = _run_log(tmp_path)
    shutil.rmtree(log.with_suffix(".files"))
    old = [
        json.dumps(
            {k: v for k, v in json.loads(line).items() if k not in ("chain", "plan_hash")},
            ensure_ascii=False,
        )
        for line in log.read_text(encoding="utf-8").splitlines()
    ]
    log.write_text("\n".join(old) + "\n", encoding="utf-8")
    code, report = _verify(run_id)
    assert code == 0
    assert report["runs"][0]["status"] == "unchained"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "ID か --all のどちらか一方"),
        (("run_x", "--all"), "ID か --all のどちらか一方"),
        (("run_nope",), "実行 run_nope のログが"),
    ],
)
def test_audit_verify_refuses_unclear_requests(args: tuple[str, ...], message: str) -> None:
    result = _invoke("audit", "verify", *args)
    assert result.exit_code == 2
    assert message in result.output


# --- audit export ----------------------------------------------------------------------------


FILES = """\
apiVersion: v1
id: sales/report
vars:
  source: {source}
graph:
  - id: read
    block: file.read_table
    in: {{path: "${{vars.source}}"}}
  - id: write
    block: excel.write_report
    in:
      sheets: [{{name: 明細, rows: "${{read.rows}}"}}]
      output_path: 売上明細.xlsx
"""


def test_audit_export_lists_each_run_with_its_version_approver_and_file_hashes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_ALLOW_SELF_APPROVAL", "true")
    source = tmp_path / "売上.csv"
    source.write_text("日付,取引先,金額\n2026-03-31,A社,110000\n", encoding="utf-8")
    plan = _write(tmp_path, FILES.format(source=source), "sales.yaml")
    short = _json(_invoke("plan", "save", plan, "--json"))["version"]["short"]
    _invoke("plan", "approve", "sales/report", short)
    ran = _json(_invoke("plan", "run", plan, "--json"))
    assert ran["status"] == "success", ran
    written = Path(ran["outputs"]["write"]["report"]["output_path"])
    today = datetime.now(UTC).astimezone(ZoneInfo("Asia/Tokyo")).date().isoformat()

    jsonl = _invoke("audit", "export", "--from", today, "--to", today, "--format", "jsonl")
    assert jsonl.exit_code == 0, jsonl.output
    (row,) = [json.loads(line) for line in jsonl.stdout.splitlines()]
    assert row["run_id"] == ran["run_id"]
    assert (row["plan_id"], row["version_number"], row["status"]) == ("sales/report", 1, "success")
    assert row["version"].startswith(short)
    assert (row["approved_by"], row["self_approved"], row["started_by"]) == (
        os_user(),
        True,
        os_user(),
    )
    assert row["inputs"] == [
        {
            "path": str(source),
            "sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
            "size": source.stat().st_size,
            "field": "path",
        }
    ]
    assert [(o["path"], o["sha256"]) for o in row["outputs"]] == [
        (str(written), hashlib.sha256(written.read_bytes()).hexdigest())
    ]
    assert row["log_check"] == "intact"
    record = json.loads((Path(row["log"]).with_suffix(".files") / "record.json").read_text("utf-8"))
    last = json.loads(Path(row["log"]).read_text(encoding="utf-8").splitlines()[-1])
    assert row["log_digest"] == last["chain"] == record["digest"]

    out = tmp_path / "audit" / "2026-03.csv"
    done = _invoke("audit", "export", "--from", today, "--to", today, "--out", out)
    assert done.exit_code == 0, done.output
    assert out.read_bytes().startswith(b"\xef\xbb\xbf")  # a BOM: Excel reads it as UTF-8
    table = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8-sig"))))
    assert len(table) == 1
    assert table[0]["承認者"] == os_user()
    assert table[0]["自己承認"] == "はい"
    assert table[0]["入力ファイル（SHA-256）"] == (
        f"{source} sha256:{hashlib.sha256(source.read_bytes()).hexdigest()}"
    )
    assert hashlib.sha256(written.read_bytes()).hexdigest() in table[0]["出力ファイル（SHA-256）"]
    assert table[0]["ログの検証"] == "改ざんなし"
    assert table[0]["ログの最終ハッシュ"] == row["log_digest"]
    assert table[0]["開始日時"].endswith("JST")

    yesterday = _invoke("audit", "export", "--from", "2020-01-01", "--to", "2020-01-31")
    assert len(yesterday.stdout.splitlines()) == 1  # the header only: no run in that period


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--from", "2026/04/01", "--to", "2026-04-30"), "YYYY-MM-DD"),
        (("--from", "2026-04-30", "--to", "2026-04-01"), "より前です"),
        (("--from", "2026-04-01", "--to", "2026-04-30", "--format", "xlsx"), "--format"),
    ],
)
def test_audit_export_refuses_bad_periods_and_formats(args: tuple[str, ...], message: str) -> None:
    result = _invoke("audit", "export", *args)
    assert result.exit_code == 2
    assert message in result.output


def test_a_log_rewritten_whole_keeps_no_earlier_exported_digest(tmp_path: Path) -> None:
    run_id, log = _run_log(tmp_path)
    today = datetime.now(UTC).astimezone(ZoneInfo("Asia/Tokyo")).date().isoformat()
    period = ("--from", today, "--to", today, "--format", "jsonl")
    (kept,) = [json.loads(line) for line in _invoke("audit", "export", *period).stdout.splitlines()]

    # Someone who can write the runs folder rewrites the outcome and recomputes the chain.
    previous = GENESIS
    rewritten = []
    for line in log.read_text(encoding="utf-8").splitlines():
        text, _ = split_line(line)
        text = text.replace('"status": "success"', '"status": "failed"')
        line, previous = chain_line(text, previous)
        rewritten.append(line)
    log.write_text("\n".join(rewritten) + "\n", encoding="utf-8")
    record_path = log.with_suffix(".files") / "record.json"
    record = json.loads(record_path.read_text(encoding="utf-8"))
    record_path.write_text(json.dumps({**record, "digest": previous}), encoding="utf-8")

    assert _verify(run_id)[0] == 0  # the files alone cannot show it (README: 限界)
    (now,) = [json.loads(line) for line in _invoke("audit", "export", *period).stdout.splitlines()]
    assert (now["status"], now["log_check"]) == ("failed", "intact")
    assert now["log_digest"] == previous != kept["log_digest"]
