"""A third fresh generator for the masking property: personal data in the shapes it arrives in
that ``backoffice.py`` and ``paperwork.py`` leave out (issue 37, second pass).

- records as tools and plans pass them (a table read into records, a tool's JSON result): an
  account, a mobile number that lost its leading 0, a 社員番号, a 郵便番号, a マイナンバー and a
  card number as JSON *numbers*, a column with blanks as ``1234567.0``, English keys;
- surnames in roman letters before an honorific, as mails to and from Japanese offices write
  them (``Goto様``, ``Kato-san``, ``Mr.Ito``, ``Ueda-sensei``), drawn from the hundred commonest
  surnames (some of which Sudachi reads as other words: Goto ごと, Oka おか, Kon こん);
- a given name alone in katakana or hiragana before 様 / さん / ちゃん (``ケンタ様``,
  ``みさき さん``, ``さくら様``);
- numbers in full width, with 長音 for hyphens, in two groups, or spaced out (``０９０ー１２３４ー
  ５６７８``, ``口座番号 1234 567``, ``普通 123-4567``);
- rows of a CSV or TSV without a header: a name in one cell, or surname and given name in two
  (``C012,ハセガワ,ミサキ,関東,12000``);
- 〒 addresses that go on with a building, a floor and a room (``青葉ビル3階 301号室``,
  ``グランドメゾン渋谷 1203``);
- a person's name after a bank's company mark with a space inside (``ｶ)ﾔﾏﾀﾞ ﾀﾛｳ``): masked by
  the README's policy (a company named by its owner's full name names that person);
- names as people type them: a surname in the variant kanji its holder keeps (``髙橋``,
  ``𠮷田``), a name in full-width roman letters (``Ｍｉｓａｋｉ Ｈａｓｅｇａｗａ``), a foreign
  name in katakana (``マリア・ガルシア様``), and an e-mail address with its at sign hidden from
  harvesters (``misaki.hasegawa(at)example.co.jp``, ``★``).

Beside them, what must reach the model unchanged: amounts, counts and order numbers (also as
JSON numbers), company names before 様 (``Amazon様``, ``ソニー様``), words before 様 / さん that
are no name (``お客様``, ``みなさん``, ``ユーザー様``). Deterministic for a seed.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from tests.privacy.backoffice import Doc, Maker, half_kana
from tests.support.personal import luhn_valid, my_number_valid

__all__ = ["GIVEN_NAMES", "SHAPES", "SURNAMES", "make_docs"]

# The hundred commonest surnames, in Hepburn as passports and mail signatures write them.
SURNAMES = [
    "Sato",
    "Suzuki",
    "Takahashi",
    "Tanaka",
    "Ito",
    "Watanabe",
    "Yamamoto",
    "Nakamura",
    "Kobayashi",
    "Kato",
    "Yoshida",
    "Yamada",
    "Sasaki",
    "Yamaguchi",
    "Matsumoto",
    "Inoue",
    "Kimura",
    "Hayashi",
    "Shimizu",
    "Yamazaki",
    "Mori",
    "Abe",
    "Ikeda",
    "Hashimoto",
    "Yamashita",
    "Ishikawa",
    "Nakajima",
    "Maeda",
    "Fujita",
    "Ogawa",
    "Goto",
    "Okada",
    "Hasegawa",
    "Murakami",
    "Kondo",
    "Ishii",
    "Saito",
    "Sakamoto",
    "Endo",
    "Aoki",
    "Fujii",
    "Nishimura",
    "Fukuda",
    "Ota",
    "Miura",
    "Fujiwara",
    "Okamoto",
    "Matsuda",
    "Nakagawa",
    "Nakano",
    "Harada",
    "Ono",
    "Tamura",
    "Takeuchi",
    "Kaneko",
    "Wada",
    "Nakayama",
    "Ishida",
    "Ueda",
    "Morita",
    "Hara",
    "Shibata",
    "Sakai",
    "Kudo",
    "Yokoyama",
    "Miyazaki",
    "Miyamoto",
    "Uchida",
    "Takagi",
    "Ando",
    "Taniguchi",
    "Ohno",
    "Maruyama",
    "Imai",
    "Takada",
    "Fujimoto",
    "Takeda",
    "Murata",
    "Ueno",
    "Sugiyama",
    "Masuda",
    "Sugawara",
    "Hirano",
    "Kojima",
    "Otsuka",
    "Chiba",
    "Kubo",
    "Matsui",
    "Iwasaki",
    "Sakurai",
    "Kinoshita",
    "Noguchi",
    "Matsuo",
    "Kikuchi",
    "Nomura",
    "Arai",
    "Oka",
    "Kon",
]
# Given names as parents choose them (in katakana; each is written in hiragana too).
GIVEN_NAMES = [
    "ケンタ",
    "ショウタ",
    "ダイキ",
    "ユウト",
    "ハルト",
    "ソウタ",
    "リク",
    "レン",
    "タクミ",
    "ヒロシ",
    "ケンジ",
    "コウジ",
    "タロウ",
    "ミサキ",
    "サクラ",
    "ユイ",
    "アオイ",
    "ヒナ",
    "ハルカ",
    "ミキ",
    "ユミ",
    "ケイコ",
    "ハナコ",
    "アヤ",
    "マイ",
    "ナナ",
    "リナ",
    "メグミ",
]
ROMAJI_HONORIFICS = ["様", " 様", "さん", "-san", " san", "-sama", "-sensei", "殿"]
KANA_HONORIFICS = ["様", " 様", "　様", "さん", " さん", "ちゃん", "殿"]
COMPANIES = ["Amazon様", "Google様", "Hitachi様", "Adobe様", "Sony様", "ソニー様", "ニトリ様"]
NOT_NAMES = ["お客様", "皆さま", "みなさん", "ユーザー様", "オーナー様", "おつかれさまです"]
PLACES = [("東京都", "渋谷区神南"), ("大阪府", "大阪市北区中之島"), ("福岡県", "福岡市中央区天神")]
BUILDINGS = ["青葉ビル", "グランドメゾン渋谷", "コーポ山下", "サンハイツ", "天神タワー"]
_HIRAGANA = {code: code - 0x60 for code in range(ord("ァ"), ord("ヶ") + 1)}
_WIDE = str.maketrans("0123456789-", "０１２３４５６７８９ー")


def _records(m: Maker, doc: Doc) -> None:
    """A tool's JSON result: personal numbers as JSON numbers, business numbers beside them."""
    mobile = int(f"{m.r.choice('789')}0{m.digits(8)}")  # 090... read as a number: no 0
    account = int(f"{m.r.randint(1, 9)}{m.digits(6)}")
    my_number = int(m.with_check(f"{m.r.randint(1, 9)}{m.digits(10)}", my_number_valid))
    card = int(m.with_check(f"4{m.digits(14)}", luhn_valid))
    employee = m.r.randint(10_000, 99_999)
    postal = m.r.randint(1_000_000, 9_999_999)
    amount = m.r.randint(1_000, 9_999_999)
    order = int(f"2025{m.digits(4)}")
    keys = m.r.choice(
        [
            ("携帯電話", "口座番号", "マイナンバー", "カード番号", "社員番号", "郵便番号"),
            ("phone", "bank_account", "my_number", "card_number", "employee_id", "postal_code"),
            ("連絡先", "振込口座", "個人番号", "クレジットカード", "従業員番号", "〒"),
        ]
    )
    record: dict[str, object] = {"顧客ID": f"C{m.digits(3)}"}
    values = (mobile, account, my_number, card, employee, postal)
    for key, value in zip(keys, values, strict=True):
        blank = key in ("口座番号", "bank_account") and m.r.random() < 0.5
        record[key] = float(value) if blank else value  # a column with blanks: 1234567.0
    record.update({"売上金額": amount, "件数": m.r.randint(1, 40), "注文番号": order})
    text = json.dumps([record], ensure_ascii=False, indent=m.r.choice([None, 2]))
    doc.add(text)
    doc.secrets += [str(v) for v in values]
    doc.kept += [str(amount), str(order)]


