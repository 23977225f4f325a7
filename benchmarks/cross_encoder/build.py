"""Build train/dev pairs for a Japanese "does this passage answer this question?" cross-encoder.

Sources (see README.md in this folder):
  1. JGLUE JSQuAD v1.3 (CC BY-SA 4.0): WORK/raw/jsquad-{valid,test}-v1.3.json (from
     github:yahoojapan/JGLUE, datasets/jsquad-v1.3/; the train split was not in the stored
     snapshot, so test + part of valid are used for training and other valid articles for dev).
  2. The project's manual domain: hits dumped by manual_hits.py (WORK/manual_hits.jsonl).

Output in WORK (outside the repository): train.jsonl, dev.jsonl ({"q","p","label","src","kind"}),
stats.json, samples.md.

Run (standard library only, from the repository root): python -m benchmarks.cross_encoder.build WORK
"""

from __future__ import annotations

import collections
import json
import math
import random
import re
import sys
import unicodedata
from pathlib import Path

from benchmarks.cross_encoder.nearmiss import make_eval_set
from benchmarks.cross_encoder.windows import MAX_CHARS, line_windows

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "benchmarks" / "data" / "jsquad_sample.jsonl"  # kept out of train and dev
SEED = 38
DEV_JSQUAD_QUESTIONS = 520  # about 1,500 dev pairs at 1 positive : 2 negatives
TRAIN_QUESTIONS_PER_PARAGRAPH = 2  # variety of positives: at most this many questions per paragraph
TRAIN_JSQUAD_QUESTIONS = 4000  # about 12,000 train pairs
MANUAL_DEV_SPLITS = {"heldout3"}
MANUAL_TRAIN_SPLITS = {"dev", "dev2", "heldout", "heldout2"}  # heldout4-6 are never read


# --- text helpers --------------------------------------------------------------------------


def norm(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text)).lower()


_PUNCT = re.compile(r"[\s、。,.，．・「」『』（）()\[\]【】:：;；!！?？\"'“”‘’/\-－―〜~]")


def bigrams(text: str) -> list[str]:
    t = _PUNCT.sub(" ", unicodedata.normalize("NFKC", text).lower())
    out: list[str] = []
    for part in t.split():
        if len(part) == 1:
            out.append(part)
        out.extend(part[i : i + 2] for i in range(len(part) - 1))
    return out


