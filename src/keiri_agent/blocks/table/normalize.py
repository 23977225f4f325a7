"""How table blocks compare text: keys, names and filter values.

One rule for every ``table.*`` block: NFKC (full-width ``ＡＢＣ１`` = ``ABC1``, half-width kana
= full-width), whitespace removed (or collapsed for text compared as a whole) and casefolded.

With ``company`` a value is compared as a company name: the company forms are dropped (株式会社,
(株), ㈱, 有限会社, Co., Ltd. ..., and the bank's kana abbreviations of the 全銀協 list at
either end or in the middle: ``ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ``, ``ﾔﾏﾀﾞｼﾖｳｼﾞ(ｶ``, ``ｲ)ｻｸﾗｼｶ``), and kana are
folded as banks write them (small kana large: ``ヤマダショウジ`` = ``ﾔﾏﾀﾞｼﾖｳｼﾞ``; ``-``,
``ｰ`` and ``ー`` one mark), so 株式会社山田商事, (株)山田商事 and 山田商事株式会社 compare by
the name itself; kanji stay kanji. With ``reading`` a value is compared by its kana reading
(:func:`keiri_agent.blocks.table.names.name_key`): a kanji name is read with SudachiPy, a
bank-written payer loses its customer code, so ``株式会社山田商事`` and ``1012ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ``
meet. A cut name (48 characters) or one that SudachiPy reads wrong does not meet by one key:
matching a payer with a customer master is :class:`keiri_agent.blocks.table.names.NameIndex`'s.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from keiri_agent.blocks.table.cells import json_cell
from keiri_agent.blocks.table.names.fold import fold
from keiri_agent.blocks.table.names.keys import name_key
from keiri_agent.blocks.table.names.split import canonical, split_name

__all__ = ["normalize_key"]

_SPACE = re.compile(r"\s+")


def normalize_key(
    value: Any, *, company: bool = False, keep_spaces: bool = False, reading: bool = False
) -> str:
    """The text a key is compared by: NFKC, whitespace removed (or collapsed), casefolded.

    ``company``: compared as a company name (forms dropped, kana folded); ``reading``: by its
    kana reading (see the module docstring). None and blank cells give "".
    """
    if value is None:
        return ""
    cell = json_cell(value)
    text = unicodedata.normalize("NFKC", cell if isinstance(cell, str) else str(cell)).strip()
    if reading:
        return name_key(text).casefold()
    if company:
        parts = split_name(text)
        words = f"{parts.name} {parts.rest}".split()
        text = " ".join(canonical(fold(word)) for word in words)
    text = _SPACE.sub(" ", text).strip() if keep_spaces else _SPACE.sub("", text)
    return text.casefold()
