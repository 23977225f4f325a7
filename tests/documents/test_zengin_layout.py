"""The 全銀協 record layouts are package data (zengin_fields.csv), read and checked when they load.

The table is copied row by row from the published field tables; these tests say that the bundled
table gives the positions the format fixes, and that a row copied wrong (a position that does not
follow from the lengths before it, a layout short of 200 bytes, an unknown kind) is refused with
its line named, before any file is read with it.
"""

from __future__ import annotations

import pytest

from keiri_agent.documents.bundled_table import BundledTable
from keiri_agent.documents.zengin_layout import (
    DATA,
    HEADER,
    LAYOUT_FILE,
    LAYOUTS,
    RECORD_KINDS,
    TRAILER,
    TYPE_CODES,
    load_layouts,
)
from keiri_agent.errors import BlockError, ErrorCode

COLUMNS = "type_code,record,start,length,kind,key,label\n"


def _table(rows: dict[tuple[str, str], str]) -> str:
    """A whole table: every layout a single 200-byte field, except those in ``rows``."""
    lines = [COLUMNS]
    for code in TYPE_CODES:
        for record in RECORD_KINDS:
            lines.append(rows.get((code, record), f"{code},{record},1,200,C,dummy,ダミー\n"))
    return "".join(lines)


def test_the_bundled_table_gives_the_positions_the_format_fixes() -> None:
    assert set(LAYOUTS) == {(code, record) for code in TYPE_CODES for record in RECORD_KINDS}
    amount = LAYOUTS[("01", DATA)]["amount"]
    assert (amount.label, amount.start, amount.end, amount.kind) == ("金額", 20, 29, "N")
    payer = LAYOUTS[("03", DATA)]["payer"]
    assert (payer.label, payer.start, payer.length, payer.kind) == (
        "振込依頼人名又は契約者番号",
        82,
        48,
        "C",
    )
    balance = LAYOUTS[("03", TRAILER)]["closing_balance"]
    assert (balance.start, balance.length) == (41, 14)
    assert list(LAYOUTS[("03", HEADER)])[:3] == ["kind", "type_code", "code_kind"]


def test_a_table_of_good_rows_is_read_in_record_order() -> None:
    header = "01,1,1,1,N,kind,データ区分\n01,1,2,199,C,dummy,ダミー\n"
    layouts = load_layouts(_table({("01", "1"): header}))
    assert [(f.key, f.start, f.end) for f in layouts[("01", "1")].values()] == [
        ("kind", 1, 1),
        ("dummy", 2, 200),
    ]


@pytest.mark.parametrize(
    ("rows", "line", "problem"),
    [
        (
            {("01", "2"): "01,2,1,1,N,kind,データ区分\n01,2,3,199,C,dummy,ダミー\n"},
            4,
            "dummy の位置が 3 です（前の項目から続く 2 のはずです）",
        ),
        (
            {("01", "8"): "01,8,1,1,N,kind,データ区分\n01,8,2,198,C,dummy,ダミー\n"},
            None,
            "種別コード 01 のトレーラー・レコードが 199 バイトです（200 バイトのはずです）",
        ),
        ({("03", "9"): "03,9,1,200,X,dummy,ダミー\n"}, 9, "kind が N・C のどちらでもない"),
        ({("03", "1"): "03,1,1,2百,N,dummy,ダミー\n"}, 6, "桁数「2百」が正の整数ではありません"),
        ({("01", "1"): "21,1,1,200,C,dummy,ダミー\n"}, 2, "種別コード 21・データ区分 1 は読む対象"),
        ({("01", "1"): "01,1,1,100,C,a,A\n01,1,101,100,C,a,A\n"}, 3, "key a が同じレコードに二度"),
        ({("01", "1"): "01,1,1,200,C,dummy\n"}, 2, "列が 6 個あります（7 個のはずです）"),
    ],
)
def test_a_row_copied_wrong_is_refused_naming_the_line(
    rows: dict[tuple[str, str], str], line: int | None, problem: str
) -> None:
    with pytest.raises(BlockError) as caught:
        load_layouts(_table(rows))
    assert caught.value.code == ErrorCode.FILE_UNREADABLE
    assert problem in caught.value.message
    assert f"全銀協のレコード様式の表 {LAYOUT_FILE}" in caught.value.message
    assert caught.value.details == {"file": LAYOUT_FILE, "line": line}


def test_a_table_with_another_header_is_refused() -> None:
    with pytest.raises(BlockError) as caught:
        load_layouts("code,start,length\n01,1,200\n")
    assert "1 行目" in caught.value.message
    assert "見出しが type_code,record,start,length,kind,key,label ではありません" in (
        caught.value.message
    )


def test_a_bundled_table_reads_its_file_beside_the_module() -> None:
    table = BundledTable("keiri_agent.documents", LAYOUT_FILE, "表", ("a",), hint="")
    assert table.text().startswith(COLUMNS)
