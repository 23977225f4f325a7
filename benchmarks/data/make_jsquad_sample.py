"""Write benchmarks/data/jsquad_sample.jsonl: a small sample of JGLUE's JSQuAD for retrieval.

JSQuAD (JGLUE, Kurihara et al., LREC 2022; CC BY-SA 4.0, see JSQUAD_LICENSE.md beside this
file) asks questions about paragraphs of Japanese Wikipedia. The sample turns it into a
retrieval task: the paragraphs of the first articles of the validation set (v1.3) are the
documents, and the first question of each paragraph is searched for; the answering document is
the paragraph it was asked about. Deterministic: the same input writes the same file.

Run with a checkout of https://github.com/yahoojapan/JGLUE:
``python benchmarks/data/make_jsquad_sample.py PATH/TO/JGLUE/datasets/jsquad-v1.3/valid-v1.3.json``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

MAX_PARAGRAPHS = 300  # documents in the sample (whole articles, in the file's order)
OUT = Path(__file__).resolve().parent / "jsquad_sample.jsonl"


def main(source: Path) -> None:
    articles = json.loads(source.read_text(encoding="utf-8"))["data"]
    rows: list[dict[str, str]] = []
    for article in articles:
        paragraphs = article["paragraphs"]
        if len(rows) + len(paragraphs) > MAX_PARAGRAPHS:
            break
        for paragraph in paragraphs:
            title, _, text = paragraph["context"].partition(" [SEP] ")
            question = paragraph["qas"][0]
            rows.append(
                {
                    "id": question["id"],
                    "title": title,
                    "context": text,
                    "question": question["question"],
                }
            )
    OUT.write_text(
        "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8"
    )
    print(f"{len(rows)} paragraphs of {len({r['title'] for r in rows})} articles -> {OUT}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
