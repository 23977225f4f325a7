"""normalize_text, compress_whitespace and normalize_for_prompt (budget, fairness, dedup)."""

from __future__ import annotations

import re
import unicodedata

import pytest

from keiri_agent.documents.limits import PROMPT_BUDGET_CHARS
from keiri_agent.documents.models import ExtractedText
from keiri_agent.documents.normalize import (
    CJK_RADICAL_FORMS,
    NO_DOCUMENTS_TEXT,
    TRUNCATION_MARKER,
    compress_whitespace,
    normalize_for_prompt,
    normalize_text,
)

FOOTER = "株式会社サンプル 経理部 社外秘 無断転載禁止"


def _long_text(tag: str, lines: int = 300) -> str:
    return "\n".join(f"{tag} の本文 {i:03d} 行目: 売上と費用の内訳です。" for i in range(lines))


def _sections(text: str) -> dict[str, str]:
    parts = re.split(r"(?:^|\n\n)### ", text)
    return {p.split("\n", 1)[0]: p.split("\n", 1)[1] if "\n" in p else "" for p in parts if p}


# --- normalize_text ------------------------------------------------------------------------


def test_kangxi_radicals_become_ordinary_kanji() -> None:
    assert normalize_text("⽇本の⼈⼝") == "日本の人口"


def test_cjk_radical_forms_nfkc_leaves_alone_are_mapped() -> None:
    text = "⻑期 ⻄⽇本 ⻤ ⻩⾊ ⻘ ⻝ ⻭ ⺟"

    assert normalize_text(text) == "長期 西日本 鬼 黄色 青 食 歯 母"
    assert unicodedata.normalize("NFKC", "⻑") == "⻑"  # NFKC alone would not do it


# Kangxi radicals whose Japanese everyday form is another code point (新字体 or variant).
_JAPANESE_FORM = {
    "黃": "黄",
    "齒": "歯",
    "龍": "竜",
    "龜": "亀",
    "齊": "斉",
    "麥": "麦",
    "襾": "西",
    "靑": "青",
    "虍": "虎",
}


@pytest.mark.parametrize(("radical", "kanji"), sorted(CJK_RADICAL_FORMS.items()))
def test_radical_table_agrees_with_unicode_names(radical: str, kanji: str) -> None:
    name = unicodedata.name(radical)
    assert name.startswith("CJK RADICAL ")
    assert unicodedata.name(kanji).startswith("CJK UNIFIED IDEOGRAPH")
    if name == "CJK RADICAL CIVILIAN":  # 民 is a component, not one of the 214 radicals
        assert kanji == "民"
        return
    meaning = re.sub(r"^CJK RADICAL (?:[JC]-)?(?:SIMPLIFIED )?", "", name)
    meaning = re.sub(r" (?:ONE|TWO|THREE)$", "", meaning)
    kangxi = unicodedata.normalize("NFKC", unicodedata.lookup(f"KANGXI RADICAL {meaning}"))
    assert kanji in (kangxi, _JAPANESE_FORM.get(kangxi))


def test_width_variants_are_unified() -> None:
    assert normalize_text("ＡＢＣ１２３ ｶﾀｶﾅ ｶﾞ\u3000（株）") == "ABC123 カタカナ ガ (株)"


def test_controls_are_removed_but_tabs_and_newlines_survive() -> None:
    text = "a\x00b\x07c\u200bd\ufeffe\x85f\tg\r\nh\ri\fj"

    assert normalize_text(text) == "abcde\nf\tg\nh\ni\nj"


def test_normalize_text_is_idempotent() -> None:
    text = "⽇本\r\n\x01ｶﾅ\t１\u2028⻑"

    once = normalize_text(text)
    assert normalize_text(once) == once


def test_compress_whitespace() -> None:
    text = "  請求書   番号 \t\t 001  \n\n\n\n  合計 \u3000 100 \f 以上 "

    assert compress_whitespace(text) == "請求書 番号\t001\n\n合計 100\n\n以上"


# --- normalize_for_prompt --------------------------------------------------------------------


def test_no_documents_is_an_explicit_signal() -> None:
    result = normalize_for_prompt([])

    assert result.empty
    assert result.text == NO_DOCUMENTS_TEXT
    assert result.files == []


def test_documents_without_text_are_an_explicit_signal() -> None:
    result = normalize_for_prompt([("scan.pdf", " \n\f "), ("blank.docx", "")])

    assert result.empty
    assert "テキストを抽出できませんでした" in result.text
    assert "scan.pdf" in result.text
    assert "blank.docx" in result.text


