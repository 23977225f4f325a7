"""Japanese Wikipedia retrieval (a sample of JGLUE's JSQuAD): does the help desk's retrieval
beat character-bigram BM25 on text that is not a manual (issue 38)?

``benchmarks/data/jsquad_sample.jsonl`` (CC BY-SA 4.0, see ``benchmarks/data/JSQUAD_LICENSE.md``)
holds 236 paragraphs of 7 Wikipedia articles and one question asked about each. Every paragraph
is written as its own Markdown file (``# title`` and the paragraph) and ingested as a help-desk
manual with the default settings (semantic search with the bundled model, fresh cache); each
question is searched and scored by whether its paragraph is among the first 3 hits, in the same
run as:

- **char-bigram BM25** — BM25 over character bigrams of the same chunks (the baseline);
- **lexical (no floor)** — the help desk's lexical index alone (``KEIRI_HELPDESK_SEMANTIC=false``,
  relevance floor 0);
- **default** — ``search_manual`` as the agent calls it: lexical and semantic fused, with the
  floor (a question refused as not covered counts as a miss, and is counted).

Run: ``python -m benchmarks.jsquad_retrieval`` (about 2 minutes, most of it embedding)
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.embeddings import bundled_settings
from benchmarks.machine import machine_note
from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase, ingest
from keiri_agent.agents.helpdesk.knowledge.chunking import search_text
from keiri_agent.agents.helpdesk.knowledge.evaluate import EvalQuestion, Expected, evaluate
from keiri_agent.agents.helpdesk.knowledge.storage import IndexDB
from keiri_agent.retrieval.bm25 import BM25Index
from keiri_agent.retrieval.lexical import char_ngrams

__all__ = ["SAMPLE", "main"]

SAMPLE = Path(__file__).resolve().parent / "data" / "jsquad_sample.jsonl"
K = 3


def main() -> None:
    print(machine_note())
    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    questions = [
        EvalQuestion(row["id"], row["question"], (Expected(file=f"{row['id']}.md"),))
        for row in rows
    ]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        manual = root / "manual"
        manual.mkdir()
        for row in rows:
            text = f"# {row['title']}\n\n{row['context']}\n"
            (manual / f"{row['id']}.md").write_text(text, encoding="utf-8")
        default = bundled_settings(root / "cache")
        result = ingest(root / "index", manuals=[manual], settings=default)
        if not result.ok:
            raise SystemExit(f"ingest failed: {result.failures}")
        print(
            f"\n{len(rows)} paragraphs of {len({r['title'] for r in rows})} articles, "
            f"{result.chunks_total} chunks, ingest {result.duration_s:.1f} s "
            f"({result.semantic_embedded} texts embedded); {len(questions)} questions\n"
        )
        db = IndexDB.open(root / "index", create=False)
        ids, texts, _ = db.chunk_analyses()
        file_of = {cid: chunk.file_name for cid, chunk in db.chunks(ids).items()}
        db.close()
        bigram = BM25Index.from_tokens([char_ngrams(search_text(t)) for t in texts], ids=ids)
        found = 0
        for question, row in zip(questions, rows, strict=True):
            top = bigram.top(bigram.scores_for_terms(char_ngrams(question.question)), K)
            found += any(file_of[hit.id] == f"{row['id']}.md" for hit in top)
        results = [("char-bigram BM25 (baseline)", found / len(questions), "-")]
        lexical = bundled_settings(
            root / "cache", keiri_helpdesk_semantic=False, keiri_helpdesk_min_relevance=0.0
        )
        for label, settings in (("lexical (no floor)", lexical), ("default", default)):
            with KnowledgeBase.open(root / "index", settings=settings) as kb:
                report = evaluate(kb, questions, tool="manual", k=K)
            results.append((label, report.recall_at_k, str(report.no_match)))
    print(f"| method | recall@{K} | 該当なし | vs baseline |")
    print("|---|---:|---:|---:|")
    base = results[0][1]
    for label, recall, refused in results:
        print(f"| {label} | {recall:.3f} | {refused} | {(recall - base) * 100:+.1f} pt |")


if __name__ == "__main__":
    main()
