"""Block specs' ``examples`` and ``dry_run.samples`` never reach a model (issue 37).

They hold values that look personal (``03-1234-5678`` in table.dedupe, ``経理 花子`` in
table.learn_payer_names, ``ヤマダショウジ`` in table.match_payments) for docs/blocks.md, the
usage examples and the dry run. What plan generation sends (the catalog, the spec excerpts of a
repair, the schemas) is written from a spec's descriptions, types and defaults only, and the dry
run's findings go back to the model without its sample values. Shown with canaries: every string
of every spec's examples and samples is replaced by a unique one (keys kept, so the dry run still
reads its tables), and none of them is in anything built for a model, nor on the wire of a
generation with a repair round (masking off: nothing would be hidden by it).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.registry import BlockRegistry, default_registry
from keiri_agent.blocks.spec import BlockSpec
from keiri_agent.design.engine import generate_plan
from keiri_agent.design.prompts import catalog_text
from keiri_agent.design.repair import spec_excerpts
from keiri_agent.design.schema import design_model, skeleton_model
from keiri_agent.design.wire import SCHEMA_VARIANTS, skeleton_schema, wiring_schema
from keiri_agent.privacy import find_personal
from tests.design.test_generate import INSTRUCTION, SKELETON, wiring
from tests.support.llm_server import ScriptedLLMServer

CANARY = "ｶﾅﾘｱ"


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _with_canaries(value: Any, numbers: itertools.count[int]) -> Any:
    """``value`` with each string a canary (``ｶﾅﾘｱ17``): dict keys kept."""
    if isinstance(value, str):
        return f"{CANARY}{next(numbers)}"
    if isinstance(value, dict):
        return {k: _with_canaries(v, numbers) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_canaries(v, numbers) for v in value]
    return value


def _port(port: dict[str, Any], numbers: itertools.count[int]) -> dict[str, Any]:
    port = dict(port)
    if "examples" in port:
        port["examples"] = _with_canaries(port["examples"], numbers)
    dry_run = port.get("dry_run")
    if isinstance(dry_run, dict) and "samples" in dry_run:
        port["dry_run"] = {**dry_run, "samples": _with_canaries(dry_run["samples"], numbers)}
    return port


def _canary_registry() -> BlockRegistry:
    numbers = itertools.count(1)
    registry = BlockRegistry(builtin=False)
    for spec in default_registry().list():
        ports = {
            side: {name: _port(port, numbers) for name, port in getattr(spec, side).items()}
            for side in ("inputs", "outputs")
        }
        registry.add(BlockSpec.model_validate({**spec.model_dump(), **ports}))
    return registry


def test_the_specs_hold_look_alike_personal_values() -> None:
    # what the invariant protects: remove this test when no spec holds one any more
    values = [
        s
        for spec in default_registry().list()
        for port in [*spec.inputs.values(), *spec.outputs.values()]
        for s in _strings([port.get("examples"), (port.get("dry_run") or {}).get("samples")])
    ]
    assert any(find_personal(value) for value in values)


def test_nothing_built_for_a_model_holds_an_example_or_a_sample() -> None:
    registry = _canary_registry()
    ids = [spec.id for spec in registry.list()]
    assert any(
        CANARY in json.dumps(spec.model_dump(), ensure_ascii=False) for spec in registry.list()
    )
    texts = {
        "catalog": catalog_text(registry, ids),
        "spec excerpts": spec_excerpts(registry, ids),
        "skeleton model": json.dumps(skeleton_model(ids).model_json_schema(), ensure_ascii=False),
        "design model": json.dumps(
            design_model(registry, ids).model_json_schema(), ensure_ascii=False
        ),
    }
    for variant in SCHEMA_VARIANTS:
        for name, wire in (
            ("skeleton", skeleton_schema(ids, variant=variant)),
            ("wiring", wiring_schema(registry, ids, variant=variant)),
        ):
            texts[f"{name} schema ({variant})"] = json.dumps(wire.schema, ensure_ascii=False)
    assert [name for name, text in texts.items() if CANARY in text] == []


def test_a_generation_with_a_repair_round_sends_no_example_or_sample(
    design_env: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MASK_PII", "off")
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=wiring(source="${read.deposits}"))  # no such output: a repair
    llm_server.add_chat(json=wiring())

    result = generate_plan(INSTRUCTION, registry=_canary_registry())

    assert result.status == "ok", result.errors
    assert [a.valid for a in result.attempts] == [False, True]
    assert result.dry_run is not None  # the dry run read the canary samples
    bodies = [json.dumps(body, ensure_ascii=False) for body in llm_server.chat_requests()]
    assert len(bodies) == 3
    assert "### table.filter" in bodies[2]  # the repair's spec excerpt
    assert [i for i, body in enumerate(bodies) if CANARY in body] == []