def test_one_long_file_fills_the_budget_and_is_cut_on_a_line() -> None:
    source = _long_text("資料")

    result = normalize_for_prompt([("manual.pdf", source)])

    assert not result.empty
    assert PROMPT_BUDGET_CHARS * 0.95 <= len(result.text) <= PROMPT_BUDGET_CHARS
    assert result.text.startswith("### manual.pdf\n")
    assert result.text.endswith("\n" + TRUNCATION_MARKER)
    kept_lines = result.text.split("\n")[1:-1]
    assert kept_lines == source.split("\n")[: len(kept_lines)]  # whole lines, from the top
    share = result.files[0]
    assert share.truncated
    assert share.original_chars == len(source)
    assert share.kept_chars == len("\n".join(kept_lines))


def test_short_files_keep_everything_and_long_ones_share_the_rest() -> None:
    short = "請求書 INV-001 金額 12,000円"
    docs = [("short.txt", short), ("long_a.pdf", _long_text("A")), ("long_b.pdf", _long_text("B"))]

    result = normalize_for_prompt(docs)

    sections = _sections(result.text)
    assert sections["short.txt"] == short
    share_a, share_b = result.files[1].kept_chars, result.files[2].kept_chars
    line = len(_long_text("A").split("\n")[0])
    assert abs(share_a - share_b) <= line + 1
    assert share_a + share_b >= PROMPT_BUDGET_CHARS * 0.9 - len(short)
    assert len(result.text) <= PROMPT_BUDGET_CHARS


def test_fifty_files_all_get_a_fair_share_within_budget() -> None:
    docs: list[tuple[str, str]] = [(f"memo_{i:02d}.txt", f"メモ{i}: 承認済み") for i in range(10)]
    docs += [(f"report_{i:02d}.pdf", _long_text(f"報告{i:02d}", 40)) for i in range(40)]

    result = normalize_for_prompt(docs)

    assert len(result.text) <= PROMPT_BUDGET_CHARS
    sections = _sections(result.text)
    assert len(sections) == 50
    for i in range(10):
        assert sections[f"memo_{i:02d}.txt"] == f"メモ{i}: 承認済み"
    kept = [share.kept_chars for share in result.files[10:]]
    assert min(kept) > 0
    assert all(share.truncated and not share.omitted for share in result.files[10:])
    line = len(_long_text("報告00", 1))
    assert max(kept) - min(kept) <= 2 * line


@pytest.mark.parametrize("budget", [150, 400, 1_000, 4_000])
@pytest.mark.parametrize("count", [1, 2, 7, 50, 300])
def test_result_never_exceeds_the_budget(budget: int, count: int) -> None:
    docs = [
        (f"ファイル_{i}_" + "長い名前" * 30 + ".pdf", _long_text(str(i), 20)) for i in range(count)
    ]

    result = normalize_for_prompt(docs, budget=budget)

    assert len(result.text) <= budget
    assert len(result.files) == count
    assert not result.empty


def test_files_that_do_not_fit_are_named_as_omitted() -> None:
    docs = [(f"f{i:03d}.pdf", _long_text(str(i), 5)) for i in range(300)]

    result = normalize_for_prompt(docs, budget=1_000)

    omitted = [share for share in result.files if share.omitted]
    assert omitted
    assert result.truncated
    assert f"他 {len(omitted)} 件のファイル" in result.text
    assert not any(f"### {share.name}" in result.text for share in omitted)


def test_a_footer_repeated_in_every_file_is_kept_once() -> None:
    docs = [(f"doc{i}.txt", f"{i}番目の請求書です。金額は{i}00円。\n\n{FOOTER}") for i in range(5)]

    result = normalize_for_prompt(docs)

    assert result.text.count(FOOTER) == 1
    for i in range(5):
        assert f"{i}番目の請求書です。" in result.text


def test_duplicate_long_lines_are_dropped_but_short_ones_kept() -> None:
    text = "売上明細の集計結果について\n合計\n100\n売上明細の集計結果について\n合計\n200"

    result = normalize_for_prompt([("a.txt", text)])

    body = _sections(result.text)["a.txt"]
    assert body == "売上明細の集計結果について\n合計\n100\n合計\n200"


def test_a_file_that_only_repeats_another_is_marked_not_silently_dropped() -> None:
    text = "経費精算規程 第1条 目的 この規程は経費の精算について定める。"

    result = normalize_for_prompt([("v1.docx", text), ("v1のコピー.docx", text)])

    sections = _sections(result.text)
    assert sections["v1.docx"] == text
    assert "重複" in sections["v1のコピー.docx"]
    assert result.files[1].kept_chars == 0
    assert not result.files[1].truncated


def test_extracted_text_results_are_accepted_and_whitespace_compressed() -> None:
    doc = ExtractedText(
        file="/tmp/in/請求書.pdf", text="請求書\u3000\u3000番号  001\n\n\n\n合計", format="pdf"
    )

    result = normalize_for_prompt([doc])

    assert result.text == "### 請求書.pdf\n請求書 番号 001\n\n合計"
    assert result.files[0].original_chars == len("請求書 番号 001\n\n合計")
