"""入金消込 against a customer master that writes a sole proprietor's trade name (屋号) and owner
with a space only (``山田商店 山田太郎``, no 代表, no parentheses): the bank's payer is the shop's
account or the owner's own, and either is the customer. Before, such a master was indexed by
the whole text alone (its kana, or the reading of both parts run together), so the owner's
personal account (``ﾔﾏﾀﾞ ﾀﾛｳ``) was an unknown deposit. A person written with a space
(``山田 太郎``) stays one name: another 山田 is never taken for them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.blocks.payments_support import column, invoice, matched_pairs, one_transfer

TRADE_AND_OWNER = [
    ("山田商店 山田太郎", ""),
    ("山田商店　山田 太郎", ""),  # a full-width space, the owner spaced too
    ("山田太郎 山田商店", ""),  # the owner first
    ("さくら整骨院 佐藤花子", ""),
]


def _pays(tmp_path: Path, name: str, kana: str, payer: str) -> dict[str, Any]:
    customer = {"取引先コード": "3015", "取引先名": name, "取引先名カナ": kana}
    return one_transfer(
        tmp_path, [invoice("INV-1", "3015", name, 110_000)], payer, 110_000, [customer]
    )


@pytest.mark.parametrize(("name", "kana"), TRADE_AND_OWNER)
@pytest.mark.parametrize("side", ["owner", "trade", "both"])
def test_a_trade_name_and_owner_parted_by_a_space_finds_either(
    tmp_path: Path, name: str, kana: str, side: str
) -> None:
    owner, trade = ("ﾔﾏﾀﾞ ﾀﾛｳ", "ﾔﾏﾀﾞｼﾖｳﾃﾝ") if "山田" in name else ("ｻﾄｳ ﾊﾅｺ", "ｻｸﾗｾｲｺﾂｲﾝ")
    payer = {"owner": owner, "trade": trade, "both": f"{trade} {owner}"}[side]
    out = _pays(tmp_path, name, kana, payer)
    assert matched_pairs(out) == {"1": ["INV-1"]}, (name, payer)
    assert column(out, "matched", "理由")[0].endswith("／金額: 一致")


@pytest.mark.parametrize("name", ["山田 太郎", "青葉 商事"])
def test_a_name_written_with_a_space_is_not_taken_apart(tmp_path: Path, name: str) -> None:
    out = _pays(tmp_path, name, "", "ﾔﾏﾀﾞ ﾊﾅｺ")  # another 山田, or 青葉: no part alone
    assert out["matched"] == []
