"""Customer data with personal columns, as an information-security review would try it.

``customers()`` gives 30 rows of 10 people (three purchases each): name, mobile number,
e-mail, マイナンバー (valid check digit), card number (Luhn), bank account; region, amount and
purchase date are not personal. ``identifiers(rows)`` are the structured values a request must never carry,
``names(rows)`` the people. ``leaked(texts, values)`` says which values occur in any text,
in the spellings a request could carry them (as written, without separators, JSON-escaped).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path


def my_number_valid(digits: list[int]) -> bool:
    """The マイナンバー check digit rule (the last of 12 digits), written out independently."""
    body = digits[:11][::-1]
    total = sum(p * (n + 1 if n <= 6 else n - 5) for n, p in enumerate(body, start=1))
    return len(digits) == 12 and digits[11] == (0 if total % 11 <= 1 else 11 - total % 11)


def luhn_valid(digits: list[int]) -> bool:
    total = 0
    for index, digit in enumerate(reversed(digits)):
        doubled = digit * 2 if index % 2 else digit
        total += doubled - 9 if doubled > 9 else doubled
    return total % 10 == 0


__all__ = [
    "COLUMNS",
    "customers",
    "identifiers",
    "leaked",
    "luhn_valid",
    "my_number_valid",
    "names",
    "write_csv",
    "write_xlsx",
]

COLUMNS = ["顧客ID", "氏名", "携帯電話", "メールアドレス", "マイナンバー", "カード番号", "振込口座", "地域", "売上金額", "購入日"]  # fmt: skip
PEOPLE = [
    "長谷川 美咲", "佐藤 翔太", "高橋 優子", "田中 一郎", "伊藤 陽菜",
    "渡辺 大輝", "山本 花子", "中村 健太", "小林 由美", "加藤 直樹",
]  # fmt: skip
REGIONS = ["関東", "関西", "九州"]


def _with_check(body: str, valid: Callable[[list[int]], bool]) -> str:
    for digit in "0123456789":
        if valid([int(ch) for ch in body + digit]):
            return body + digit
    raise AssertionError("no check digit")


def customers() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for number in range(30):
        person = number % 10
        seed = f"{number:02d}{person:02d}"
        rows.append(
            {
                "顧客ID": f"C{number + 1:03d}",
                "氏名": PEOPLE[person],
                "携帯電話": f"090-{3100 + number:04d}-{5200 + number * 7:04d}",
                "メールアドレス": f"customer{number + 1:02d}@example.jp",
                "マイナンバー": _with_check(f"{4321}{seed}8765{number % 10}"[:11], my_number_valid),
                "カード番号": _card(number),
                "振込口座": f"普通 {3958200 + number * 13:07d}",
                "地域": REGIONS[number % 3],
                "売上金額": 10_000 + number * 1_500,
                "購入日": f"2025-{4 + number % 3:02d}-{1 + number:02d}",
            }
        )
    return rows


def _card(number: int) -> str:
    digits = _with_check(f"4{number:02d}98765432101{number % 7}"[:15], luhn_valid)
    return "-".join(digits[i : i + 4] for i in range(0, 16, 4))


def identifiers(rows: Sequence[dict[str, object]]) -> list[str]:
    """The structured identifiers of ``rows`` (phone, e-mail, マイナンバー, card, account)."""
    values: list[str] = []
    for row in rows:
        values += [str(row["携帯電話"]), str(row["メールアドレス"]), str(row["マイナンバー"])]
        values += [str(row["カード番号"]), str(row["振込口座"]).split()[1]]
    return values


def names(rows: Sequence[dict[str, object]]) -> list[str]:
    return sorted({str(row["氏名"]) for row in rows})


def _spellings(value: str) -> set[str]:
    plain = value.replace("-", "").replace(" ", "")
    return {value, plain, json.dumps(value, ensure_ascii=True)[1:-1]}


def leaked(texts: Iterable[str], values: Iterable[str]) -> list[str]:
    """The values found in any of ``texts``."""
    corpus = "\n".join(texts)
    return [value for value in values if any(s in corpus for s in _spellings(value))]


def write_csv(path: Path, rows: Sequence[dict[str, object]]) -> Path:
    lines = [",".join(COLUMNS)]
    lines += [",".join(str(row[c]) for c in COLUMNS) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_xlsx(path: Path, rows: Sequence[dict[str, object]]) -> Path:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(COLUMNS)
    for row in rows:
        sheet.append([row[c] for c in COLUMNS])
    book.save(path)
    return path
