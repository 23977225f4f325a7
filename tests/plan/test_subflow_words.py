"""Property: what the check of a plan says of the subflows it calls and of the blocks without a
label names them as people know them — never by a file path or a block id alone.

A seeded generator (``SEED``) takes the realistic plans of ``test_check_words`` (two to four
described steps of the library's blocks, wired by references, with labelled settings, then
broken the ways an author breaks one) and calls each as a **subflow** (``designs/lib/…``) from a
plan of one call step. The subflow has a description (its name where people choose a plan,
``月次の売上集計。…``) or none; the call step has a description or none; the call passes the
subflow's settings, leaves some out, passes one it does not take, or asks for an export it does
not give. In some plans a step's block is a **custom block without a label** (the company's
own, with a Japanese description, short or long, of the library's categories).

Every message of the caller's validation and dry run is read. A text is wrong when it says the
subflow's ``plan_id`` without the name people know it by (the subflow's description's first
sentence, else the call step's) right before it in parentheses (``サブフロー「月次の売上集計」
（lib/p3）``), or a custom block's id without its name (its description's first sentence, else
its category: ``「表の処理のブロック」（acme.sum）``), or a step or an item by its YAML name
(``test_check_words.wrong_words``).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.spec import BlockSpec
from keiri_agent.plan import dry_run_source, parse_source, validate_source
from tests.design.test_check_words import Case, _cases, wrong_words

SEED = 19
SUBFLOW_TITLES = ("月次の売上集計", "入金の消込", "経費精算の確認", "請求書の突合", "残高の確認")
CALL_NAMES = ("売上を集計する", "入金を消し込む", "経費を確かめる", "請求書を突き合わせる")
# A custom block's description: a short first sentence is its name; a long one is not.
SHORT_DESCRIPTIONS = ("取引先ごとの合計", "月末残高の照合", "仕訳の作成", "帳票の読み込み")
LONG_DESCRIPTION = (
    "社内の規程に従って、部署ごと・月ごとに明細を並べ替えてから集計し、前月との差を添える"
)
CALL_KINDS = ("given", "left_out", "unknown_input", "unknown_export")
# The library's categories as people call them (what a custom block without a short description
# of its own is named by).
CATEGORY_NAMES = {
    "ai": "AI", "data": "データ変換", "excel": "Excel", "file": "ファイル",
    "report": "レポート", "table": "表の処理", "text": "テキスト",
}  # fmt: skip


def _custom(spec: BlockSpec, rng: random.Random, number: int) -> tuple[BlockSpec, str]:
    """A company's copy of ``spec`` without a label, and the name people should read for it."""
    if rng.random() < 0.6:
        said = rng.choice(SHORT_DESCRIPTIONS)
        description = f"{said}。{spec.description}"
    else:
        description, said = LONG_DESCRIPTION, f"{CATEGORY_NAMES[spec.category]}のブロック"
    custom = spec.model_copy(
        update={"id": f"acme.step{number}", "label": None, "description": description}
    )
    return custom, said


def _text(plan: dict[str, Any]) -> str:
    return yaml.safe_dump(plan, allow_unicode=True, sort_keys=False)


def _subflow_case(
    rng: random.Random, case: Case, registry: BlockRegistry, designs: Path, number: int
) -> tuple[dict[str, Any], dict[str, set[str]]]:
    """The caller of ``case``'s plan as a subflow, and the names people know things by."""
    names = {k: set(v) for k, v in case.names.items()}
    sub = copy.deepcopy(case.plan)
    sub["id"] = f"lib/p{number}"
    if rng.random() < 0.5:
        step = rng.choice(sub["graph"])
        custom, said = _custom(registry.get(step["block"]), rng, number)
        registry.add(custom)
        step["block"] = custom.id
        names[custom.id] = {said}
    title = rng.choice(SUBFLOW_TITLES) if rng.random() < 0.6 else None
    if title is not None:
        sub["description"] = f"{title}。毎月の締めで使います。"
    call: dict[str, Any] = {"id": "call", "type": "subflow", "call": {"plan_id": sub["id"]}}
    call_name = rng.choice(CALL_NAMES) if rng.random() < 0.5 else None
    if call_name is not None:
        call["description"] = call_name
    if title or call_name:
        names[sub["id"]] = {str(title or call_name)}
    kind = CALL_KINDS[number % len(CALL_KINDS)]
    inputs = {name: value for name, value in sub["vars"].items() if value is not None}
    if kind == "left_out":
        for name in list(inputs)[: rng.randint(0, len(inputs))]:
            sub["vars"][name] = None
            del inputs[name]
    elif kind == "unknown_input":
        inputs["tanto"] = "経理部"
    elif kind == "unknown_export":
        call["out"] = {"exports": [{"from": "total", "as": "total"}]}
    call["call"]["inputs"] = inputs
    (designs / "lib").mkdir(parents=True, exist_ok=True)
    (designs / f"{sub['id']}.yaml").write_text(_text(sub), encoding="utf-8")
    caller = {"apiVersion": "v1", "id": f"caller{number}", "graph": [call]}
    return caller, names


def shown_texts(caller: dict[str, Any], registry: BlockRegistry, designs: Path) -> Iterator[str]:
    """The caller's validation and dry-run messages (what the 設計 page and the CLI show)."""
    source = parse_source(_text(caller))
    report = validate_source(source, registry, designs_dir=designs, config={}, env={})
    for issue in (*report.errors, *report.warnings):
        yield issue.message
    dry = dry_run_source(source, registry, designs_dir=designs, config={}, env={})
    for finding in dry.findings:
        yield finding.message
    for node in dry.nodes:
        yield from node.notes


def _measure(tmp_path: Path) -> tuple[int, int, dict[str, list[str]]]:
    rng = random.Random(SEED)
    registry = BlockRegistry()
    total = wrong = 0
    found: dict[str, list[str]] = {}
    for number, case in enumerate(_cases()):
        caller, names = _subflow_case(rng, case, registry, tmp_path / "designs", number)
        for text in shown_texts(caller, registry, tmp_path / "designs"):
            total += 1
            problems = wrong_words(text, names)
            if problems:
                wrong += 1
                found.setdefault(case.name, []).extend(problems)
    return total, wrong, found


def test_subflows_and_unlabelled_blocks_are_said_by_their_names(tmp_path: Path) -> None:
    total, wrong, found = _measure(tmp_path)
    assert total > 500, total
    sample = dict(list(found.items())[:5])
    assert wrong == 0, f"{wrong} of {total} texts name a subflow or a block by its id: {sample}"