def _romaji(m: Maker, doc: Doc) -> None:
    name = m.r.choice(SURNAMES)
    form = m.r.randrange(4)
    if form == 0:
        honorific = m.r.choice(ROMAJI_HONORIFICS)
        doc.add("いつもお世話になっております。").secret(name).add(f"{honorific}、請求書を")
    elif form == 1:
        doc.add(m.r.choice(["Dear ", "Hi "])).add(m.r.choice(["Mr. ", "Ms. ", "Mr.", "Mrs "]))
        doc.secret(name).add(",\nPlease find the invoice attached.")
    elif form == 2:
        doc.add("To: ").secret(name).add(m.r.choice(["-san", " san", "様"])).add(" / cc: 経理部")
    else:
        doc.add("担当の").secret(name.upper()).add(m.r.choice(["様", "さん"])).add("より連絡")
    doc.add("。").keep(m.r.choice(COMPANIES)).add(" 宛の請求 ")
    doc.keep(f"{m.r.randint(1, 999)},{m.digits(3)}円")


def _kana_given(m: Maker, doc: Doc) -> None:
    name = m.r.choice(GIVEN_NAMES)
    if m.r.random() < 0.5:
        name = name.translate(_HIRAGANA)
    doc.add(m.r.choice(["", "経理の", "ご担当の"])).secret(name).add(m.r.choice(KANA_HONORIFICS))
    doc.add("、ご確認ください。").keep(m.r.choice(NOT_NAMES)).add("へのお知らせ ")
    doc.keep(f"{m.r.randint(1, 99)},{m.digits(3)}円")


