"""The masking property on a third fresh generator (``tests/privacy/arrivals.py``): personal
data as it arrives in records (JSON numbers), mails in roman letters (Kato-san), kana given
names alone, full-width and grouped numbers, rows without a header and addresses with a
building and a room. No identifier is left, names are found at the README's rate or better,
and amounts, order numbers and company names stay as they were; the same through the real
request path (the scripted OpenAI-compatible server records each body). One case per leak or
wrong mask the generator found: each failed on the code before its fix."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from typer.testing import CliRunner

from keiri_agent.cli import app
from keiri_agent.llm import get_llm
from keiri_agent.privacy import Vault, job_scope, mask_json_text
from keiri_agent.sudachi import TO_HIRAGANA
from tests.privacy.arrivals import GIVEN_NAMES, KANA_HONORIFICS, SHAPES, make_docs
from tests.privacy.backoffice import Doc, leaks
from tests.privacy.test_backoffice import assert_reaches_the_model_masked, spans
from tests.support import ScriptedLLMServer
from tests.support.personal import leaked, my_number_valid

SEEDS = (1, 2, 3)
PER_SHAPE = 40  # documents of each shape per seed (3 seeds x 8 shapes x 40 = 960 documents)
PER_SHAPE_WIRE = 6  # documents of each shape sent through the scripted server
NAME_SHAPES = ("romaji", "kana_given", "headerless", "company_person")
MIN_NAME_RECALL = 0.9  # issue 37: at most 1 name in 10 may reach the model
MY_NUMBER = next(
    n for n in (f"12345678901{d}" for d in range(10)) if my_number_valid([int(c) for c in n])
)


def _masked(doc: Doc) -> str:
    return mask_json_text(Vault(), doc.text, Counter())  # as every prompt and tool result


@pytest.mark.parametrize("shape", list(SHAPES))
def test_no_identifier_is_left_and_nothing_else_is_touched(shape: str) -> None:
    values = missed = 0
    touched: dict[str, list[str]] = {}
    for seed in SEEDS:
        for doc in make_docs(seed, PER_SHAPE, [shape]):
            masked = _masked(doc)
            values += len(doc.secrets)
            missed += len(leaks(doc, masked))
            if lost := [v for v in doc.kept if v not in masked]:
                touched[doc.text] = lost
    assert touched == {}
    if shape in NAME_SHAPES:
        assert 1 - missed / values >= MIN_NAME_RECALL, (missed, values)
    else:
        assert missed == 0


def test_every_shape_reaches_the_model_masked(llm_server: ScriptedLLMServer) -> None:
    docs = make_docs(37, PER_SHAPE_WIRE, [s for s in SHAPES if s not in NAME_SHAPES])
    assert_reaches_the_model_masked(llm_server, docs)


def test_a_tool_result_with_numbers_reaches_the_model_masked_and_its_reply_is_restored(
    llm_server: ScriptedLLMServer,
) -> None:
    record = {"社員ID": "S1", "携帯電話": 9012345678, "口座番号": 1234567, "支給額": 250000}
    llm_server.add_chat("〔口座番号1〕 に 250000 円を振り込みます。")
    llm = get_llm("reason")
    call = {"name": "lookup", "args": {"社員ID": "S1"}, "id": "call_1"}
    with job_scope():
        reply = llm.invoke(
            [
                HumanMessage("S1 の振込先を調べて"),
                AIMessage("", tool_calls=[call]),
                ToolMessage(json.dumps([record], ensure_ascii=False), tool_call_id="call_1"),
            ]
        )
    (body,) = [json.dumps(b, ensure_ascii=False) for b in llm_server.chat_requests()]
    assert leaked([body], ["9012345678", "1234567"]) == []
    assert "250000" in body  # an amount stays a number the model can add
    assert reply.content == "1234567 に 250000 円を振り込みます。"


PLAN = """apiVersion: v1
id: privacy_numbers
version: 1.0.0
vars:
  staff:
    - {{社員ID: S1, 携帯電話: 9012345678, 口座番号: 1234567, マイナンバー: {my_number}, 支給額: 250000}}
    - {{社員ID: S2, 携帯電話: 8098765432, 口座番号: 7654321, マイナンバー: null, 支給額: 310000}}
graph:
  - id: ask
    block: ai.process_llm
    in:
      prompt: "支給額の合計と、最初の社員の口座番号を返してください。社員: ${{vars.staff}}"
      output_schema:
        account: string
        total: integer
    out:
      results: answer
