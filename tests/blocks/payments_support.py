"""Helpers for the 入金消込 block tests: invoices and deposits as a user's tables hold them, a
context whose learned-names store is the test's own, and the block run as the runner runs it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.config import Settings
from tests.blocks.conftest import run_like_runner

REGISTRY = BlockRegistry()
# Look-alikes each the start of the next (code, name, kana): only the whole name tells them apart.
AOBA = (
    ("6020", "株式会社青葉", "アオバ"),
    ("6021", "株式会社青葉商事", "アオバショウジ"),
    ("6022", "株式会社青葉商事開発", "アオバショウジカイハツ"),
)


def invoice(
    number: str, code: str, name: str, amount: Any, due: str = "2026-02-28", **more: Any
) -> dict[str, Any]:
    return {
        "請求番号": number,
        "取引先コード": code,
        "取引先名": name,
        "請求金額": amount,
        "支払期日": due,
        **more,
    }


def deposit(
    reference: str, payer: str, amount: Any, day: str = "2026-02-27", edi: str = ""
) -> dict[str, Any]:
    return {
        "照会番号": reference,
        "勘定日": day,
        "入金額": amount,
        "振込依頼人名": payer,
        "EDI情報": edi,
    }


def context(workspace: Path, node_id: str = "match", **kwargs: Any) -> BlockContext:
    """A context whose settings keep the learned names under ``workspace``."""
    return BlockContext(
        run_id="run-1",
        plan_id="payments",
        node_id=node_id,
        block_version="0.1.0",
        workspace=workspace / "run",
        settings=Settings(keiri_workspace_root=workspace),
        **kwargs,
    )


def match(workspace: Path, invoices: Any, deposits: Any, **inputs: Any) -> dict[str, Any]:
    block = REGISTRY.load("table.match_payments")
    return run_like_runner(
        block, {"invoices": invoices, "deposits": deposits, **inputs}, context(workspace)
    )


def one_transfer(
    workspace: Path, invoices: Any, payer: str, amount: Any, customers: Any = None
) -> dict[str, Any]:
    """The block run on one transfer (照会番号 1) from ``payer`` of ``amount``."""
    return match(workspace, invoices, [deposit("1", payer, amount)], customers=customers)


def alike_owe(workspace: Path, payer: str, *customers: tuple[str, str, str]) -> dict[str, Any]:
    """One transfer of 110,000 円 from ``payer`` while each of ``customers`` (code, name, kana)
    owes that much (INV-1, INV-2 ...): only the name can tell them apart."""
    return alike_pay(workspace, customers, [deposit("1", payer, 110_000)])


def alike_pay(
    workspace: Path, customers: Iterable[tuple[str, str, str]], deposits: Any, **inputs: Any
) -> dict[str, Any]:
    """``deposits`` while each of ``customers`` (code, name, kana) owes 110,000 円 (INV-1,
    INV-2 ...), the customers the master."""
    alike = list(customers)
    master = [{"取引先コード": c, "取引先名": n, "取引先名カナ": k} for c, n, k in alike]
    invoices = [invoice(f"INV-{i}", c, n, 110_000) for i, (c, n, _) in enumerate(alike, 1)]
    return match(workspace, invoices, deposits, customers=master, **inputs)


def matched_pairs(out: dict[str, Any]) -> dict[str, list[str]]:
    """照会番号 → the invoices its line cleared, in order."""
    pairs: dict[str, list[str]] = {}
    for row in out["matched"]:
        pairs.setdefault(str(row["照会番号"]), []).append(row["請求番号"])
    return pairs


def column(out: dict[str, Any], table: str, name: str) -> list[Any]:
    return [row[name] for row in out[table]]


def only_review(out: dict[str, Any]) -> dict[str, Any]:
    """The one 要確認 row of a run that matched nothing."""
    assert out["matched"] == []
    (row,) = out["review"]
    return dict(row)


def option_values(out: dict[str, Any], question: int = 0) -> list[str]:
    """The answers a person may give to a 要確認 question (取引先:…, 請求:…, 該当なし)."""
    return [option["value"] for option in out["questions"][question]["options"]]


def judge(workspace: Path, cases: Iterable[Any]) -> tuple[Counter[str], list[str], list[str]]:
    """Run generated cases (``master``, ``invoices``, ``transfers`` with their ``truth``: the
    customer who paid, the invoice sets a right match may clear, whether the product promises
    it, the shape) and return the counts (every part of a shape too), the wrong matches and
    the promised transfers left unmatched. A transfer with a ``day`` is that day's (else each
    has a day of its own); a case with ``aliases`` has those learned payer names."""
    counts: Counter[str] = Counter()
    wrong: list[str] = []
    missed: list[str] = []
    for case in cases:
        deposits = [
            deposit(str(n + 1), t.payer, t.amount, getattr(t, "day", f"2026-02-{10 + n:02d}"))
            for n, t in enumerate(case.transfers)
        ]
        aliases = getattr(case, "aliases", None) or None
        out = match(workspace, case.invoices, deposits, customers=case.master, aliases=aliases)
        cleared = matched_pairs(out)
        customer = {str(r["照会番号"]): r["取引先コード"] for r in out["matched"]}
        for number, transfer in enumerate(case.transfers, start=1):
            truth, reference = transfer.truth, str(number)
            counts.update(["transfers", *truth.shape.split("/")])
            counts["promised"] += truth.promised
            if reference in cleared:
                counts["matched"] += 1
                right = (
                    truth.code == customer[reference]
                    and tuple(cleared[reference]) in truth.acceptable
                )
                if not right:
                    wrong.append(f"{transfer} → {customer[reference]} {cleared[reference]}")
            elif truth.promised:
                missed.append(str(transfer))
    return counts, wrong, missed


def check_property(workspace: Path, cases: Iterable[Any], shapes: Iterable[str]) -> Counter[str]:
    """:func:`judge` the cases: no wrong match, no promised transfer missed, at least a third
    of the transfers promised (the property is not empty) and every one of ``shapes`` drawn."""
    counts, wrong, missed = judge(workspace, cases)
    assert wrong == [], f"{len(wrong)} wrong of {counts}: {wrong[:5]}"
    assert missed == [], f"{len(missed)} missed of {counts}: {missed[:5]}"
    assert counts["promised"] >= counts["transfers"] // 3
    for shape in shapes:
        assert counts[shape] > 0, shape
    return counts