def _wide_numbers(m: Maker, doc: Doc) -> None:
    mobile = f"0{m.r.choice('789')}0-{m.digits(4)}-{m.digits(4)}"
    doc.add(m.r.choice(["携帯：", "連絡先 ", "TEL "])).secret(mobile.translate(_WIDE))
    account = m.digits(7)
    form = m.r.randrange(3)
    if form == 0:
        doc.add("、口座番号 ").secret(f"{account[:4]} {account[4:]}")
    elif form == 1:
        doc.add("、普通 ").secret(f"{account[:3]}-{account[3:]}")
    else:
        doc.add("、口座 ").secret(f"{m.digits(3)}-{account}")  # 店番-口座番号
    mine = m.with_check(f"{m.r.randint(1, 9)}{m.digits(10)}", my_number_valid)
    gap = m.r.choice([" ", "　", "  ", "－", "ー"])
    doc.add("、個人番号 ").secret(m.wide(gap.join((mine[:4], mine[4:8], mine[8:]))))
    doc.add("、請求額 ").keep(f"{m.r.randint(1, 99)},{m.digits(3)}").add(" 円")


def _headerless(m: Maker, doc: Doc) -> None:
    sep = m.r.choice([",", "\t"])
    for _ in range(m.r.randint(2, 4)):
        surname = m.r.choice(["長谷川", "山田", "田中", "佐藤", "井上", "中村", "宮崎", "木下"])
        kana = m.r.choice(["ハセガワ", "ヤマダ", "タナカ", "サトウ", "イノウエ", "ナカムラ"])
        given = m.r.choice(GIVEN_NAMES)
        form = m.r.randrange(4)
        cells: list[str] = [f"C{m.digits(3)}"]
        if form == 0:
            cells += [kana, given]
            doc.secrets += [kana, given]
        elif form == 1:
            cells += [half_kana(f"{kana} {given}")]
            doc.secrets += [cells[-1]]
        elif form == 2:
            cells += [f"{kana} {given}"]
            doc.secrets += [kana, given]
        else:
            cells += [f"{surname} {given.translate(_HIRAGANA)}さん"]
            doc.secrets += [surname, given.translate(_HIRAGANA)]
        amount = str(m.r.randint(1_000, 999_999))
        cells += [m.r.choice(["関東", "関西", "九州"]), amount]
        doc.kept.append(amount)
        doc.add(sep.join(cells) + "\n")


