"""The same help-desk question as users really type it: a generator of written variants.

A question the help desk answers must keep finding its page when the user writes it in another
way. :func:`variants` gives, for one question, each shape of writing that Japanese back-office
staff produce and that the paraphrase lists do not already hold (each a :class:`Variant` with its
``shape``):

- ``halfwidth_kana``: katakana in half-width forms (パスワード → ﾊﾟｽﾜｰﾄﾞ), as old systems and
  some IMEs paste it;
- ``fullwidth_ascii``: Latin letters, digits and signs in full-width forms (VPN → ＶＰＮ,
  5万件 → ５万件, E-1004 → Ｅ－１００４);
- ``lower_ascii`` / ``title_ascii``: Latin words in lower case or capitalised (vpn, Vpn);
- ``hiragana_word``: one kanji noun of the question written in hiragana, by its reading
  (経費 → けいひ, 承認 → しょうにん), one variant per noun;
- ``hiragana_loanword``: katakana words written in hiragana (パスワード → ぱすわーど);
- ``kana_typo``: one kana of a katakana word of three or more kana dropped, or doubled
  (パスワード → パスワド); a seeded choice of word and position;
- ``plain`` / ``polite``: the question's ending in the other register (ますか → る？,
  教えて → 教えてください);
- ``greeting``: the question inside an office greeting and signature (お疲れ様です。経理の山田です。
  … よろしくお願いします。), a seeded choice of several;
- ``emoji``: an emoji or emoticon at the end (🙏, 😭, (^^;);
- ``url``: an intranet URL pasted before the question;
- ``error_code``: an error code of the question (E-1004) as pasted in other ways (Ｅ－１００４,
  e1004, E1004, e-1004).

``several questions in one message`` is built by :func:`joined` from two questions of different
pages: each question's page must be among the hits of its own part (the product's search looks
at the message as a whole; the agent splits it into subtasks).
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase
from keiri_agent.sudachi import open_dictionary
from tests.support.helpdesk_eval import gold_id

__all__ = ["SHAPES", "Variant", "both_pages_kept", "halfwidth_kana", "joined", "top", "variants"]

SHAPES = (
    "halfwidth_kana",
    "fullwidth_ascii",
    "lower_ascii",
    "title_ascii",
    "hiragana_word",
    "hiragana_loanword",
    "kana_typo",
    "plain",
    "polite",
    "greeting",
    "emoji",
    "url",
    "error_code",
)
GREETINGS = (
    ("お疲れ様です。経理の山田です。", "よろしくお願いします。"),
    ("お世話になっております。営業部の佐藤です。\n", "\nお手数ですがご確認ください。\n佐藤"),
    ("すみません、", "\n以上、よろしくお願いいたします。"),
    ("【至急】", "（総務部 鈴木）"),
    ("いつもお世話になっております。\n", "\n--\n株式会社ABC 経理部 田中 花子\nTEL 03-1234-5678"),
)
EMOJI = ("🙏", "😭", "💦", "(^^;", "🙇\u200d♂️", "!!")
URLS = (
    "https://xyz.example.co.jp/expense/list?id=3021 を開いたところで、",
    "http://intra.example.local/keiri/faq#q12 を見ましたが、",
)
# Endings in one register and the other: (polite, plain). Applied at the end of the question.
ENDINGS = (
    ("できますか", "できる？"),
    ("ありますか", "ある？"),
    ("いいですか", "いい？"),
    ("ですか", "？"),
    ("を教えてください", "を教えて"),
    ("てください", "て"),
    ("たいです", "たい"),
    ("ません", "ない"),
)
_QUESTION_END = re.compile(r"[？?。！!]+$")
_CODE = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]{1,3})-(\d{2,})(?![0-9])")
_KATAKANA = re.compile(r"[\u30a1-\u30fa\u30fc]+")
_TYPO_WORD = re.compile(r"[\u30a1-\u30fa\u30fc]{3,}")  # katakana words long enough to mistype
_KANJI = re.compile(r"[\u4e00-\u9fff々]")
_HALF = {
    unicodedata.normalize("NFKC", chr(code)): chr(code)
    for code in range(0xFF61, 0xFFA0)
    if len(unicodedata.normalize("NFKC", chr(code))) == 1
}
_MARKS = {"\u3099": "\uff9e", "\u309a": "\uff9f"}


@dataclass(frozen=True)
class Variant:
    shape: str
    text: str


def halfwidth_kana(text: str) -> str:
    """``text`` with its katakana (and ー, 。「」、) in half-width forms: ﾊﾟｽﾜｰﾄﾞ."""
    out = []
    for char in text:
        if "\u30a1" <= char <= "\u30fa":
            char = unicodedata.normalize("NFD", char)
        out.append("".join(_MARKS.get(c) or _HALF.get(c, c) for c in char))
    return "".join(out)


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def _hiragana(katakana: str) -> str:
    return "".join(chr(ord(c) - 0x60) if "\u30a1" <= c <= "\u30f6" else c for c in katakana)


def _kanji_words(text: str) -> Iterator[tuple[str, str]]:
    """(surface, hiragana reading) of each noun of ``text`` written with two or more kanji (a
    verb's reading can be another word's: Sudachi reads 弾かれる as ひかれる)."""
    from sudachipy import SplitMode

    tokenizer = open_dictionary().tokenizer(mode=SplitMode.C)
    for morpheme in tokenizer.tokenize(text):
        surface = morpheme.surface()
        reading = morpheme.reading_form()
        noun = morpheme.part_of_speech()[0] == "名詞"
        if noun and len(_KANJI.findall(surface)) >= 2 and reading:
            yield surface, _hiragana(reading)


def _register(text: str) -> Iterator[Variant]:
    body = _QUESTION_END.sub("", text)
    for polite, plain in ENDINGS:
        if body.endswith(polite):
            yield Variant("plain", body[: -len(polite)] + plain)
            return
    for polite, plain in ENDINGS:
        stem = plain.rstrip("？")
        if stem and body.endswith(stem):
            yield Variant("polite", body[: -len(stem)] + polite)
            return
    if not body.endswith("か"):
        yield Variant("polite", f"{body}でしょうか")


def _typo(text: str, rng: random.Random) -> Iterator[Variant]:
    words = list(_TYPO_WORD.finditer(text))
    if not words:
        return
    word = rng.choice(words)
    at = rng.randrange(word.start() + 1, word.end())
    if rng.random() < 0.5:
        yield Variant("kana_typo", text[:at] + text[at + 1 :])
    else:
        yield Variant("kana_typo", text[:at] + text[at] + text[at:])


def variants(question: str, seed: int = 0) -> list[Variant]:
    """Every written variant of ``question`` (module docstring); shapes that do not apply to
    the question (no katakana, no Latin letters, no code…) give none."""
    rng = random.Random(f"{seed}:{question}")
    found: list[Variant] = []
    if _KATAKANA.search(question):
        found.append(Variant("halfwidth_kana", halfwidth_kana(question)))
        loan = _KATAKANA.sub(lambda m: _hiragana(m.group()), question)
        found.append(Variant("hiragana_loanword", loan))
    if re.search(r"[!-~]", question):
        found.append(Variant("fullwidth_ascii", _fullwidth(question)))
    if re.search(r"[A-Z]", question):
        found.append(Variant("lower_ascii", question.lower()))
    if re.search(r"[A-Z]{2}", question):
        found.append(
            Variant("title_ascii", re.sub(r"[A-Z]{2,}", lambda m: m.group().title(), question))
        )
    seen: set[str] = set()
    for surface, reading in _kanji_words(question):
        if surface not in seen:
            seen.add(surface)
            found.append(Variant("hiragana_word", question.replace(surface, reading, 1)))
    found.extend(_typo(question, rng))
    found.extend(_register(question))
    before, after = rng.choice(GREETINGS)
    found.append(Variant("greeting", f"{before}{question}{after}"))
    found.append(Variant("emoji", f"{question}{rng.choice(EMOJI)}"))
    found.append(Variant("url", f"{rng.choice(URLS)}{question}"))
    for match in _CODE.finditer(question):
        letters, digits = match.groups()
        for spelled in (
            _fullwidth(match.group()),
            f"{letters.lower()}{digits}",
            f"{letters.upper()}{digits}",
            f"{letters.lower()}-{digits}",
        ):
            found.append(Variant("error_code", question.replace(match.group(), spelled)))
    return [v for v in found if v.text != question]


def joined(first: str, second: str) -> str:
    """Two questions in one message, as a user writes them."""
    return f"{_QUESTION_END.sub('', first)}？あと、{second}"


def top(kb: KnowledgeBase, question: str) -> list[str]:
    """The sources of the first 3 hits of a hybrid search with the default floor."""
    return [gold_id(hit) for hit in kb.search(question, 3, tool="hybrid")]


def both_pages_kept(kb: KnowledgeBase, questions: Sequence[str], step: int) -> tuple[int, int]:
    """Each question joined with the one ``step`` places on (:func:`joined`), where their best
    pages differ: (how many messages, how many keep both best pages in their 3 hits)."""
    pairs = kept = 0
    for first, second in zip(questions, [*questions[step:], *questions[:step]], strict=True):
        best = [top(kb, first)[0], top(kb, second)[0]]
        if best[0] != best[1]:
            pairs += 1
            kept += all(page in top(kb, joined(first, second)) for page in best)
    return pairs, kept
