"""The same help-desk question as employees type it in chat: a second generator of variants.

:mod:`tests.support.helpdesk_variants` covers the character forms, kana for kanji, one typo, the
register and what surrounds a question. This one covers how people *word* a question in a chat
window to the back office, each a :class:`~tests.support.helpdesk_variants.Variant`:

- ``english_word``: a katakana loanword typed as the English word (パスワード → password,
  ログイン → login, キャッシュ → cache), as people who use English software do;
- ``hiragana_loanword_alone``: one katakana loanword in hiragana, the rest as written
  (タクシー代 → たくしー代), when the IME was left in hiragana for one word;
- ``tte``: the topic marked with って instead of は (パスワードって何日ごとに…);
- ``chat``: the plain form with a chat ending (…んですけど, …っけ？, …？笑, …の？？, …？w);
- ``keigo``: humble and respectful forms (恐れ入りますが、…ますでしょうか, …をご教示いただけます
  でしょうか, …のか、教えていただけますでしょうか);
- ``two_typos``: two katakana words each with a kana left out or doubled, or one word with two;
- ``tte_nani``: a katakana word of the question asked as 「〜って何？」 after the question (the
  question still asks what it asked: …ですか？そもそもVPNって何？).

Every shape is one a reviewer reading Japanese chat logs would call ordinary; none depends on the
words of the sample manual.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

from keiri_agent.sudachi import TO_HIRAGANA
from tests.support.helpdesk_variants import Variant
from tests.support.morphemes import morphemes

__all__ = ["ENGLISH", "TYPED_SHAPES", "typed_variants"]

TYPED_SHAPES = (
    "english_word",
    "hiragana_loanword_alone",
    "tte",
    "chat",
    "keigo",
    "two_typos",
    "tte_nani",
)
# Loanwords of office software as typed in English (lower case, as typed in chat).
ENGLISH = {
    "パスワード": "password",
    "ログイン": "login",
    "ログアウト": "logout",
    "アカウント": "account",
    "ブラウザ": "browser",
    "キャッシュ": "cache",
    "エラー": "error",
    "メール": "mail",
    "ファイル": "file",
    "ダウンロード": "download",
    "データ": "data",
    "システム": "system",
    "ロック": "lock",
    "リンク": "link",
    "ボタン": "button",
    "メニュー": "menu",
    "ユーザー": "user",
    "アップロード": "upload",
    "コード": "code",
    "バックアップ": "backup",
    "テンプレート": "template",
}
CHAT_ENDINGS = ("んですけど", "っけ？", "？笑", "の？？", "んだけど…", "？w")
KEIGO_OPENINGS = ("恐れ入りますが、", "お伺いしたいのですが、", "")
_KATAKANA_WORD = re.compile(r"[\u30a1-\u30fa\u30fc]{3,}")


def _english(question: str) -> Iterator[Variant]:
    for katakana, english in ENGLISH.items():
        if katakana in question:
            yield Variant("english_word", question.replace(katakana, english, 1))


def _hiragana_alone(question: str) -> Iterator[Variant]:
    for match in _KATAKANA_WORD.finditer(question):
        word = match.group()
        yield Variant(
            "hiragana_loanword_alone", question.replace(word, word.translate(TO_HIRAGANA), 1)
        )


def _tte(question: str) -> Iterator[Variant]:
    match = re.search(r"(?<=[\u3400-\u9fff\u30a1-\u30fa\u30fcA-Za-z0-9])は(?=[^\s])", question)
    if match:
        yield Variant("tte", question[: match.start()] + "って" + question[match.end() :])


def _plain(question: str) -> str:
    """``question`` without its question mark, in the plain form (できますか → できる,
    何ですか → 何): the dictionary form of its last verb before ます."""
    body = re.sub(r"(?:でしょうか|ですか|か)?[？?。！!]*\Z", "", question)
    if not body.endswith("ます"):
        return body
    found = morphemes(body[:-2])
    if not found or found[-1].part_of_speech()[0] != "動詞":
        return body
    last = found[-1]
    return body[: last.begin()] + last.dictionary_form()


def _chat(question: str, rng: random.Random) -> Iterator[Variant]:
    yield Variant("chat", _plain(question) + rng.choice(CHAT_ENDINGS))


def _keigo(question: str, rng: random.Random) -> Iterator[Variant]:
    body = re.sub(r"[？?。！!]*\Z", "", question)
    polite = re.sub(r"(?:ますか|ます)\Z", "ますでしょうか", body)
    polite = re.sub(r"ですか\Z", "でしょうか", polite)
    polite = re.sub(r"を?教えて(?:ください|下さい)?\Z", "をご教示いただけますでしょうか", polite)
    if polite == body:
        polite = f"{_plain(question)}のか、教えていただけますでしょうか"
    yield Variant("keigo", f"{rng.choice(KEIGO_OPENINGS)}{polite}")


def _mistyped(word: str, rng: random.Random) -> str:
    at = rng.randrange(1, len(word))
    return word[:at] + word[at + 1 :] if rng.random() < 0.5 else word[:at] + word[at] + word[at:]


def _two_typos(question: str, rng: random.Random) -> Iterator[Variant]:
    words = list(dict.fromkeys(m.group() for m in _KATAKANA_WORD.finditer(question)))
    if len(words) >= 2:
        first, second = rng.sample(words, 2)
        typed = question.replace(first, _mistyped(first, rng), 1)
        yield Variant("two_typos", typed.replace(second, _mistyped(second, rng), 1))
    elif words and len(words[0]) >= 5:
        word = words[0]
        once = _mistyped(word, rng)
        yield Variant("two_typos", question.replace(word, _mistyped(once, rng), 1))


def _tte_nani(question: str) -> Iterator[Variant]:
    match = re.search(r"[A-Z]{2,}|[\u30a1-\u30fa\u30fc]{3,}", question)
    if match:
        body = re.sub(r"[？?。！!]*\Z", "", question)
        yield Variant("tte_nani", f"{body}？そもそも{match.group()}って何？")


def typed_variants(question: str, seed: int = 0) -> list[Variant]:
    """Every chat-style variant of ``question`` (module docstring); shapes that do not apply
    give none."""
    rng = random.Random(f"typed:{seed}:{question}")
    found = [
        *_english(question),
        *_hiragana_alone(question),
        *_tte(question),
        *_chat(question, rng),
        *_keigo(question, rng),
        *_two_typos(question, rng),
        *_tte_nani(question),
    ]
    return [v for v in found if v.text != question]
