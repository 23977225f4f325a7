"""Property: where a plan labels a var (``ui.vars``), a person reads the label, never the var's
id (``closing_month``); the id is shown only where a person types it (a CLI flag).

Generated plans (seeded: random ids as plan authors write them, random Japanese labels, some
vars unlabelled, each var a file the plan reads or writes) go through the places outside the
実行 page, dry-run and ``plan run`` that name a var:

- the API server's refusal of a var that leads outside the task's files (the 403 at the door);
- ``keiri-agent schedule add`` / ``schedule list``: the schedule's vars;
- resuming an old run whose log kept only a display copy of some vars.

Their message and hint must hold no labelled var's id, except in a ``--var ID=`` flag to type.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli import app
from keiri_agent.cli.schedule import VARS_BY_ID
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError
from keiri_agent.events.chain import CHAIN_KEY
from keiri_agent.plan import PlanRunner
from keiri_agent.server.inputs import task_files
from keiri_agent.server.plan_task import prepare_plan
from keiri_agent.server.runners import PlanRequest

SEED = 13
WORDS = ("closing", "month", "bank", "file", "ledger", "out", "src", "target", "fee", "book")
LABEL_WORDS = ("締め月", "入金明細", "請求一覧", "出力先", "売上", "部門別", "振込手数料", "元帳")
LABEL_TAILS = ("のファイル", "（CSV）", "の保存先", "", "（今月分）")
TYPED = re.compile(r"--var [A-Za-z_][\w]*=")  # a flag the person types: the id belongs there


@dataclass(frozen=True)
class Var:
    id: str
    label: str | None
    mode: str  # read | write


@dataclass(frozen=True)
class Case:
    plan_id: str
    vars: tuple[Var, ...]

    @property
    def labelled(self) -> list[Var]:
        return [v for v in self.vars if v.label is not None]

    def yaml(self) -> str:
        lines = ["apiVersion: v1", f"id: {self.plan_id}", "vars:"]
        lines += [
            f"  {v.id}: {'結果.xlsx' if v.mode == 'write' else '明細.csv'}" for v in self.vars
        ]
        labels = [f"    {v.id}: {v.label}" for v in self.labelled]
        lines += ["ui:", "  vars:", *labels] if labels else []
        lines.append("graph:")
        for n, var in enumerate(self.vars):
            if var.mode == "read":
                lines += [
                    f"  - id: read{n}",
                    "    block: file.read_table",
                    f'    in: {{ path: "${{vars.{var.id}}}" }}',
                ]
            else:
                lines += [
                    f"  - id: write{n}",
                    "    block: excel.write_report",
                    "    in:",
                    "      sheets: [{ name: 表, rows: [{ 項目: 売上, 金額: 100 }] }]",
                    f'      output_path: "${{vars.{var.id}}}"',
                ]
        return "\n".join(lines) + "\n"


def cases(count: int, seed: int = SEED) -> Iterator[Case]:
    rng = random.Random(seed)
    for n in range(count):
        ids: list[str] = []
        while len(ids) < rng.randint(1, 4):
            name = "_".join(rng.sample(WORDS, rng.randint(1, 3))) + rng.choice(("", "_2", "_x"))
            if len(name) >= 5 and name not in ids:
                ids.append(name)
        labels = [
            rng.choice(LABEL_WORDS) + rng.choice(LABEL_TAILS) + rng.choice(("", str(k + 1)))
            for k in range(len(ids))
        ]
        yield Case(
            f"gen_{n}",
            tuple(
                Var(
                    name,
                    label if rng.random() < 0.8 else None,
                    rng.choice(("read", "write")),
                )
                for name, label in zip(ids, labels, strict=True)
            ),
        )


def ids_shown(case: Case, text: str) -> list[str]:
    """The labelled vars' ids in ``text`` outside a ``--var ID=`` flag."""
    said = TYPED.sub("--var =", text)
    return [v.id for v in case.labelled if re.search(rf"(?<![\w]){re.escape(v.id)}(?![\w])", said)]


