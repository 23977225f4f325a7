"""How a payer name meets a customer: the kind of agreement, its source, a score and the reason.

A payer meets a customer key (:mod:`.keys`) in one of seven ways, best first:

- ``EXACT``: the payer's name is the key (or, for a payer written in kanji, one of its readings);
- ``LONG_MARK``: they are the same once their long-vowel marks are left out (``ﾄｷﾖ`` /
  ``トーキヨー``), at least :data:`MIN_UNMARKED_CHARS` kana then;
- ``PREFIX``: the bank cut the payer (at 48 characters, or at an export's 30 or 20) and the key
  starts with what is left (a cut inside a voiced kana, ``ﾀ`` of ``ﾀﾞ``, still agrees), or is
  what is left before the start of a legal form spelled out (``...ｶﾌﾞｼｷｶ``), when at least
  :data:`MIN_PREFIX_CHARS` are left; not a payer only as long as an export's cut that stops
  where the key's last words begin (``ｶ)ｷﾀﾆﾎﾝﾛｼﾞｽﾃｨｸｽｻｰﾋﾞｽ`` against
  キタニホンロジステイクスサービストウホク: the whole name of another company as likely);
- ``HEAD``: a payer's first words are the key (or the key without long marks) and only branch,
  office or department words or a note of what is paid follow (``ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ ｵｵｻｶｼﾃﾝ``,
  ``ｱｵﾊﾞｼﾖｳｼﾞ ｹｲﾘﾌﾞ``, ``ｶ)ｱｵﾊﾞ ｾｲｷﾕｳ1234``, ``ｱｵﾊﾞｼﾖｳｼﾞ 5ｶﾞﾂﾌﾞﾝ``,
  ``ﾔﾏﾀﾞｼﾖｳｼﾞ(ｶ)ｵｵｻｶｼﾃﾝ``, ``ﾔﾏﾀﾞｼﾖｳｼﾞ ﾅｺﾞﾔ(ｴｲ``, a place after a middle form,
  ``ﾔﾏﾀﾞｼﾖｳｼﾞ(ｶ ｵｵｻｶ``, a branch glued after a place, ``ﾔﾏﾀﾞｼﾖｳｼﾞｵｵｻｶｼﾃﾝ``), or a
  representative's title and a person
  (``ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ ﾀﾞｲﾋﾖｳﾄﾘｼﾏﾘﾔｸ ﾔﾏﾀﾞ ﾀﾛｳ``), the person in charge (``ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ ﾀﾝﾄｳ ｻﾄｳ``)
  or the sender's surname and given name (``ﾔﾏﾀﾞｼﾖｳｼﾞ ｻﾄｳ ﾀﾛｳ``); the whole, branch included, is the payer's name:
  a branch the master holds as a customer of its own meets it ``EXACT``;
- ``TRADE``: a sole proprietor's payer is written with a trade name and the owner's name
  (``ﾔﾏﾀﾞｼﾖｳﾃﾝ ﾀﾞｲﾋﾖｳ ﾔﾏﾀﾞ ﾀﾛｳ``, ``ﾔﾏﾀﾞ ﾀﾛｳ(ﾔﾏﾀﾞｼﾖｳﾃﾝ``) and the key is one of them (or
  it without long marks);
- ``NEAR``: the names differ in one kana (``シラトリ`` / ``シロトリ``), both at least
  :data:`MIN_NEAR_CHARS` long: a proposal for a person, never a match on its own
  (``Match.proposal_only``);
- ``FIRST_WORDS``: a company payer's first words are the key but the words after them are no
  branch (``ｶ)ｱｵﾊﾞｼﾖｳｼﾞ ﾘｰｽ``: another company, a parent or a sister): a proposal too.

Matches are ordered by their :attr:`Match.rank`: the kind first (``EXACT``, ``LONG_MARK`` and
``PREFIX`` are one: a name cut at 48 that is one customer's whole name may as well be the start
of another's, a name written with a long mark may be another's written without one),
then whether only an alternate reading of a kanji name met (``白鳥`` read シラトリ where
SudachiPy says ハクチョウ), then whether both sides wrote a legal form and the forms differ
(``ｶ)`` against 有限会社).
:func:`best_matches` keeps the matches of the best rank: two or more there are an ambiguity
for a person (two customers named ヤマダコウギヨウ: 山田工業 and 山田興業), never settled by
the order of the master. Within a rank the source does not decide (a SudachiPy reading that
meets is as good as the master's kana); the score (the kind's weight times the source's) only
tells a person how sure each candidate is. :func:`name_match` compares one payer with one
customer; :class:`.index.NameIndex` finds the same matches without comparing a payer with
every customer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from rapidfuzz.distance import Levenshtein

from keiri_agent.blocks.table.names.fold import EXPORT_CUT_CHARS, starts_cut, unmarked
from keiri_agent.blocks.table.names.keys import CustomerName, NameKey, NameSource, PayerName

__all__ = [
    "FORM_DIFFERS",
    "KIND_WEIGHTS",
    "MIN_NEAR_CHARS",
    "MIN_PREFIX_CHARS",
    "MIN_UNMARKED_CHARS",
    "PAYER_READING_WEIGHT",
    "SOURCE_WEIGHTS",
    "Match",
    "MatchKind",
    "best_matches",
    "compare",
    "name_match",
    "same_unmarked",
]

# A cut name shorter than this (after the code and form are removed) proves too little.
MIN_PREFIX_CHARS = 6
# Names left shorter than this without their long marks are not compared so (ビル / ビール).
MIN_UNMARKED_CHARS = 4
# Names shorter than this are not proposed on one different kana (ヤマダ / ヤマカ are strangers).
MIN_NEAR_CHARS = 4


class MatchKind(StrEnum):
    EXACT = "一致"
    LONG_MARK = "長音符の有無だけ違う"
    PREFIX = "前方一致"
    HEAD = "先頭の語が一致"
    TRADE = "屋号か代表者名が一致"
    NEAR = "1文字違い"
    FIRST_WORDS = "先頭の語だけ一致"


KIND_WEIGHTS = {
    MatchKind.EXACT: 1.0,
    MatchKind.LONG_MARK: 0.95,
    MatchKind.PREFIX: 0.9,
    MatchKind.HEAD: 0.8,
    MatchKind.TRADE: 0.8,
    MatchKind.NEAR: 0.5,
    MatchKind.FIRST_WORDS: 0.5,
}
SOURCE_WEIGHTS = {
    NameSource.KANA: 1.0,
    NameSource.NAME: 1.0,
    NameSource.READING: 0.95,
    NameSource.ALT_READING: 0.85,
}
# A cut name (it fills the field) equal to one customer's key and the start of another's is
# either: the bank may have cut the longer name there; a name equal to one customer's key and,
# without long marks, to another's may be either too. EXACT, LONG_MARK and PREFIX are one rank.
_KIND_ORDER = {kind: order for order, kind in enumerate(MatchKind)} | {
    MatchKind.LONG_MARK: 0,
    MatchKind.PREFIX: 0,
}
PAYER_READING_WEIGHT = 0.95  # a payer written in kanji met through its reading
FORM_DIFFERS = 0.9  # both sides wrote a legal form, and not the same one


@dataclass(frozen=True)
class Match:
    """One customer a payer name may be, with how sure and why."""

    customer: CustomerName
    kind: MatchKind
    source: NameSource
    key: str  # the customer's key that was met
    score: float  # 0 < score <= 1
    form_agrees: bool | None  # None when either side wrote no legal form

    @property
    def rank(self) -> tuple[int, int, int]:
        """Lower is surer: the kind, an alternate reading, a legal form that differs."""
        return (
            _KIND_ORDER[self.kind],
            int(self.source is NameSource.ALT_READING),
            int(self.form_agrees is False),
        )

    @property
    def proposal_only(self) -> bool:
        """A person must confirm it: never matched on the name alone."""
        return self.kind in (MatchKind.NEAR, MatchKind.FIRST_WORDS)

    @property
    def reason(self) -> str:
        """The reason in the words of a person checking it."""
        detail = {
            MatchKind.EXACT: "",
            MatchKind.LONG_MARK: "（長音符「ー」の有無だけ違う）",
            MatchKind.PREFIX: "（銀行で切れた名前の前方一致）",
            MatchKind.HEAD: "（後ろの支店名などを除いて一致）",
            MatchKind.TRADE: "（屋号か代表者の名前で一致）",
            MatchKind.NEAR: "（1文字違いのため要確認）",
            MatchKind.FIRST_WORDS: "（後ろの語が支店名などではないため要確認）",
        }[self.kind]
        kind = {MatchKind.NEAR: "1文字違い", MatchKind.FIRST_WORDS: "先頭の語だけ一致"}.get(
            self.kind, "一致"
        )
        return f"振込依頼人名が{self.source.value}と{kind}{detail}"


def compare(payer: PayerName, key: NameKey, *, near: bool = True) -> tuple[MatchKind, bool] | None:
    """How ``payer`` meets one customer key: the kind, and whether through the payer's reading."""
    texts = [(payer.name, False), *((r, True) for r in payer.readings)]
    if payer.code:
        texts.append((payer.code + payer.name, False))
    for text, spoken in texts:
        if text == key.text:
            return MatchKind.EXACT, spoken
    for text, spoken in texts:
        if same_unmarked(text, key.text):
            return MatchKind.LONG_MARK, spoken
    if payer.truncated and _cut_meets(payer, key):
        return MatchKind.PREFIX, False
    if payer.heads and _among(key.text, payer.heads):
        return MatchKind.HEAD, False
    if payer.trade and _among(key.text, payer.trade):
        return MatchKind.TRADE, False
    if key.text in payer.first_words:
        return MatchKind.FIRST_WORDS, False
    if near and payer.proposable:
        for text, spoken in texts[: 1 + len(payer.readings)]:
            if _one_apart(text, key.text):
                return MatchKind.NEAR, spoken
    return None


