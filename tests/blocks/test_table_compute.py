"""table.compute: tax, totals, ratios and day counts from a closed expression language."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.schema import check_value, resolve_port
from keiri_agent.documents.table_value import Table, TableOrigin
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner

INVOICES = [
    {
        "取引先": "山田商事",
        "請求日": "2025/1/31",
        "入金日": "2025-02-28",
        "税抜金額": "¥100,005",
        "前年": 80000,
    },
    {
        "取引先": "鈴木工業",
        "請求日": "令和7年2月28日",
        "入金日": None,
        "税抜金額": 55000,
        "前年": 0,
    },
]


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("table.compute")


def run(block: Block, make_ctx: ContextFactory, *columns: dict[str, str], **inputs: Any) -> Any:
    data = {"table": inputs.pop("table", INVOICES), "columns": list(columns), **inputs}
    return run_like_runner(block, data, make_ctx("compute"))


def column(out: dict[str, Any], name: str) -> list[Any]:
    return [row.get(name) for row in out["rows"]]


def test_tax_and_total_use_exact_decimals_and_earlier_columns(
    block: Block, make_ctx: ContextFactory
) -> None:
    out = run(
        block,
        make_ctx,
        {"name": "消費税", "expr": "rounddown([税抜金額] * 0.1, 0)"},
        {"name": "税込金額", "expr": "[税抜金額] + 消費税"},
        {"name": "税込(四捨五入)", "expr": "round([税抜金額] * 1.1, -1)"},
        {"name": "単価", "expr": "1000 * 1.1"},
    )
    assert column(out, "消費税") == [10000, 5500]  # 10000.5 cut down, "¥100,005" read as 100005
    assert column(out, "税込金額") == [110005, 60500]
    assert column(out, "税込(四捨五入)") == [110010, 60500]
    assert column(out, "単価") == [1100, 1100]  # not 1100.0000000000002
    assert out["rows"][0]["取引先"] == "山田商事"  # the original columns stay, in order
    assert list(out["rows"][0])[:5] == list(INVOICES[0])
    assert out["summary"] == {
        "input_rows": 2,
        "added_columns": ["消費税", "税込金額", "税込(四捨五入)", "単価"],
        "replaced_columns": [],
        "zero_divisions": 0,
    }


def test_days_between_japanese_dates_blank_stays_blank(
    block: Block, make_ctx: ContextFactory
) -> None:
    out = run(block, make_ctx, {"name": "入金日数", "expr": "days(［入金日］, [請求日])"})
    assert column(out, "入金日数") == [28, None]


def test_comparisons_if_and_concatenation(block: Block, make_ctx: ContextFactory) -> None:
    out = run(
        block,
        make_ctx,
        {"name": "要承認", "expr": '[税抜金額] >= 60000 and [請求日] < "2025-02-01"'},
        {"name": "区分", "expr": 'if(要承認, "要承認", "通常") & "（" & [取引先] & "）"'},
        {"name": "差", "expr": "abs(min([前年], [税抜金額]) - max([前年], 90000))"},
    )
    assert column(out, "要承認") == [True, False]
    assert column(out, "区分") == ["要承認（山田商事）", "通常（鈴木工業）"]
    assert column(out, "差") == [10000, 90000]


def test_division_by_zero_stops_naming_row_and_position_or_gives_blank(
    block: Block, make_ctx: ContextFactory
) -> None:
    ratio = {"name": "前年比", "expr": "round(([税抜金額] - [前年]) / [前年] * 100, 1)"}
    with pytest.raises(BlockError) as caught:
        run(block, make_ctx, ratio)
    error = caught.value
    assert error.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "列「前年比」" in error.message
    assert "23 文字目" in error.message  # the "/"
    assert "2 行目" in error.message
    assert "zero_division: null" in (error.hint or "")
    out = run(block, make_ctx, ratio, zero_division="null")
    assert column(out, "前年比") == [25, None]  # 25.00625 % rounded to 1 place
    assert out["summary"]["zero_divisions"] == 1


def test_same_name_replaces_the_column(block: Block, make_ctx: ContextFactory) -> None:
    out = run(block, make_ctx, {"name": "前年", "expr": "[前年] * 2"})
    assert column(out, "前年") == [160000, 0]
    assert out["summary"]["replaced_columns"] == ["前年"]
    assert out["summary"]["added_columns"] == []


def test_empty_table_still_checks_the_expression(block: Block, make_ctx: ContextFactory) -> None:
    out = run(block, make_ctx, {"name": "税額", "expr": "[金額] * 0.1"}, table=[])
    assert out["rows"] == []
    with pytest.raises(BlockError):
        run(block, make_ctx, {"name": "税額", "expr": "[金額] *"}, table=[])


def test_unknown_column_names_position_and_closest_name(
    block: Block, make_ctx: ContextFactory
) -> None:
    with pytest.raises(BlockError) as caught:
        run(block, make_ctx, {"name": "税額", "expr": "[税抜額] * 0.1"})
    message = caught.value.message
    assert "列「税額」" in message
    assert "1 文字目" in message
    assert "「税抜金額」のことではありませんか" in message


# ① is a list marker, not the amount 1 (NFKC would make the digit 1 of it).
@pytest.mark.parametrize("text", ["未定", "①"])
def test_text_that_is_not_an_amount_is_reported_by_row(
    block: Block, make_ctx: ContextFactory, text: str
) -> None:
    table = [{"金額": 1000}, {"金額": text}]
    with pytest.raises(BlockError) as caught:
        run(block, make_ctx, {"name": "税額", "expr": "[金額] * 0.1"}, table=table)
    assert "[金額]" in caught.value.message
    assert f"2 行目（'{text}'）" in caught.value.message
    assert caught.value.details["rows"] == [2]


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("[金額] *", "の 7 文字目: 式が途中で終わっています"),
        ("[金額 * 2", "1 文字目: 列名の「[」が閉じられていません"),
        ("1,000 + [金額]", "2 文字目: 「,」は関数の引数の区切りにだけ使えます"),
        ("sum([金額])", "関数「sum」はありません"),
        ("round([金額], 0.5)", "round の桁数は"),
        ("[a] < [b] < [c]", "比較は続けて書けません"),
        ("__import__('os')", "関数「__import__」はありません"),
        ("[金額].__class__", "文字「.」は式に使えません"),
        ("days([請求日])", "days の引数は 2 個です（指定: 1 個）"),
    ],
)
def test_bad_expressions_are_refused_before_running(block: Block, expr: str, expected: str) -> None:
    with pytest.raises(BlockError) as caught:
        block.check_inputs({"table": INVOICES, "columns": [{"name": "x", "expr": expr}]})
    assert expected in caught.value.message
    assert caught.value.details["expression"] == expr
    assert "[税抜金額] * 0.1" in (caught.value.hint or "")


@pytest.mark.parametrize(
    "columns",
    [[], [{"name": "税額"}], [{"name": "税額", "expr": "1", "type": "number"}], "税額 = 1"],
)
def test_malformed_columns_are_refused(block: Block, columns: Any) -> None:
    with pytest.raises(BlockError) as caught:
        block.check_inputs({"table": INVOICES, "columns": columns})
    assert "columns" in caught.value.message
    assert "{name:" in (caught.value.hint or "")


# --- columns, not rows (issue 42) --------------------------------------------------------------


class CountingTable(Table):
    """A table that counts the rows turned into records."""

    __slots__ = ("rows_read",)

    def records(self, start: int = 0, stop: int | None = None) -> list[dict[str, Any]]:
        out = super().records(start, stop)
        self.rows_read = getattr(self, "rows_read", 0) + len(out)
        return out


def ledger(rows: int, *, cls: type[Table] = Table) -> Table:
    """A 売上明細 read from a file: typed columns, each row's CSV line, amounts in 千円."""
    days = np.datetime64("2025-01-01") + np.arange(rows) % 365
    frame = pd.DataFrame(
        {
            "売上日": days.astype("datetime64[us]"),
            "得意先": pd.Series(np.where(np.arange(rows) % 2, "山田商事", "鈴木工業"), dtype="str"),
            "金額": (np.arange(rows) * 37) % 100_000 + 1,
        }
    )
    return cls(
        frame, origin=TableOrigin("売上.csv"), positions=np.arange(rows) + 5, units={"金額": "千円"}
    )


