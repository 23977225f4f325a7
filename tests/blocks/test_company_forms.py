"""The 全銀協 法人略語 table is package data (company_forms.csv), read and checked when it loads.

A person who keeps the table (a form the banks added, a kanji short form) edits the CSV; these
tests say what the bundled table holds and that a broken row is refused with its line named.
"""

from __future__ import annotations

import pytest

from keiri_agent.blocks.table.names.forms import FORMS, KANJI_SHORT, FormKind, load_forms
from keiri_agent.blocks.table.names.split import split_name
from keiri_agent.errors import BlockError, ErrorCode

HEADER = "kind,abbreviation,name,words,readings,kanji_short\n"


def test_the_bundled_table_holds_the_banks_three_lists() -> None:
    kinds = [form.kind for form in FORMS]
    assert (kinds.count(FormKind.LEGAL), kinds.count(FormKind.OFFICE)) == (25, 2)
    assert kinds.count(FormKind.BUSINESS) == 23
    by_abbreviation = {form.abbreviation: form for form in FORMS}
    assert by_abbreviation["カ"].name == "株式会社"
    assert by_abbreviation["チユウ"].name == "中間法人"  # a name of its own, not its first word
    assert by_abbreviation["イ"].words[:2] == ("医療法人", "医療法人社団")
    assert by_abbreviation["ノウキヨウ"].readings == ("ノウギヨウキヨウドウクミアイ",)
    assert KANJI_SHORT["(一社)"] is by_abbreviation["シヤ"]
    assert KANJI_SHORT["(合)"] is KANJI_SHORT["(同)"] is by_abbreviation["ド"]
    assert split_name("(一社)日本経理協会").name == "日本経理協会"


def test_a_row_added_to_the_table_is_read_with_its_kanji_short_forms() -> None:
    (form,) = load_forms(HEADER + "法人,テスト,,試験法人 一般試験法人,シケンホウジン,試 一試\n\n")
    assert (form.name, form.kind, form.abbreviation) == ("試験法人", FormKind.LEGAL, "テスト")
    assert (form.words, form.readings) == (("試験法人", "一般試験法人"), ("シケンホウジン",))
    assert form.kanji_short == ("試", "一試")


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("kind,abbreviation,name\n", 1, "見出し"),
        (HEADER + "法人,カ,,株式会社,カブシキガイシヤ\n", 2, "列が 5 個"),
        (HEADER + "会社,カ,,株式会社,カブシキガイシヤ,\n", 2, "kind「会社」"),
        (HEADER + "法人,カ,,株式会社,,株\n", 2, "空です"),
        (HEADER + "法人,ｶ,,株式会社,カブシキガイシヤ,\n", 2, "ｶ が全角の大きいカナ"),
        (
            HEADER + "法人,カ,,株式会社,かぶしきがいしゃ,\n",
            2,
            "かぶしきがいしゃ が全角の大きいカナ",
        ),
        (
            HEADER + "法人,カ,,株式会社,カブシキガイシヤ,株\n法人,カ,,株式,カブシキ,\n",
            None,
            "略語 カ が二度以上",
        ),
        (
            HEADER
            + "法人,カ,,株式会社,カブシキガイシヤ,株\n法人,ユ,,有限会社,ユウゲンガイシヤ,株\n",
            None,
            "漢字の略称 株 が二度以上",
        ),
    ],
)
def test_a_broken_table_is_refused_naming_the_line(
    text: str, line: int | None, problem: str
) -> None:
    with pytest.raises(BlockError) as caught:
        load_forms(text)
    assert caught.value.code == ErrorCode.FILE_UNREADABLE
    assert problem in caught.value.message
    assert "company_forms.csv" in caught.value.message
    assert caught.value.details["line"] == line
