"""file.read_bank_statement: the deposits of a bank file as a table 入金消込 takes, each row
remembering where it is in the file; withdrawals and corrections counted, never passed on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.documents.table_value import load_table, save_table
from keiri_agent.errors import BlockError, ErrorCode, FileProcessingError
from tests.blocks.conftest import run_like_runner
from tests.blocks.payments_support import context
from tests.documents import bank_files as bf

DEPOSITS = bf.realistic_deposits(12)
ESSENTIAL = ("勘定日", "入金額", "振込依頼人名", "EDI情報")


def read(
    registry: BlockRegistry, tmp_path: Path, data: bytes, name: str, **inputs: Any
) -> dict[str, Any]:
    path = tmp_path / name
    path.write_bytes(data)
    block = registry.load("file.read_bank_statement")
    return run_like_runner(block, {"path": str(path), **inputs}, context(tmp_path, "read"))


def test_notice_statement_and_csv_give_the_same_deposits_each_at_its_place(
    registry: BlockRegistry, tmp_path: Path
) -> None:
    withdrawals = list(bf.SAMPLE_WITHDRAWALS)
    notice = read(registry, tmp_path, bf.transfer_notice(DEPOSITS), "振込入金通知.txt")
    statement = read(registry, tmp_path, bf.statement(DEPOSITS, withdrawals), "明細.txt")
    csv = read(registry, tmp_path, bf.bank_csv(DEPOSITS, withdrawals, edi_column=True), "明細.csv")

    expected = [
        {
            "勘定日": d.date.isoformat(),
            "入金額": d.amount,
            "振込依頼人名": d.payer,
            "EDI情報": d.edi,
        }
        for d in DEPOSITS
    ]
    for out in (notice, statement, csv):
        rows = [{k: r[k] for k in ESSENTIAL} for r in out["deposits"]]
        assert rows == expected
    first = notice["deposits"][0]
    assert (first["照会番号"], first["仕向銀行"], first["口座"]) == (
        "000001",
        "ﾐﾂﾋﾞｼﾕ-ｴﾌｼﾞｴｲ",
        "ﾐﾂﾋﾞｼﾕ-ｴﾌｼﾞｴｲ ﾎﾝﾃﾝ 普通 1234567",
    )
    # Where a row is, as a person finds it in the file.
    assert (
        notice["deposits"].where(2, "入金額")
        == "振込入金通知.txt の 4 件目のレコードの列「入金額」"
    )
    assert csv["deposits"].where(0) == "明細.csv のデータ 1 行目"
    assert csv["deposits"][0]["照会番号"] == "1"

    assert notice["info"]["format"] == "全銀協 振込入金通知"
    assert statement["info"]["counts"] == {"deposits": 12, "withdrawals": 3, "corrections": 0}
    assert csv["info"]["totals"]["withdrawals"] == sum(w.amount for w in withdrawals)
    assert csv["info"]["columns"]["摘要"] == "お取引内容"
    assert notice["info"]["accounts"][0]["deposit_type"] == "普通"


def test_cancelled_transfers_are_counted_not_passed_on(
    registry: BlockRegistry, tmp_path: Path
) -> None:
    data = bf.transfer_notice(DEPOSITS, options=bf.Options(cancelled=[1]))
    out = read(registry, tmp_path, data, "n.txt")
    assert len(out["deposits"]) == len(DEPOSITS) - 1
    assert out["info"]["counts"]["corrections"] == 1
    kept = [(d.date.isoformat(), d.amount) for n, d in enumerate(DEPOSITS) if n != 1]
    assert [(r["勘定日"], r["入金額"]) for r in out["deposits"]] == kept


def test_positions_survive_being_stored_with_the_run(
    registry: BlockRegistry, tmp_path: Path
) -> None:
    table = read(registry, tmp_path, bf.transfer_notice(DEPOSITS), "n.txt")["deposits"]
    meta, _ = save_table(table, tmp_path, "deposits", tmp_path)
    again = load_table(meta, tmp_path)
    assert again.where(0) == "n.txt の 2 件目のレコード"
    assert again == table


def test_a_malformed_zengin_file_is_refused_with_its_record(
    registry: BlockRegistry, tmp_path: Path
) -> None:
    lines = bf.transfer_notice(DEPOSITS).split(b"\r\n")
    lines[3] = lines[3].rstrip(b" ")
    with pytest.raises(FileProcessingError) as caught:
        read(registry, tmp_path, b"\r\n".join(lines), "n.txt")
    error = caught.value
    assert error.code == ErrorCode.FILE_UNREADABLE
    assert "「n.txt」" in error.message
    assert "4 件目のレコード" in error.message


def test_bad_inputs_are_refused_before_the_file_is_read(registry: BlockRegistry) -> None:
    block = registry.load("file.read_bank_statement")
    for inputs, field in (
        ({"path": ""}, "path"),
        ({"path": "a.txt", "year_style": "heisei"}, "year_style"),
        ({"path": "a.txt", "columns": {"date": 3}}, "columns"),
    ):
        with pytest.raises(BlockError) as caught:
            block.check_inputs(inputs)
        assert caught.value.details["field"] == field
