"""One written form for what users type and what the documents say: the retrieval's normalisation.

The same question reaches the help desk written in many ways; the index must see one. Three steps,
each shared by every side that needs it:

- :func:`normalize_text` — the character form (Unicode NFKC): half-width kana become full-width
  (ﾊﾟｽﾜｰﾄﾞ → パスワード), full-width letters, digits and signs become ASCII (ＶＰＮ → VPN,
  ５万件 → 5万件, Ｅ－１００４ → E-1004). Applied to the documents' pieces at ingest and to
  every question at search, for the lexical and the semantic index alike (the lexical analyzer
  also lower-cases: vpn, Vpn and VPN are one term).
- :func:`clean_message` — what surrounds a question in a message and says nothing about its
  topic: office greetings and signatures (お疲れ様です。経理の山田です。… よろしくお願いします。,
  a ``--`` signature block, 【至急】), cushion words (恐れ入りますが、お伺いしたいのですが、),
  pasted URLs (where the user was, not what they ask; the Japanese typed right after one is
  kept), emoji, emoticons (those the dictionary knows too: m(_ _)m, orz), exclamation marks
  and chat laughter (?w, ww, 笑: tone, not topic). Questions only: documents are not
  messages. A message that asks several things is split into its questions
  (:func:`split_questions`), and each question loses the clauses that only frame it
  (:func:`without_framing`: ちょっと質問です！, わかる方いますか？, …？そもそもVPNって何？) and
  ends in one form (no 。, 出ますでしょうか → 出ますか).
- :class:`Spellings` — kana written where the documents use kanji or katakana (けいひ → 経費,
  しょうにん → 承認, ぱすわーど → パスワード): the documents' own nouns by their reading, so a
  hiragana run of a question is written back the way the documents write it. Built from the
  documents' text, the same analyzer at ingest and search (:mod:`keiri_agent.sudachi`).

  The documents' loanwords (katakana words, the runs of parts of their katakana compounds:
  ワンタイム of ワンタイムパスワード, and acronyms by their reading: ぶいぴーえぬ → VPN) are also
  found typed by ear: a long vowel as a vowel kana (めえる, ぱすわあど), a small kana full size
  (ふあいる: :func:`.loanwords.typed_forms`), even where the dictionary reads the kana as grammar
  pieces (ま|に|ゆ|ある), when the sentence reads clearly better with the word and the kana are
  not one word of the language (気がめいる: 滅入る). A katakana word of four kana or more with one
  kana changed (パスワート, ロクイン) is the one documents' word it can be, unless the dictionary
  knows it (コード is not カード).

  A loanword the documents never use is written in katakana when the dictionary knows it
  (ほてる代 → ホテル代, :mod:`keiri_agent.retrieval.loanwords`), and an English word read as one
  of the documents' katakana words is written as theirs (password → パスワード).

Not handled (a policy, benchmarks/README.md): romaji for a Japanese word (pasuwado) is left as
written — nobody types a question in romaji with a Japanese IME; a kana changed in a katakana word
of three kana or less (a short word one kana from another is as likely another word) is left to
the semantic model.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from rapidfuzz.distance import Indel

from keiri_agent.retrieval.loanwords import (
    english_reading,
    katakana_loanwords,
    reads_better,
    typed_forms,
)
from keiri_agent.retrieval.tokenize import MAX_CHUNK_CHARS
from keiri_agent.sudachi import TO_KATAKANA, thread_tokenizer

__all__ = [
    "ASKING_WORDS",
    "GREETINGS",
    "MIN_CHANGED_KANA",
    "MIN_RESPELL_KANA",
    "Spellings",
    "clean_message",
    "normalize_text",
    "split_questions",
    "without_framing",
]

# A kana run shorter than this is not written back: two-kana readings are too often a piece of
# an ending (でき・ない → 出来・内) to be a word.
MIN_RESPELL_KANA = 3
MAX_READING_KANA = 16  # the longest reading looked up (compound nouns of the manuals)
# Two typos in one katakana word (パワワード, ロアウウト) are corrected only between long words:
# a short word two kana away from a documents' word is as likely another word.
MIN_TWO_TYPOS_KANA = 4  # the word as typed
MIN_TWO_TYPOS_WORD_KANA = 5  # the documents' word
# One kana changed (ロクイン → ログイン) is corrected from four kana: a word of three one kana
# away from a documents' word is as likely another word (ロール / ルール).
MIN_CHANGED_KANA = 4

# A URL is the characters a URL is written in (RFC 3986, quotes and brackets left out: they
# enclose it): it ends at the first other one, so Japanese typed right after it without a space
# (www.example.comを開くと) stays the question's. A path in Japanese (rare: a browser copies it
# percent-encoded) is left as words.
_URL = re.compile(r"(?:(?:https?|ftp)://|www\.)[A-Za-z0-9\-._~:/?#\[\]@!$&*+,;=%]+")
_EMOJI = re.compile(
    "[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\u200d\ufe0f\u20e3\U0001f3fb-\U0001f3ff]+"
)
# An emoticon: a parenthesis followed by face characters only ((^^; (T_T) (>_<) (´・ω・｀)).
_EMOTICON = re.compile(r"[(（][\^_;TｰoO0・ω∀´｀`'\-*><°▽≧≦~〜;。゜.ﾟ]{2,8}[)）]?")
_EMPHASIS = re.compile(r"!{2,}|!+(?=\?)|!+\s*\Z")  # 急いでます!! / 至急!: tone, not topic
# Laughter closing a chat message (…見られます?w, …っけ?笑, (笑)): tone, not topic.
_LAUGHTER = re.compile(r"(?<=[^A-Za-z0-9])(?:w+|笑+)\s*\Z|[(]笑[)]")
_LABEL = re.compile(r"[【\[［][^】\]］]{1,8}[】\]］]")  # 【至急】【質問】
_SIGNATURE = re.compile(r"\n\s*(?:-{2,}|ー{2,}|―{2,}|_{3,}|={3,}|\*{3,})\s*\n.*\Z", re.S)
# Formulas of office mail and chat around a question (polite openings, closings, thanks).
GREETINGS = (
    r"(?:いつも)?(?:大変)?お世話にな(?:っており|り)ます",
    r"お疲れ(?:様|さま)です",
    r"おつかれさまです",
    r"お忙しいところ(?:恐れ入りますが|すみません|失礼します)?",
    r"失礼(?:いた)?します",
    r"すみません",
    r"すいません",
    r"こんにちは",
    r"おはようございます",
    r"(?:以上、?)?(?:どうぞ)?(?:よろしく|宜しく)お願い(?:いた|致)?します",
    r"(?:以上、?)?お手数(?:です|をおかけします)が[^。\n]*",
    r"ご確認(?:を)?お願い(?:いた)?します",
    r"ご確認ください",
    # Cushion words before a question (クッション言葉).
    r"(?:大変)?(?:恐れ入ります|恐縮です)が[、,]?",
    r"(?:お|ご)?(?:伺い|聞き|質問)(?:したい|させていただきたい)のですが[、,]?",
    r"(?:ちょっと)?(?:聞きたい|質問な)んですけど[、,]?",
)
_GREETING = re.compile("|".join(GREETINGS))
# A self-introduction opening the message: 経理の山田です / 営業部の佐藤です. A name has no
# hiragana: 帳票のロゴを変えたいんですが、 is a question, not who asks it.
_INTRODUCTION = re.compile(
    r"\A\s*[^。！？!?\n]{1,12}の[^。！？!?\n\u3041-\u3096]{1,8}です(?:が)?[。、\n]"
)
# A hyphen between kana is a long vowel typed in half-width mode (め-る, ぱすわ-ど).
_KANA_HYPHEN = re.compile(r"(?<=[\u3041-\u3096\u30a1-\u30fa])[-‐−](?=[\u3041-\u3096\u30a1-\u30fa])")
_CLOSING_NAME = re.compile(r"[（(][^）)\n]{1,16}[）)]\s*\Z|\n[^\n。？?]{1,8}\s*\Z")
_ANOTHER = re.compile(
    r"(?:(?<=[。?!\n])|\A)\s*(?:あと|それと|それから|また|もう一つ|もうひとつ)[、,]"
)
_ASKS = re.compile(
    r"(?:[?]|か|かな|の|教えて(?:ください|下さい)?|知りたい|たい(?:です)?|ほしい(?:です)?"
    r"|ください|下さい|いただけますか|どうすれば(?:いい|よい)?|どうなる)[。]?\s*\Z"
)
# Words about the asking, not its topic (normal forms): to ask, know, understand, tell, help,
# the one who knows, the matter asked about, urgency and convenience.
ASKING_WORDS = frozenset(
    {
        "質問",
        "聞く",
        "伺う",
        "尋ねる",
        "教える",
        "知る",
        "分かる",
        "御存知",
        "存じる",
        "確認",
        "相談",
        "助かる",
        "願う",
        "言う",
        "失礼",
        "恐縮",
        "方",
        "人",
        "件",
        "事",
        "こと",
        "抑",  # そもそも
        "話",
        "後",
        "時",
        "手すき",
        "急ぎ",
        "至急",
        "初歩",
    }
)
_COPULA = frozenset({"だ", "です", "ます"})
_COMPOUND_PARTICLE_VERBS = frozenset({"つく", "就く", "関する", "対する"})
# Politeness stacked on a question's end says no more than one polite form: one form for both.
_STACKED_POLITE = re.compile(r"ますでしょうか(?=[?]*\Z)")
_PREDICATE_POS = frozenset({"動詞", "形容詞", "形状詞"})
# Where a clause ends: after 。、？！…, a line end, or a space between words.
_CLAUSE_END = re.compile(r"(?<=[。、,？！?!…\n])|(?<=\.\.\.)|(?<=[^\x00-\x7f]) ")
_SPACES = re.compile(r"[ \t\u3000]+")
_STRAY = re.compile(r"\A[\s。、,，.!！]+|[\s。、,，]+\Z")  # a question ends without 。: one form
# Inflecting parts of speech (:class:`_Inflections`). One-kana auxiliaries and particles are not
# trusted: Sudachi reads a kana word it does not know as such pieces (ぱ・す・わー・ど).
_INFLECTED_POS = frozenset({"動詞", "形容詞"})
MIN_AUXILIARY_CHARS = 2
_NO_WORD_START = frozenset("ァィゥェォャュョヮッンー")  # kana that never begin a word
_HIRAGANA_RUN = re.compile(r"[\u3041-\u3096ー]+")
_KATAKANA = re.compile(r"[\u30a1-\u30faー]+")
_KANJI_OR_KATAKANA = re.compile(r"[\u3400-\u9fff\uf900-\ufaff々\u30a1-\u30fa]")
# An acronym of the documents written back from its reading (ぶいぴーえぬ → VPN); two letters
# are as often a unit or a code read as a word (MM: ミリメートル, MB: メガバイト).
_ACRONYM = re.compile(r"[A-Z]{3,}")
# A Latin word on its own: not a piece of an address, a path or a name (password.txt, user@…).
_LATIN_WORD = re.compile(r"(?<![A-Za-z0-9@./\\_-])[A-Za-z]+(?![A-Za-z0-9@./\\_-])")


def normalize_text(text: str) -> str:
    """``text`` in Unicode NFKC: one width for kana, letters, digits and signs."""
    return unicodedata.normalize("NFKC", text)


def clean_message(text: str) -> str:
    """The question of a message: ``text`` normalized (:func:`normalize_text`) without greetings,
    signature, URLs, emoji and emoticons (module docstring). When nothing else is left, the
    normalized text is the question."""
    normalized = normalize_text(text)
    cleaned = _SIGNATURE.sub("", normalize_text(_without_emoticons(text)) + "\n")
    cleaned = _KANA_HYPHEN.sub("ー", cleaned)
    for pattern in (_URL, _EMOJI, _EMOTICON, _EMPHASIS, _LAUGHTER, _LABEL, _GREETING):
        cleaned = pattern.sub(" ", cleaned)
    cleaned = re.sub(r"\s*([。、！？!?])(?:\s*[。、])+", r"\1", cleaned)
    cleaned = re.sub(r"\s+([。、?!])", r"\1", cleaned)
    cleaned = _INTRODUCTION.sub("", _STRAY.sub("", cleaned))
    cleaned = _CLOSING_NAME.sub("", cleaned.strip())
    cleaned = _STRAY.sub("", _SPACES.sub(" ", cleaned)).strip()
    return cleaned if re.search(r"\w", cleaned) else normalized.strip()


def _without_emoticons(text: str) -> str:
    """``text`` without the emoticons the dictionary knows (m(_ _)m, orz, (;´Д`): Sudachi's
    補助記号-ＡＡ), read before NFKC, which takes their accents apart."""
    kept: list[str] = []
    for start in range(0, len(text), MAX_CHUNK_CHARS):
        chunk = text[start : start + MAX_CHUNK_CHARS]
        at = 0
        for morpheme in thread_tokenizer().tokenize(chunk):
            if morpheme.part_of_speech()[:2] == ("補助記号", "ＡＡ"):
                kept += [chunk[at : morpheme.begin()], " "]
                at = morpheme.end()
        kept.append(chunk[at:])
    return "".join(kept)


def split_questions(text: str) -> list[str]:
    """The questions of a message (cleaned: :func:`clean_message`, without what only frames
    them: :func:`without_framing`), in order.

    A message asks several things when it goes on to another with あと、 / それと、 / それから、 /
    また、 / もう一つ、, or when two or more of its lines are questions (end in a question mark,
    か, or a request: 教えて, 知りたい, したい, ほしい…). A line that only states something is the
    context of the question after it (在宅勤務です。\nVPN なしで使えますか). Sentences of one line
    are one question: the second usually narrows the first (使えるブラウザは？IE でも動きますか).
    """
    cleaned = clean_message(text)
    questions: list[str] = []
    for part in _ANOTHER.split(cleaned):
        if re.search(r"\w", part):
            questions.extend(_ending(without_framing(asked)) for asked in _asked(part.strip()))
    return questions or [cleaned]


def without_framing(question: str) -> str:
    """``question`` without the clauses that only frame it: about the asking itself (ちょっと
    質問です, わかる方いますか？, 教えてもらえると助かります, …のか、教えていただけますでしょうか:
    :data:`ASKING_WORDS`), or asking again what a word of the rest means (…ですか？そもそも
    ホテルって何？, ホテル代の件です。…). A clause is cut at 。、？！, a line end or a space;
    it frames when its nouns are asking words or words of the rest of the question, its verbs
    and adjectives are asking words (or light ones: いる, もらう, ください, when it names no
    topic), and, when it repeats a word of the rest, its only auxiliaries are the copula and
    ます (ログインできない。ログインの… keeps its first clause: it says something of its own).
    A question that is nothing but framing is left as it is."""
    clauses = [clause for clause in _CLAUSE_END.split(question) if clause]
    if len(clauses) < 2:
        return question
    read = [_Clause(clause) for clause in clauses]
    kept = list(range(len(clauses)))
    for index in range(len(clauses)):
        rest = set().union(*(read[other].words for other in kept if other != index))
        if rest and re.search(r"\w", clauses[index]) and read[index].frames(rest):
            kept.remove(index)
    if len(kept) == len(clauses):
        return question
    return _STRAY.sub("", "".join(clauses[index] for index in kept)).strip()


class _Clause:
    """A clause's words as :func:`without_framing` weighs them (Sudachi, split mode C, and the
    mode-A parts of its nouns: ホテル代 is ホテル and 代 too)."""

    def __init__(self, text: str) -> None:
        from sudachipy import SplitMode

        self.words: set[str] = set()  # its nouns, verbs and adjectives other than asking words
        self.nouns: set[str] = set()
        self.predicate = False  # a verb or adjective of its own (not an asking or light one)
        self.light = False  # a light verb or adjective (いる, もらう, ない, いい)
        self.auxiliary = False  # an auxiliary other than the copula and ます (ない, たい, れる)
        morphemes = list(thread_tokenizer().tokenize(text))
        for at, morpheme in enumerate(morphemes):
            pos = morpheme.part_of_speech()
            word = morpheme.normalized_form()
            if _in_compound_particle(morphemes, at):
                continue
            if pos[0] == "助動詞":
                self.auxiliary |= word not in _COPULA
            elif pos[0] == "名詞" and pos[1] != "数詞" and word not in ASKING_WORDS:
                parts = {part.normalized_form() for part in morpheme.split(SplitMode.A)}
                self.nouns |= parts | {word}
            elif pos[0] in _PREDICATE_POS and word not in ASKING_WORDS:
                if pos[1] == "非自立可能":
                    self.light = True
                else:
                    self.predicate = True
                    self.words.add(word)
        self.words |= self.nouns

    def frames(self, rest: set[str]) -> bool:
        """Whether this clause only frames a question whose other clauses say ``rest``."""
        if self.predicate or not self.nouns <= rest:
            return False
        return not self.nouns or not (self.light or self.auxiliary)


def _ending(question: str) -> str:
    """One form for a question's end: no 。 after it, one polite form (出ますでしょうか →
    出ますか: the politeness stacked on it says no more)."""
    return _STACKED_POLITE.sub("ますか", _STRAY.sub("", question).strip())


def _asked(text: str) -> list[str]:
    lines = [line.strip() for line in text.splitlines() if re.search(r"\w", line)]
    asks = [_ASKS.search(line) is not None for line in lines]
    if sum(asks) < 2:
        return [text]
    questions: list[str] = []
    context: list[str] = []
    for line, ask in zip(lines, asks, strict=True):
        context.append(line)
        if ask:
            questions.append("\n".join(context))
            context = []
    if context:  # statements after the last question belong to it
        questions[-1] += "\n" + "\n".join(context)
    return questions


class Spellings:
    """The documents' nouns by their reading (katakana): how a kana run is written back.

    Built with :meth:`from_texts` from the documents themselves; :meth:`respell` writes each
    hiragana run of a question with the longest readings it holds, left to right.
    """

    def __init__(self, by_reading: Mapping[str, str], latin: Iterable[str] = ()) -> None:
        self.by_reading = dict(by_reading)
        # Latin words the documents use themselves (lower case): never rewritten in katakana.
        self.latin = frozenset(word.lower() for word in latin)
        katakana = {word for word in self.by_reading.values() if _KATAKANA.fullmatch(word)}
        self._katakana = katakana
        self._long = {word for word in katakana if len(word) >= MIN_TWO_TYPOS_WORD_KANA}
        # A word with one kana left out → the word (several words: ambiguous, never used).
        self._missing_one = _unambiguous(
            (typed, word) for word in katakana for typed in _one_left_out(word)
        )
        self._loanwords = {
            word
            for word in self.by_reading.values()
            if _KATAKANA.fullmatch(word) or _ACRONYM.fullmatch(word)
        }
        # The loanwords' readings as they are also typed (メエル, パスワアド, フアイル: one word
        # each, never a reading of the documents' own).
        self._typed = {
            typed: word
            for typed, word in _unambiguous(
                (typed, word)
                for reading, word in self.by_reading.items()
                if word in self._loanwords
                for typed in typed_forms(reading)
            ).items()
            if word is not None and typed not in self.by_reading
        }

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> Spellings:
        """Every noun of ``texts`` written with kanji or katakana, under its reading (the most
        frequent spelling when several share one: 振込 and 振り込み), and their Latin words."""
        from sudachipy import SplitMode

        tokenizer = thread_tokenizer()
        counts: dict[str, Counter[str]] = {}
        latin: set[str] = set()
        for text in texts:
            normalized = normalize_text(text)
            latin.update(_LATIN_WORD.findall(normalized))
            for start in range(0, len(normalized), MAX_CHUNK_CHARS):
                for word in _words(
                    tokenizer.tokenize(normalized[start : start + MAX_CHUNK_CHARS]), SplitMode.A
                ):
                    surface, reading = word.surface(), word.reading_form()
                    if word.part_of_speech()[0] != "名詞" or not (
                        _KANJI_OR_KATAKANA.search(surface)
                        or (_ACRONYM.fullmatch(surface) and _KATAKANA.fullmatch(reading))
                    ):
                        continue
                    if MIN_RESPELL_KANA <= len(reading) <= MAX_READING_KANA:
                        counts.setdefault(reading, Counter())[surface] += 1
        return cls({reading: seen.most_common(1)[0][0] for reading, seen in counts.items()}, latin)

    def respell(self, text: str) -> str:
        """``text`` with its hiragana runs written as the documents write them (けいひの申請 →
        経費の申請, めえる → メール: a loanword typed by ear, module docstring), and a katakana
        word the documents lack that is one of theirs with one kana left out or one too many
        (アカウン, レイイアウト → アカウント, レイアウト), typed by ear (メエル), one kana changed
        in a word of four or more (ロクイン → ログイン), or two in a long word (パワワード →
        パスワード: :data:`MIN_TWO_TYPOS_KANA`); never a word the dictionary knows (コード is not
        a typo of カード). A hiragana loanword the
        documents lack is written in katakana when the dictionary knows it (ほてる代 → ホテル代,
        ろご → ロゴ: :func:`.loanwords.katakana_loanwords`), an English word the documents do not
        use but whose reading is one of their katakana words is written as theirs (password →
        パスワード). What no word matches is left as written, and so are verbs, adjectives and
        auxiliary verbs (いない is not 以内, でしょうか is not で章か, whatever the documents
        hold)."""
        inflections = _Inflections(text)
        respelled = _HIRAGANA_RUN.sub(
            lambda match: self._run(match.group(), match.start(), inflections), text
        )
        respelled = katakana_loanwords(respelled)
        respelled = _KATAKANA.sub(lambda match: self._typo(match.group()), respelled)
        return _LATIN_WORD.sub(lambda match: self._english(match.group()), respelled)

    def _english(self, word: str) -> str:
        if word.lower() in self.latin:
            return word
        reading = english_reading(word)
        spelled = None if reading is None else self.by_reading.get(reading)
        if spelled is None or spelled not in self._katakana:
            return word
        return spelled

    def _typo(self, word: str) -> str:
        if len(word) < MIN_RESPELL_KANA or word in self._katakana or _is_word(word):
            return word
        # One kana left out, or typed by ear (メエル).
        corrected = self._missing_one.get(word) or self._typed.get(word)
        if corrected is None:  # one kana too many
            found = {w for w in _one_left_out(word) if w in self._katakana}
            corrected = found.pop() if len(found) == 1 else None
        if corrected is None and len(word) >= MIN_CHANGED_KANA:  # one kana changed
            found = {w for w in self._katakana if len(w) == len(word) and _one_changed(word, w)}
            corrected = found.pop() if len(found) == 1 else None
        if corrected is None and len(word) >= MIN_TWO_TYPOS_KANA:  # two kana left out or extra
            near = {w for w in self._long if Indel.distance(word, w, score_cutoff=2) <= 2}
            corrected = near.pop() if len(near) == 1 else None
        return corrected or word

    def _run(self, run: str, offset: int, inflections: _Inflections) -> str:
        out: list[str] = []
        start = 0
        kana = run.translate(TO_KATAKANA)
        while start < len(run):
            spelled, end = self._longest(kana, start)
            span = range(offset + start, offset + end)
            if spelled is not None and (
                inflections.allow(span)
                or (spelled in self._loanwords and reads_better(inflections.text, span, spelled))
            ):
                out.append(spelled)
                start = end
            else:  # never a shorter word where the longest one is inflection (しょうにん|され)
                out.append(run[start])
                start += 1
        return "".join(out)

    def _longest(self, kana: str, start: int) -> tuple[str | None, int]:
        for end in range(
            min(len(kana), start + MAX_READING_KANA), start + MIN_RESPELL_KANA - 1, -1
        ):
            if end < len(kana) and kana[end] in _NO_WORD_START:
                continue  # a word never ends in the middle of a mora (でんし|ゃ)
            spelled = self.by_reading.get(kana[start:end]) or self._typed.get(kana[start:end])
            if spelled is not None:
                return spelled, end
        return None, start


class _Inflections:
    """Where ``text`` inflects (Sudachi, split mode C): a kana span is a noun's reading only if
    it holds no auxiliary verb of two or more characters (ない, よう, でしょう), no dependent verb
    or adjective (し・い of していない, いい) and at most one other verb, in its continuative form
    (ふりこみ and とりけし are 振込 and 取消 written in kana; いない is not 以内, でしょう is not
    章, whatever the documents hold)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.hard: set[int] = set()
        self.verb_of: dict[int, int] = {}
        for start in range(0, len(text), MAX_CHUNK_CHARS):
            for morpheme in thread_tokenizer().tokenize(text[start : start + MAX_CHUNK_CHARS]):
                pos = morpheme.part_of_speech()
                span = range(start + morpheme.begin(), start + morpheme.end())
                if pos[0] == "助動詞" and len(span) >= MIN_AUXILIARY_CHARS:
                    self.hard.update(span)
                elif pos[0] in _INFLECTED_POS:
                    if pos[1] == "非自立可能" or not pos[5].startswith("連用形"):
                        self.hard.update(span)
                    self.verb_of.update(dict.fromkeys(span, span.start))

    def allow(self, span: range) -> bool:
        verbs = {self.verb_of[i] for i in span if i in self.verb_of}
        return self.hard.isdisjoint(span) and len(verbs) <= 1


def _in_compound_particle(morphemes: list[Any], at: int) -> bool:
    """Whether the verb at ``at`` is the middle of a compound particle: に|つい|て, に|関し|て,
    に|対し|て (について is "about", not a verb of the question)."""
    return (
        0 < at < len(morphemes) - 1
        and morphemes[at].normalized_form() in _COMPOUND_PARTICLE_VERBS
        and morphemes[at - 1].surface() == "に"
        and morphemes[at + 1].surface() == "て"
    )


def _is_word(katakana: str) -> bool:
    """Whether the dictionary knows ``katakana`` as one word (スキャン: not a typo)."""
    morphemes = list(thread_tokenizer().tokenize(katakana))
    return len(morphemes) == 1 and not morphemes[0].is_oov()


def _one_changed(typed: str, word: str) -> bool:
    return sum(a != b for a, b in zip(typed, word, strict=True)) == 1


def _one_left_out(word: str) -> set[str]:
    return {word[:at] + word[at + 1 :] for at in range(len(word))}


def _words(morphemes: Iterable[Any], split_a: Any) -> Iterator[Any]:
    """Each morpheme (split mode C: compounds whole), its mode-A parts and, for a katakana
    compound, each run of its parts (ワンタイムパスワード: ワン, タイム, パスワード and ワンタイム,
    タイムパスワード: a user says ワンタイム alone)."""
    for morpheme in morphemes:
        yield morpheme
        parts = list(morpheme.split(split_a))
        yield from parts
        if len(parts) > 2 and _KATAKANA.fullmatch(morpheme.surface()):
            for first, last in itertools.combinations(range(len(parts) + 1), 2):
                if 1 < last - first < len(parts):
                    yield _Run(parts[first:last])


class _Run:
    """Consecutive mode-A parts of a compound, read as one noun (:func:`_words`)."""

    def __init__(self, parts: list[Any]) -> None:
        self._surface = "".join(part.surface() for part in parts)
        self._reading = "".join(part.reading_form() for part in parts)

    def surface(self) -> str:
        return self._surface

    def reading_form(self) -> str:
        return self._reading

    def part_of_speech(self) -> tuple[str, ...]:
        return ("名詞", "普通名詞")


def _unambiguous(pairs: Iterable[tuple[str, str]]) -> dict[str, str | None]:
    """key → its one value (None where several values share the key: ambiguous, never used)."""
    found: dict[str, str | None] = {}
    for key, value in pairs:
        known = found.get(key, value)
        found[key] = value if known == value else None
    return found
