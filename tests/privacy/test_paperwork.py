"""The masking property on a second fresh generator (``tests/privacy/paperwork.py``): bank
statements and 振込 forms, e-mail headers and signatures in roman letters, 社員番号, 和暦
birthdays, mixed widths. No generated identifier is left in the masked text and every
non-personal value (amounts, dates, 登録番号, 法人番号, order numbers, product codes, company
names) is left as it was; the same through the wire. One case per leak or wrong mask the
generator found: each failed on the code before its fix."""

from __future__ import annotations

import pytest

from keiri_agent.privacy import Vault, header_kind
from keiri_agent.privacy.kinds import PersonalKind
from tests.privacy.backoffice import leaks
from tests.privacy.paperwork import COMPANIES_EN, COMPANIES_READ_AS_NAMES, SHAPES, make_docs
from tests.privacy.test_backoffice import assert_reaches_the_model_masked, spans
from tests.support import ScriptedLLMServer

SEEDS = (1, 2, 3)
PER_SHAPE = 40  # documents of each shape per seed (3 seeds x 8 shapes x 40 = 960 documents)
PER_SHAPE_WIRE = 6  # documents of each shape sent through the scripted server


@pytest.mark.parametrize("shape", list(SHAPES))
def test_no_identifier_is_left_and_nothing_else_is_touched(shape: str) -> None:
    leaked: dict[str, list[str]] = {}
    touched: dict[str, list[str]] = {}
    for seed in SEEDS:
        for doc in make_docs(seed, PER_SHAPE, [shape]):
            masked = Vault().mask(doc.text).text
            if found := leaks(doc, masked):
                leaked[doc.text] = found
            if lost := [v for v in doc.kept if v not in masked]:
                touched[doc.text] = lost
    assert leaked == {}
    assert touched == {}


def test_every_shape_reaches_the_model_masked(llm_server: ScriptedLLMServer) -> None:
    assert_reaches_the_model_masked(llm_server, make_docs(37, PER_SHAPE_WIRE))


FOUND: list[tuple[str, str, str]] = [
    ("三井住友銀行 新宿支店 普 1234567", "account", "1234567"),
    ("当 1234567 へお振込ください", "account", "1234567"),
    ("ﾌﾘｺﾐｻｷ ｼﾌﾞﾔ ﾌﾂｳ 0161033", "account", "0161033"),
    ("ﾌﾘｺﾐｻｷ ｼﾌﾞﾔ ﾌﾂｳ 0161033", "branch", "ｼﾌﾞﾔ"),
    ("ﾄｳｻﾞ 1234567", "account", "1234567"),
    ("振込先 船橋支店 (普)7489068", "branch", "船橋支店"),
    ("渡辺 大輝,西武信用金庫,大手町,当座,8197422,13,661", "account", "8197422"),
    ('支払先,口座番号,金額\n長谷川 美咲,8197422,"13,661"\n', "account", "8197422"),
    ("From: Misaki Hasegawa <m.hasegawa@example.co.jp>", "person", "Misaki Hasegawa"),
    ("よろしくお願いいたします。\n--\nKenta Nakajima\n経理部", "person", "Kenta Nakajima"),
    ("担当 HASEGAWA MISAKI", "person", "HASEGAWA MISAKI"),
    ("担当：長谷川 Misaki", "person", "長谷川 Misaki"),
    ("経理の長谷川 Misaki です", "person", "長谷川 Misaki"),
    ("Misaki 長谷川です", "person", "Misaki 長谷川"),
    ("Dear Mr. Hayashi,", "person", "Hayashi"),
    ("Yuto Sano", "person", "Yuto Sano"),  # neither word in the dictionary: still a name
    ("社員番号 012345 の立替金", "employee_id", "012345"),
    ("社員No.E-1024", "employee_id", "E-1024"),
    ("従業員番号：A12345", "employee_id", "A12345"),
    ("従業員番号\t部署\n613428\t経理部\n", "employee_id", "613428"),
    ('{"社員番号": "012345"}', "employee_id", "012345"),
    ("生年月日 昭和43年 5月 17日", "birth_date", "昭和43年 5月 17日"),
    ("平成元年5月1日生まれ", "birth_date", "平成元年5月1日"),
    ("生年月日 H元.5.1", "birth_date", "H元.5.1"),
    ("生年月日 60.4.1", "birth_date", "60.4.1"),
    ("誕生日 4月1日", "birth_date", "4月1日"),
    ("07-04-01 ﾌﾘｺﾐ ｻｻｷ ｼﾖｳﾀ 30,000", "person", "ｻｻｷ ｼﾖｳﾀ"),  # ｼﾖｳﾀ: ショウタ as banks print it
    ("ﾌﾘｺﾐ ﾏﾂﾓﾄ ﾐﾖｺ", "person", "ﾏﾂﾓﾄ ﾐﾖｺ"),
]


