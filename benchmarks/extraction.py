"""Which PDF text extractor the product uses, decided by measurement.

Generates Japanese multi-page PDFs (``benchmarks/corpus.py``), extracts them with pypdf (the
baseline), pdfminer.six and pypdfium2 in the same run, and prints pages per second and the
ratio against pypdf, plus a correctness check: the NFKC-normalized text of each extractor must
contain every known sentence and table value. The product's own reader
(``keiri_agent.documents.pdf.read_pdf``: pypdfium2 plus normalization) is measured too.

Run: ``python benchmarks/extraction.py [--files 10] [--pages 20] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import io
import re
import sys
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.corpus import BenchmarkPdf, generate_corpus
from benchmarks.machine import machine_note as common_machine_note

__all__ = ["EXTRACTORS", "main"]

Extractor = Callable[[bytes], str]
_SPACE = re.compile(r"\s+")


def extract_pypdf(data: bytes) -> str:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    return "\f".join(page.extract_text() for page in reader.pages)


def extract_pdfminer(data: bytes) -> str:
    from pdfminer.high_level import extract_text

    return extract_text(io.BytesIO(data))


def extract_pypdfium2(data: bytes) -> str:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(data)
    try:
        pages = []
        for index in range(len(document)):
            page = document[index]
            textpage = page.get_textpage()
            pages.append(textpage.get_text_range())
            textpage.close()
            page.close()
        return "\f".join(pages)
    finally:
        document.close()


def extract_product(data: bytes) -> str:
    from keiri_agent.documents.pdf import read_pdf

    return read_pdf(data, "benchmark.pdf", max_pages=10_000).text


EXTRACTORS: dict[str, Extractor] = {
    "pypdf": extract_pypdf,
    "pdfminer.six": extract_pdfminer,
    "pypdfium2": extract_pypdfium2,
    "keiri_agent read_pdf": extract_product,
}
BASELINE = "pypdf"


def _canonical(text: str) -> str:
    return _SPACE.sub("", unicodedata.normalize("NFKC", text))


def check(extractor: Extractor, corpus: list[BenchmarkPdf]) -> tuple[int, int]:
    """(found, expected) known sentences and values in the extractor's output."""
    found = expected = 0
    for pdf in corpus:
        text = _canonical(extractor(pdf.data))
        for sentence in pdf.sentences:
            expected += 1
            found += _canonical(sentence) in text
    return found, expected


def measure(
    extractors: dict[str, Extractor], corpus: list[BenchmarkPdf], repeat: int
) -> dict[str, float]:
    """Best wall time per extractor over ``repeat`` rounds, rounds interleaved against drift."""
    best = dict.fromkeys(extractors, float("inf"))
    for _ in range(repeat):
        for name, extractor in extractors.items():
            start = time.perf_counter()
            for pdf in corpus:
                extractor(pdf.data)
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def machine_note() -> str:
    import pdfminer
    import pypdf
    import pypdfium2

    return common_machine_note(
        f"pypdf {pypdf.__version__}, "
        f"pdfminer.six {pdfminer.__version__}, pypdfium2 {pypdfium2.version.PYPDFIUM_INFO}"
        f" (PDFium {pypdfium2.version.PDFIUM_INFO})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    corpus = generate_corpus(args.files, args.pages)
    total_pages = sum(pdf.pages for pdf in corpus)
    print(f"corpus: {len(corpus)} files x {args.pages} pages = {total_pages} pages")
    print(machine_note())
    correctness = {name: check(fn, corpus) for name, fn in EXTRACTORS.items()}
    times = measure(EXTRACTORS, corpus, args.repeat)
    base = total_pages / times[BASELINE]
    print(f"\n| extractor | pages/s | vs {BASELINE} | known text found |")
    print("|---|---:|---:|---:|")
    for name in EXTRACTORS:
        rate = total_pages / times[name]
        found, expected = correctness[name]
        print(f"| {name} | {rate:,.0f} | {rate / base:.2f}x | {found}/{expected} |")
    correct = [n for n in EXTRACTORS if correctness[n][0] == correctness[n][1]]
    libraries = [n for n in correct if n != "keiri_agent read_pdf"]
    if not libraries:
        print("\nno extractor found all known text")
        return 1
    fastest = max(libraries, key=lambda n: total_pages / times[n])
    print(
        f"\nfastest correct library: {fastest} ({times[BASELINE] / times[fastest]:.1f}x {BASELINE})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
