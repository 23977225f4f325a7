"""The customers a payer may be: by code, by name (master kana or reading), by a learned name.

:class:`Directory` is built once per run from the customer master (取引先コード, 取引先名,
取引先名カナ), the customers the invoices name, and the learned payer names (the ``aliases``
input and the learned-names store). It answers, for one payer name:

- ``by_code``: a customer code (written before the name, or in the EDI information);
- ``learned``: the customers a person said this payer pays for. A learned name is compared
  as a customer's name is, by a :class:`~keiri_agent.blocks.table.names.NameIndex` of the
  learned names: ``ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ`` learned once meets ``ﾔﾏﾄﾎｰﾙﾃﾞｨﾝｸﾞｽ(ｶ`` (small kana,
  any dash), ``ﾔﾏﾄﾎﾙﾃﾞｲﾝｸﾞｽ(ｶ`` (the long mark left out), ``ﾔﾏﾄﾎｰﾙﾃ゛ｲﾝｸ゛ｽ``, a code written
  first and a branch or a note after it (``HEAD``), never a name one kana apart or followed
  by other words (proposals), and only under the legal form it was learned with (``ﾕ)`` is
  another company than ``ｶ)``); a bank's word the name was learned with (``ﾌﾘｺﾐ``) is no part
  of it;
- ``by_name``: the names package's :class:`~keiri_agent.blocks.table.names.NameIndex` (a payer's
  candidates by dict and sorted prefix, never compared with every customer), over the master's
  取引先名カナ where the master has one (and the reading of the part of a sole proprietor's
  屋号 and 氏名 it does not spell), else the 取引先名 and its readings.

A customer's id is its code; when the invoices carry no 取引先コード it is the name as
compared (``normalize_key(company=True)``: 株式会社山田商事 and 山田商事(株) are one customer).
"""

from __future__ import annotations

from collections.abc import Iterable

from keiri_agent.bank_words import without_bank_words
from keiri_agent.blocks.table.names import (
    CompanyForm,
    CustomerName,
    Match,
    NameIndex,
    PayerName,
    best_matches,
)
from keiri_agent.blocks.table.normalize import normalize_key
from keiri_agent.blocks.table.payments.book import identifier
from keiri_agent.blocks.table.payments.model import Customer

__all__ = ["Directory", "bare_payer", "name_id", "payer_key"]


def payer_key(raw: str) -> str:
    """A payer name as learned names are kept and compared: the name without its code and
    company form, folded; the legal form's abbreviation after a slash (ヤマトホールデイングス/カ)."""
    payer = PayerName.parse(raw)
    form = payer.form.abbreviation if payer.form is not None else ""
    return f"{payer.name}/{form}" if payer.name else ""


def bare_payer(raw: str) -> PayerName | None:
    """The payer without the bank's words written into its name field (``ﾌﾘｺﾐ ｶ)ﾔﾏﾄ...``), when
    it has some and they leave a name."""
    bare = without_bank_words(raw)
    return PayerName.parse(bare) if bare != raw and bare.strip() else None


def _learned_names(raw: str) -> list[PayerName]:
    """A learned payer name as compared: as written and without the bank's words."""
    spellings = (PayerName.parse(raw), bare_payer(raw))
    return [p for p in spellings if p is not None and p.name]


def _indexed(customer: Customer) -> CustomerName:
    """The customer as the name index knows it: by its kana (with the legal form of its name,
    which the bank writes too, and a sole proprietor's owner the kana does not spell) when the
    master has one, else by its name."""
    if not customer.kana.strip():
        return CustomerName(customer.id, customer.name)
    return CustomerName(customer.id, customer.name, customer.kana, kana_decides=True)


def name_id(name: str) -> str:
    """A customer's id when the invoices name it without a code."""
    return normalize_key(name, company=True)


class Directory:
    """Customers by id, code, name and learned payer name (see the module docstring)."""

    def __init__(
        self,
        customers: Iterable[Customer],
        learned: Iterable[tuple[str, str]] = (),
    ) -> None:
        self.customers: dict[str, Customer] = {}
        for customer in customers:
            self.customers.setdefault(customer.id, customer)
        self._codes = {identifier(c.code): c.id for c in self.customers.values() if c.code}
        # A customer with 取引先名カナ is known by its kana only: the master says how the name
        # reads, a reading of the kanji that differs (白鳥: シロトリ for シラトリ) is another name.
        self.index = NameIndex(_indexed(c) for c in self.customers.values() if c.name or c.kana)
        # Each learned name (as compared, with its legal form) and the customers it pays for.
        self._learned: dict[tuple[str, CompanyForm | None], list[str]] = {}
        self.unknown_learned: list[tuple[str, str]] = []
        for payer, code in learned:
            found = self.find(code)
            names = _learned_names(payer)
            if found is None or not names:
                self.unknown_learned.append((payer, code))
                continue
            for name in names:
                ids = self._learned.setdefault((name.name, name.form), [])
                if found.id not in ids:
                    ids.append(found.id)
        self._learned_keys = list(self._learned)
        self._learned_index = NameIndex(
            CustomerName(str(number), name) for number, (name, _) in enumerate(self._learned_keys)
        )

    def find(self, code_or_name: str) -> Customer | None:
        """The customer a code (or, without codes, a name) stands for."""
        text = code_or_name.strip()
        if text in self.customers:
            return self.customers[text]
        by_code = self._codes.get(identifier(text))
        if by_code is not None:
            return self.customers[by_code]
        return self.customers.get(name_id(text))

    def by_code(self, token: str) -> Customer | None:
        """The customer whose code is ``token`` (compared as :func:`.book.identifier`)."""
        found = self._codes.get(token)
        return self.customers[found] if found is not None else None

    def learned(self, payer: PayerName) -> list[Customer]:
        """The customers a person said ``payer`` pays for, in the order they were learned: those
        of the learned names of the best rank under the payer's legal form (see the module
        docstring)."""
        if not self._learned:
            return []
        matches = [
            m
            for m in self._learned_index.lookup(payer)
            if self._learned_keys[int(m.customer.code)][1] == payer.form
        ]
        ids = (
            i
            for m in best_matches(matches)
            for i in self._learned[self._learned_keys[int(m.customer.code)]]
        )
        return [self.customers[i] for i in dict.fromkeys(ids)]

    def by_name(self, payer: PayerName) -> list[Match]:
        """The customers the name may be, surest first (:meth:`NameIndex.lookup`)."""
        return self.index.lookup(payer)
