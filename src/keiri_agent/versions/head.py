"""The head of a versions journal: how many lines it has and the last line's chain value.

A hash chain shows a line changed, removed or added in the middle, but not lines cut from the
end: the journal that remains is a shorter, unbroken chain. Cutting the last line is the
easiest edit there is, and it undoes the newest review (a withdrawn approval stands again). So
every append also writes ``versions.head`` beside the journal (an ``events.chain.Seal``, as a
run record keeps for its log), and every entry written since says so (``sealed``): a journal
with such an entry and no head, or fewer lines than its head, or another line where the head
ends, is not as it was written.

A writer writes its journal line, then the head; one that stopped between the two leaves one
line after the head's end, chained to it: that line stands (the next write moves the head), as
a cut last line without a head is a crash's torn tail that readers leave out.
"""

from __future__ import annotations

import json
from pathlib import Path

from keiri_agent.events.chain import Seal, verify_lines
from keiri_agent.workspace import atomic_path

__all__ = ["HEAD_FILE", "head_problems", "read_head", "write_head"]

HEAD_FILE = "versions.head"


def read_head(folder: Path) -> Seal | str | None:
    """The head kept in ``folder`` (None: there is none; a str: why it cannot be read)."""
    path = folder / HEAD_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Seal(lines=int(data["lines"]), digest=str(data["digest"]))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return f"{HEAD_FILE} を読めません。"


def write_head(folder: Path, head: Seal, *, durable: bool) -> None:
    with atomic_path(folder / HEAD_FILE, durable=durable) as tmp:
        tmp.write_text(
            json.dumps({"lines": head.lines, "digest": head.digest}) + "\n", encoding="utf-8"
        )


def head_problems(lines: list[bytes], head: Seal | str | None, sealed: bool) -> list[str]:
    """What is wrong with a journal's complete ``lines`` (their chain already checked) against
    its ``head``; ``sealed``: one of its entries says a head is kept."""
    if isinstance(head, str):
        return [head]
    if head is None:
        return [f"記録の終わりを示す {HEAD_FILE} がありません。"] if sealed else []
    if len(lines) == head.lines + 1:
        lines = lines[:-1]  # a writer stopped after its line, before the head
    report = verify_lines(lines, head, first_id=0)
    return [f.describe() for f in report.findings if f.tampered]