def _among(key: str, texts: tuple[str, ...]) -> bool:
    """Whether ``key`` is one of ``texts`` or the same as one without long marks: a head or a
    trade name written without its ー meets a customer written with one as well as one without
    (ﾋﾞﾙｻﾋﾞｽ ｵｵｻｶｼﾃﾝ: ビルサビス and ビールサービス are one rank, for a person)."""
    return any(key == text or same_unmarked(text, key) for text in texts)


def score(
    payer: PayerName, key: NameKey, kind: MatchKind, spoken: bool
) -> tuple[float, bool | None]:
    """The score of a payer meeting ``key`` in ``kind`` (see the module docstring)."""
    value = KIND_WEIGHTS[kind] * SOURCE_WEIGHTS[key.source]
    if spoken:
        value *= PAYER_READING_WEIGHT
    agrees = None if payer.form is None or key.form is None else payer.form == key.form
    if agrees is False:
        value *= FORM_DIFFERS
    return round(value, 4), agrees


def name_match(payer: PayerName, customer: CustomerName) -> Match | None:
    """The best way ``payer`` meets ``customer`` (None when it does not). A head only a branch
    glued after a place tells counts once the payer was told by the master that no customer is
    named with the place (:meth:`.keys.PayerName.told`, as :meth:`.index.NameIndex.lookup`
    tells it): one customer alone proves nothing of the others."""
    best: Match | None = None
    for key in customer.keys:
        found = compare(payer, key)
        if found is None:
            continue
        value, agrees = score(payer, key, *found)
        match = Match(customer, found[0], key.source, key.text, value, agrees)
        if best is None or (match.rank, -match.score) < (best.rank, -best.score):
            best = match
    return best


