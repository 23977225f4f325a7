"""Payer names as banks write them, compared with the names of a customer master (入金消込).

A bank gives the payer (振込依頼人名) in half-width kana as the payer's bank wrote it:
``1012ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ``, ``ﾎｸﾄｳｳﾝﾕ(ｶ``, small kana written large, cut at 48 characters. A customer
master has 取引先名 in kanji and sometimes 取引先名カナ. This package undoes the bank's
conventions (:mod:`.fold`, :mod:`.forms`, :mod:`.split`), reads kanji names with SudachiPy
(:mod:`.reading`), builds the keys of both sides (:mod:`.keys`), says how a payer meets a
customer (:mod:`.match`) and finds a payer's candidates among many customers (:mod:`.index`)::

    index = NameIndex(CustomerName(code, name, kana) for code, name, kana in master)
    matches = index.lookup(PayerName.parse("1012ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ"))  # surest first
    best = best_matches(matches)  # one: the customer; several: ambiguous; none: unknown

``table.*`` blocks reach it through :func:`keiri_agent.blocks.table.normalize.normalize_key`
(``company=True`` uses the forms and the folding, ``reading=True`` :func:`.keys.name_key`).
"""

from keiri_agent.blocks.table.names.fold import PAYER_NAME_CHARS, bank_length, fold
from keiri_agent.blocks.table.names.forms import FORMS, CompanyForm, FormKind
from keiri_agent.blocks.table.names.index import NameIndex
from keiri_agent.blocks.table.names.keys import (
    CustomerName,
    NameKey,
    NameSource,
    PayerName,
    customer_keys,
    name_key,
)
from keiri_agent.blocks.table.names.match import Match, MatchKind, best_matches, name_match
from keiri_agent.blocks.table.names.reading import readings
from keiri_agent.blocks.table.names.split import NameParts, split_name

__all__ = [
    "FORMS",
    "PAYER_NAME_CHARS",
    "CompanyForm",
    "CustomerName",
    "FormKind",
    "Match",
    "MatchKind",
    "NameIndex",
    "NameKey",
    "NameParts",
    "NameSource",
    "PayerName",
    "bank_length",
    "best_matches",
    "customer_keys",
    "fold",
    "name_key",
    "name_match",
    "readings",
    "split_name",
]
