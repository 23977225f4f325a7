"""A fifth generator: four shapes of a name the detector missed or of a word it took for one.

- ``bracketed``: surnames listed in brackets as a chart's title lists people (担当者別売上（松本・
  石川）), surnames that are places too among them; beside them lists in brackets that are no
  people (（税込・税抜）, （東京・大阪）) must stay.
- ``sama``: a given name in hiragana before さま (りくさま, ひなさま: common nouns too); the words
  honoured with さま (かみさま, みなさま, おきゃくさま, おつかれさま) must stay.
- ``desu``: a writer introducing themself by a surname in hiragana (さとうです。); sentences
  ending in an adjective or an adverb before です (そうです, うれしいです) must stay.
- ``header``: column headers naming the party of an action (発注先名, 発行元名, 仕入元名), which
  must stay, above rows whose person columns hold names, which must not.

``backoffice.make_docs(seed, per_shape, shapes, SHAPES)`` writes them, deterministic for a seed.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.privacy.backoffice import PEOPLE, Doc, Maker

__all__ = ["SHAPES"]

# surnames that are places as well (the tokenizer tags them 地名), and others
PLACE_SURNAMES = ["松本", "石川", "長野", "福井", "小松", "岡山", "前田", "上田", "松山", "秋田"]
SURNAMES = [p[0] for p in PEOPLE] + ["佐藤", "田中", "山本", "中村"]
NOT_PEOPLE = [
    ("税込", "税抜"),
    ("東京", "大阪"),
    ("月次", "年次"),
    ("本社", "支店"),
    ("現金", "預金"),
    ("上期", "下期"),
    ("売上", "原価", "粗利"),
    ("前年", "当年"),
]
CHART_LEADS = ["グラフ: 担当者別売上", "立替金の推移", "月別経費", "## 担当者別残業時間"]
CHART_LEADS += ["営業成績 "]
CHART_TAILS = ["", "の比較", " 2026年3月", "、単位: 円", "（縦軸: 金額）"]

GIVEN_HIRAGANA = [
    "りく",
    "ひな",
    "さくら",
    "つばさ",
    "ゆず",
    "そら",
    "はな",
    "かえで",
    "もも",
    "うた",
    "いぶき",
    "なぎ",
]
GIVEN_HIRAGANA += ["あおい", "ひかり", "めい", "はると", "そうた", "ゆい"]
HONOURED = ["かみさま", "ほとけさま", "みなさま", "おきゃくさま", "おつかれさま", "ごくろうさま"]
HONOURED += ["おかげさま", "あなたさま", "おかあさま", "えびすさま", "おひさま", "ごちそうさま"]
SAMA_LEADS = ["", "いつもありがとうございます。", "宛先: ", "経理部 ", "件名: 請求書送付の件 "]
SAMA_TAILS = ["、お世話になっております。", "へ", " ご確認ください。", "、よろしくお願いします。"]

SURNAMES_HIRAGANA = ["さとう", "すずき", "たなか", "わたなべ", "いとう", "やまもと", "なかむら"]
SURNAMES_HIRAGANA += ["こばやし", "かとう", "よしだ", "やまだ", "ささき", "まつもと", "いのうえ"]
NOT_INTRODUCTIONS = ["そうです", "いいです", "だめです", "むりです", "うれしいです", "たのしいです"]
NOT_INTRODUCTIONS += ["よろしいです", "けっこうです", "ちがいます", "おいしいです", "こちらです"]
DESU_LEADS = ["お疲れさまです。", "すみません、", "お世話になっております。", "", "こんにちは！"]
DESU_TAILS = ["。経費精算の締め日を教えてください", "！口座の変更方法を知りたいです", "。", "\n"]

PARTY_HEADERS = ["発注先名", "振込先名", "支払先名", "送付先名", "納品先名", "委託先名", "外注先名"]
PARTY_HEADERS += ["出向先名", "発行元名", "仕入元名", "販売元名", "製造元名", "請求先名"]
COMPANIES = ["青葉商事", "株式会社みどり電機", "星野商会", "アサヒ工業"]
PERSON_HEADERS = ["担当者", "氏名", "担当者名"]


def _bracketed(m: Maker, doc: Doc) -> None:
    doc.keep(m.r.choice(CHART_LEADS))
    if m.r.random() < 0.3:  # a list of what is no one
        items = m.r.choice(NOT_PEOPLE)
        doc.add("（").keep("・".join(items)).add("）")
    else:
        items = tuple(m.r.sample(PLACE_SURNAMES, 1) + m.r.sample(SURNAMES + PLACE_SURNAMES, 2))
        items = tuple(dict.fromkeys(items[: m.r.choice([2, 3])]))
        if len(items) < 2:
            items = ("松本", "石川")
        doc.add("（")
        for number, item in enumerate(items):
            doc.add("・" if number else "").secret(item)
        doc.add("）")
    doc.keep(m.r.choice(CHART_TAILS))


def _word_before(m: Maker, doc: Doc, word: str, words: list[str], kept: list[str]) -> None:
    """A name of ``words`` before ``word`` (さま, です), or one of the ``kept`` counterexamples."""
    leads, tails = (SAMA_LEADS, SAMA_TAILS) if word == "さま" else (DESU_LEADS, DESU_TAILS)
    doc.add(m.r.choice(leads))
    if m.r.random() < 0.35:
        doc.keep(m.r.choice(kept))
    else:
        doc.secret(m.r.choice(words)).add(word)
    doc.add(m.r.choice(tails))


def _sama(m: Maker, doc: Doc) -> None:
    _word_before(m, doc, "さま", GIVEN_HIRAGANA, HONOURED)


def _desu(m: Maker, doc: Doc) -> None:
    _word_before(m, doc, "です", SURNAMES_HIRAGANA, NOT_INTRODUCTIONS)


def _header(m: Maker, doc: Doc) -> None:
    sep = m.r.choice([",", "\t", " | "])
    party = m.r.sample(PARTY_HEADERS, 2)
    person = m.r.choice(PERSON_HEADERS)
    doc.add(sep.join([*party, "金額", person]) + "\n")
    doc.kept += [*party, person]
    for _ in range(m.r.randint(1, 3)):  # two companies, an amount, a person
        cells = [*m.r.sample(COMPANIES, 2), str(m.r.randint(1, 99) * 1000)]
        doc.kept += cells[:2]
        doc.add(sep.join(cells) + sep).secret(" ".join(m.r.choice(PEOPLE)[:2])).add("\n")


SHAPES: dict[str, Callable[[Maker, Doc], None]] = {
    "bracketed": _bracketed,
    "sama": _sama,
    "desu": _desu,
    "header": _header,
}