def _address(m: Maker, doc: Doc) -> None:
    pref, town = m.r.choice(PLACES)
    street = f"{town}{m.r.randint(1, 9)}-{m.r.randint(1, 30)}-{m.r.randint(1, 20)}"
    building = m.r.choice(BUILDINGS)
    floor = m.r.choice(["", f"{m.r.randint(2, 20)}階", f"{m.r.randint(2, 20)}F"])
    room = m.r.choice([f" {m.r.randint(101, 1205)}号室", f" {m.r.randint(101, 1205)}", ""])
    postal = f"〒{m.digits(3)}-{m.digits(4)}"
    whole = f"{postal} {pref}{street} {building}{(' ' + floor) if floor else ''}{room}"
    doc.add("送付先：").secret(whole, street, building + floor + room.strip())
    doc.add("\n合計 ").keep(f"{m.r.randint(1, 99)},{m.digits(3)}").add(" 円（税込）")


def _company_person(m: Maker, doc: Doc) -> None:
    kana = half_kana(f"{m.r.choice(['ヤマダ', 'タナカ', 'サトウ'])} {m.r.choice(GIVEN_NAMES)}")
    date = f"2025/0{m.r.randint(1, 9)}/{m.r.randint(10, 28)}"
    doc.keep(date).add(",振込 ｶ)").secret(kana).add(",").keep(str(m.r.randint(1_000, 99_999)))
    doc.add("\n").keep(date).add(",振込 ").keep("ｶ)ｱｵﾊﾞｼﾖｳｼﾞ").add(",12000\n")


# Surnames in the variant kanji their holders keep (人名の異体字), given names, foreign names.
VARIANT_SURNAMES = ["髙橋", "𠮷田", "濵田", "栁田", "德永", "山﨑", "渡邉", "渡邊"]
KANJI_GIVEN = ["美咲", "健太", "優子", "大輝", "恵子", "浩二"]
FOREIGN = ["マリア・ガルシア", "ジョン・スミス", "グエン・ヴァン・アン", "キム・ミンジュ"]
_FULL_WIDTH = {code: code + 0xFEE0 for code in range(ord("A"), ord("z") + 1) if chr(code).isalpha()}


def _typed(m: Maker, doc: Doc) -> None:
    """Names and addresses as people type them to hide or keep them: a variant kanji, a full-width
    romaji name, a foreign name in katakana, an e-mail address with its at sign hidden."""
    form = m.r.randrange(4)
    if form == 0:
        surname, given = m.r.choice(VARIANT_SURNAMES), m.r.choice(KANJI_GIVEN)
        doc.add("担当：").secret(f"{surname} {given}", surname).add(m.r.choice(["様", "", " 様"]))
    elif form == 1:
        surname, given = m.r.choice(SURNAMES), m.r.choice(["Misaki", "Kenta", "Yuko", "Daiki"])
        written = f"{given} {surname}".translate(_FULL_WIDTH)
        doc.add("署名：").secret(written, surname.translate(_FULL_WIDTH))
    elif form == 2:
        doc.add("ご担当の").secret(m.r.choice(FOREIGN)).add(m.r.choice(["様", "さん", " 様"]))
    else:
        local = f"{m.r.choice(SURNAMES).lower()}.{m.r.choice(['misaki', 'kenta'])}"
        at = m.r.choice(["(at)", " [at] ", "（アット）", "★"])
        doc.add("連絡は ").secret(f"{local}{at}example.co.jp").add(" まで（★は@に）")
    doc.add("。").keep(m.r.choice(COMPANIES)).add(" 請求 ").keep(
        f"{m.r.randint(1, 99)},{m.digits(3)}円"
    )


SHAPES: dict[str, Callable[[Maker, Doc], None]] = {
    "records": _records,
    "romaji": _romaji,
    "kana_given": _kana_given,
    "wide_numbers": _wide_numbers,
    "headerless": _headerless,
    "address": _address,
    "company_person": _company_person,
    "typed": _typed,
}


def make_docs(seed: int, per_shape: int, shapes: list[str] | None = None) -> list[Doc]:
    m = Maker(seed)
    docs: list[Doc] = []
    for shape in shapes or list(SHAPES):
        for _ in range(per_shape):
            doc = Doc(shape)
            SHAPES[shape](m, doc)
            docs.append(doc)
    return docs
