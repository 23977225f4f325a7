"""The same help-desk question as typed into a chat window: a third, independent generator.

Written apart from :mod:`tests.support.helpdesk_variants` and :mod:`tests.support.helpdesk_typed`
(other templates, other word lists), so that the normalisation is not tuned to their lists. Each
shape is something a reviewer of an office chat log would call ordinary; one variant per shape
and question, the template chosen by a seeded generator:

- ``opener``: a sentence about the asking before the question (ちょっと質問です！, 初歩的な
  質問ですみません…, 今さらなんですが、);
- ``closer``: a sentence about the asking after it (わかる方いますか？, 教えてもらえると
  助かります🙏, どなたかご存じですか);
- ``ending``: the question's predicate in the plain form with another chat or polite ending
  (…んでしょうか, …のかな？, …か分かりますか, …んですかね);
- ``topic_first``: the question's first noun put before it as a heading (【ホテル代】…,
  ホテル代の件です。…, ホテル代について質問です);
- ``what_is``: the question followed by one asking what one of its words means (…ですか。
  ていうかログインって何ですか, …？あとVPNってなんだっけ);
- ``loanword_kana``: every katakana loanword of the question in hiragana and its ー kept
  or typed as "-" (the IME in hiragana mode, a hyphen for the long vowel);
- ``dropped_particle``: the particle after the question's first noun left out, as in chat
  (パスワードを忘れた → パスワード忘れた);
- ``tone``: a tone mark at the end (ｗｗ, 笑笑, (汗), orz, m(_ _)m, 💦💦, ！？).
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterator

from keiri_agent.sudachi import TO_HIRAGANA
from tests.support.helpdesk_variants import Variant
from tests.support.morphemes import morphemes as _morphemes

__all__ = ["CHAT_SHAPES", "chat_variants"]

CHAT_SHAPES = (
    "opener",
    "closer",
    "ending",
    "topic_first",
    "what_is",
    "loanword_kana",
    "dropped_particle",
    "tone",
)
OPENERS = tuple(
    """
ちょっと質問です！
質問失礼します🙇
初歩的な質問ですみません…
今さらなんですが、
度々すみません。
急ぎではないのですが、
一つ確認させてください。
教えてほしいことがあります。
""".strip().splitlines()  # one template a line
)
CLOSERS = tuple(
    """
わかる方いますか？
教えてもらえると助かります🙏
どなたかご存じですか
ご存知の方いたら教えてください！
お手すきのときにお願いします
わかったら教えてください〜
""".strip().splitlines()  # one template a line
)
ENDINGS = ("んでしょうか", "のかな？", "か分かりますか？", "んですかね", "の？教えて")
WISH_ENDINGS = tuple(
    """
んですが、どうすればいいですか
んだけど、どうしたらいい？
のですが可能ですか
""".strip().splitlines()  # one template a line
)
NOUN_ENDINGS = ("ですかね？", "でしたっけ？", "？わかる？")
HEADINGS = ("【{}】", "{}の件です。", "{}について質問です。", "{}のことで、")
WHAT_IS = ("。ていうか{}って何ですか", "？あと{}ってなんだっけ", "？{}ってそもそも何のこと？")
TONES = ("ｗｗ", "笑笑", "(汗)", " orz", "m(_ _)m", "💦💦", "！？", "(;´Д`)")
_END = re.compile(r"(?:でしょうか|ですか|ますか|か)?[？?。！!]*\Z")
_LOANWORD = re.compile(r"[\u30a1-\u30fa][\u30a1-\u30faー]{2,}")
_WORD = re.compile(r"[A-Z]{2,}|[\u30a1-\u30fa][\u30a1-\u30faー]{2,}")


def _plain_body(question: str) -> tuple[str, str]:
    """The question without its ending, in the plain form, and what it ends with: "verb",
    "wish" (…したい) or "noun"."""
    body = question
    polite = re.search(r"ます(?:か)?[？?。！!]*\Z", body)
    body = _END.sub("", body)
    morphemes = _morphemes(body)
    if not morphemes:
        return body, "noun"
    last = morphemes[-1]
    pos = last.part_of_speech()
    if polite and pos[0] == "動詞":
        body = body[: last.begin()] + last.dictionary_form()
        return body, "verb"
    if body.endswith("たい"):
        return body, "wish"
    if pos[0] in ("動詞", "形容詞", "助動詞"):
        return body, "verb"
    return body, "noun"


def _ending(question: str, rng: random.Random) -> Iterator[Variant]:
    body, kind = _plain_body(question)
    endings = {"verb": ENDINGS, "wish": WISH_ENDINGS, "noun": NOUN_ENDINGS}[kind]
    yield Variant("ending", body + rng.choice(endings))


def _first_noun(question: str) -> str | None:
    for morpheme in _morphemes(question):
        surface = morpheme.surface()
        if morpheme.part_of_speech()[:2] == ("名詞", "普通名詞") and len(surface) >= 2:
            return str(surface)
    return None


def _topic_first(question: str, rng: random.Random) -> Iterator[Variant]:
    noun = _first_noun(question)
    if noun:
        yield Variant("topic_first", rng.choice(HEADINGS).format(noun) + question)


def _what_is(question: str, rng: random.Random) -> Iterator[Variant]:
    words = _WORD.findall(question)
    if words:
        body = re.sub(r"[？?。！!]*\Z", "", question)
        yield Variant("what_is", body + rng.choice(WHAT_IS).format(rng.choice(words)))


def _loanword_kana(question: str, rng: random.Random) -> Iterator[Variant]:
    if _LOANWORD.search(question):
        hyphen = rng.random() < 0.5
        kana = _LOANWORD.sub(
            lambda m: m.group().translate(TO_HIRAGANA).replace("ー", "-" if hyphen else "ー"),
            question,
        )
        yield Variant("loanword_kana", kana)


def _dropped_particle(question: str) -> Iterator[Variant]:
    morphemes = _morphemes(question)
    for before, particle in itertools.pairwise(morphemes):
        if before.part_of_speech()[0] == "名詞" and particle.surface() in ("を", "が", "は"):
            start, end = particle.begin(), particle.end()
            yield Variant("dropped_particle", question[:start] + question[end:])
            return


def _closed(question: str) -> str:
    """``question`` ending with a mark, as before a second sentence."""
    return question if re.search(r"[？?。！!]\Z", question) else question + "。"


def chat_variants(question: str, seed: int = 0) -> list[Variant]:
    """Every chat variant of ``question`` (module docstring); shapes that do not apply give
    none."""
    rng = random.Random(f"chat:{seed}:{question}")
    found = [
        Variant("opener", rng.choice(OPENERS) + question),
        Variant("closer", _closed(question) + rng.choice(CLOSERS)),
        *_ending(question, rng),
        *_topic_first(question, rng),
        *_what_is(question, rng),
        *_loanword_kana(question, rng),
        *_dropped_particle(question),
        Variant("tone", re.sub(r"[？?。！!]*\Z", "", question) + rng.choice(TONES)),
    ]
    return [v for v in found if v.text != question]
