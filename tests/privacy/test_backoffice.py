"""Property test of the README's promise on a fresh generator of back-office text (issue 37):
no generated identifier reaches the model, through the product's real path (``get_llm`` →
``llm.masking`` → the OpenAI-compatible wire, recorded by the scripted server), while what the
README keeps visible (法人番号, company payers in the 摘要, amounts) still does.
One case per fix below: each failed on the code before it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openpyxl import Workbook
from typer.testing import CliRunner

from keiri_agent.cli import app
from keiri_agent.llm import get_llm
from keiri_agent.privacy import find_personal, job_scope
from tests.privacy.backoffice import SHAPES, Doc, leaks, make_docs, make_sheet
from tests.privacy.test_plan_run import PLAN
from tests.support import ScriptedLLMServer

SEED = 2026
PER_SHAPE = 12  # documents of each shape sent through the wire (all shapes: 120 requests)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_no_generated_identifier_reaches_the_model(
    llm_server: ScriptedLLMServer, shape: str
) -> None:
    assert_reaches_the_model_masked(llm_server, make_docs(SEED, PER_SHAPE, [shape]))


def assert_reaches_the_model_masked(llm_server: ScriptedLLMServer, docs: list[Doc]) -> None:
    """Send each document in its own job through ``get_llm``; no secret may be in its request
    body, and every value it keeps must be there unchanged."""
    llm_server.add_chat("確認しました。", repeat=True)
    llm = get_llm("reason")
    for doc in docs:
        with job_scope():
            llm.invoke(doc.text)
    bodies = [json.dumps(b, ensure_ascii=False) for b in llm_server.chat_requests()]
    assert len(bodies) == len(docs)
    found = {doc.text: leaks(doc, body) for doc, body in zip(docs, bodies, strict=True)}
    assert {text: values for text, values in found.items() if values} == {}
    lost = {
        doc.text: [v for v in doc.kept if v not in body]
        for doc, body in zip(docs, bodies, strict=True)
    }
    assert {text: values for text, values in lost.items() if values} == {}


def spans(text: str, *, names: bool = True) -> list[tuple[str, str]]:
    return [(s.kind.value, text[s.start : s.end]) for s in find_personal(text, names=names)]


WHOLE = None  # the case's whole text is the value

# One case per leak the generator found (each failed before its fix).
FOUND: list[tuple[str, str, str | None]] = [
    ("〒1500002 東京都渋谷区神南一丁目2番3号", "address", WHOLE),
    ("〒５３００００５　大阪市北区中之島三丁目二番地四", "address", WHOLE),
    (
        "送付先：〒105-0023 港区芝浦4-5-6 青葉ビル3階",
        "address",
        "〒105-0023 港区芝浦4-5-6 青葉ビル3階",
    ),
    ("ｍｉｓａｋｉ．ｈ＠ｅｘａｍｐｌｅ．ｃｏ．ｊｐ", "email", WHOLE),
    ("振込先 新宿支店 （普）0299446", "account", "0299446"),
    ("法人カード：3546  6412  2028  4851 で決済", "card", "3546  6412  2028  4851"),
    ("マイナンバー 1234  5678  9018", "my_number", "1234  5678  9018"),
    ("銀行名 みずほ銀行／支店名 横浜駅前／口座番号 1234567", "branch", "横浜駅前"),
    ("普通 1234567 名義 わたなべだいき", "person", "わたなべだいき"),
    ("当座 1234567 名義 SASAKI Shota", "person", "SASAKI Shota"),
    ("経理部のINOUE Mayumi 様、請求書です", "person", "INOUE Mayumi"),
    ("Takuya Saito様", "person", "Takuya Saito"),
    ("わたなべだいき殿、ご確認ください", "person", "わたなべだいき"),
    ("ナカジマ ケンタ殿、ご確認ください", "person", "ナカジマ ケンタ"),
    ("ナカジマ ケンタ　様、ご確認ください", "person", "ナカジマ ケンタ"),
    ("わたなべだいきさん、ご確認ください", "person", "わたなべだいき"),
    ("携帯 090 1234 5678 まで", "phone", "090 1234 5678"),
    ("TEL 03.1234.5678", "phone", "03.1234.5678"),
    ("TEL.03-1234-5678 FAX.03-1234-5679", "phone", "03-1234-5679"),
    ("TEL03-1234-5678", "phone", "03-1234-5678"),
    ("ゆうちょ銀行 記号 12345 番号 12345678", "account", "12345678"),
    ("記号：10120、番号：1234567", "account", "10120"),
    ("社員番号,姓,名,セイ,メイ\n012345,長谷川,愛,ハセガワ,アイ\n", "person", "アイ"),  # split cells
    ("No,〒,金額\n1,105-0023,1200\n", "address", "105-0023"),  # a 〒 column
    # session 15 (tests.privacy.registers): the numbers of licences and insurance cards
    ("被保険者証の記号・番号：4063・812569", "id_card", "4063・812569"),
    ("健康保険証 記号 12345 番号 678 の写し", "id_card", "678"),
    ("被保険者番号 41552415793", "id_card", "41552415793"),
    ("運転免許証番号：9780 3939 1889", "id_card", "9780 3939 1889"),
    ("運転免許証 第 301234567890 号", "id_card", "301234567890"),
    ("No,免許証番号,金額\n1,71-06-170688-51,1200", "id_card", "71-06-170688-51"),
    ("TEL +81(0)70-2761-5139", "phone", "+81(0)70-2761-5139"),  # the trunk 0 in brackets
    ("＋８１（０）９０ー６０４０ー５５２１", "phone", WHOLE),
]


@pytest.mark.parametrize(("text", "kind", "value"), FOUND)
def test_each_shape_the_generator_found_leaking_is_masked(
    text: str, kind: str, value: str | None
) -> None:
    assert (kind, text if value is WHOLE else value) in spans(text)


@pytest.mark.parametrize(
    "text",
    [
        "件名,科目名,金額\n備品購入,消耗品費,1200\n",  # 名 ends these headers; they are no name
        "支店名: 大阪 売上 1200万円",  # a sales report's branch, no account on the line
        "名義変更の手続きをお願いします",
        "本日もおつかれさまです",
        "ごくろうさんでした、おまわりさんに届けました",
        "請求書\n三井物産 御中\n請求書番号: INV-2025-00012",
        "03 1234 5678 件",  # spaced groups without a label or a mobile prefix: any numbers
        "品番 ABC03-1234-5678 の在庫",
        "記号 A-12 の部品",
        "リスト 一覧",
        "普通 1234567 口座名義 ｶ)ｱｵﾊﾞｼﾖｳｼﾞ",  # a company's account: its name stays
        "口座名義 ﾀﾅｶｺｳｷﾞﾖｳ(ｶ",
        "法人番号 7010001008844 の取引先、顧客コード 012345 の立替",
        "2025/04/01,振込 ｶ)ｱｵﾊﾞｼﾖｳｼﾞ,,120000,950000",  # a company payer (会社名 stays)
        # session 15 (tests.privacy.registers): tables with no personal column, 13 digits
        "品番,数量\n0120-123-456,3\n03-1234-5678,1",  # phone-shaped codes in a table of goods
        "取引先,法人番号,金額\n青葉商事,5163879988799,1200",  # passes Luhn, 13 digits
        "JANコード,品名\n3993849974418,ボールペン",
        "伝票番号,金額\n202504011234,1200",  # a マイナンバー's check digit by chance
        "青葉商事（5163879988799）の品番",
        "保険証 2025年4月交付、写し3枚",
        "保険者番号 06123456",  # the insurer's number, not the card holder's
    ],
)
def test_what_the_readme_keeps_visible_stays(text: str) -> None:
    assert [kind for kind, _ in spans(text) if kind != "account"] == []


def test_the_log_mask_finds_a_phone_number_glued_to_its_label() -> None:
    # logs look without Sudachi, behind a quick test of the text; TEL03-... had to pass it
    assert spans("TEL03-1234-5678 にて受付", names=False) == [("phone", "03-1234-5678")]


def test_an_excel_register_reaches_the_model_masked_through_a_plan_run(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    table, doc = make_sheet(SEED, rows=8)
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    for row in table:
        sheet.append(row)
    source = tmp_path / "社員名簿.xlsx"
    book.save(source)
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN.format(path=source), encoding="utf-8")
    llm_server.add_chat(
        json={"first_name": "〔人名1〕", "first_phone": "〔電話番号1〕", "total": 1}
    )

    result = CliRunner().invoke(app, ["plan", "run", str(plan), "--json"])

    assert result.exit_code == 0, result.output
    (body,) = [json.dumps(b, ensure_ascii=False) for b in llm_server.chat_requests()]
    assert leaks(doc, body) == []
    assert [v for v in doc.kept if v not in body] == []  # 法人番号, amounts
