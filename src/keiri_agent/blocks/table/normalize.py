"""How table blocks compare text: keys, names and filter values.

One rule for every ``table.*`` block: NFKC (full-width ``ＡＢＣ１`` = ``ABC1``, half-width kana
= full-width), whitespace removed (or collapsed for text compared as a whole) and casefolded.
With ``company`` the company-form words are dropped as well, so 株式会社山田商事, (株)山田商事,
山田商事株式会社 and a bank statement's ｶ)ﾔﾏﾀﾞｼｮｳｼﾞ-style abbreviation compare by the name itself.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from keiri_agent.blocks.table.cells import json_cell

__all__ = ["COMPANY_FORMS", "normalize_key"]

# Company-form words dropped by normalize_company (after NFKC: ㈱ and （株） are "(株)").
COMPANY_FORMS = tuple(
    "株式会社 有限会社 合同会社 合資会社 合名会社 (株) (有) (同) (資) (名) (合)".split()  # noqa: SIM905
)
# Bank statements abbreviate the form in kana at either end: ｶ)ﾔﾏﾀﾞｼｮｳｼﾞ, ﾔﾏﾀﾞｼｮｳｼﾞ(ｶ.
_KANA_FORM = re.compile(r"^(?:カ|ユ|ド)\)|\((?:カ|ユ|ド)\)?$")
_LATIN_FORM = re.compile(r"[\s,]+(?:co\.?,?\s*ltd\.?|inc\.?|corp\.?|ltd\.?|k\.k\.)$", re.I)
_SPACE = re.compile(r"\s+")


def normalize_key(value: Any, *, company: bool = False, keep_spaces: bool = False) -> str:
    """The text a key is compared by: NFKC, whitespace removed (or collapsed), casefolded.

    With ``company`` the company-form words (株式会社, (株), ㈱, 有限会社, ｶ)... and
    Co., Ltd. / Inc.) are removed too. None and blank cells give "".
    """
    if value is None:
        return ""
    cell = json_cell(value)
    text = unicodedata.normalize("NFKC", cell if isinstance(cell, str) else str(cell)).strip()
    if company:
        text = _LATIN_FORM.sub("", text)
        for form in COMPANY_FORMS:
            text = text.replace(form, " ")
        text = _KANA_FORM.sub("", text.strip())
    text = _SPACE.sub(" ", text).strip() if keep_spaces else _SPACE.sub("", text)
    return text.casefold()
