"""入金消込 against a customer master that writes a sole proprietor's trade name (屋号) and owner
with a space only (``山田商店 山田太郎``, no 代表, no parentheses): the bank's payer is the shop's
account or the owner's own, and either is the customer. Before, such a master was indexed by
the whole text alone (its kana, or the reading of both parts run together), so the owner's
personal account (``ﾔﾏﾀﾞ ﾀﾛｳ``) was an unknown deposit. A person written with a space
(``山田 太郎``) stays one name: another 山田 is never taken for them.

A master with 取引先名カナ is compared by its kana only (its kanji's readings are no keys beside
it), but a kana that spells one part of a trade name and owner leaves the other part to its
reading: before, with ``ヤマダショウテン`` in the kana the owner's account was unknown again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.table.names import customer_keys
from tests.blocks.payments_support import (
    alike_owe,
    column,
    invoice,
    matched_pairs,
    one_transfer,
)

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


# The master's 取引先名カナ spells the trade name, both parts, or the owner; half-width too.
KANA_OF_TRADE_AND_OWNER = [
    ("山田商店 山田太郎", "ヤマダショウテン"),
    ("山田商店 山田太郎", "ﾔﾏﾀﾞｼｮｳﾃﾝ"),
    ("山田商店 山田太郎", "ヤマダショウテン ヤマダタロウ"),
    ("山田商店（山田太郎）", "ヤマダショウテンヤマダタロウ"),
    ("山田商店 代表 山田太郎", "ヤマダタロウ"),
    ("さくら整骨院 佐藤花子", "サクラセイコツイン"),
]


@pytest.mark.parametrize(("name", "kana"), KANA_OF_TRADE_AND_OWNER)
@pytest.mark.parametrize("side", ["owner", "trade", "both"])
def test_a_master_kana_of_one_part_leaves_the_other_to_its_reading(
    tmp_path: Path, name: str, kana: str, side: str
) -> None:
    test_a_trade_name_and_owner_parted_by_a_space_finds_either(tmp_path, name, kana, side)


def test_the_master_kana_still_decides_the_name_it_spells(tmp_path: Path) -> None:
    # 白鳥 is シラトリ by the master: a payer reading the trade name another way is proposed only.
    out = _pays(tmp_path, "白鳥商店 白鳥太郎", "シラトリショウテン", "ｼﾛﾄﾘｼﾖｳﾃﾝ")
    assert out["matched"] == []
    assert "1 文字だけ違う取引先" in out["review"][0]["理由"]


@pytest.mark.parametrize("kana", ["ヤマダ タロウ", "アオバ ショウジ"])
def test_a_name_written_with_a_space_and_its_kana_is_not_taken_apart(
    tmp_path: Path, kana: str
) -> None:
    name = "山田 太郎" if kana.startswith("ヤマダ") else "青葉 商事"
    out = _pays(tmp_path, name, kana, "ﾔﾏﾀﾞ ﾊﾅｺ")
    assert out["matched"] == []


# A shop and its owner as a customer in his own name (code, 取引先名, 取引先名カナ).
SHOP_AND_OWNER = (
    ("3015", "山田商店 山田太郎", "ヤマダショウテン"),
    ("3016", "山田太郎", "ヤマダタロウ"),
)


def test_an_owner_who_is_also_a_customer_of_his_own_is_for_a_person(tmp_path: Path) -> None:
    # 山田太郎 bought in his own name too: his account pays for either, nothing is guessed.
    out = alike_owe(tmp_path, "ﾔﾏﾀﾞ ﾀﾛｳ", *SHOP_AND_OWNER)
    assert out["matched"] == []
    (row,) = out["review"]
    candidates = row["候補"].split(" ／ ")
    # his own kana first (the master spelled it), the shop's by the reading of its owner
    assert [c.split("—")[0] for c in candidates] == [
        "3016 山田太郎（マスタのカナ）",
        "3015 山田商店 山田太郎（読み）",
    ]


@pytest.mark.parametrize(
    ("name", "kana", "parts"),
    [
        ("山田（山田商店）", "ヤマダショウテン", ("ヤマダシヨウテン", "ヤマダ")),
        ("山田（山田商店）", "ヤマダショウテンヤマダ", ("ヤマダシヨウテン", "ヤマダ")),
        ("山田（山田商店）", "ヤマダヤマダショウテン", ("ヤマダシヨウテン", "ヤマダ")),
    ],
)
def test_a_kana_is_parted_where_a_whole_reading_of_a_part_is(
    name: str, kana: str, parts: tuple[str, str]
) -> None:
    # The surname alone is a start of the shop's reading: never ヤマダ and シヨウテン(ヤマダ).
    keys = {key.text for key in customer_keys(name, kana, kana_decides=True)}
    assert set(parts) <= keys
    assert not any(key.startswith("シヨウテン") for key in keys), keys
