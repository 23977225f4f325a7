"""The product's own texts are never masked, the user's always are (``privacy.ours``).

The name detector read words of the block catalog the plan generator sends as names (命令文 as
命 + 令文, 重複元行): the model got a catalog with holes. The request's writer now marks which
pieces are the product's; the mask leaves those alone and masks the rest. Properties, through
the real request path (``generate_plan`` → ``llm.masking`` → the wire of the scripted server):
a generation from a plain instruction sends every prompt and the whole catalog unchanged (no
placeholder); the same generation with generated personal data in the instruction, the
documents and the chat's answers sends none of it, and the catalog still unchanged. The marks
are by place: a user's text holding the catalog's words, or the whole catalog, is masked as
before.
"""

from __future__ import annotations

import importlib
import json
import random
from collections import Counter
from typing import Any

import pytest

from keiri_agent.blocks.registry import default_registry
from keiri_agent.design.engine import generate_plan
from keiri_agent.design.models import DesignEngineOptions
from keiri_agent.design.prompts import FREE_FORM, DesignPrompts, catalog_text
from keiri_agent.design.repair import spec_excerpts
from keiri_agent.design.topk import BlockRetriever, RetrievalResult
from keiri_agent.llm.masking import mask_input
from keiri_agent.privacy import Ours, Vault, compose, fill, mask_json_text, split_ours
from tests.design.test_generate import SKELETON, wiring
from tests.privacy.backoffice import PEOPLE, Doc, leaks, make_docs
from tests.support.llm_server import ScriptedLLMServer

EVERY_BLOCK = DesignEngineOptions(topk_per_category=30, topk_total=30, token_budget=200_000)
INSTRUCTION = (
    "経費明細の Excel を読み込み、金額が 5 万円以上の行だけを抜き出して Excel に出力してください"
)
PLACEHOLDER = "〔"
# the fixed texts of every feature that sends a request (none may read as personal data)
PROMPT_MODULES = (
    "keiri_agent.design.prompts",
    "keiri_agent.agents.analysis.prompts",
    "keiri_agent.agents.convert.prompts",
    "keiri_agent.agents.helpdesk.prompts",
)


def _bodies(llm_server: ScriptedLLMServer) -> list[str]:
    return [
        "\n".join(str(m["content"]) for m in request["messages"])
        for request in llm_server.chat_requests()
    ]


class _EveryBlock(BlockRetriever):
    """Retrieval that puts every block in the catalog."""

    def retrieve(self, *args: Any, **kwargs: Any) -> RetrievalResult:
        kwargs["required"] = [spec.id for spec in default_registry().list()]
        return super().retrieve(*args, **kwargs)


def _generate(llm_server: ScriptedLLMServer, instruction: str, documents: list[str]) -> Any:
    """A generation whose first wiring fails validation: skeleton, wiring and repair requests."""
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=wiring(source="${nowhere.rows}"))  # a repair turn follows
    llm_server.add_chat(json=wiring())
    retriever = _EveryBlock(default_registry())
    return generate_plan(instruction, documents, options=EVERY_BLOCK, retriever=retriever)


def test_the_catalog_and_every_prompt_reach_the_model_unchanged(
    design_env: Any, llm_server: ScriptedLLMServer
) -> None:
    result = _generate(llm_server, INSTRUCTION, [])
    assert result.status == "ok", result.errors
    registry = default_registry()
    assert (
        set([spec.id for spec in registry.list()]) - set(result.candidates) == set()
    )  # every block
    bodies = _bodies(llm_server)
    assert len(bodies) == 3
    assert all(PLACEHOLDER not in body for body in bodies)
    catalog = catalog_text(registry, result.candidates)
    assert catalog in bodies[0]
    assert catalog in bodies[1]
    assert "LLMへ渡す主命令文" in catalog  # 令文 read as a name before
    assert "重複元行" in catalog  # 元行 read as a name before
    assert spec_excerpts(registry, ["table.filter"]) in bodies[2]
    assert "masked" not in result.metrics


