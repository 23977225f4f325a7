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

The table itself is package data, ``company_forms.csv`` beside this module, kept as the banks
publish it (one row a form, in the list's order) so that it can be checked and extended
without touching code; it is read and checked once, when this module loads. :data:`FORMS` holds
every entry once, with the kanji words, the bank's abbreviation and the readings of the words
spelled out (a bank that did not abbreviate writes ``ｶﾌﾞｼｷｶﾞｲｼﾔ``). Readings and abbreviations
are stored folded (:func:`..fold.fold`). :data:`KANJI_SHORT` maps the kanji short forms
((株), ㈱, (有), (医), (一社) ...) to their entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from keiri_agent.blocks.table.names.fold import fold
from keiri_agent.documents.bundled_table import BundledTable

__all__ = ["FORMS", "FORMS_FILE", "KANJI_SHORT", "CompanyForm", "FormKind", "load_forms"]


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
    kanji_short: tuple[str, ...] = ()  # short forms written in parentheses: 株 for (株)


FORMS_FILE = "company_forms.csv"  # package data beside this module
_TABLE = BundledTable(
    __package__,
    FORMS_FILE,
    "法人略語の表",
    ("kind", "abbreviation", "name", "words", "readings", "kanji_short"),
    hint="表は 1 行に 1 つの形（kind,abbreviation,name,words,readings,kanji_short）で、"
    "略語と読みは全角の大きいカナ（ｶﾞ→ガ、ャ→ヤ）で書いてください。",
)


def load_forms(text: str) -> tuple[CompanyForm, ...]:
    """The forms of a table in :data:`FORMS_FILE`'s layout, in its row order.

    One row a form: ``kind`` (法人 / 営業所 / 事業), the bank's ``abbreviation``, ``name`` (empty:
    the first of ``words``), ``words`` and ``readings`` separated by spaces, and ``kanji_short``
    (the short forms written in parentheses, 株 for (株), separated by spaces; may be empty).
    Abbreviations and readings must be stored folded. BlockError naming the line otherwise."""
    forms = [_row_form(line, *row) for line, row in _TABLE.rows(text)]
    for what, values in (
        ("略語", [form.abbreviation for form in forms]),
        ("名前", [form.name for form in forms]),
        ("漢字の略称", [short for form in forms for short in form.kanji_short]),
    ):
        repeated = sorted({value for value in values if values.count(value) > 1})
        if repeated:
            raise _TABLE.error(None, f"{what} {', '.join(repeated)} が二度以上あります")
    return tuple(forms)


def _row_form(
    line: int, kind: str, abbreviation: str, name: str, words: str, readings: str, short: str
) -> CompanyForm:
    if kind not in {k.value for k in FormKind}:
        raise _TABLE.error(line, f"kind「{kind}」は {' / '.join(FormKind)} のどれでもありません")
    spellings, spoken = tuple(words.split()), tuple(readings.split())
    if not abbreviation or not spellings or not spoken:
        raise _TABLE.error(line, "abbreviation・words・readings のどれかが空です")
    unfolded = [text for text in (abbreviation, *spoken) if fold(text) != text]
    if unfolded:
        raise _TABLE.error(
            line, f"{', '.join(unfolded)} が全角の大きいカナ（fold した形）になっていません"
        )
    return CompanyForm(
        name or spellings[0], abbreviation, FormKind(kind), spellings, spoken, tuple(short.split())
    )


FORMS: tuple[CompanyForm, ...] = load_forms(_TABLE.text())

# Kanji short forms after NFKC (㈱ and （株） are "(株)"); "(有)" is 有限会社 etc.
KANJI_SHORT: dict[str, CompanyForm] = {
    f"({short})": form for form in FORMS for short in form.kanji_short
}
