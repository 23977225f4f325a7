"""Dump help-desk search hits for the manual-domain question lists (run with keiri-agent's venv).

Ingests examples/helpdesk (manual + qa.csv) and examples/helpdesk_eval/manual into temporary
indexes exactly as benchmarks/helpdesk_heldout.py does (default settings, no keys, bundled
embedding model), then for every question of the TUNING lists (dev, dev2, heldout, heldout2,
heldout3 of tests/data/helpdesk_paraphrases.yaml; never heldout4-6) and of
examples/helpdesk_eval/questions.jsonl writes the ranked candidates of
KnowledgeBase.rank(q, K, tool=..., min_relevance=0.0) to WORK/manual_hits.jsonl.

Run (keiri-agent venv, from the repository root):
  PYTHONPATH=src python -m benchmarks.cross_encoder.manual_hits WORK
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import cast

import numpy as np
from tests.support.helpdesk import EXAMPLES
from tests.support.helpdesk_eval import gold_id
from tests.support.helpdesk_paraphrases import Split, load_lists

from benchmarks.cross_encoder.kb import default_settings, ingested
from benchmarks.cross_encoder.nearmiss import XYZ_NEARMISS, eval_nearmiss
from benchmarks.cross_encoder.windows import line_windows
from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase
from keiri_agent.retrieval.local_embedding import local_embedder

REPO = Path(__file__).resolve().parents[2]


def window_sims(question: str, content: str) -> list[dict]:
    """Line windows (≤ windows.MAX_CHARS) of a long chunk, each with its cosine similarity to the
    question under the bundled model (e5 query/passage forms): to pick the part that a
    positive's answer is in, and a negative's closest part."""
    wins = line_windows(content)
    if len(wins) == 1:
        return []
    emb = local_embedder()
    q = np.asarray(emb.embed_query(question), dtype=np.float32)
    w = np.asarray(emb.embed_documents(wins), dtype=np.float32)
    sims = (w @ q) / (np.linalg.norm(w, axis=1) * np.linalg.norm(q) + 1e-9)
    return [{"text": t, "sim": float(x)} for t, x in zip(wins, sims, strict=True)]


TUNING_SPLITS = ("dev", "dev2", "heldout", "heldout2", "heldout3")  # heldout4-6: never
K = 8


def hit_row(rank: int, h) -> dict:
    return {
        "rank": rank,
        "gold_id": gold_id(h),
        "file": h.file_name,
        "page": h.page,
        "row": h.row,
        "chunk_id": h.chunk_id,
        "source": h.source,
        "content": h.content,
        "score": h.score,
        "relevance": h.relevance,
        "similarity": h.similarity,
        "above_floor": h.above_floor,
    }


def dump(kb: KnowledgeBase, out, **record) -> None:
    tool = record.pop("tool")
    ranked = kb.rank(record["question"], K, tool=tool, min_relevance=0.0)
    refused = not kb.search(record["question"], 3, tool="hybrid")
    record["refused_by_product"] = refused
    record["hits"] = [hit_row(i, h) for i, h in enumerate(ranked)]
    for row in record["hits"]:
        row["windows"] = window_sims(record["question"], row["content"])
    out.write(json.dumps(record, ensure_ascii=False) + "\n")


def record(corpus: str, split: str, question: str, gold: list[str], **extra: str) -> dict:
    """One question to dump; answerable when it has a gold page or file."""
    return {
        "corpus": corpus,
        "split": split,
        "question": question,
        **extra,
        "gold": gold,
        "answerable": bool(gold),
    }


def xyz_records() -> list[dict]:
    """The tuning lists' paraphrases and off-topic questions, then the near-miss questions."""
    recs = []
    for split in TUNING_SPLITS:
        lists = load_lists(cast(Split, split))
        recs += [record("helpdesk", split, c.question, list(c.gold)) for c in lists.answerable]
        recs += [record("helpdesk", split, q, []) for q in lists.off_topic]
    for i, q in enumerate(XYZ_NEARMISS):
        recs.append(record("helpdesk_nearmiss", "nm_dev" if i % 3 == 2 else "nm_train", q, []))
    return recs


def eval_records(eval_dir: Path) -> list[dict]:
    """examples/helpdesk_eval's questions, then its templated near-miss questions."""
    recs = []
    for line in (eval_dir / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        recs.append(
            record(
                "helpdesk_eval",
                "eval",
                q["question"],
                [q["file"]],
                qid=q["id"],
                passage=q["passage"],
            )
        )
    recs += [record("eval_nearmiss", "eval", q, [], procedure=proc) for proc, q in eval_nearmiss()]
    return recs


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m benchmarks.cross_encoder.manual_hits WORK")
    work = Path(sys.argv[1])
    work.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory() as tmp,
        (work / "manual_hits.jsonl").open("w", encoding="utf-8") as out,
    ):
        root = Path(tmp)
        settings = default_settings(root)
        manuals = [EXAMPLES / "manual"]
        with ingested(root / "kb", settings, manuals, EXAMPLES / "qa.csv") as kb:
            for rec in xyz_records():
                dump(kb, out, tool="hybrid", **rec)
        print("helpdesk done", flush=True)
        eval_dir = REPO / "examples" / "helpdesk_eval"
        with ingested(root / "kb2", settings, [eval_dir / "manual"]) as kb:
            for rec in eval_records(eval_dir):
                dump(kb, out, tool="manual", **rec)
        print("helpdesk_eval done", flush=True)


if __name__ == "__main__":
    main()
