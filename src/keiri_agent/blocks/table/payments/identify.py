"""Who paid: a bank line's customer from what the line says, or the reason nobody can tell.

The evidence, strongest first:

1. an invoice number or a customer code written in the EDI information or in the payer name
   (``1012ｶ)ｱｵﾊﾞｼﾖｳｼﾞ``, EDI ``INV-20260012``): it decides, unless the name says another
   customer;
2. a learned payer name (a person confirmed it once: ``ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ`` pays for 山田商事),
   met as a customer's name is (:meth:`.directory.Directory.learned`), as written or without
   the bank's words;
3. the name, compared with the master's 取引先名カナ or the reading of 取引先名
   (:mod:`keiri_agent.blocks.table.names`): one customer of the best rank decides. A name that
   meets no customer as written is compared again without the bank's words written into the
   field (``ﾌﾘｺﾐ ｲﾉｳｴ ﾏﾕﾐ``, ``ﾃﾞﾝｼﾝｶ)ｱｵﾊﾞｼﾖｳｼﾞ``: :mod:`keiri_agent.bank_words`); the name as
   written comes first, so a customer whose name begins with such a word is still found.

Nothing is guessed. Two customers named by the evidence (two codes, an invoice of one customer
and a name of another, a learned name against the name of another customer), two customers of
the best name rank (山田工業 and 山田興業 both read ヤマダコウギヨウ), a name one kana apart or a
customer's name followed by words that are no branch (``ｶ)ｱｵﾊﾞｼﾖｳｼﾞ ﾘｰｽ``: proposals) give an
:class:`Identity` with candidates and the reason, for a person to decide.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from keiri_agent.blocks.table.names import Match, MatchKind, NameSource, PayerName, best_matches
from keiri_agent.blocks.table.names.keys import MIN_CODE_DIGITS
from keiri_agent.blocks.table.names.reading import MAX_CACHED_NAMES
from keiri_agent.blocks.table.payments.book import OpenInvoices, identifier
from keiri_agent.blocks.table.payments.directory import Directory, bare_payer
from keiri_agent.blocks.table.payments.model import Basis, BasisKind, Customer, Deposit, Invoice

__all__ = ["MIN_INVOICE_CHARS", "Identity", "identify"]

# An invoice number shorter than this is not looked for in free text (``12`` is in any EDI).
MIN_INVOICE_CHARS = 4
_TOKEN = re.compile(r"[0-9A-Za-z][0-9A-Za-z\-_/.]*")
_DETAILS = {
    MatchKind.EXACT: "",
    MatchKind.LONG_MARK: "（長音符「ー」の有無だけ違う）",
    MatchKind.PREFIX: "（前方一致: 銀行で {cut} 文字に切れた名前）",
    MatchKind.HEAD: "（後ろの支店名などを除いて一致）",
    MatchKind.TRADE: "（屋号か代表者の名前で一致）",
    MatchKind.NEAR: "（1文字違い）",
    MatchKind.FIRST_WORDS: "（先頭の語だけ一致）",
}
# Why a line whose payer only resembles customers is for a person, by the kind of resemblance.
_PROPOSED = {
    MatchKind.NEAR: "振込依頼人名と 1 文字だけ違う取引先があります（提案のみ。名義が違う別の会社の可能性があります）。",
    MatchKind.FIRST_WORDS: "振込依頼人名の先頭の語が取引先の名前と同じですが、後ろの語が支店名などではありません"
    "（提案のみ。親会社・関連会社など別の会社の可能性があります）。",
}
_SOURCES = {
    NameSource.KANA: BasisKind.KANA,
    NameSource.NAME: BasisKind.NAME,
    NameSource.READING: BasisKind.READING,
    NameSource.ALT_READING: BasisKind.READING,
}


@dataclass(frozen=True, slots=True)
class Identity:
    """The customer of a line (``customer``), or the candidates and why none was chosen."""

    customer: Customer | None = None
    basis: Basis | None = None
    invoices: tuple[Invoice, ...] = ()  # invoices named by number (basis 請求番号)
    candidates: tuple[tuple[Customer, Basis], ...] = ()
    why: str = ""


def identify(line: Deposit, directory: Directory, book: OpenInvoices) -> Identity:
    """The customer of ``line`` (see the module docstring)."""
    payer = PayerName.parse(line.payer) if line.payer.strip() else None
    named, codes = _identifiers(line, payer, directory, book)
    learned = [(c, Basis(BasisKind.LEARNED)) for c in _learned(line.payer, payer, directory)]
    matches, sure_matches = _name_matches(line.payer, payer, directory)
    cut = payer.cut_at if payer is not None else 0
    sure = [(m.customer, _basis(m, cut)) for m in sure_matches]
    by_name = [(directory.customers[c.code], b) for c, b in sure]
    spoken = learned or by_name
    strong = _unique([*((directory.customers[i.customer], b) for i, b in named), *codes])
    if len(strong) > 1:
        return Identity(candidates=tuple(strong), why=_two("請求番号・コード", strong))
    if strong:
        customer, basis = strong[0]
        if spoken and customer.id not in {c.id for c, _ in spoken}:
            both = _unique([*strong, *spoken])
            return Identity(candidates=tuple(both), why=_disagree(basis, spoken))
        invoices = tuple(i for i, _ in named)
        return Identity(customer, basis, invoices)
    if learned:
        agreeing = [pair for pair in learned if pair[0].id in {c.id for c, _ in by_name}]
        if by_name and not agreeing:
            both = _unique([*learned, *by_name])
            return Identity(candidates=tuple(both), why=_disagree(learned[0][1], by_name))
        chosen = agreeing or learned
        if len(chosen) == 1:
            return Identity(chosen[0][0], chosen[0][1])
        return Identity(
            candidates=tuple(chosen),
            why=f"学習済みの名義が {len(chosen)} 社の取引先に登録されていて、どちらの入金か決められません。",
        )
    if len(by_name) == 1:
        return Identity(by_name[0][0], by_name[0][1])
    if by_name:
        return Identity(candidates=tuple(by_name), why=_same_name(by_name))
    proposed = [m for m in matches if m.proposal_only]
    if proposed:
        proposals = [(directory.customers[m.customer.code], _basis(m, cut)) for m in proposed]
        return Identity(
            candidates=tuple(_unique(proposals)),
            why="".join(_PROPOSED[kind] for kind in dict.fromkeys(m.kind for m in proposed)),
        )
    why = (
        "振込依頼人名が空欄です。"
        if payer is None
        else "振込依頼人名に合う取引先がありません（取引先マスタ・学習済みの名義・コード・請求番号のどれにも当たりません）。"
    )
    return Identity(why=why)


def _name_matches(
    raw: str, payer: PayerName | None, directory: Directory
) -> tuple[list[Match], list[Match]]:
    """The customers the payer's name may be and the surest of them: the name as written, else
    the name without the bank's words (when it has some and they leave a name)."""
    if payer is None:
        return [], []
    matches = directory.by_name(payer)
    sure = best_matches(matches)
    bare = bare_payer(raw)
    if sure or bare is None:
        return matches, sure
    stripped = directory.by_name(bare)
    stripped_sure = best_matches(stripped)
    return (stripped, stripped_sure) if stripped_sure else (matches, sure)


