"""Personal-data detection: keiri_agent.privacy against Microsoft Presidio's pattern recognizers.

Both run on the same synthetic corpus (``benchmarks/pii_corpus.py``: Japanese business text
and tables with every kind of personal data keiri-agent masks, and look-alikes that must stay).
Printed per kind: recall (a gold value counts as found when every one of its characters but
spaces is inside a detected span, i.e. nothing of it would reach the model); then the share of
non-personal tokens masked by mistake, over every Sudachi word outside the gold spans and over
the look-alikes alone (amounts, dates, invoice/order numbers, 法人番号, product codes, company
names); then the time per document.

The baseline is Presidio's predefined pattern recognizers for the kinds it has (e-mail, credit
card, phone numbers with the JP region through ``phonenumbers``, dates for the dates of birth).
They run without a spaCy model (``nlp_artifacts=None``): Presidio's name detection needs a spaCy
NER model, and no Japanese one can be installed here (no model downloads), so Presidio finds
no names, and it has no recognizer for マイナンバー, account numbers or Japanese addresses.

Place names that are surnames too (石川, 長野) come in documents of their own
(``make_place_docs``, ``--place-documents``): the places among the look-alikes (``place``), the
people of those names among the names (``person``); the first ``--documents`` are as before.

Forms with the numbers of 運転免許証 and 健康保険証 come in documents of their own too
(``make_card_docs``, ``--card-documents``): the numbers as ``id_card``, and beside them a 受付番号
with a マイナンバー's check digit, the insurer's 保険者番号 and a 未定 under 担当者 as look-alikes.

    python benchmarks/pii.py   # --documents 60 --rows 10 --seed 37 --place-documents 24 --card-documents 24
"""

from __future__ import annotations

import argparse
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from benchmarks.pii_corpus import Doc, make_card_docs, make_corpus, make_place_docs

Spans = list[tuple[int, int]]

KINDS = [
    "my_number",
    "card",
    "account",
    "branch",
    "phone",
    "email",
    "address",
    "birth_date",
    "employee_id",
    "id_card",
    "person",
]
IDENTIFIERS = [k for k in KINDS if k != "person"]


def keiri_detector() -> Callable[[str], Spans]:
    from keiri_agent.privacy import Vault

    def detect(text: str) -> Spans:
        return [(s.start, s.end) for s in Vault().spans(text)]  # a fresh job per document

    return detect


def presidio_detector() -> Callable[[str], Spans]:
    import tldextract
    from presidio_analyzer.predefined_recognizers import (
        CreditCardRecognizer,
        DateRecognizer,
        EmailRecognizer,
        PhoneRecognizer,
    )
    from presidio_analyzer.predefined_recognizers.generic import email_recognizer

    # tldextract fetches the public suffix list on first use; here it reads its bundled copy.
    offline = tldextract.TLDExtract(suffix_list_urls=())

    class _Offline:
        extract = staticmethod(offline)

    email_recognizer.tldextract = _Offline  # type: ignore[attr-defined,assignment]
    recognizers: list[Any] = [
        EmailRecognizer(),
        CreditCardRecognizer(),
        PhoneRecognizer(supported_regions=("JP",)),
        DateRecognizer(),
    ]

    def detect(text: str) -> Spans:
        found: Spans = []
        for recognizer in recognizers:
            for result in recognizer.analyze(text, recognizer.supported_entities, None):
                found.append((result.start, result.end))
        return found

    return detect


def _covered(text: str, start: int, end: int, spans: Spans) -> bool:
    marks = bytearray(end - start)
    for s, e in spans:
        for i in range(max(s, start), min(e, end)):
            marks[i - start] = 1
    return all(marks[i] or text[start + i] in " 　" for i in range(end - start))


def _touches(start: int, end: int, spans: Spans) -> bool:
    return any(s < end and start < e for s, e in spans)


def _words(text: str) -> list[tuple[int, int]]:
    from sudachipy import SplitMode

    from keiri_agent.sudachi import open_dictionary

    tokenizer = open_dictionary().tokenizer(mode=SplitMode.C)
    return [
        (m.begin(), m.end())
        for m in tokenizer.tokenize(text)
        if m.part_of_speech()[0] not in ("空白", "補助記号")
    ]


def evaluate(docs: Sequence[Doc], detect: Callable[[str], Spans]) -> dict[str, Any]:
    found: Counter[str] = Counter()
    total: Counter[str] = Counter()
    words = words_masked = 0
    alike: Counter[str] = Counter()
    alike_masked: Counter[str] = Counter()
    started = time.perf_counter()
    detected = [detect(doc.text) for doc in docs]
    elapsed = time.perf_counter() - started
    for doc, spans in zip(docs, detected, strict=True):
        for start, end, kind in doc.personal:
            total[kind] += 1
            found[kind] += _covered(doc.text, start, end, spans)
        for start, end in _words(doc.text):
            if _touches(start, end, [(s, e) for s, e, _ in doc.personal]):
                continue
            words += 1
            words_masked += _touches(start, end, spans)
        for start, end, what in doc.lookalikes:
            alike[what] += 1
            alike_masked[what] += _touches(start, end, spans)
    return {
        "recall": {kind: (found[kind], total[kind]) for kind in KINDS},
        "words": (words_masked, words),
        "lookalikes": {what: (alike_masked[what], alike[what]) for what in sorted(alike)},
        "ms_per_doc": elapsed * 1000 / max(len(docs), 1),
    }


def _share(pair: tuple[int, int]) -> str:
    hit, of = pair
    return f"{hit / of:.2f} ({hit}/{of})" if of else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=60)
    parser.add_argument("--rows", type=int, default=10)
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--place-documents", type=int, default=24)
    parser.add_argument("--card-documents", type=int, default=24)
    args = parser.parse_args()
    docs = make_corpus(args.seed, args.documents, args.rows)
    docs += make_place_docs(args.seed, args.place_documents)
    docs += make_card_docs(args.seed, args.card_documents)
    results = {
        "keiri_agent": evaluate(docs, keiri_detector()),
        "presidio (patterns)": evaluate(docs, presidio_detector()),
    }
    names = list(results)
    print(f"corpus: {len(docs)} documents, {sum(len(d.text) for d in docs):,} characters")
    print()
    print("| kind | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    sums: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for kind in KINDS:
        cells = []
        for name in names:
            hit, of = results[name]["recall"][kind]
            cells.append(_share((hit, of)))
            if kind in IDENTIFIERS:
                sums[name][0] += hit
                sums[name][1] += of
        print(f"| recall {kind} | " + " | ".join(cells) + " |")
    print(
        "| recall identifiers (all but names) | "
        + " | ".join(_share((sums[n][0], sums[n][1])) for n in names)
        + " |"
    )
    print(
        "| non-personal words masked | "
        + " | ".join(_share(results[n]["words"]) for n in names)
        + " |"
    )
    lookalikes = sorted(results[names[0]]["lookalikes"])
    for what in lookalikes:
        print(
            f"| look-alike {what} masked | "
            + " | ".join(_share(results[n]["lookalikes"][what]) for n in names)
            + " |"
        )
    print(
        "| ms per document | " + " | ".join(f"{results[n]['ms_per_doc']:.2f}" for n in names) + " |"
    )


if __name__ == "__main__":
    main()
