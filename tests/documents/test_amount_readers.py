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


def test_only_numbered_headings_in_sequence_make_a_header_of_amount_like_cells() -> None:
    assert detect_header([["(1)", "(2)", "(3)"], ["1", "2", "3"]]) == (0, 1)
    assert detect_header([["(4)", "(5)", "(6)"], ["1", "2", "3"]]) == (0, 1)
    # Negative amounts out of sequence, or with separators, are a data row.
    assert detect_header([["(1)", "(5)", "(3)"], ["1", "2", "3"]]) == (None, 0)
    assert detect_header([["(1,200)", "(1,201)"], ["1", "2"]]) == (None, 0)
    # Circled numbers (NFKC: the digits 1, 2, 3) in sequence are a header; ⓪ is no heading.
    assert detect_header([["①", "②", "③"], ["1", "2", "3"]]) == (0, 1)
    assert detect_header([["⑳", "㉑"], ["1", "2"]]) == (0, 1)
    assert detect_header([["①", "③"], ["1", "2"]]) == (None, 0)
    assert detect_header([["⓪", "①"], ["1", "2"]]) == (None, 0)