def best_matches(matches: Iterable[Match]) -> list[Match]:
    """The matches of the best rank, proposals left out; more than one is an ambiguity."""
    sure = sorted((m for m in matches if not m.proposal_only), key=lambda m: m.rank)
    return [m for m in sure if m.rank == sure[0].rank]


def same_unmarked(a: str, b: str) -> bool:
    """Whether two folded names are one once their long marks are left out (and long enough)."""
    bare = unmarked(a)
    return len(bare) >= MIN_UNMARKED_CHARS and bare == unmarked(b)


def _cut_meets(payer: PayerName, key: NameKey) -> bool:
    """A cut payer meets ``key``: the key starts with it, or is a name before a spelled-out
    form it was cut in; long marks left out on both sides as well. A payer exactly as long as
    an export's cut (not the field's) that ends where the key's last words begin is a whole
    name as likely (:func:`_ends_before_words`)."""
    for cut, whole, stems, tails in (
        (payer.name, key.text, payer.cut_stems, key.tails),
        (
            unmarked(payer.name),
            unmarked(key.text),
            tuple(unmarked(s) for s in payer.cut_stems),
            tuple(unmarked(t) for t in key.tails),
        ),
    ):
        if (
            len(cut) >= MIN_PREFIX_CHARS
            and starts_cut(whole, cut)
            and not _ends_before_words(payer, cut, whole, tails)
        ):
            return True
        if len(whole) >= MIN_PREFIX_CHARS and whole in stems:
            return True
    return False


def _ends_before_words(payer: PayerName, cut: str, whole: str, tails: tuple[str, ...]) -> bool:
    """Whether a payer as long as an export's cut (20 or 30 half-width characters, which whole
    names often are) stops where the customer's last words begin (what the key ``whole`` has
    after ``cut`` is one of ``tails``): ``ｶ)ｷﾀﾆﾎﾝﾛｼﾞｽﾃｨｸｽｻｰﾋﾞｽ`` is the whole name of 北日本ロジス
    ティクスサービス as likely as 北日本ロジスティクスサービス東北's cut; the master may hold
    only the second. A cut inside a word (``...ｻｰﾋﾞｽﾄｳ``) proves the longer name, and so does a
    cut between a kana and its voiced mark (``...ﾌｨｰﾙﾄ`` of ``...ﾌｨｰﾙﾄﾞ``: no word ends so)."""
    return payer.cut_at in EXPORT_CUT_CHARS and whole.startswith(cut) and whole[len(cut) :] in tails


def _one_apart(a: str, b: str) -> bool:
    if min(len(a), len(b)) < MIN_NEAR_CHARS or abs(len(a) - len(b)) > 1 or a == b:
        return False
    return Levenshtein.distance(a, b, score_cutoff=1) == 1