def _settings(root: Path) -> Settings:
    return Settings(
        _env_file=None,
        keiri_workspace_root=root / "workspace",
        keiri_runs_dir=root / "runs",
        keiri_designs_dir=root / "designs",
        keiri_run_log_fsync=False,
    )


# --- the API server's 403 for a var leading outside the task --------------------------------


def test_the_server_refuses_a_var_path_by_its_label(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    designs = Path(settings.keiri_designs_dir)
    designs.mkdir(parents=True)
    files = task_files(tmp_path / "workspace" / "tasks" / "t1", settings)
    files.uploads.mkdir(parents=True)
    wrong: dict[str, list[str]] = {}
    total = 0
    for case in cases(200):
        (designs / f"{case.plan_id}.yaml").write_text(case.yaml(), encoding="utf-8")
        outside = {v.id: str(tmp_path / "他の人" / f"明細{k}.csv") for k, v in enumerate(case.vars)}
        request = PlanRequest(kind="plan", plan=case.plan_id, vars=outside)
        with pytest.raises(BlockError) as refused:
            prepare_plan(request, settings, files)
        total += 1
        error = refused.value
        first = case.vars[0]  # the first var is the first refused
        shown = ids_shown(case, f"{error.message}\n{error.hint}")
        if f"設定値「{first.label or first.id}」" not in error.message:
            shown.append(f"not named: {error.message}")
        if error.details.get("var") != first.id:
            shown.append(f"details.var: {error.details}")
        if shown:
            wrong[case.plan_id] = shown
    assert wrong == {}, f"{len(wrong)} of {total} refusals name a var by its id: {wrong}"


# --- keiri-agent schedule add / list -----------------------------------------------------------


@pytest.fixture
def schedules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    settings = _settings(tmp_path)
    Path(settings.keiri_designs_dir).mkdir(parents=True)
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(settings.keiri_workspace_root))
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(settings.keiri_designs_dir))
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(settings.keiri_runs_dir))
    monkeypatch.setenv("KEIRI_REQUIRE_APPROVAL", "off")
    return settings


def test_schedule_list_shows_the_vars_by_their_labels(schedules: Settings) -> None:
    runner = CliRunner()
    designs = Path(schedules.keiri_designs_dir)
    wrong: dict[str, list[str]] = {}
    generated = list(cases(40, seed=SEED + 1))
    for case in generated:
        (designs / f"{case.plan_id}.yaml").write_text(case.yaml(), encoding="utf-8")
        given = [arg for v in case.vars for arg in ("--var", f"{v.id}=月次/{v.id}.csv")]
        added = runner.invoke(
            app, ["schedule", "add", case.plan_id, "--day", "25", "--version", "working", *given]
        )
        assert added.exit_code == 0, added.output
        shown = ids_shown(case, re.sub(r"月次/\w+\.csv", "", added.stdout))
        flat = " ".join(added.stdout.split())
        shown += [
            v.label for v in case.labelled if f"設定値 {v.label}: 月次/{v.id}.csv" not in flat
        ]
        if shown:
            wrong[f"add {case.plan_id}"] = shown
    listed = runner.invoke(app, ["schedule", "list"])
    assert listed.exit_code == 0, listed.output
    blocks = re.split(r"^(?=s-\S+  Plan )", listed.stdout, flags=re.MULTILINE)
    said = {re.match(r"s-\S+  Plan (\S+)", b)[1]: b for b in blocks if b.startswith("s-")}
    for case in generated:
        shown = ids_shown(case, re.sub(r"月次/\w+\.csv", "", said[case.plan_id]))
        if shown:
            wrong[f"list {case.plan_id}"] = shown
    # --json keeps the vars as the schedule stores them (the names a client sends)
    views = json.loads(runner.invoke(app, ["schedule", "list", "--json"]).stdout)["schedules"]
    assert {v["plan_id"]: set(v["vars"]) for v in views} == {
        c.plan_id: {v.id for v in c.vars} for c in generated
    }
    assert wrong == {}, f"{len(wrong)} of {2 * len(generated)} outputs name a var by id: {wrong}"