def _personal_instruction(r: random.Random) -> tuple[str, list[str]]:
    sur, given, ksur, kgiven, _, _ = r.choice(PEOPLE)
    phone = f"090-{r.randint(1000, 9999)}-{r.randint(1000, 9999)}"
    account = f"普通 {r.randint(1000000, 9999999)}"
    text = (
        f"{sur}{given}さん（{phone}）の経費明細を読み、5 万円以上を抜き出して {ksur}{kgiven}様に"
        f"送る Excel にしてください。振込先は {account} です。"
    )
    return text, [f"{sur}{given}", phone, account.split()[1], f"{ksur}{kgiven}"]


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_the_users_parts_of_the_same_requests_are_masked(
    design_env: Any, llm_server: ScriptedLLMServer, seed: int
) -> None:
    r = random.Random(seed)
    instruction, secrets = _personal_instruction(r)
    docs = make_docs(seed, 1)
    result = _generate(llm_server, instruction, [doc.text for doc in docs])
    bodies = _bodies(llm_server)
    assert len(bodies) == 3, result.errors
    sent = "\n".join(bodies)
    assert leaks(Doc("instruction", instruction, secrets), sent) == []
    assert {doc.shape: leaks(doc, sent) for doc in docs} == {doc.shape: [] for doc in docs}
    catalog = catalog_text(default_registry(), result.candidates)
    assert catalog in bodies[0]
    assert catalog in bodies[1]


def test_the_chats_answers_are_the_users_and_the_labels_ours() -> None:
    answers = {"approver": "長谷川美咲", "phone": "090-4412-7788"}
    text = fill(
        DesignPrompts().skeleton,
        ours={"catalog": catalog_text(default_registry(), ["ai.process_llm", "table.dedupe"])},
        theirs={
            "instruction": "承認者に回す",
            "answers": compose(Ours("\n## 利用者に確認済みの事項\n"), json.dumps(answers)),
            "documents": "",
            "templates": "",
        },
    )
    sent, counts = mask_input([("human", text)], Vault())
    masked = str(sent[0].content)
    assert "長谷川美咲" not in json.dumps(masked, ensure_ascii=False)
    assert "4412" not in masked
    assert "## 利用者に確認済みの事項" in masked
    assert "LLMへ渡す主命令文" in masked
    assert counts == {"person": 1, "phone": 1}


# The catalog's words in a user's text are the user's: masked where they are a name.
USERS_TEXTS = [
    "重複元行は長谷川美咲さんが確認します",
    "命令文は松本恵子さんに聞いてください（090-1234-5678）",
    "名義: 山田太郎",
]


@pytest.mark.parametrize("text", USERS_TEXTS)
def test_the_catalogs_words_in_a_users_text_are_masked_as_before(text: str) -> None:
    catalog = catalog_text(default_registry(), ["ai.process_llm", "table.dedupe"])
    alone = mask_json_text(Vault(), text, Counter())
    assert alone != text
    # beside the catalog, or holding the whole catalog, it is masked the same
    beside = compose(Ours(catalog), "\n", text)
    sent, _ = mask_input([("human", beside)], Vault())
    assert str(sent[0].content) == catalog + "\n" + alone
    pasted = text + "\n" + catalog  # not composed: all of it is the user's
    assert split_ours(pasted) == [(pasted, False)]
    sent, _ = mask_input([("human", pasted)], Vault())
    assert str(sent[0].content) != pasted


def test_a_composed_text_changed_afterwards_is_all_the_users() -> None:
    text = compose(Ours("命令文: "), "長谷川美咲")
    assert split_ours(text) == [("命令文: ", True), ("長谷川美咲", False)]
    assert split_ours(text + " ") == [(text + " ", False)]
    assert fill(FREE_FORM, ours={"schema": "{}"}) == FREE_FORM.format(schema="{}")


def _fixed_texts() -> list[tuple[str, str]]:
    texts = []
    for name in PROMPT_MODULES:
        for key, value in vars(importlib.import_module(name)).items():
            if isinstance(value, str) and key.isupper() and len(value) > 20:
                texts.append((f"{name}.{key}", value))
    prompts = DesignPrompts()
    texts += [
        (f"DesignPrompts.{k}", getattr(prompts, k))
        for k in ("system", "skeleton", "wiring", "repair")
    ]
    return texts


@pytest.mark.parametrize(("where", "text"), _fixed_texts())
def test_every_features_fixed_text_reads_as_no_personal_data(where: str, text: str) -> None:
    """The other features' prompts are sent unmarked: none of their words may read as a name."""
    assert mask_json_text(Vault(), text, counts := Counter()) == text, (where, counts)
