"""Company forms in names: the 全銀協 abbreviations a bank writes, and the words a master holds.

A payer's bank replaces the legal form of a company by a kana abbreviation whose parentheses
tell where the form stood (全国銀行協会 の法人略語, as the banks publish it for their customers:
e.g. 京葉銀行「ご利用可能文字・法人略語」 https://www.keiyobank.co.jp/alpha_dbank/internet/typing.html,
and the same table with 医療法人社団, 一般社団法人, 地方独立行政法人, 社会保険労務士法人,
管理組合法人 and the 事業略語 in a municipality's 別表(第5条関係); the position rule with
厚生労働省's examples): ``ｶ)ﾛｳﾄﾞｳｼﾖｳｼﾞ`` for 株式会社労働商事 (form first),
``ﾛｳﾄﾞｳｼﾖｳｼﾞ(ｶ`` for 労働商事株式会社 (form last), ``ﾛｳﾄﾞｳｼﾖｳｼﾞ(ｶ)ｶｽﾐｶﾞｾｷｼｼﾔ`` for
労働商事株式会社霞が関支社 (form in the middle). The list has three parts:

- 法人略語 (legal forms: 株式会社 ｶ, 有限会社 ﾕ, 合同会社 ﾄﾞ, 医療法人 ｲ, 社会福祉法人 ﾌｸ ...);
- 営業所略語 (営業所 ｴｲ, 出張所 ｼﾕﾂ);
- 事業略語 (business words written short inside the name: 農業協同組合 ﾉｳｷﾖｳ,
  健康保険組合 ｹﾝﾎﾟ, 連合会 ﾚﾝ ...).

:data:`FORMS` holds every entry once, with the kanji words, the bank's abbreviation and the
readings of the words spelled out (a bank that did not abbreviate writes ``ｶﾌﾞｼｷｶﾞｲｼﾔ``).
Readings and abbreviations are stored folded (:func:`..fold.fold`). :data:`KANJI_SHORT` maps
the kanji short forms ((株), ㈱, (有), (医), (一社) ...) to their entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["FORMS", "KANJI_SHORT", "CompanyForm", "FormKind"]


class FormKind(StrEnum):
    LEGAL = "法人"  # 法人略語: removed from a name wherever it stands
    OFFICE = "営業所"  # 営業所略語
    BUSINESS = "事業"  # 事業略語: part of the name, written short by banks


@dataclass(frozen=True)
class CompanyForm:
    name: str  # the word a person reads in reports: 株式会社, 医療法人 ...
    abbreviation: str  # the bank's abbreviation, folded: カ, シヤ, ノウキヨウ
    kind: FormKind
    words: tuple[str, ...]  # kanji spellings of this form (longest first when searched)
    readings: tuple[str, ...]  # the words spelled out in kana, folded


def _form(
    kind: FormKind, abbreviation: str, words: str, readings: str, name: str = ""
) -> CompanyForm:
    spellings = tuple(words.split())
    return CompanyForm(name or spellings[0], abbreviation, kind, spellings, tuple(readings.split()))


_L, _O, _B = FormKind.LEGAL, FormKind.OFFICE, FormKind.BUSINESS
FORMS: tuple[CompanyForm, ...] = (
    # 1. 法人略語
    _form(_L, "カ", "株式会社", "カブシキガイシヤ カブシキカイシヤ"),
    _form(_L, "ユ", "有限会社", "ユウゲンガイシヤ ユウゲンカイシヤ"),
    _form(_L, "メ", "合名会社", "ゴウメイガイシヤ ゴウメイカイシヤ"),
    _form(_L, "シ", "合資会社", "ゴウシガイシヤ ゴウシカイシヤ"),
    _form(_L, "ド", "合同会社", "ゴウドウガイシヤ ゴウドウカイシヤ"),
    _form(
        _L,
        "イ",
        "医療法人 医療法人社団 医療法人財団 社会医療法人",
        "イリヨウホウジン イリヨウホウジンシヤダン イリヨウホウジンザイダン "
        "シヤカイイリヨウホウジン",
    ),
    _form(
        _L,
        "ザイ",
        "財団法人 一般財団法人 公益財団法人",
        "ザイダンホウジン イツパンザイダンホウジン コウエキザイダンホウジン",
    ),
    _form(
        _L,
        "シヤ",
        "社団法人 一般社団法人 公益社団法人",
        "シヤダンホウジン イツパンシヤダンホウジン コウエキシヤダンホウジン",
    ),
    _form(_L, "シユウ", "宗教法人", "シユウキヨウホウジン"),
    _form(_L, "ガク", "学校法人", "ガツコウホウジン"),
    _form(_L, "フク", "社会福祉法人", "シヤカイフクシホウジン"),
    _form(_L, "ソ", "相互会社", "ソウゴガイシヤ ソウゴカイシヤ"),
    _form(_L, "ホゴ", "更生保護法人", "コウセイホゴホウジン"),
    _form(_L, "トクヒ", "特定非営利活動法人 NPO法人", "トクテイヒエイリカツドウホウジン"),
    _form(_L, "ドク", "独立行政法人", "ドクリツギヨウセイホウジン"),
    _form(_L, "チドク", "地方独立行政法人", "チホウドクリツギヨウセイホウジン"),
    _form(_L, "ベン", "弁護士法人", "ベンゴシホウジン"),
    _form(
        _L,
        "チユウ",
        "有限責任中間法人 無限責任中間法人",
        "ユウゲンセキニンチユウカンホウジン ムゲンセキニンチユウカンホウジン",
        name="中間法人",
    ),
    _form(_L, "ギヨ", "行政書士法人", "ギヨウセイシヨシホウジン"),
    _form(_L, "シホウ", "司法書士法人", "シホウシヨシホウジン"),
    _form(_L, "ゼイ", "税理士法人", "ゼイリシホウジン"),
    _form(
        _L,
        "ダイ",
        "国立大学法人 公立大学法人",
        "コクリツダイガクホウジン コウリツダイガクホウジン",
        name="大学法人",
    ),
    _form(_L, "ノウ", "農事組合法人", "ノウジクミアイホウジン"),
    _form(_L, "カンリ", "管理組合法人", "カンリクミアイホウジン"),
    _form(_L, "ロウム", "社会保険労務士法人", "シヤカイホケンロウムシホウジン"),
    # 2. 営業所略語
    _form(_O, "エイ", "営業所", "エイギヨウシヨ"),
    _form(_O, "シユツ", "出張所", "シユツチヨウシヨ シユツチヨウジヨ"),
    # 3. 事業略語
    _form(_B, "レン", "連合会", "レンゴウカイ"),
    _form(
        _B,
        "キヨウサイレン",
        "共済農業協同組合連合会",
        "キヨウサイノウギヨウキヨウドウクミアイレンゴウカイ",
    ),
    _form(_B, "キヨウクミ", "協同組合", "キヨウドウクミアイ"),
    _form(_B, "ギヨレン", "漁業協同組合連合会", "ギヨギヨウキヨウドウクミアイレンゴウカイ"),
    _form(_B, "カイジヨウ", "海上火災保険", "カイジヨウカサイホケン"),
    _form(_B, "シヤキヨウ", "社会福祉協議会", "シヤカイフクシキヨウギカイ"),
    _form(_B, "ケンポ", "健康保険組合", "ケンコウホケンクミアイ"),
    _form(_B, "キヨウサイ", "共済組合", "キヨウサイクミアイ"),
    _form(_B, "コクホレン", "国民健康保険団体連合会", "コクミンケンコウホケンダンタイレンゴウカイ"),
    _form(_B, "セイメイ", "生命保険", "セイメイホケン"),
    _form(_B, "コウネン", "厚生年金基金", "コウセイネンキンキキン"),
    _form(_B, "カサイ", "火災海上保険", "カサイカイジヨウホケン"),
    _form(_B, "ロウクミ", "労働組合", "ロウドウクミアイ"),
    _form(_B, "コクホ", "国民健康保険組合", "コクミンケンコウホケンクミアイ"),
    _form(_B, "シヨクハンキヨウ", "食糧販売協同組合", "シヨクリヨウハンバイキヨウドウクミアイ"),
    _form(
        _B,
        "シヤホ",
        "社会保険診療報酬支払基金",
        "シヤカイホケンシンリヨウホウシユウシハライキキン",
    ),
    _form(_B, "ノウキヨウレン", "農業協同組合連合会", "ノウギヨウキヨウドウクミアイレンゴウカイ"),
    _form(_B, "ジユウクミ", "従業員組合", "ジユウギヨウインクミアイ"),
    _form(_B, "セイキヨウ", "生活協同組合", "セイカツキヨウドウクミアイ"),
    _form(
        _B,
        "コツキヨウレン",
        "国家公務員共済組合連合会",
        "コツカコウムインキヨウサイクミアイレンゴウカイ",
    ),
    _form(
        _B,
        "ケイザイレン",
        "経済農業協同組合連合会",
        "ケイザイノウギヨウキヨウドウクミアイレンゴウカイ",
    ),
    _form(_B, "ギヨキヨウ", "漁業協同組合", "ギヨギヨウキヨウドウクミアイ"),
    _form(_B, "ノウキヨウ", "農業協同組合", "ノウギヨウキヨウドウクミアイ"),
)


def _by_name(name: str) -> CompanyForm:
    return next(form for form in FORMS if form.name == name)


# Kanji short forms after NFKC (㈱ and （株） are "(株)"); "(有)" is 有限会社 etc.
KANJI_SHORT: dict[str, CompanyForm] = {
    f"({short})": _by_name(name)
    for short, name in (
        ("株", "株式会社"),
        ("有", "有限会社"),
        ("名", "合名会社"),
        ("資", "合資会社"),
        ("同", "合同会社"),
        ("合", "合同会社"),
        ("医", "医療法人"),
        ("財", "財団法人"),
        ("一財", "財団法人"),
        ("公財", "財団法人"),
        ("社", "社団法人"),
        ("一社", "社団法人"),
        ("公社", "社団法人"),
        ("宗", "宗教法人"),
        ("学", "学校法人"),
        ("福", "社会福祉法人"),
        ("相", "相互会社"),
        ("特非", "特定非営利活動法人"),
        ("独", "独立行政法人"),
        ("地独", "地方独立行政法人"),
        ("弁", "弁護士法人"),
        ("税", "税理士法人"),
        ("司", "司法書士法人"),
        ("大", "大学法人"),
        ("農", "農事組合法人"),
        ("協", "協同組合"),
        ("労", "労働組合"),
    )
}
