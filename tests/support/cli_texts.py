"""Seeded generator of the Japanese texts the CLI prints, each with the units it must not cut.

Shapes: block descriptions, error messages with their hints, mixed full- and half-width text
(ＡＢＣ商事, ＣＳＶ), amounts and counts with their units (12,000円, 3件, 2026年4月30日), paths
(with spaces and Japanese in them), ids and settings (file.read_table, KEIRI_TIMEZONE), English
product names (Microsoft Excel), brackets and quotes among Japanese, small kana and ー inside
words. A text is made of *units*: a Japanese phrase (文節: 得意先ごとに, （税込）を), an atom
(a number with its unit, a path, an id: never cut) or a product name (cut only at its spaces);
a line may begin only where a unit begins (unless a unit alone is wider than the line).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

PHRASES = [
    "得意先ごとに",
    "金額を",
    "集計します。",
    "見出しの",
    "行を",
    "読み飛ばし、",
    "（税込）の",
    "「合計」の",
    "行は",
    "除きます。",
    "ファイルが",
    "見つかりません。",
    "設定を",
    "確認してください。",
    "勘定科目の",
    "対応表に",
    "ない",
    "科目が",
    "あります。",
    "請求書の",
    "明細を",
    "一行ずつ",
    "読み込み、",
    "支払期日ごとに",
    "並べます。",
    "振込先の",
    "口座番号が",
    "空欄です。",
    "入力してください。",
    "消費税率は",
    "（軽減税率）",
    "取引日の",
    "順に",
    "照合します。",
    "データーを",
    "ちょっとした",
    "チェックします。",
    "シートの",
    "「売上」に",
    "書き出します。",
    "前月末の",
    "残高と",
    "一致しません。",
    "フォルダ内の",
    "ファイルを",
    "一覧に",
    "します。",
    "『経費規程』の",
    "上限を",
    "超えています。",
    "【注意】",
    "〔参考〕",
    "値が",
    "大きすぎます",
    "…",
    "。",
    "、",
]
ATOMS = [
    "12,000円",
    "1,234,567円",
    "30日",
    "2026年4月30日",
    "10%",
    "3件",
    "8%",
    "1 行 1 レコード",
    "KEIRI_TIMEZONE",
    "Asia/Tokyo",
    "sales_2026-04.csv",
    "/home/keiri/data/請求書.pdf",
    "C:\\経理\\月次\\売上.xlsx",
    "https://example.co.jp/api/v1",
    "--out",
    "file.read_table",
    "total_check: warn",
    "ＣＳＶ",
    "ＡＢＣ商事",
    "１２３",
    "ISO8601",
    "Ver.2",
    "UTF-8",
    "¥5,000",
    "2026-02-03T10:00:00+09:00",
    "No.12",
    "(税込)",
]
NAMES = ["Microsoft Excel", "Google Drive", "Money Forward", "freee", "OpenAI", "Claude"]


@dataclass(frozen=True)
class CliText:
    """A generated text and the ``(start, end)`` offsets of the units in it."""

    text: str
    units: tuple[tuple[int, int], ...]

    def cuts_a_unit(self, offset: int) -> bool:
        """Whether a line beginning at ``offset`` cuts a unit (a space inside a name aside)."""
        return any(
            start < offset < end and self.text[offset - 1] != " " for start, end in self.units
        )

    def unit_at(self, offset: int) -> str:
        """The unit a line beginning at ``offset`` cuts (for messages)."""
        return next(self.text[a:b] for a, b in self.units if a < offset < b)


def _pieces(rng: random.Random) -> list[str]:
    shape = rng.choice(["description", "error", "mixed"])
    count = {"description": (4, 30), "error": (3, 14), "mixed": (3, 24)}[shape]
    pieces: list[str] = []
    if shape == "error":
        pieces += [rng.choice(ATOMS), "を", "読み込めません:"]
    for _ in range(rng.randint(*count)):
        kind = rng.random()
        if kind < (0.65 if shape == "description" else 0.5):
            pieces.append(rng.choice(PHRASES))
        elif kind < 0.92:
            pieces.append(rng.choice(ATOMS))
        else:
            pieces.append(rng.choice(NAMES))
    if shape == "error":
        pieces += ["ヒント:", rng.choice(PHRASES), "確認してください。"]
    return pieces


def cli_texts(seed: int, count: int) -> list[CliText]:
    """``count`` texts of the CLI's shapes, the same for the same ``seed``."""
    rng = random.Random(seed)
    found = []
    for _ in range(count):
        text, units = "", []
        for piece in _pieces(rng):
            latin = (piece[0].isascii(), text[-1:].isascii())
            if text and (all(latin) or rng.random() < (0.6 if any(latin) else 0.05)):
                text += (
                    " "  # always between two Latin words, often beside one, rarely between phrases
                )
            units.append((len(text), len(text) + len(piece)))
            text += piece
        found.append(CliText(text, tuple(units)))
    return found
