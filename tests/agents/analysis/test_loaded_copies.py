"""Every file an analysis session loads keeps its own copy in the workspace, byte for byte.

Back offices hand over file sets whose names collide: each month's bank or system download is
``download.csv`` / ``明細.csv`` / ``meisai.csv`` in its own folder, Windows makes ``売上 (1).csv``
and ``売上 - コピー.csv``, the same export comes as CSV and as Excel, and a file uploaded later
may carry the name of a table the agent wrote in an earlier turn (``集計.csv``). A seeded
generator writes such sets, loaded in one call (CLI, API task, ai.analyze_data) or one by one
(the app's uploader, from bytes). After every load:

- each loaded file's exact bytes are in the workspace under a name of its own (the workspace
  holds what was analysed; no copy replaced another);
- what was in the workspace before (earlier copies, the agent's outputs) is unchanged;
- the session has one table per file, and ``copies`` names the copies in loading order;
- the same files loaded again into the same folder (``ai.analyze_data`` run again in its
  node's folder) add no copy.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from keiri_agent.agents.analysis import AnalysisSession

CASES = 40
SHARED_NAMES = ["download.csv", "明細.csv", "meisai.csv", "data.csv", "売上.csv"]
PARTNERS = ["あおば商事", "(株)ミドリ", "カ）サクラ", "東西物産", "北斗工業"]


def _ledger(rng: random.Random) -> str:
    rows = [
        f"2026/{rng.randint(1, 12)}/{rng.randint(1, 28)},{rng.choice(PARTNERS)},"
        f'"{rng.randint(1, 999) * 1000:,}"'
        for _ in range(rng.randint(1, 6))
    ]
    return "日付,取引先,金額\r\n" + "\r\n".join(rows) + "\r\n"


def _file_set(rng: random.Random, folder: Path) -> list[Path]:
    """Two to four files whose base names collide as real hand-overs do."""
    shape = rng.choice(["months", "windows-copies", "csv-and-sheet", "mixed", "distinct"])
    name = rng.choice(SHARED_NAMES)
    stem = Path(name).stem
    if shape == "months":
        paths = [folder / f"2026-{m:02d}" / name for m in range(1, rng.randint(3, 5))]
    elif shape == "windows-copies":
        paths = [folder / name, folder / f"{stem} (1).csv", folder / "別" / name]
    elif shape == "csv-and-sheet":
        paths = [folder / name, folder / f"{stem}.xlsx", folder / "旧" / name]
    elif shape == "mixed":
        paths = [folder / "a" / name, folder / "b" / name.upper(), folder / "c" / name]
    else:  # no collision at all
        paths = [folder / "売上.csv", folder / "経費.csv"]
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = _ledger(rng)
        if path.suffix == ".xlsx":
            import pandas as pd

            lines = [line.split(",", 2) for line in text.strip().splitlines()[1:]]
            pd.DataFrame(lines, columns=["日付", "取引先", "金額"]).to_excel(path, index=False)
        else:
            path.write_bytes(text.encode(rng.choice(["utf-8", "cp932", "utf-8-sig"])))
    return paths


def _load(session: AnalysisSession, paths: list[Path], how: str) -> None:
    if how == "one call":
        session.add_files(paths)
    elif how == "one by one":
        for path in paths:
            session.add_file(path)
    else:  # the app: bytes with the uploaded file's name
        for path in paths:
            session.add_file(path.read_bytes(), name=path.name)


def _contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def test_each_loaded_file_keeps_its_own_copy_and_nothing_earlier_is_replaced(
    tmp_path: Path,
) -> None:
    rng = random.Random(612)
    wrong: list[tuple[object, ...]] = []
    for case in range(CASES):
        data = tmp_path / f"in{case}"
        paths = _file_set(rng, data)
        how = rng.choice(["one call", "one by one", "bytes"])
        session = AnalysisSession(workspace_root=tmp_path / f"ws{case}")
        first, rest = paths[:1], paths[1:]
        _load(session, first, how)
        assert session.workspace is not None
        # A table the agent wrote in a turn, named as a file loaded later may be.
        output = session.workspace / (rest[0].name if rng.random() < 0.5 else "集計.csv")
        if not output.exists():
            output.write_bytes(b"agent's table\n")
        before = _contents(session.workspace)
        _load(session, rest, how)

        after = _contents(session.workspace)
        kept = Counter(after.values())
        needed = Counter(path.read_bytes() for path in paths)
        if any(kept[content] < count for content, count in needed.items()):
            wrong.append((case, "a file's copy missing", how, [str(p) for p in paths]))
        if any(after.get(name) != content for name, content in before.items()):
            wrong.append((case, "an earlier file replaced", how, [str(p) for p in paths]))
        if len(session.frames) != len(paths):
            wrong.append((case, "tables", how, list(session.frames)))
        copies = getattr(session, "copies", None)
        if copies is None or [c.read_bytes() for c in copies] != [p.read_bytes() for p in paths]:
            wrong.append((case, "copies", how, copies))
        again = AnalysisSession(workspace=session.workspace)  # a node run again in its folder
        _load(again, paths, how)
        if _contents(session.workspace) != after:
            wrong.append((case, "a load run again added copies", how, sorted(after)))
    kinds = Counter(w[1] for w in wrong)
    assert not wrong, (
        f"{len({w[0] for w in wrong})} of {CASES} cases wrong {dict(kinds)}: {wrong[:2]}"
    )
