"""One held-out list of ``tests/data/helpdesk_paraphrases.yaml`` against the help desk's defaults (issue 38).

The sample knowledge base (``examples/helpdesk``) is ingested into a temporary index with the
default settings and no keys, and each named list is measured as ``benchmarks/helpdesk_floor.py``
measures its lists (:func:`tests.support.helpdesk_paraphrases.found` / ``refused``): paraphrases
found in the first 3 hits, off-topic questions refused (該当なし), with the questions that missed.
For a list measured once, outside any tuning (``heldout6``, ``heldout7``).

Run: ``python -m benchmarks.helpdesk_heldout heldout6`` (about 1 minute, most of it embedding)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import cast

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.helpdesk import EXAMPLES
from tests.support.helpdesk_paraphrases import Split, found, load_lists, refused

from benchmarks.embeddings import bundled_settings
from benchmarks.machine import machine_note
from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase, ingest

__all__ = ["main"]


def main(splits: list[str]) -> None:
    print(machine_note())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        settings = bundled_settings(root / "cache")
        done = ingest(
            root / "kb", manuals=[EXAMPLES / "manual"], qa=EXAMPLES / "qa.csv", settings=settings
        )
        if not done.ok:
            raise SystemExit(f"ingest failed: {done.failures}")
        with KnowledgeBase.open(root / "kb", settings=settings) as kb:
            for split in splits:
                lists = load_lists(cast(Split, split))
                missed = [c.question for c in lists.answerable if not found(kb, c)]
                passed = [q for q in lists.off_topic if not refused(kb, q)]
                on, off = len(lists.answerable), len(lists.off_topic)
                print(
                    f"{split}: paraphrases found@3 {on - len(missed)}/{on}, "
                    f"off-topic 該当なし {off - len(passed)}/{off}"
                )
                print(f"  paraphrases missed: {missed}")
                print(f"  off-topic answered: {passed}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["heldout6"])
