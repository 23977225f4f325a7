"""Ledgers as kept (``kept_ledgers``) through the analysis agent and the conversion pipeline.

The property, for each drawn ledger: the total and the per-department sums that plain pandas
code computes on the table the agent hands over (``df[金額].sum()``, ``df.groupby(部門)[金額]
.sum()``) equal the clean source's in yen -- no 合計/小計 row summed again, no 千円 column taken
for yen -- and the table's description in the prompt says what was done (unit, total rows).
An amount cell that is not an amount stops the reading with a Japanese error at its line.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import pytest
from openpyxl import Workbook, load_workbook

from keiri_agent.agents.analysis import AnalysisContext, AnalysisSession
from keiri_agent.agents.convert.formats import convert_file
from keiri_agent.agents.convert.models import ChartSpec
from keiri_agent.agents.convert.viz import render_chart
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.sandbox import SandboxExecutor
from tests.agents.kept_ledgers import (
    DEPARTMENTS,
    KeptLedger,
    kept_ledger,
    script_sums,
    wrong_figures,
)
from tests.support import ScriptedLLMServer

# Ledgers per analysis turn (one session reads them all, one code run sums them all).
BATCH = 12
ANALYSIS_BATCHES = 4  # 48 ledgers through the agent
CONVERSION_CASES = 80


@pytest.mark.parametrize("batch", range(ANALYSIS_BATCHES))
def test_the_agent_sums_kept_ledgers_as_their_clean_source(
    batch: int,
    public_dir: Path,
    sandbox_executor: SandboxExecutor,
    llm_server: ScriptedLLMServer,
) -> None:
    session = AnalysisSession(
        workspace_root=public_dir / "workspace",
        runs_dir=public_dir / "runs",
        context=AnalysisContext(executor=sandbox_executor),
    )
    wrong: list[str] = []
    read: list[tuple[KeptLedger, str]] = []
    for seed in range(batch * BATCH, (batch + 1) * BATCH):
        ledger = kept_ledger(seed)
        try:
            info = session.add_file(ledger.data, name=ledger.name)
        except BlockError as exc:
            if (problem := _wrong_refusal(ledger, exc)) is not None:
                wrong.append(problem)
            continue
        read.append((ledger, info.name.removeprefix('dfs["').removesuffix('"]')))
    script_sums(llm_server)
    turn = session.ask("部門別の経費の合計を出して")
    (run,) = turn.execution_results
    assert run.success, run.error
    found = json.loads((turn.workspace / "sums.json").read_text(encoding="utf-8"))
    prompt = json.dumps(llm_server.chat_requests()[1]["messages"], ensure_ascii=False)
    untold = []
    for ledger, key in read:
        got = found[key]
        problem = wrong_figures(ledger, got["total"], got["by"])
        if not got["dates"]:
            problem = "dates are not dates"
        if problem is not None:
            wrong.append(f"{ledger.describe()}: {problem}")
        if ledger.unit != "円" and "円にしてあります" not in prompt:
            untold.append(f"{ledger.describe()}: the prompt does not say the unit was applied")
    assert not wrong, f"{len(wrong)} of {BATCH} wrong:\n" + "\n".join(wrong)
    assert not untold, "\n".join(untold)
    assert "合計・小計の行" in prompt
    assert "足し直す必要はありません" in prompt


def _wrong_refusal(ledger: KeptLedger, exc: BlockError) -> str | None:
    """Why refusing ``ledger`` with ``exc`` is wrong: only a ledger whose rows do not add up
    to its 合計 may be refused, with the error saying so in Japanese."""
    told = "一致しません" in exc.message and "行目" in exc.message
    if ledger.doubtful and exc.code == ErrorCode.INPUT_VALIDATION_FAILED and told:
        return None
    return f"{ledger.describe()}: refused: {exc.message}"


def _converted(ledger: KeptLedger, folder: Path, target: str) -> pd.DataFrame:
    folder.mkdir()
    source = folder / ledger.name
    source.write_bytes(ledger.data)
    out = convert_file(source, target, folder / "out")
    if target == "json":
        return pd.DataFrame(json.loads(out.read_text(encoding="utf-8")))
    return pd.read_excel(out)


def test_conversion_keeps_the_clean_figures_of_kept_ledgers(tmp_path: Path) -> None:
    wrong = []
    for seed in range(1000, 1000 + CONVERSION_CASES):
        ledger = kept_ledger(seed)
        folder = tmp_path / str(seed)
        try:
            frame = _converted(ledger, folder, "json" if seed % 2 else "xlsx")
        except BlockError as exc:
            if (problem := _wrong_refusal(ledger, exc)) is not None:
                wrong.append(problem)
            assert not any((folder / "out").glob("*")), "a refused conversion wrote a file"
            continue
        amount = next(c for c in frame.columns if "金額" in c)
        department = next(c for c in frame.columns if "部門" in c)
        numbers = pd.to_numeric(frame[amount], errors="coerce")
        by = {str(k): float(v) for k, v in numbers.groupby(frame[department]).sum().items()}
        problem = wrong_figures(ledger, float(numbers.sum()), by)
        if problem is None and ledger.unit != "円" and "円" not in amount:
            problem = f"the header {amount!r} does not say the amounts are yen"
        if problem is not None:
            wrong.append(f"{ledger.describe()}: {problem}")
    assert not wrong, f"{len(wrong)} of {CONVERSION_CASES} wrong:\n" + "\n".join(wrong)


def _with_typo(ledger: KeptLedger) -> tuple[bytes, str]:
    """``ledger`` with its first data amount written ``1,2OO`` (letters O), and that cell's
    place as the user finds it."""
    if ledger.name.endswith(".xlsx"):
        book = load_workbook(io.BytesIO(ledger.data))
        sheet = book.active
        assert sheet is not None
        row = next(r for r in range(1, sheet.max_row + 1) if sheet.cell(r, 2).value in DEPARTMENTS)
        sheet.cell(row, 5, "1,2OO")
        out = io.BytesIO()
        book.save(out)
        return out.getvalue(), f"{row} 行目の列「"
    encoding = "cp932" if ledger.form == "csv-cp932" else "utf-8-sig"
    rows = list(csv.reader(io.StringIO(ledger.data.decode(encoding), newline="")))
    index = next(i for i, row in enumerate(rows) if row[1:2] and row[1] in DEPARTMENTS)
    rows[index][-1] = "1,2OO"
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator="\r\n").writerows(rows)
    return out.getvalue().encode(encoding), f"{index + 1} 行目"


@pytest.mark.parametrize("seed", [3, 5, 7, 11])
def test_an_amount_that_is_not_one_stops_at_its_line(
    seed: int, tmp_path: Path, public_dir: Path
) -> None:
    ledger = kept_ledger(seed)
    data, place = _with_typo(ledger)
    session = AnalysisSession(workspace_root=public_dir / "workspace")
    with pytest.raises(BlockError) as caught:
        session.add_file(data, name=ledger.name)
    assert caught.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert place in caught.value.message
    assert "金額として読めません" in caught.value.message
    assert not session.frames
    source = tmp_path / ledger.name
    source.write_bytes(data)
    with pytest.raises(BlockError) as converting:
        convert_file(source, "json", tmp_path / "out")
    assert place in converting.value.message
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_monthly_report_in_thousands_is_in_yen_with_one_note(
    tmp_path: Path, public_dir: Path
) -> None:
    months = [4, 5, 6, 7, 8, 9, 10, 11, 12, 1, 2, 3]
    lines = ["月次推移表（単位：千円）", "科目," + ",".join(f"{m}月" for m in months) + ",合計"]
    for account in ("売上高", "売上原価", "販売管理費"):
        values = [100 + m for m in months]
        lines.append(f"{account}," + ",".join(map(str, values)) + f",{sum(values)}")
    data = "\r\n".join(lines).encode("cp932")
    source = tmp_path / "推移表.csv"
    source.write_bytes(data)
    records = json.loads(convert_file(source, "json", tmp_path / "out").read_text("utf-8"))
    assert records[0]["4月（円）"] == 104_000
    assert sum(r["合計（円）"] for r in records) == 1000 * sum(3 * (100 + m) for m in months)
    session = AnalysisSession(workspace_root=public_dir / "workspace")
    info = session.add_file(data, name="推移表.csv").model_copy(update={"budget": 400})
    (note,) = [n for n in info.notes if "千円" in n and "円にしてあります" in n]
    assert "ほか 3 列" in note  # 13 columns, named up to MAX_NAMED_COLUMNS
    assert note in info.to_prompt()  # notes head even the shortest rendering


def test_a_workbook_showing_yen_in_thousands_keeps_its_yen(tmp_path: Path) -> None:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["部門", "金額（千円）"])
    for department, yen in (("営業部", 1_234_567), ("管理部", 2_345_678)):
        sheet.append([department, yen])
        sheet.cell(sheet.max_row, 2).number_format = "#,##0,"  # shown as 1,235
    source = tmp_path / "表示千円.xlsx"
    book.save(source)
    records = json.loads(convert_file(source, "json", tmp_path / "out").read_text("utf-8"))
    assert [r["金額（円）"] for r in records] == [1_234_567, 2_345_678]


@pytest.mark.parametrize("written", ["金額（千円）", "金額（円）"])
def test_a_chart_finds_the_amount_column_by_the_name_the_user_wrote(
    written: str, tmp_path: Path
) -> None:
    source = tmp_path / "経費.csv"
    source.write_text(
        '部門,金額（千円）\r\n営業部,"1,200"\r\n管理部,(300)\r\n合計,900\r\n', encoding="cp932"
    )
    spec = ChartSpec(kind="bar", x="部門", y=[written])
    out = render_chart(source, spec, tmp_path / "charts")
    assert out.stat().st_size > 1000


@pytest.mark.parametrize(
    "text",
    [
        # a 出納帳: the 合計 row's 残高 is the closing balance, not a sum
        "現金出納帳\r\n日付,摘要,入金,出金,残高\r\n2026/1/1,前月繰越,,,10000\r\n"
        "2026/1/5,売上,5000,,15000\r\n2026/1/8,文具,,800,14200\r\n合計,,5000,800,14200\r\n",
        # shares rounded to 33.3% each: the 合計 row says 100%
        "部門,売上高,売上構成比\r\n営業部,333,33.3%\r\n管理部,333,33.3%\r\n製造部,334,33.3%\r\n"
        "合計,1000,100.0%\r\n",
    ],
)
def test_a_total_row_of_balances_or_shares_is_not_refused(text: str, public_dir: Path) -> None:
    session = AnalysisSession(workspace_root=public_dir / "workspace")
    info = session.add_file(text.encode("cp932"), name="帳簿.csv")
    assert info.shape[0] == 3