# --- resuming an old run whose log kept a display copy of its vars ------------------------------

SHOW = """\
  - id: show
    block: report.markdown
    in: { template: "月次の確認", data: {} }
"""


def _old_log(log: Path, cut: set[str]) -> None:
    """Make ``log`` a log from before the exact vars were stored: its ``plan_start`` holds only
    the display copy, ``cut`` vars shortened as the display copy shortens a long value."""
    lines = log.read_text(encoding="utf-8").splitlines()
    start = json.loads(lines[0])
    start.pop("vars_file", None)
    start.pop(CHAIN_KEY, None)
    for name in cut:
        start["inputs"]["vars"][name] = "月次/" + "長" * 20 + "…(全300文字)"
    lines[0] = json.dumps(start, ensure_ascii=False)
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_resume_that_cannot_restore_vars_names_them_by_their_labels(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    plan_runner = PlanRunner(runs_dir=tmp_path / "runs", settings=settings)
    rng = random.Random(SEED + 2)
    wrong: dict[str, list[str]] = {}
    generated = list(cases(40, seed=SEED + 2))
    for case in generated:
        declared = "\n".join(f"  {v.id}: 月次.csv" for v in case.vars)
        labels = [f"    {v.id}: {v.label}" for v in case.labelled]
        text = f"apiVersion: v1\nid: {case.plan_id}\nvars:\n{declared}\n"
        text += "\n".join(["ui:", "  vars:", *labels]) + "\n" if labels else ""
        path = tmp_path / f"{case.plan_id}.yaml"
        path.write_text(text + "graph:\n" + SHOW, encoding="utf-8")
        result = plan_runner.run(path)
        assert result.status == "success", result.error
        cut = {v.id for v in case.vars if rng.random() < 0.6} or {case.vars[0].id}
        _old_log(Path(result.log_path), cut)
        with pytest.raises(BlockError) as lost:
            plan_runner.resume(result.run_id)
        error = lost.value
        shown = ids_shown(case, f"{error.message}\n{error.hint}")
        for var in (v for v in case.vars if v.id in cut):
            if f"「{var.label or var.id}」" not in error.message:
                shown.append(f"not named: {var.label or var.id}")
            if f"--var {var.id}=" not in error.hint:  # what the person types
                shown.append(f"no flag: {var.id}")
        if shown:
            wrong[case.plan_id] = shown
    assert wrong == {}, f"{len(wrong)} of {len(generated)} resumes name a var by id: {wrong}"


def test_schedule_list_says_why_vars_show_their_ids(schedules: Settings) -> None:
    """A schedule whose plan cannot be read now (the plan removed, or no longer a plan) shows
    its vars by their ids under one note saying so; a readable plan's schedule shows none."""
    runner = CliRunner()
    designs = Path(schedules.keiri_designs_dir)
    rng = random.Random(SEED + 3)
    generated = list(cases(30, seed=SEED + 3))
    broken: dict[str, str] = {}
    for case in generated:
        path = designs / f"{case.plan_id}.yaml"
        path.write_text(case.yaml(), encoding="utf-8")
        given = [arg for v in case.vars for arg in ("--var", f"{v.id}=月次/{v.id}.csv")]
        added = runner.invoke(
            app, ["schedule", "add", case.plan_id, "--day", "3", "--version", "working", *given]
        )
        assert added.exit_code == 0, added.output
        how = rng.choice(("removed", "not a plan", "readable"))
        if how == "removed":
            path.unlink()
        elif how == "not a plan":
            path.write_text(case.yaml().replace("graph:", "graph: 3\nold_graph:"), "utf-8")
        broken[case.plan_id] = how
    listed = runner.invoke(app, ["schedule", "list"])
    assert listed.exit_code == 0, listed.output
    blocks = re.split(r"^(?=s-\S+  Plan )", listed.stdout, flags=re.MULTILINE)
    said = {re.match(r"s-\S+  Plan (\S+)", b)[1]: b for b in blocks if b.startswith("s-")}
    wrong = {}
    for case in generated:
        block, readable = said[case.plan_id], broken[case.plan_id] == "readable"
        noted = block.count(VARS_BY_ID.strip())
        by_id = all(f"設定値 {v.id}: 月次/{v.id}.csv" in block for v in case.vars)
        if noted != (0 if readable else 1) or (not readable and not by_id):
            wrong[f"{broken[case.plan_id]} {case.plan_id}"] = block
    assert {*broken.values()} == {"removed", "not a plan", "readable"}
    assert wrong == {}, f"{len(wrong)} of {len(generated)} schedules: {wrong}"


# --- plan diff (CLI, API and the 設計 page all show control.changes.compare) --------------


def _edited(case: Case, rng: random.Random) -> Case:
    """A newer version of ``case``'s plan: labels added, changed or dropped, vars added or
    dropped (its vars' values change through the file each var names)."""
    kept = [v for v in case.vars if rng.random() < 0.85] or [case.vars[0]]
    changed = []
    for var in kept:
        label = var.label
        roll = rng.random()
        if roll < 0.25:
            label = rng.choice(LABEL_WORDS) + rng.choice(("（新）", "の月", "2"))
        elif roll < 0.4:
            label = None
        elif roll < 0.55 and label is None:
            label = rng.choice(LABEL_WORDS) + "（追加）"
        mode = var.mode if rng.random() < 0.6 else {"read": "write", "write": "read"}[var.mode]
        changed.append(Var(var.id, label, mode))
    if rng.random() < 0.5:
        label = rng.choice((None, rng.choice(LABEL_WORDS) + "（追加した設定）"))
        changed.append(Var(f"added_{len(case.vars)}_var", label, "read"))
    return Case(case.plan_id, tuple(changed))


def _expected_name(field: str, before: Case, after: Case, shown_before: object) -> str | None:
    """How a diff line should name the var of ``field`` (None: by the values it shows)."""
    old = {v.id: v.label for v in before.vars}
    new = {v.id: v.label for v in after.vars}
    if field.startswith("ui.vars."):
        var = field.removeprefix("ui.vars.")
        known = old.get(var) or var
        return None if known == shown_before else known
    var = field.removeprefix("vars.")
    return new.get(var) or old.get(var) or var


def test_plan_diff_names_vars_by_their_labels(schedules: Settings, tmp_path: Path) -> None:
    runner = CliRunner()
    rng = random.Random(SEED + 4)
    wrong: dict[str, list[str]] = {}
    total = 0
    for case in cases(60, seed=SEED + 4):
        after = _edited(case, rng)
        paths = [tmp_path / f"{case.plan_id}_{n}.yaml" for n in (1, 2)]
        for path, side in zip(paths, (case, after), strict=True):
            path.write_text(side.yaml(), encoding="utf-8")
        args = ["plan", "diff", case.plan_id, *map(str, paths)]
        shown = runner.invoke(app, args)
        data = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
        assert shown.exit_code == 0, shown.output
        changes = [c for c in (*data["vars"], *data["plan"]) if "vars." in c["field"]]
        for change in changes:
            total += 1
            var = change["field"].removeprefix("ui.").removeprefix("vars.")
            name = _expected_name(change["field"], case, after, change.get("before"))
            text, found = change["text"], []
            if name is not None and name not in text:
                found.append(f"not named {name}")
            if name != var and re.search(rf"(?<![\w]){re.escape(var)}(?![\w])", text):
                found.append(f"id {var}")
            if text not in shown.stdout:
                found.append("not in plan diff")
            if not text.startswith("設定値"):  # as the 403, schedule and the 実行 page say
                found.append("not said 設定値")
            if found:
                wrong[f"{case.plan_id} {change['field']}"] = [*found, text]
    assert total > 100
    assert wrong == {}, f"{len(wrong)} of {total} var changes: {wrong}"
