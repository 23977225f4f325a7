"""Company names and the payer names banks write for them, for the 入金消込 tests.

Each :class:`Company` has its kanji name as a customer master holds it (株式会社山田商事,
医療法人社団 桜歯科 ...) and the true reading of the name, as the company registered it with
its bank. :func:`bank_written` writes what the payer's bank sends, the way banks do it:
half-width katakana, small kana written large, ``-`` or ``ｰ`` for ー, the 全銀協 abbreviation
of the legal form first (``ｶ)``) or last (``(ｶ``) as the form stands in the name, sometimes a
customer code first, a branch after the form in the middle (``(ｶ)ｵｵｻｶｼﾃﾝ``) or after a space,
and the whole cut at 48 characters.

The generator is written apart from ``keiri_agent.blocks.table.names`` (its own abbreviation
table, its own half-width conversion) so the tests do not check the code against itself.
"""

from __future__ import annotations

import random
import unicodedata
from dataclasses import dataclass

__all__ = [
    "ABBREVIATIONS",
    "Company",
    "bank_written",
    "companies",
    "half_width",
    "similar_companies",
]

FIELD_CHARS = 48  # 振込依頼人名 in the 全銀 formats

# The 全銀協 abbreviations of the forms used here (half-width, as banks write them).
ABBREVIATIONS = {
    "株式会社": "ｶ",
    "有限会社": "ﾕ",
    "合同会社": "ﾄﾞ",
    "合資会社": "ｼ",
    "合名会社": "ﾒ",
    "医療法人": "ｲ",
    "医療法人社団": "ｲ",
    "社会福祉法人": "ﾌｸ",
    "一般社団法人": "ｼﾔ",
    "公益財団法人": "ｻﾞｲ",
    "学校法人": "ｶﾞｸ",
    "宗教法人": "ｼﾕｳ",
    "特定非営利活動法人": "ﾄｸﾋ",
    "税理士法人": "ｾﾞｲ",
    "弁護士法人": "ﾍﾞﾝ",
    "農事組合法人": "ﾉｳ",
    "相互会社": "ｿ",
}

# Name stems and business words with their true readings (kanji, reading).
STEMS = [
    ("山田", "ヤマダ"), ("山本", "ヤマモト"), ("山中", "ヤマナカ"), ("山口", "ヤマグチ"),
    ("田中", "タナカ"), ("中田", "ナカタ"), ("高橋", "タカハシ"), ("高田", "タカダ"),
    ("佐藤", "サトウ"), ("加藤", "カトウ"), ("斎藤", "サイトウ"), ("伊藤", "イトウ"),
    ("鈴木", "スズキ"), ("白鳥", "シラトリ"), ("大野", "オオノ"), ("小野", "オノ"),
    ("青葉", "アオバ"), ("桜井", "サクライ"), ("北東", "ホクトウ"), ("東海", "トウカイ"),
    ("大空", "オオゾラ"), ("松本", "マツモト"), ("井上", "イノウエ"), ("木村", "キムラ"),
    ("清水", "シミズ"), ("森田", "モリタ"), ("池田", "イケダ"), ("橋本", "ハシモト"),
    ("石川", "イシカワ"), ("前田", "マエダ"), ("藤田", "フジタ"), ("岡田", "オカダ"),
    ("後藤", "ゴトウ"), ("長谷川", "ハセガワ"), ("村上", "ムラカミ"), ("近藤", "コンドウ"),
    ("坂本", "サカモト"), ("遠藤", "エンドウ"), ("青木", "アオキ"), ("朝日", "アサヒ"),
    ("三和", "サンワ"), ("東洋", "トウヨウ"), ("大和", "ヤマト"), ("平和", "ヘイワ"),
    ("河野", "コウノ"), ("角田", "ツノダ"), ("新田", "ニッタ"), ("北斗", "ホクト"),
    ("ヤマダ", "ヤマダ"), ("サクラ", "サクラ"), ("ひかり", "ヒカリ"), ("みどり", "ミドリ"),
]  # fmt: skip
WORDS = [
    ("商事", "ショウジ"), ("商店", "ショウテン"), ("商会", "ショウカイ"), ("産業", "サンギョウ"),
    ("工業", "コウギョウ"), ("興業", "コウギョウ"), ("建設", "ケンセツ"), ("運輸", "ウンユ"),
    ("物産", "ブッサン"), ("製作所", "セイサクショ"), ("電機", "デンキ"), ("電気", "デンキ"),
    ("技研", "ギケン"), ("食品", "ショクヒン"), ("不動産", "フドウサン"), ("印刷", "インサツ"),
    ("設計", "セッケイ"), ("工務店", "コウムテン"), ("通商", "ツウショウ"), ("精機", "セイキ"),
    ("化学", "カガク"), ("物流", "ブツリュウ"), ("企画", "キカク"), ("薬品", "ヤクヒン"),
    ("ソフトウェア", "ソフトウェア"), ("システムサービス", "システムサービス"),
]  # fmt: skip
# Organisations that are not companies, with their forms.
OTHERS = [
    ("医療法人社団", "桜歯科", "サクラシカ"),
    ("医療法人", "青葉会", "アオバカイ"),
    ("学校法人", "青葉学園", "アオバガクエン"),
    ("社会福祉法人", "ひかり会", "ヒカリカイ"),
    ("特定非営利活動法人", "まちづくりサポート", "マチヅクリサポート"),
    ("一般社団法人", "日本経理協会", "ニホンケイリキョウカイ"),
    ("公益財団法人", "大空文化財団", "オオゾラブンカザイダン"),
    ("宗教法人", "光明寺", "コウミョウジ"),
    ("税理士法人", "みらい会計", "ミライカイケイ"),
    ("弁護士法人", "青木法律事務所", "アオキホウリツジムショ"),
    ("農事組合法人", "みどりファーム", "ミドリファーム"),
    ("相互会社", "朝日生命", "アサヒセイメイ"),
    ("株式会社", "東日本ロジスティクスソリューションズグループホールディングスアンドパートナーズ",
     "ヒガシニホンロジスティクスソリューションズグループホールディングスアンドパートナーズ"),
    ("株式会社", "北海道グリーンエネルギーマネジメントサービス",
     "ホッカイドウグリーンエネルギーマネジメントサービス"),
    ("有限会社", "九州ファインケミカルテクノロジー研究所",
     "キュウシュウファインケミカルテクノロジーケンキュウジョ"),
]  # fmt: skip
COMPANY_FORMS = ["株式会社"] * 7 + ["有限会社"] * 2 + ["合同会社", "合資会社", "合名会社"]
BRANCHES = ["ｵｵｻｶｼﾃﾝ", "ﾄｳｷﾖｳｼｼﾔ", "ﾅｺﾞﾔｴｲｷﾞﾖｳｼﾖ", "ｹｲﾘﾌﾞ"]