_SENT = re.compile(r"[^。！？!?\n]*(?:[。！？!?]+|\n|$)")


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) spans of sentences covering ``text``."""
    spans = []
    for m in _SENT.finditer(text):
        if m.end() > m.start():
            spans.append((m.start(), m.end()))
    return spans


def sentence_windows(text: str, max_chars: int = MAX_CHARS) -> list[tuple[int, int]]:
    """Sentence windows of at most ``max_chars`` (a longer single sentence is cut hard)."""
    if len(text) <= max_chars:
        return [(0, len(text))]
    spans = sentences(text)
    out = []
    for i in range(len(spans)):
        start, end = spans[i][0], spans[i][1]
        j = i + 1
        while j < len(spans) and spans[j][1] - start <= max_chars:
            end = spans[j][1]
            j += 1
        out.append((start, min(end, start + max_chars)))
    return out


def window_with(text: str, start: int, end: int, rng: random.Random) -> str:
    """A window of ``text`` (≤ MAX_CHARS, sentence-aligned) containing [start, end)."""
    if len(text) <= MAX_CHARS:
        return text
    fits = [w for w in sentence_windows(text) if w[0] <= start and end <= w[1]]
    if not fits:  # answer sentence longer than the cap: cut around the answer
        s = max(0, min(start - (MAX_CHARS - (end - start)) // 2, len(text) - MAX_CHARS))
        return text[s : s + MAX_CHARS].strip()
    w = rng.choice(fits)
    return text[w[0] : w[1]].strip()


def best_window(text: str, query: str) -> str:
    """The sentence window of ``text`` sharing most character bigrams with ``query``."""
    if len(text) <= MAX_CHARS:
        return text
    qb = set(bigrams(query))
    ws = sentence_windows(text)
    w = max(ws, key=lambda w: (len(qb & set(bigrams(text[w[0] : w[1]]))), -w[0]))
    return text[w[0] : w[1]].strip()


class BM25:
    """Okapi BM25 over character bigrams."""

    def __init__(self, docs: list[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tfs = [collections.Counter(bigrams(d)) for d in docs]
        self.lens = [sum(tf.values()) for tf in self.tfs]
        self.avg = sum(self.lens) / max(1, len(self.lens))
        df: collections.Counter[str] = collections.Counter()
        self.post: dict[str, list[int]] = collections.defaultdict(list)
        for i, tf in enumerate(self.tfs):
            for t in tf:
                df[t] += 1
                self.post[t].append(i)
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def scores(self, query: str) -> dict[int, float]:
        out: dict[int, float] = collections.defaultdict(float)
        for t in set(bigrams(query)):
            idf = self.idf.get(t)
            if idf is None:
                continue
            for i in self.post[t]:
                f = self.tfs[i][t]
                den = f + self.k1 * (1 - self.b + self.b * self.lens[i] / self.avg)
                out[i] += idf * f * (self.k1 + 1) / den
        return out


# --- JSQuAD --------------------------------------------------------------------------------


def load_jsquad(raw: Path, name: str) -> list[dict]:
    """Articles: {"title", "paragraphs": [{"text", "qas": [{"id","question","answers"}]}]}."""
    data = json.loads((raw / f"jsquad-{name}-v1.3.json").read_text(encoding="utf-8"))["data"]
    arts = []
    for a in data:
        paras = []
        for p in a["paragraphs"]:
            ctx = p["context"]
            prefix = ctx.index(" [SEP] ") + len(" [SEP] ")
            text = ctx[prefix:]
            qas = []
            for q in p["qas"]:
                answers = []
                for ans in q["answers"]:
                    s = ans["answer_start"] - prefix
                    if s >= 0 and text[s : s + len(ans["text"])] == ans["text"]:
                        answers.append((ans["text"], s))
                if answers:
                    qas.append({"id": q["id"], "question": q["question"], "answers": answers})
            paras.append({"text": text, "qas": qas})
        arts.append({"title": a["title"], "paragraphs": paras})
    return arts


def contains_answer(passage: str, answers: list[tuple[str, int]]) -> bool:
    p = norm(passage)
    return any(norm(a) and norm(a) in p for a, _ in answers)


def jsquad_pairs(
    arts: list[dict], n_questions: int, per_paragraph: int, src: str, rng: random.Random
) -> list[dict]:
    """1 positive + 1 same-article negative + 1 other-article BM25 negative per question."""
    paras = [
        (ai, pi, p["text"]) for ai, a in enumerate(arts) for pi, p in enumerate(a["paragraphs"])
    ]
    index = BM25([t for _, _, t in paras])
    by_article = collections.defaultdict(list)
    for k, (ai, _, _) in enumerate(paras):
        by_article[ai].append(k)
    candidates: list[tuple[int, dict]] = []
    for k, (ai, pi, _) in enumerate(paras):
        qas = list(arts[ai]["paragraphs"][pi]["qas"])
        rng.shuffle(qas)
        candidates.extend((k, q) for q in qas[:per_paragraph])
    rng.shuffle(candidates)
    out: list[dict] = []
    used = 0
    for k, q in candidates:
        if used >= n_questions:
            break
        ai, pi, text = paras[k]
        question, answers = q["question"], q["answers"]
        a_text, a_start = answers[0]
        pos = window_with(text, a_start, a_start + len(a_text), rng)
        if not contains_answer(pos, answers[:1]):
            continue
        scores = index.scores(question)
        same = sorted(
            (k2 for k2 in by_article[ai] if k2 != k),
            key=lambda k2: -scores.get(k2, 0.0),
        )
        same = [k2 for k2 in same if not contains_answer(paras[k2][2], answers)][:3]
        other = sorted((k2 for k2 in scores if paras[k2][0] != ai), key=lambda k2: -scores[k2])
        other = [k2 for k2 in other if not contains_answer(paras[k2][2], answers)][:3]
        if not same or not other:
            continue
        used += 1
        title = arts[ai]["title"]
        out.append(dict(q=question, p=pos, label=1, src=src, kind="pos", qid=q["id"], title=title))
        neg_s = best_window(paras[rng.choice(same)][2], question)
        out.append(
            dict(
                q=question,
                p=neg_s,
                label=0,
                src=src,
                kind="neg_same_article",
                qid=q["id"],
                title=title,
            )
        )
        neg_o = best_window(paras[other[0]][2], question)
        out.append(
            dict(q=question, p=neg_o, label=0, src=src, kind="neg_bm25", qid=q["id"], title=title)
        )
    return out


def jsquad(rng: random.Random, raw: Path) -> tuple[list[dict], list[dict], dict]:
    bench = [json.loads(line) for line in BENCH.read_text(encoding="utf-8").splitlines() if line]
    bench_ids = {b["id"] for b in bench}
    bench_q = {norm(b["question"]) for b in bench}
    bench_titles = {b["title"] for b in bench}
    valid, test = load_jsquad(raw, "valid"), load_jsquad(raw, "test")

    def drop_bench(arts: list[dict]) -> list[dict]:
        for a in arts:
            for p in a["paragraphs"]:
                p["qas"] = [
                    q
                    for q in p["qas"]
                    if q["id"] not in bench_ids and norm(q["question"]) not in bench_q
                ]
        return arts

    valid, test = drop_bench(valid), drop_bench(test)
    # benchmark articles (all in valid): kept out of train entirely, passages included
    valid_free = [a for a in valid if a["title"] not in bench_titles]
    titles = sorted(a["title"] for a in valid_free)
    rng.shuffle(titles)
    dev_titles, n = set(), 0
    for t in titles:
        if n >= DEV_JSQUAD_QUESTIONS * 1.3:
            break
        dev_titles.add(t)
        n += sum(len(p["qas"]) for a in valid_free if a["title"] == t for p in a["paragraphs"])
    dev_arts = [a for a in valid_free if a["title"] in dev_titles]
    train_arts = test + [a for a in valid_free if a["title"] not in dev_titles]
    assert not ({a["title"] for a in train_arts} & bench_titles)
    assert not ({a["title"] for a in train_arts} & dev_titles)
    train = jsquad_pairs(
        train_arts, TRAIN_JSQUAD_QUESTIONS, TRAIN_QUESTIONS_PER_PARAGRAPH, "jsquad", rng
    )
    dev = jsquad_pairs(dev_arts, DEV_JSQUAD_QUESTIONS, 99, "jsquad_dev", rng)
    info = {
        "bench_articles_excluded": sorted(bench_titles),
        "dev_articles": sorted(dev_titles),
        "train_articles": len(train_arts),
    }
    return train, dev, info


# --- the project's manual domain -----------------------------------------------------------

MANUAL_NEG_PER_QUESTION = 3  # non-gold hits kept as negatives for an answerable question
OFFTOPIC_NEG_PER_QUESTION = 4  # top hits kept as negatives for an off-topic question
EVAL_NEG_PER_QUESTION = 2
NEARMISS_NEG_PER_QUESTION = 3  # top candidates of a near-miss question (nearmiss.py)
EVAL_MANUAL = REPO / "examples" / "helpdesk_eval" / "manual"


def squash(text: str) -> str:
    return norm(text)


def eval_sections() -> dict[tuple[str, str], dict]:
    """(file, heading) -> {"procedure", "body"} of examples/helpdesk_eval/manual/*.md."""
    out = {}
    for md in sorted(EVAL_MANUAL.glob("*.md")):
        proc, heading = "", None
        body: list[str] = []
        lines = [*md.read_text(encoding="utf-8").splitlines(), "### END"]
        for line in lines:
            if line.startswith("## ") and not line.startswith("### "):
                proc = re.sub(r"^##\s*\d+\.\s*", "", line).strip()
            elif line.startswith("### "):
                if heading is not None:
                    out[(md.name, heading)] = {"procedure": proc, "body": "".join(body).strip()}
                heading = re.sub(r"^###\s*[\d.]+\s*", "", line).strip()
                body = []
            elif heading is not None and line.strip():
                body.append(line.strip())
    return out


# The fact a section of examples/helpdesk_eval answers with, by topic (make_eval_set.TOPICS): a
# negative chunk of the same procedure that states it (e.g. 申請方法 also names the document to
# attach; 承認ルート also names the limit) partly answers, so it is dropped.
TOPIC_FACTS = {
    "の申請方法": ("menu",),
    "の締め日": ("day",),
    "の承認ルート": ("a2",),
    "の添付書類": ("document",),
    "の上限額": ("limit",),
    "のエラー": ("code",),
}


def eval_facts() -> dict[str, dict[str, str]]:
    """Procedure name -> its facts, from examples/helpdesk_eval/make_eval_set.py (read only)."""
    m = make_eval_set()
    out = {}
    for proc in m.PROCEDURES:
        f = m._facts(proc)
        f["day"] = f"{proc.day}日"
        out[proc.name] = f
    return out


def states_gold_fact(chunk: str, heading: str, facts: dict[str, dict[str, str]]) -> bool:
    """Whether ``chunk`` is about the gold section's procedure and states its topic's fact."""
    name = next((n for n in facts if heading.startswith(n)), None)
    if name is None:
        raise SystemExit(f"no procedure for heading {heading}")
    if squash(name) not in squash(chunk):
        return False
    f, topic = facts[name], heading[len(name) :]
    return any(squash(f[key]) in squash(chunk) for key in TOPIC_FACTS.get(topic, ()))


def passage_of(hit: dict) -> str:
    """A hit's text, or for a chunk longer than MAX_CHARS its line window most similar to the
    question under the bundled embedding model (manual_hits.py): a positive's answer is most
    likely there, and for a negative it is the hardest part."""
    if not hit.get("windows"):
        return hit["content"]
    return max(hit["windows"], key=lambda w: w["sim"])["text"]


def manual_pairs(rng: random.Random, hits_file: Path) -> tuple[list[dict], list[dict], dict]:
    rows = [json.loads(line) for line in hits_file.read_text(encoding="utf-8").splitlines()]
    assert not {r["split"] for r in rows} & {"heldout4", "heldout5", "heldout6"}
    sections = eval_sections()
    facts = eval_facts()
    train: list[dict] = []
    dev: list[dict] = []
    dropped: collections.Counter[str] = collections.Counter()
    for r in rows:
        q, hits = r["question"], r["hits"]
        pairs: list[dict] = []
        if r["corpus"] == "helpdesk_nearmiss":
            src, sink = ("manual_dev", dev) if r["split"] == "nm_dev" else ("manual", train)
            for h in hits[:NEARMISS_NEG_PER_QUESTION]:
                pairs.append(dict(q=q, p=passage_of(h), label=0, kind="manual_neg_nearmiss"))
        elif r["corpus"] == "eval_nearmiss":
            src, sink = "helpdesk_eval", train
            for h in hits[:EVAL_NEG_PER_QUESTION]:
                pairs.append(
                    dict(q=q, p=best_lines(h["content"], q), label=0, kind="eval_neg_nearmiss")
                )
        elif r["corpus"] == "helpdesk":
            if r["split"] in MANUAL_DEV_SPLITS:
                src, sink = "manual_dev", dev
            elif r["split"] in MANUAL_TRAIN_SPLITS:
                src, sink = "manual", train
            else:
                raise SystemExit(f"unexpected split {r['split']}")
            if r["answerable"]:
                gold = set(r["gold"])
                best: dict[str, dict] = {}
                for h in hits:  # one positive per gold page / Q&A row: its most similar chunk
                    if h["gold_id"] in gold:
                        b = best.get(h["gold_id"])
                        if b is None or (h["similarity"] or 0) > (b["similarity"] or 0):
                            best[h["gold_id"]] = h
                for h in best.values():
                    pairs.append(dict(q=q, p=passage_of(h), label=1, kind="manual_pos"))
                dropped["manual_gold_page_other_chunk"] += sum(
                    h["gold_id"] in gold for h in hits
                ) - len(best)
                gold_has_qa = any(g.startswith("qa#") for g in gold)
                negs = []
                for h in hits:
                    if h["gold_id"] in gold:
                        continue
                    if h["source"] == "qa" and not gold_has_qa:
                        dropped["manual_qa_hit_unjudged"] += 1  # the list did not judge Q&A rows
                        continue
                    negs.append(h)
                for h in negs[:MANUAL_NEG_PER_QUESTION]:
                    kind = "manual_neg_other_qa" if h["source"] == "qa" else "manual_neg_other_page"
                    pairs.append(dict(q=q, p=passage_of(h), label=0, kind=kind))
            else:
                for h in hits[:OFFTOPIC_NEG_PER_QUESTION]:
                    pairs.append(dict(q=q, p=passage_of(h), label=0, kind="manual_neg_offtopic"))
        elif r["corpus"] == "helpdesk_eval":
            src, sink = "helpdesk_eval", train
            sec = sections[(r["gold"][0], r["passage"])]
            head, first = squash(r["passage"]), squash(re.split(r"(?<=。)", sec["body"])[0])
            pos = [
                h
                for h in hits
                if h["file"] == r["gold"][0]
                and head in squash(h["content"])
                and first in squash(h["content"])
            ]
            if not pos:
                dropped["eval_no_positive_in_hits"] += 1
            for h in pos[:1]:
                pairs.append(
                    dict(q=q, p=best_lines(h["content"], r["passage"]), label=1, kind="eval_pos")
                )
            negs = []
            for h in hits:
                if head in squash(h["content"]):
                    continue
                if states_gold_fact(h["content"], r["passage"], facts):
                    dropped["eval_neg_states_gold_fact"] += 1
                    continue
                negs.append(h)
            for h in negs[:EVAL_NEG_PER_QUESTION]:
                same = "## " in h["content"] and sec["procedure"] in h["content"].split("\n", 1)[0]
                kind = "eval_neg_same_procedure" if same else "eval_neg_other_procedure"
                pairs.append(dict(q=q, p=best_lines(h["content"], q), label=0, kind=kind))
        else:
            raise SystemExit(f"unexpected corpus {r['corpus']}")
        for p in pairs:
            p.update(src=src, qid=r.get("qid") or f"{r['corpus']}:{r['split']}:{q}")
        sink.extend(pairs)
    return train, dev, {"dropped": dict(dropped)}


def best_lines(text: str, key: str) -> str:
    """``text`` if short; else its first line window (≤ MAX_CHARS) containing ``key``, or the
    one sharing most character bigrams with it."""
    cands = line_windows(text)
    if len(cands) == 1:
        return cands[0]
    hit = [c for c in cands if squash(key) in squash(c)]
    if hit:
        return hit[0]
    kb = set(bigrams(key))
    return max(cands, key=lambda c: len(kb & set(bigrams(c))))


# --- assembly ------------------------------------------------------------------------------


def finish(rows: list[dict], rng: random.Random) -> tuple[list[dict], int, int]:
    """Dedupe on (q, p); a (q, p) seen with both labels is dropped; shuffle."""
    seen: dict[tuple[str, str], dict] = {}
    conflicts = set()
    dups = 0
    for r in rows:
        key = (r["q"].strip(), r["p"].strip())
        if key in seen:
            dups += 1
            if seen[key]["label"] != r["label"]:
                conflicts.add(key)
            continue
        seen[key] = r
    out = [
        {"q": k[0], "p": k[1], "label": r["label"], "src": r["src"], "kind": r["kind"]}
        for k, r in seen.items()
        if k not in conflicts
    ]
    rng.shuffle(out)
    return out, dups, len(conflicts)


def write_jsonl(path: Path, rows: list[dict]) -> None:
    """Written to a temporary file and renamed: a reader never sees half a file."""
    tmp = path.with_suffix(".jsonl.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    tmp.replace(path)


def counts(rows: list[dict]) -> dict:
    c = collections.Counter((r["src"], r["kind"], r["label"]) for r in rows)
    return {f"{s}/{k}/{lab}": n for (s, k, lab), n in sorted(c.items())}


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m benchmarks.cross_encoder.build WORK")
    work = Path(sys.argv[1])
    rng = random.Random(SEED)
    jt, jd, jinfo = jsquad(rng, work / "raw")
    mt, md, minfo = manual_pairs(rng, work / "manual_hits.jsonl")
    train, tdup, tconf = finish(jt + mt, random.Random(SEED + 1))
    dev, ddup, dconf = finish(jd + md, random.Random(SEED + 2))
    tq, dq = {r["q"] for r in train}, {r["q"] for r in dev}
    overlap = tq & dq
    if overlap:  # a question in both files: keep it in dev only
        train = [r for r in train if r["q"] not in overlap]
    write_jsonl(work / "train.jsonl", train)
    write_jsonl(work / "dev.jsonl", dev)
    stats = {
        "train": {
            "pairs": len(train),
            "positives": sum(r["label"] for r in train),
            "duplicates_removed": tdup,
            "conflicts_removed": tconf,
            "by_src_kind_label": counts(train),
        },
        "dev": {
            "pairs": len(dev),
            "positives": sum(r["label"] for r in dev),
            "duplicates_removed": ddup,
            "conflicts_removed": dconf,
            "by_src_kind_label": counts(dev),
        },
        "train_dev_question_overlap_removed_from_train": len(overlap),
        "jsquad": jinfo,
        "manual": minfo,
    }
    (work / "stats.json").write_text(
        json.dumps(stats, ensure_ascii=False, indent=1), encoding="utf-8"
    )
    samples(train, dev, work / "samples.md")
    print(json.dumps(stats, ensure_ascii=False, indent=1))


def samples(train: list[dict], dev: list[dict], path: Path) -> None:
    rng = random.Random(SEED + 3)
    lines = ["# 10 random pairs of each kind (train; manual_dev from dev.jsonl)", ""]
    groups = collections.defaultdict(list)
    for r in train:
        groups[(r["src"], r["kind"])].append(r)
    for r in dev:
        if r["src"] == "manual_dev":
            groups[(r["src"], r["kind"])].append(r)
    for (src, kind), rows in sorted(groups.items()):
        lines.append(f"## {src} / {kind} ({len(rows)})")
        lines.append("")
        for r in rng.sample(rows, min(10, len(rows))):
            p = r["p"].replace("\n", " ")
            lines.append(f"- [{r['label']}] Q: {r['q']}  \n  P: {p}")
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main()
