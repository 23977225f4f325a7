"""``file.read_table``'s grand-total check: a ledger whose 合計 does not add up stops the plan.

A subtotal written without a label (an amount alone under its group, no 小計 beside it) reads
as a data row, and a plan that sums the table (``table.aggregate``, ``table.compute``, a
report) doubles that group without a word; a row lost or misread changes the sum the same
way. The file's own grand total (合計, 総計, 総合計: one such row) tells: when an amount column
that must add up (``TableResult.amount_differences``, found once while the file was read; the
rule the analysis agent and conversion use) sums to something else than the total states, the
block stops with the total's cell, both sums and the difference, before anything downstream is
computed.

* ``total_check: warn`` (a plan author who knows the file's total is wrong) reads on; the
  difference stays a warning in the run log and in ``info``.
* A difference that rounding in 千円 / 百万円 explains (each row and the total rounded on
  their own, ``TotalDifference.rounding``) is only noted: the rows are what the file says.
* A column with cells that could not be read as amounts is not stopped here: those cells are
  the reason its sum differs, ``info.unreadable`` names them, and a block that needs the
  numbers stops at the first one with its position in the file.

Every difference found is listed in ``info.total_differences`` either way.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.inputs import choice
from keiri_agent.documents.table_frame import TableResult
from keiri_agent.documents.table_totals import STOPPED_SAID, TotalDifference, mismatch_said
from keiri_agent.errors import input_error

__all__ = ["TOTAL_CHECKS", "check_totals", "total_check"]

# ``total_check``: stop at a grand total that does not add up (the default), or warn and go on.
TOTAL_CHECKS = ("stop", "warn")
_CHOICES_SAID = "ファイルの合計行が明細の合計と合わないとき止めるなら stop、警告して続けるなら warn"


def total_check(inputs: dict[str, Any]) -> str:
    """The ``total_check`` input (``stop`` when absent)."""
    return choice(inputs, "total_check", TOTAL_CHECKS, _CHOICES_SAID)


def check_totals(result: TableResult, check: str, ctx: BlockContext) -> list[dict[str, Any]]:
    """The differences between the file's grand total and its amount columns' sums (as
    ``info.total_differences`` lists them); raises when ``check`` is ``stop`` and one of them
    is neither rounding nor explained by unreadable cells (module docstring)."""
    info = result.info
    differences = result.amount_differences()
    if not differences:
        return []
    position = info.totals[result.total_row]["position"]
    listed = [_listed(found, position) for found in differences]
    wrong = [
        found
        for found in differences
        if not found.rounding and not info.unreadable_counts.get(found.column)
    ]
    if wrong and check == "stop":
        first = wrong[0]
        more = f"（ほかに {len(wrong) - 1} 列も一致しません）" if len(wrong) > 1 else ""
        raise input_error(
            f"{mismatch_said(first, info.where(position, first.column), more)}。{STOPPED_SAID}",
            "ファイルの合計行と明細を確かめてください。見出しのない小計の行は最初の列に"
            "「小計」「営業部 計」のように書くか削除して、保存し直してから実行してください。"
            "ファイルの合計の方が誤っていると分かっているときは、このブロックの入力 "
            "total_check に warn を指定すると、警告を残して続けます。",
            field="total_check",
            column=first.column,
            position=position,
            total_differences=listed,
        )
    if wrong:
        ctx.log(
            f"total_check が warn のため、合計が明細と一致しない列（{'、'.join(_names(wrong))}）"
            "があっても明細の行をそのまま使って続けます。",
            level="warning",
        )
    return listed


def _names(found: list[TotalDifference]) -> list[str]:
    return [f"「{d.column}」" for d in found]


def _listed(found: TotalDifference, position: int | None) -> dict[str, Any]:
    return {
        "column": found.column,
        "position": position,
        "stated": _number(found.stated),
        "summed": _number(found.summed),
        "difference": _number(found.difference),
        "rounding": found.rounding,
    }


def _number(value: Decimal) -> int | float:
    return int(value) if value == value.to_integral_value() else float(value)