@pytest.mark.parametrize(("text", "kind", "value"), FOUND)
def test_each_leak_of_the_paperwork_generator_is_masked(text: str, kind: str, value: str) -> None:
    assert (kind, value) in spans(text)


@pytest.mark.parametrize(
    "text",
    [
        *(f"{name}様より請求書が届きました" for name in COMPANIES_EN),
        "Amazon Web Services様",
        "Tokyo Marine の保険料",
        "Sumitomo Mitsui Banking Corporation",
        "ソニー様、三菱商事様、日立様、ヤマト運輸様",
        "AIで分析、ITの件、Excelで集計、PDFを送付",
        "Rate列の平均、Kanjiで書く",  # words the dictionary also knows as names
        "2025/04/01 ﾌﾘｺﾐ ｻｸﾗｼﾖｳｼﾞ(ｶ 120,000",
        "ﾌﾘｺﾐ ｲ)ｻｸﾗｶｲ",
        "担当 1234567 件",  # 担当 is no 当座
        "大阪支店 普通に売上が伸びた",
        "2025年4月1日生産開始",
        "| 口座番号 | 金額 |\n|---|---|\n",  # a Markdown rule is no account number
        "顧客コード 012345 の立替",  # customer codes name companies: they stay
    ],
)
def test_what_is_not_personal_data_stays(text: str) -> None:
    assert spans(text) == []


def test_a_markdown_rule_under_a_personal_header_is_never_learnt() -> None:
    vault = Vault()
    table = "| 氏名 | 口座番号 |\n|---|---|\n| 長谷川 美咲 | 1234567 |\n"
    assert (
        vault.mask(table).text == "| 氏名 | 口座番号 |\n|---|---|\n| 〔人名1〕 | 〔口座番号1〕 |\n"
    )
    assert vault.mask("区切り --- と ---|").text == "区切り --- と ---|"


@pytest.mark.parametrize("name", COMPANIES_READ_AS_NAMES)
def test_a_company_named_like_a_person_is_masked_on_purpose(name: str) -> None:
    # the README: a name in roman letters that reads as a Japanese name, or that the dictionary
    # does not know, is masked before 様 (Toyota is also the surname 豊田)
    assert spans(f"{name}様") == [("person", name)]


def test_an_employee_number_that_reads_as_an_amount_is_masked_only_where_it_is_named() -> None:
    vault = Vault()
    assert vault.mask("社員番号 1024 の立替金").text == "社員番号 〔社員番号1〕 の立替金"
    assert vault.mask("合計 1024 円").text == "合計 1024 円"  # the same figure as an amount
    assert vault.mask("社員番号 E-0007、E-0007 の残業").text == (
        "社員番号 〔社員番号2〕、〔社員番号2〕 の残業"
    )


@pytest.mark.parametrize(
    "header", ["社員番号", "従業員番号", "社員コード", "社員ID", "employee_id"]
)
def test_employee_number_columns_are_personal(header: str) -> None:
    assert header_kind(header) is PersonalKind.EMPLOYEE_ID


@pytest.mark.parametrize("header", ["社員番号別残業時間", "顧客コード", "担当者ID", "取引先コード"])
def test_other_number_columns_are_not_employee_numbers(header: str) -> None:
    assert header_kind(header) is not PersonalKind.EMPLOYEE_ID
