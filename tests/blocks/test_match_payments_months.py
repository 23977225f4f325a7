"""Months of 入金消込 on bank files written as banks write them: no wrong match at all.

A month (tests/support/payment_months.py) has a customer master, open invoices and deposits
written as payers' banks write them (kana with every form abbreviation, fees of 440 / 660 /
880 円, まとめ入金, 分割入金, codes put first, names cut at 48, a parent company, payers nobody
knows, two customers whose names read alike, two invoices nobody can tell apart), each deposit
with the truth of what it paid. The month goes through the bank files a user downloads (全銀協
振込入金通知, 入出金取引明細 and a bank CSV), ``file.read_bank_statement`` and
``table.match_payments``; every match must be the true one, and the three files must give the
same result.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keiri_agent.blocks.registry import BlockRegistry
from tests.blocks.conftest import run_like_runner
from tests.blocks.payments_support import context, match
from tests.documents import bank_files as bf
from tests.support.payment_months import PARENT, Month, month

MATCH_RATE_GOAL = 0.95


def read_file(
    registry: BlockRegistry, tmp_path: Path, data: bytes, name: str
) -> tuple[Any, dict[str, Any]]:
    path = tmp_path / name
    path.write_bytes(data)
    block = registry.load("file.read_bank_statement")
    out = run_like_runner(block, {"path": str(path)}, context(tmp_path, "read"))
    return out["deposits"], out["info"]


def outcome_by_deposit(
    out: dict[str, Any], lines: Sequence[bf.Deposit | bf.Withdrawal], the_month: Month
) -> dict[int, tuple[str, tuple[str, ...]]]:
    """Month deposit index → (outcome, invoices cleared), from the 照会番号 of each output row
    (the place of the line among the file's lines, withdrawals included)."""
    index = {id(d): n for n, d in enumerate(the_month.deposits)}
    found: dict[int, tuple[str, tuple[str, ...]]] = {}
    for table in ("matched", "review", "unknown"):
        for row in out[table]:
            line = lines[int(row["照会番号"]) - 1]
            deposit = index[id(line)]
            kind, invoices = found.get(deposit, (table, ()))
            assert kind == table, "a line ends in exactly one of 消込済 / 要確認 / 不明入金"
            found[deposit] = (table, invoices + ((row["請求番号"],) if table == "matched" else ()))
    assert sorted(found) == list(range(len(the_month.deposits)))
    return found


def judge(the_month: Month, found: dict[int, tuple[str, tuple[str, ...]]]) -> dict[str, int]:
    """Counts of right, missed and unmatchable lines; any wrong match fails at once."""
    counts = {"right": 0, "missed": 0, "matchable": 0, "not matchable": 0}
    for number, truth in enumerate(the_month.truths):
        kind, invoices = found[number]
        counts["matchable" if truth.matchable else "not matchable"] += 1
        if kind == "matched":
            deposit = the_month.deposits[number]
            assert truth.matchable, f"a guess: {deposit} ({truth.scenario}) matched {invoices}"
            assert invoices == truth.invoices, f"wrong match: {deposit} → {invoices}, {truth}"
            counts["right"] += 1
        elif truth.matchable:
            counts["missed"] += 1
    return counts


@pytest.mark.parametrize("seed", [35, 3501])
def test_a_month_from_three_bank_files_has_no_wrong_match_and_the_same_result(
    registry: BlockRegistry, tmp_path: Path, seed: int
) -> None:
    the_month = month(seed, customers=90, unknown=6)
    withdrawals = list(bf.SAMPLE_WITHDRAWALS)
    with_withdrawals = sorted([*the_month.deposits, *withdrawals], key=lambda x: x.date)
    files = {
        "振込入金通知.txt": (bf.transfer_notice(the_month.deposits), the_month.deposits),
        "入出金取引明細.txt": (bf.statement(the_month.deposits, withdrawals), with_withdrawals),
        "入出金明細.csv": (
            bf.bank_csv(the_month.deposits, withdrawals, edi_column=True),
            with_withdrawals,
        ),
    }
    results = {}
    for name, (data, lines) in files.items():
        deposits, info = read_file(registry, tmp_path, data, name)
        assert info["counts"]["deposits"] == len(the_month.deposits)
        out = match(tmp_path / name, the_month.invoices, deposits, customers=the_month.master)
        results[name] = (out, outcome_by_deposit(out, lines, the_month))

    outcomes = [found for _, found in results.values()]
    assert outcomes[0] == outcomes[1] == outcomes[2]
    reasons = [[r["理由"] for r in out["matched"]] for out, _ in results.values()]
    assert reasons[0] == reasons[1] == reasons[2]
    unpaid = [[(r["請求番号"], r["残高"]) for r in out["unpaid"]] for out, _ in results.values()]
    assert unpaid[0] == unpaid[1] == unpaid[2]

    out, found = results["振込入金通知.txt"]
    counts = judge(the_month, found)
    assert counts["right"] >= MATCH_RATE_GOAL * counts["matchable"], counts
    scenarios = {t.scenario for t in the_month.truths}
    assert {"fee", "combined", "installments", "edi", "unknown", "parent"} <= scenarios
    for number, truth in enumerate(the_month.truths):
        if truth.scenario in ("unknown", "parent", "same_due"):
            assert found[number][0] in ("review", "unknown"), truth
    # Every kind of reason a month has shows up.
    shown = " ".join(r["理由"] for r in out["matched"])
    for word in ("読み", "マスタのカナ", "請求番号（EDI情報）", "手数料差引", "まとめ", "一部入金"):
        assert word in shown, word


def test_the_parent_company_is_matched_once_its_name_is_learned(
    registry: BlockRegistry, tmp_path: Path
) -> None:
    the_month = month(35, customers=40, unknown=2)
    parent = next(n for n, t in enumerate(the_month.truths) if t.scenario == "parent")
    deposits, _ = read_file(registry, tmp_path, bf.transfer_notice(the_month.deposits), "n.txt")

    before = match(tmp_path, the_month.invoices, deposits, customers=the_month.master)
    found = outcome_by_deposit(before, the_month.deposits, the_month)
    assert found[parent][0] in ("review", "unknown")

    aliases = [{"振込依頼人名": PARENT, "取引先コード": the_month.parent_for}]
    after = match(
        tmp_path, the_month.invoices, deposits, customers=the_month.master, aliases=aliases
    )
    found = outcome_by_deposit(after, the_month.deposits, the_month)
    assert found[parent] == ("matched", the_month.truths[parent].invoices)
    parent_rows = [r for r in after["matched"] if r["振込依頼人名"] == PARENT]
    assert [r["理由"] for r in parent_rows] == ["名義: 学習済み／金額: 一致"]
    judge(the_month, {**found, parent: ("review", ())})  # nothing else went wrong


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**32),
    customers=st.integers(3, 70),
    unknown=st.integers(0, 6),
    kana_share=st.sampled_from([0.0, 0.5, 1.0]),
    tolerance=st.sampled_from([880, 1_000]),
)
def test_every_match_of_any_month_is_a_true_one(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    customers: int,
    unknown: int,
    kana_share: float,
    tolerance: int,
) -> None:
    the_month = month(seed, customers=customers, unknown=unknown, kana_share=kana_share)
    deposits = [
        {
            "照会番号": str(n + 1),
            "勘定日": d.date.isoformat(),
            "入金額": d.amount,
            "振込依頼人名": d.payer,
            "EDI情報": d.edi,
        }
        for n, d in enumerate(the_month.deposits)
    ]
    workspace = tmp_path_factory.mktemp("month")
    out = match(
        workspace,
        the_month.invoices,
        deposits,
        customers=the_month.master,
        fee_tolerance=tolerance,
    )
    found = outcome_by_deposit(out, the_month.deposits, the_month)
    judge(the_month, found)
    # Money is neither made nor lost: each line's parts add up to its amount, and each
    # invoice's balance falls by exactly what was cleared.
    by_line: dict[str, int] = {}
    cleared: dict[str, int] = {}
    for row in out["matched"]:
        by_line[row["照会番号"]] = by_line.get(row["照会番号"], 0) + row["消込額"]
        cleared[row["請求番号"]] = (
            cleared.get(row["請求番号"], 0) + row["消込前残高"] - row["消込後残高"]
        )
        assert row["入金額"] == deposits[int(row["照会番号"]) - 1]["入金額"]
    for reference, total in by_line.items():
        assert total == deposits[int(reference) - 1]["入金額"]
    left = {r["請求番号"]: r["残高"] for r in out["unpaid"]}
    for invoice in the_month.invoices:
        opening = int(invoice["請求金額"]) - int(invoice["入金済額"])  # type: ignore[call-overload]
        number = str(invoice["請求番号"])
        assert opening - cleared.get(number, 0) == left.get(number, 0)
