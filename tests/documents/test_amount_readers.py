"""Header detection reads amounts as ``cell_forms.read_amount`` does: a cell that is an amount
in any form a ledger writes is never taken for a column label, and one it refuses is a label."""

from __future__ import annotations

from hypothesis import given

from keiri_agent.documents.cell_forms import read_amount
from keiri_agent.documents.table_infer import detect_header
from tests.documents.amount_texts import amount_texts


@given(amount_texts())
def test_an_amount_is_never_taken_for_a_column_label(text: str) -> None:
    expected = (None, 0) if read_amount(text) is not None else (0, 1)
    assert detect_header([[text], ["1"], ["2"]]) == expected
