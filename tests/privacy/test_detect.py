"""What is personal data and what is not (issue 37), and the vault's placeholders both ways."""

from __future__ import annotations

import pandas as pd
import pytest

from keiri_agent.documents.table_value import Table
from keiri_agent.llm.masking import StreamRestorer
from keiri_agent.privacy import LogMask, PersonalKind, Vault, find_personal, job_scope
from keiri_agent.privacy.scope import learn_tables


def found(text: str) -> list[tuple[str, str]]:
    return [(s.kind.value, text[s.start : s.end]) for s in find_personal(text)]


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("マイナンバーは 1234 5678 9018 です", "my_number", "1234 5678 9018"),
        ("個人番号：123456789018", "my_number", "123456789018"),
        ("カード 4111-1111-1111-1111 で決済", "card", "4111-1111-1111-1111"),
        ("カード番号 378282246310005", "card", "378282246310005"),
        ("振込口座（普通 3958211）", "account", "3958211"),
        ("当座預金 口座番号：1234567", "account", "1234567"),
        ("みずほ銀行 渋谷支店 普通 1234567", "branch", "渋谷支店"),
        ("携帯 090-1234-5678", "phone", "090-1234-5678"),
        ("TEL:03(1234)5678", "phone", "03(1234)5678"),
        ("フリーダイヤル 0120-123-456", "phone", "0120-123-456"),
        ("海外から +81-90-1234-5678 へ", "phone", "+81-90-1234-5678"),
        ("電話 0312345678", "phone", "0312345678"),
        ("０９０－１２３４－５６７８（全角）", "phone", "０９０－１２３４－５６７８"),
        ("メール misaki.h@example.co.jp まで", "email", "misaki.h@example.co.jp"),
        ("〒150-0002 東京都渋谷区渋谷2-21-1", "address", "〒150-0002 東京都渋谷区渋谷2-21-1"),
        ("住所: 大阪府大阪市北区梅田1-1-1", "address", "大阪府大阪市北区梅田1-1-1"),
        ("生年月日：昭和60年4月12日", "birth_date", "昭和60年4月12日"),
        ("1985年4月12日生まれ", "birth_date", "1985年4月12日"),
        ("長谷川 美咲です。", "person", "長谷川 美咲"),
        ("担当の田中さんに", "person", "田中"),
        ("鈴木一郎部長へ", "person", "鈴木一郎"),
        ("上長: 池田部長", "person", "池田"),
        ("中村　愛です", "person", "中村　愛"),
        ("氏名: ハセガワ ミサキ", "person", "ハセガワ ミサキ"),
        ('{"担当者": "東海林"}', "person", "東海林"),
    ],
)
def test_each_kind_is_found(text: str, kind: str, value: str) -> None:
    assert (kind, value) in found(text)


@pytest.mark.parametrize(
    "text",
    [
        "売上は 1,234,567円、前年比 +12.5%",
        "2024-11-15 に ¥98,000 を入金（令和6年11月15日）",
        "請求書番号 INV-2024-00123、登録番号 T1234567890123",
        "法人番号 7010001008844 の取引先",
        "注文番号 123456789018 の件",  # 12 digits with a valid マイナンバー check digit
        "品番 03-1234-5678 の在庫",  # shaped like a phone number
        "型番 0120-555-777",
        "田中工業株式会社、鈴木商事株式会社、株式会社山本製作所、ヤマト運輸",
        "松本市の倉庫",
        "表の先頭 5 行のみ・全 30 行",
        "columns: リスト（配列）ではありません",
        "お客様各位、皆様、担当者様",
        "- 氏名: str, 種類10",
    ],
)
def test_what_is_not_personal_data_stays(text: str) -> None:
    assert found(text) == []


def test_a_table_in_text_is_masked_by_its_headers_and_amount_columns_stay() -> None:
    text = (
        "顧客ID,氏名,電話番号,法人番号,金額\n"
        "C001,ヤマダ,0311112222,123456789018,12000\n"
        "C002,佐藤 花子,090-1111-2222,7010001008844,5000\n"
    )
    assert found(text) == [
        ("person", "ヤマダ"),
        ("phone", "0311112222"),
        ("person", "佐藤 花子"),
        ("phone", "090-1111-2222"),
    ]