def test_a_large_ledger_is_computed_on_columns_and_keeps_its_rows(
    block: Block, make_ctx: ContextFactory
) -> None:
    size = 200_000
    table = ledger(size, cls=CountingTable)
    inputs = {
        "table": table,
        "columns": [
            {"name": "税額", "expr": "rounddown([金額] * 0.1, 0)"},
            {"name": "税込", "expr": "[金額] + [税額]"},
            {"name": "区分", "expr": 'if([金額] >= 50000, "大口", "通常")'},
            {"name": "経過日数", "expr": 'days("2025-12-31", [売上日])'},
        ],
        "zero_division": "error",
    }
    block.check_inputs(inputs)
    out = block.run(inputs, make_ctx("compute"))
    assert getattr(table, "rows_read", 0) == 0  # no row was turned into a record
    rows = out["rows"]
    assert check_value(rows, resolve_port(block.spec.outputs["rows"])) is None
    amounts = table.frame["金額"].to_numpy()
    assert np.array_equal(rows.frame["税額"].to_numpy(), amounts // 10)
    assert np.array_equal(rows.frame["税込"].to_numpy(), amounts + amounts // 10)
    assert rows.frame["区分"].iloc[-1] == ("大口" if amounts[-1] >= 50000 else "通常")
    assert rows.frame["経過日数"].iloc[0] == 364
    assert rows.positions is not None
    assert np.array_equal(rows.positions, table.positions)  # errors downstream name file lines
    assert rows.where(9, "税額") == "売上.csv の 14 行目の列「税額」"
    assert rows.frame["売上日"].dtype == table.frame["売上日"].dtype  # typed, not ISO text
    # the table's own columns are shared with the input, not copied
    assert np.shares_memory(rows.frame["金額"].to_numpy(), amounts)
    assert out["summary"]["input_rows"] == size


def test_an_unreadable_cell_is_named_by_its_file_line(
    block: Block, make_ctx: ContextFactory
) -> None:
    table = ledger(4)
    frame = table.frame.assign(メモ=pd.Series(["1,200", None, "未定", "(300)"], dtype=object))
    with pytest.raises(BlockError) as caught:
        run(
            block,
            make_ctx,
            {"name": "合計", "expr": "[金額] + [メモ]"},
            table=table.derive(frame),
        )
    assert "売上.csv の 7 行目（'未定'）" in caught.value.message
    assert caught.value.details["rows"] == [3]


def test_amounts_are_read_in_every_form_the_file_reader_knows(
    block: Block, make_ctx: ContextFactory
) -> None:
    table = [{"金額": "(1,200)"}, {"金額": "△500"}, {"金額": "1,234円"}, {"金額": "￥2,000"}]
    out = run(block, make_ctx, {"name": "倍", "expr": "[金額] * 2"}, table=table)
    assert column(out, "倍") == [-2400, -1000, 2468, 4000]


def test_if_computes_a_branch_only_for_the_rows_that_take_it(
    block: Block, make_ctx: ContextFactory
) -> None:
    # the form the zero-division hint recommends
    out = run(block, make_ctx, {"name": "前年比", "expr": "if([前年] = 0, 0, [税抜金額] / [前年])"})
    assert column(out, "前年比") == [1.2500625, 0]
    assert out["summary"]["zero_divisions"] == 0
    table = [{"区分": "数", "値": "12"}, {"区分": "文", "値": "未定"}]
    out = run(
        block, make_ctx, {"name": "倍", "expr": 'if([区分] = "数", [値] * 2, [値])'}, table=table
    )
    assert column(out, "倍") == [24, "未定"]


def test_a_quotient_compared_counts_its_zero_divisions_once(
    block: Block, make_ctx: ContextFactory
) -> None:
    out = run(
        block, make_ctx, {"name": "増収", "expr": "[税抜金額] / [前年] > 1"}, zero_division="null"
    )
    assert column(out, "増収") == [True, None]
    assert out["summary"]["zero_divisions"] == 1


def test_quotients_are_exact_fractions(block: Block, make_ctx: ContextFactory) -> None:
    table = [{"金額": 100}, {"金額": 216353}, {"金額": 1}]
    out = run(
        block,
        make_ctx,
        {"name": "三等分", "expr": "[金額] / 3"},
        {"name": "戻し", "expr": "[三等分] * 3"},
        {"name": "一致", "expr": "[戻し] = [金額]"},
        {"name": "端数", "expr": "[金額] - rounddown([三等分], 0) * 3"},
        table=table,
    )
    assert column(out, "三等分") == [100 / 3, 216353 / 3, 1 / 3]  # the float nearest each
    assert column(out, "戻し") == [100, 216353, 1]
    assert column(out, "一致") == [True, True, True]
    assert column(out, "端数") == [1, 2, 1]


def test_units_carry_to_amounts_and_not_to_ratios_or_conversions(
    block: Block, make_ctx: ContextFactory
) -> None:
    table = ledger(3)
    out = run(
        block,
        make_ctx,
        {"name": "税額", "expr": "rounddown([金額] * 0.1, 0)"},
        {"name": "税込", "expr": "[金額] + [税額]"},
        {"name": "前月比", "expr": "[税込] / [金額]"},
        {"name": "円", "expr": "[金額] * 1000"},
        {"name": "件数", "expr": "1"},
        table=table,
    )
    assert out["rows"].units == {"金額": "千円", "税額": "千円", "税込": "千円"}
    replaced = run(block, make_ctx, {"name": "金額", "expr": "[金額] * 1000"}, table=table)
    assert replaced["rows"].units == {}  # 千円 × 1000 is no longer 千円


def test_an_empty_table_keeps_its_columns(block: Block, make_ctx: ContextFactory) -> None:
    out = run(block, make_ctx, {"name": "税額", "expr": "[金額] * 0.1"}, table=ledger(0))
    assert out["rows"].columns == ["売上日", "得意先", "金額", "税額"]
    assert len(out["rows"]) == 0