def _learned(raw: str, payer: PayerName | None, directory: Directory) -> list[Customer]:
    """The customers a person said the payer pays for: the name as written, else the name
    without the bank's words (as :func:`_name_matches`)."""
    if payer is None:
        return []
    found = directory.learned(payer)
    bare = bare_payer(raw)
    return directory.learned(bare) if not found and bare is not None else found


def _identifiers(
    line: Deposit, payer: PayerName | None, directory: Directory, book: OpenInvoices
) -> tuple[list[tuple[Invoice, Basis]], list[tuple[Customer, Basis]]]:
    """Invoices named by number and customers named by code, in the EDI and the name."""
    named: dict[int, tuple[Invoice, Basis]] = {}
    codes: list[tuple[Customer, Basis]] = []
    sources = [("EDI情報", line.edi), ("振込依頼人名", line.payer)]
    for where, text in sources:
        tokens = _tokens(text) if text else ()
        if where == "振込依頼人名" and payer is not None and payer.code:
            tokens = (*tokens, identifier(payer.code))
        for token in dict.fromkeys(tokens):
            invoice = book.by_number.get(token) if len(token) >= MIN_INVOICE_CHARS else None
            if invoice is not None:
                named.setdefault(invoice.order, (invoice, Basis(BasisKind.INVOICE, f"（{where}）")))
                continue
            customer = directory.by_code(token) if len(token) >= MIN_CODE_DIGITS else None
            if customer is not None:
                codes.append((customer, Basis(BasisKind.CODE, f"（{where}）")))
    return list(named.values()), codes


@lru_cache(maxsize=MAX_CACHED_NAMES)
def _tokens(text: str) -> tuple[str, ...]:
    """The runs of letters and digits in ``text`` as compared (:func:`.book.identifier`)."""
    return tuple(identifier(t) for t in _TOKEN.findall(unicodedata.normalize("NFKC", text)))


def _basis(match: Match, cut: int) -> Basis:
    """Why the name met, in a person's words; ``cut``: the width the bank cut the name at."""
    detail = _DETAILS[match.kind].format(cut=cut)
    if match.source is NameSource.ALT_READING:
        detail = "（別の読み）" + detail
    return Basis(_SOURCES[match.source], detail)


def _unique(pairs: list[tuple[Customer, Basis]]) -> list[tuple[Customer, Basis]]:
    seen: dict[str, tuple[Customer, Basis]] = {}
    for customer, basis in pairs:
        seen.setdefault(customer.id, (customer, basis))
    return list(seen.values())


def _names(pairs: list[tuple[Customer, Basis]]) -> str:
    return "・".join(c.shown for c, _ in pairs)


def _two(what: str, pairs: list[tuple[Customer, Basis]]) -> str:
    return f"{what}が {len(pairs)} 社の取引先を指しています（{_names(pairs)}）。"


def _same_name(pairs: list[tuple[Customer, Basis]]) -> str:
    return (
        f"振込依頼人名が同じくらい合う取引先が {len(pairs)} 社あります（{_names(pairs)}）。"
        "同じ読みの別の会社の可能性があります。"
    )


def _disagree(basis: Basis, others: list[tuple[Customer, Basis]]) -> str:
    return (
        f"{basis.text}の取引先と、振込依頼人名（{others[0][1].kind.value}）の取引先"
        f"（{_names(others)}）が異なります。"
    )