def test_one_value_is_one_placeholder_whatever_its_spacing_and_comes_back() -> None:
    vault = Vault()
    first = vault.mask("長谷川 美咲さん（090-1234-5678）")
    second = vault.mask("長谷川　美咲さん、09012345678 へ")
    assert first.text == "〔人名1〕さん（〔電話番号1〕）"
    assert second.text == "〔人名1〕さん、〔電話番号1〕 へ"
    assert first.counts == {"person": 1, "phone": 1}
    assert vault.restore("〔人名1〕様 [人名1] <電話番号1> 【人名 1】 〔人名9〕") == (
        "長谷川 美咲様 長谷川 美咲 090-1234-5678 長谷川 美咲 〔人名9〕"
    )
    assert vault.counts() == {"person": 1, "phone": 1}


def test_a_value_once_masked_is_masked_everywhere_after() -> None:
    vault = Vault()
    vault.mask("担当者: 東海林")
    assert vault.mask("東海林から連絡").text == "〔人名1〕から連絡"
    assert vault.mask("法人番号 3958211890123").text == "法人番号 3958211890123"


def test_tables_teach_the_vault_their_personal_columns() -> None:
    frame = pd.DataFrame({"氏名": ["ヤマダ", "ヤマダ", None], "金額": [100, 200, 300]})
    records = [{"担当者": "ｻﾄｳ", "品名": "コピー用紙"}]
    with job_scope() as vault:
        assert learn_tables({"a": Table(frame), "b": records, "c": "text"}) == 2
        assert (
            vault.mask("ヤマダ と ｻﾄｳ に コピー用紙").text == "〔人名1〕 と 〔人名2〕 に コピー用紙"
        )
    assert learn_tables(frame) == 0  # outside a job nothing is kept


def test_a_stream_restores_a_placeholder_cut_between_chunks() -> None:
    vault = Vault()
    vault.mask("長谷川 美咲です")
    restorer = StreamRestorer(vault)
    pieces = [restorer.feed(chunk) for chunk in ["こんにちは〔人", "名1〕様。[", "x] です"]]
    assert "".join(pieces) + restorer.flush() == "こんにちは長谷川 美咲様。[x] です"
    assert pieces[0] == "こんにちは"


def test_the_log_mask_keeps_kinds_never_values_and_learns_only_what_it_is_told() -> None:
    mask = LogMask()
    line = "連絡先 090-1234-5678、担当 長谷川 美咲"
    assert mask.mask(line) == "連絡先 〔電話番号〕、担当 長谷川 美咲"  # names: only when known
    mask.learn(PersonalKind.PERSON, "長谷川 美咲")
    assert mask.mask(line) == "連絡先 〔電話番号〕、担当 〔人名〕"
    assert mask.mask("無関係な行") == "無関係な行"


@pytest.mark.parametrize(
    "header",
    [
        "電話料金",
        "携帯電話代",
        "口座振替日",
        "口座振替額",
        "住所変更日",
        "メール送信日",
        "telephone_fee",
        "hotel",
    ],
)
def test_a_header_naming_an_amount_or_a_date_about_personal_data_is_not_personal(
    header: str,
) -> None:
    # 電話料金 holds amounts, 口座振替日 dates: a table's such columns are never learnt, and
    # their amounts and dates reach the model as they are.
    frame = pd.DataFrame(
        {"氏名": ["長谷川 美咲"], header: ["2025-04-27" if "日" in header else "5,400"]}
    )
    vault = Vault()
    assert vault.learn_table(frame) == 1
    value = str(frame[header][0])
    assert vault.mask(f"{header} {value}、長谷川 美咲様").text == f"{header} {value}、〔人名1〕様"


@pytest.mark.parametrize(
    ("header", "kind"),
    [
        ("携帯電話", "phone"),
        ("customer_tel", "phone"),
        ("email", "email"),
        ("生年月日", "birth_date"),
        ("振込口座", "account"),
    ],
)
def test_personal_headers_are_still_known(header: str, kind: str) -> None:
    from keiri_agent.privacy import header_kind

    assert header_kind(header) == PersonalKind(kind)