@dataclass(frozen=True)
class Company:
    code: str
    name: str  # as the master holds it: 株式会社山田商事
    core: str  # the name without its form: 山田商事
    reading: str  # the true reading of ``core`` (katakana, small kana as spoken)
    form: str  # 株式会社, 医療法人社団 ...
    form_first: bool


def companies(seed: int = 35) -> list[Company]:
    """Every stem with every business word (homophones included), and the other bodies."""
    rng = random.Random(seed)
    out: list[Company] = []
    for stem, stem_reading in STEMS:
        for word, word_reading in WORDS:
            out.append(_company(len(out), stem + word, stem_reading + word_reading, rng))
    for form, core, reading in OTHERS:
        out.append(_company(len(out), core, reading, rng, form=form))
    return out


def similar_companies(seed: int = 35) -> list[Company]:
    """The companies whose stem is a 山 name: the hardest to tell apart (山田商事 / 山田商店 ...)."""
    return [c for c in companies(seed) if c.core.startswith(("山", "ヤマ"))]


def _company(number: int, core: str, reading: str, rng: random.Random, form: str = "") -> Company:
    form = form or rng.choice(COMPANY_FORMS)
    first = rng.random() < 0.6 if form in ("株式会社", "有限会社", "合同会社") else True
    name = f"{form}{core}" if first else f"{core}{form}"
    if rng.random() < 0.2:  # masters write the form in many ways
        name = name.replace("株式会社", rng.choice(["(株)", "㈱", "（株）"]))
    return Company(f"{1001 + number}", name, core, reading, form, first)


def half_width(katakana: str) -> str:
    """Full-width katakana → the bank's half-width: small kana large, ー as ``-``."""
    out = []
    for ch in katakana:
        if ch in _SMALL:
            ch = _SMALL[ch]
        if ch == "ー":
            out.append("-")
            continue
        decomposed = unicodedata.normalize("NFD", ch)
        base, marks = decomposed[0], decomposed[1:]
        out.append(_HALF.get(base, base))
        out.extend({"\u3099": "ﾞ", "\u309a": "ﾟ"}[m] for m in marks)
    return "".join(out)


def bank_written(company: Company, rng: random.Random) -> str:
    """What the payer's bank writes for ``company``, in one of the ways banks do it."""
    abbreviation = ABBREVIATIONS[company.form]
    kana = half_width(company.reading)
    if rng.random() < 0.3:
        kana = kana.replace("-", "ｰ")
    style = rng.random()
    if style < 0.15:  # a branch written after the form in the middle
        text = f"{kana}({abbreviation}){rng.choice(BRANCHES)}"
    elif company.form_first:
        text = f"{abbreviation}){kana}"
        if style < 0.25:  # a branch after a space
            text += " " + rng.choice(BRANCHES)
    else:
        text = f"{kana}({abbreviation}"
    if rng.random() < 0.2:
        text = company.code + text
    return text[:FIELD_CHARS]


_SMALL = dict(zip("ァィゥェォッャュョヮヵヶ", "アイウエオツヤユヨワカケ", strict=True))
# Full-width katakana → half-width, from NFKC's own mapping of the half-width block.
_HALF = {unicodedata.normalize("NFKC", chr(c)): chr(c) for c in range(0xFF66, 0xFF9E)}