"""


def test_plan_values_with_numbers_reach_the_model_masked(  # learnt as the node's input tables
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN.format(my_number=MY_NUMBER), encoding="utf-8")
    llm_server.add_chat(json={"account": "〔口座番号1〕", "total": 560000})

    result = CliRunner().invoke(app, ["plan", "run", str(plan), "--json"])

    assert result.exit_code == 0, result.output
    (body,) = [json.dumps(b, ensure_ascii=False) for b in llm_server.chat_requests()]
    secrets = ["9012345678", "8098765432", "1234567", "7654321", MY_NUMBER]
    assert leaked([body], secrets) == []
    assert [v for v in ("250000", "310000") if v not in body] == []  # amounts stay
    assert [
        p for p in ("〔口座番号1〕", "〔電話番号2〕") if p not in body
    ] == []  # records were sent
    data = json.loads(result.stdout)
    assert data["outputs"]["ask"]["answer"]["account"] == "1234567"
    log = Path(data["log_path"]).read_text(encoding="utf-8")
    assert '"node_complete"' in log
    assert leaked([log], secrets) == []


@pytest.mark.parametrize(
    ("record", "kept"),
    [
        ({"口座番号": 1234567}, []),
        ({"振込口座": 1234567.0, "金額": 1200}, ["1200"]),  # a column with blanks
        ({"携帯電話": 9012345678, "件数": 3}, ['"件数": 3']),  # 090... without its 0
        ({"連絡先": 312345678}, []),
        ({"phone": 312345678, "bank_account": 1234567, "postal_code": 1500002}, []),
        ({"社員番号": 1024, "売上金額": 2048}, ['"売上金額": 2048']),
        ({"番号": int(MY_NUMBER)}, []),  # a マイナンバー by its check digit, under any key
        ({"my_number": int(MY_NUMBER), "注文番号": 20250401}, ['"注文番号": 20250401']),
    ],
)
def test_numbers_in_json_are_masked_by_their_key_or_form(
    record: dict[str, object], kept: list[str]
) -> None:
    masked = mask_json_text(Vault(), json.dumps(record, ensure_ascii=False), Counter())
    personal = [
        str(int(v)) for k, v in record.items() if k not in ("金額", "件数", "売上金額", "注文番号")
    ]
    assert leaked([masked], personal) == []
    assert [k for k in kept if k not in masked] == []
    assert json.loads(masked).keys() == record.keys()  # still JSON with the same keys


WHOLE = None  # the case's whole text is the value

FOUND: list[tuple[str, str, str | None]] = [
    ("Goto様、請求書です", "person", "Goto"),  # ごと: a native word, so a surname
    ("Kato-san, please check", "person", "Kato"),
    ("To: Goto san / cc: 経理部", "person", "Goto"),
    ("Ueda-sensei", "person", "Ueda"),
    ("Hi Mr.Ito,", "person", "Ito"),
    ("担当のAOKIさんより連絡", "person", "AOKI"),  # アオキ: 人名 一般 only
    ("Hirano様", "person", "Hirano"),  # ヒラノ: the dictionary knows a company only
    ("Oka様", "person", "Oka"),
    ("ケンタ様、ご確認ください", "person", "ケンタ"),  # けんた: a given name in hiragana
    ("さくら様", "person", "さくら"),
    ("ご担当のリクさん", "person", "リク"),  # りく: a Japanese word in katakana
    ("ご担当のコウジ 様、", "person", "コウジ"),
    ("宮崎 だいきさん", "person", "だいき"),  # the tokenizer reads だ + いき
    ("佐藤 はるとさん", "person", "はると"),
    ("C095,ハセガワ,マイ,九州,94303", "person", "ハセガワ"),
    ("C095,ハセガワ,マイ,九州,94303", "person", "マイ"),
    ("C197\tサトウ\tショウタ\t九州\t3630", "person", "サトウ"),  # read 砂糖 beside a tab
    ("C769,サトウ,ハルト,関西,362817", "person", "ハルト"),
    ("普通 123-4567", "account", "123-4567"),
    ("口座番号 1234 567", "account", "1234 567"),
    ("口座 123-1234567", "account", "123-1234567"),
    ("髙橋 美咲様、請求書です", "person", "髙橋 美咲"),  # 髙: read as 高
    ("𠮷田 優子", "person", WHOLE),
    ("署名：Ｍｉｓａｋｉ Ｈａｓｅｇａｗａ", "person", "Ｍｉｓａｋｉ Ｈａｓｅｇａｗａ"),
    ("Ｋａｔｏ－ｓａｎ", "person", "Ｋａｔｏ"),
    ("ご担当のマリア・ガルシア様", "person", "マリア・ガルシア"),
    ("misaki.hasegawa(at)example.co.jp", "email", WHOLE),
    ("m.hasegawa [at] example.co.jp", "email", WHOLE),
    ("m.hasegawa★example.co.jp（★を@に変えてください）", "email", "m.hasegawa★example.co.jp"),
    ("〒150-0002 東京都渋谷区神南1-2-3 青葉ビル 305号室", "address", WHOLE),
    ("〒150-0002 東京都渋谷区神南1-2-3 グランドメゾン渋谷 1203", "address", WHOLE),
    ("〒810-0001 福岡県福岡市中央区天神1-2-3 天神タワー 12F 1203号室", "address", WHOLE),
]


@pytest.mark.parametrize(("text", "kind", "value"), FOUND)
def test_each_leak_of_the_arrivals_generator_is_masked(
    text: str, kind: str, value: str | None
) -> None:
    assert (kind, text if value is WHOLE else value) in spans(text)


# What the README keeps visible, and what it masks on purpose, found exactly so.
EXACT: list[tuple[str, list[tuple[str, str]]]] = [
    ("Amazon Web Services様", []),
    ("Hitachi様、Adobe様、Google様", []),
    ("DRAM 8GB を 2 枚", []),  # DR is no Dr.
    ("HMR Data の件", []),
    ("みなさん、皆さま、お客様、おつかれさまです", []),
    ("ユーザー様、オーナー様、スタッフさん、バイトさん、ゲスト様", []),
    ("ソニー様、ニトリ様", []),
    # a katakana word alone before 様 that the dictionary knows as a name in either kana is masked,
    # though a company may bear it (タケダ様 is as often Mr 武田); one it knows only otherwise stays
    (
        "トヨタ様、タケダ様、クボタ様、ケンタ様",
        [("person", "トヨタ"), ("person", "タケダ"), ("person", "クボタ"), ("person", "ケンタ")],
    ),
    ("ヤマハ様、シマノ様、カシオ様、キヤノン様、コクヨ様", []),
    ("髙島屋様、Ａｍａｚｏｎ様", []),
    ("★新商品★ 4月発売 example.co.jp", []),
    ("かみさま、ほとけさま、あかちゃん、ねえさん", []),
    ("リスト,マリア", []),
    ("口座 3 件、当座 123 件", []),
    # the amount after an address stays
    (
        "〒105-0023 港区芝浦4-5-6 青葉ビル3階 1,200円",
        [("address", "〒105-0023 港区芝浦4-5-6 青葉ビル3階")],
    ),
    # a company named by its owner's full name names that person; a company's own name stays
    ("振込 ｶ)ﾔﾏﾀﾞ ﾀﾛｳ", [("person", "ﾔﾏﾀﾞ ﾀﾛｳ")]),
    ("振込 ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", []),
]


@pytest.mark.parametrize(("text", "expected"), EXACT)
def test_what_is_kept_and_what_is_masked_on_purpose(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert spans(text) == expected


KANA_LEADS = ["", "経理の", "ご担当の"]


def test_every_kana_given_name_alone_before_an_honorific_is_masked() -> None:
    """Each given name of the generator, in katakana and hiragana, after each lead and before
    each honorific (1,176 texts): the names the dictionary knows as no name in either kana
    (りく 陸, ひな 雛, れん) or not at all (はると, そうた, ハルト) were left (131 before)."""
    left = []
    for given in GIVEN_NAMES:
        for name in (given, given.translate(TO_HIRAGANA)):
            for lead, honorific in itertools.product(KANA_LEADS, KANA_HONORIFICS):
                text = f"{lead}{name}{honorific}、ご確認ください。"
                if not any(kind == "person" and name in value for kind, value in spans(text)):
                    left.append(text)
    assert left == []


# Kana words before an honorific that are no one's name, and names found whole.
KANA_BEFORE_HONORIFICS: list[tuple[str, list[tuple[str, str]]]] = [
    (
        "りくさん、ひな様、はると様、れんちゃん",
        [("person", w) for w in ("りく", "ひな", "はると", "れん")],
    ),
    ("経理のれんさん", [("person", "れん")]),  # のれん is 暖簾: the particle is no part of it
    ("経理ののりこさん", [("person", "のりこ")]),  # のりこ is a name whole
    ("田中はるとさん", [("person", "田中はると")]),  # two rules' finds joined
    ("とうさん、ねえちゃん、ありがとさん、あなたさま、こちらさま", []),  # kin, greetings, pronouns
    ("ゲストさん、テナント様、シェフさん、ユーザ様", []),  # loanwords
]


@pytest.mark.parametrize(("text", "expected"), KANA_BEFORE_HONORIFICS)
def test_kana_words_before_an_honorific(text: str, expected: list[tuple[str, str]]) -> None:
    assert spans(text) == expected
