"""People named at a line's head with no label before them, where the lines around say who:

- a chat's speaker before the line's colon (``佐藤：了解です``, ``[10:02] タイガ: 確認します``):
  a line with a time before it, or a head that begins two or more lines of a run of such lines,
  each a sentence after its colon (a form's labels head one value each: 件名：経費精算). A word
  that may head a form's or an agenda's line (質問：, 回答：, 備考：, 10:30 昼食：) is a speaker
  only where its place says so: it takes turns with a person's name (朝陽：了解です / 佐藤：… /
  朝陽：…; 唯, read ただ alone, too), or with another such word in lines that reply as a chat's
  do (朝陽：了解です / 大地：承知しました！ / 朝陽：…; 質問 / 回答, both naming acts, stay), or it
  stands after a chat log's time stamp ([10:02] 朝陽：…) or before a reply (10:02 希望：了解です;
  10:30 昼食：弁当を配ります。 stays);
- a mail signature's signer: the words on the line under the signature's rule (--, ――――) or
  on the line before a contact line (TEL：…, Mail：…), or on the next line when that one holds
  the signer's department or company alone, after that department or company (経理部 佐藤朝陽),
  when they begin with a surname the dictionary knows; and on a mail's last line, under its
  closing line (よろしくお願いいたします。, 以上です。) or under a department or company alone.

Each is then a value under a person's label (``headers.person_in``): a word that names no one
(システム as a bot's name, 経理部) stays, a given name that is a common word (ヒナ, 朝陽) does not.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from keiri_agent.privacy.headers import (
    NAME_PART_HEADERS,
    header_kind,
    looks_like_company,
    names_business_number,
    person_in,
)
from keiri_agent.privacy.kana_names import NAME_CHARS, known_as_name, names_no_one
from keiri_agent.privacy.kinds import PersonalKind, Span
from keiri_agent.sudachi import thread_tokenizer

__all__ = ["line_people"]

_TIME = r"[\[［(（]?\d{1,2}[:：]\d{2}(?:[:：]\d{2})?[\]］)）]?[ 　]+"
_SPEAKER = re.compile(
    rf"(?P<time>{_TIME})?(?P<name>[^\s:：\[\]［］()（）0-9０-９]{{1,12}}"
    r"(?:[ 　][^\s:：0-9０-９]{1,6})?)[ 　]*[:：][ 　]*(?P<said>\S[^\n]*)"
)
# What a chat line says: a sentence, ending as one does.
_SENTENCE = re.compile(r"(?:[。！？!?…w笑]|です|ます|した|ません|ください)[ねよ]?[ 　]*$")
# A contact line: a phone's or a mail's label, and its value.
_CONTACT = re.compile(r"[ 　]*(?P<label>[^\s:：0-9０-９]{1,10})[ 　]*[:：]?[ 　]*(?P<value>\S+)")
_CONTACT_KINDS = (PersonalKind.PHONE, PersonalKind.EMAIL)
# The rule a mail's signature begins under (--, ――――, *****, ====).
_RULE = re.compile(r"[ 　]*(?:-{2,}|[―─━_＿=＝*＊~〜]{3,})[ 　]*")


def _lines(text: str) -> list[tuple[int, str]]:
    offset, lines = 0, []
    for line in text.split("\n"):
        lines.append((offset, line))
        offset += len(line) + 1
    return lines


_KANJI = re.compile(r"[一-龥々]+")


# A given name of recent years as it may head a chat's line alone: one or two kanji (唯, 心).
_KANJI_NAME = re.compile(r"[一-龥々]{1,2}")


def _heading(word: str) -> bool:
    """A word that may head a form's or an agenda's line: one naming an act (質問, 回答, 連絡),
    or a common noun in kanji the dictionary knows as no name (備考, 昼食, 件名; 朝陽 and 希望
    too, given names of recent years: :func:`_takes_turns` tells them)."""
    morphemes = thread_tokenizer().tokenize(word)
    if len(morphemes) != 1:
        return False
    pos = morphemes[0].part_of_speech()
    return pos[2] == "サ変可能" or (
        pos[1] == "普通名詞" and _KANJI.fullmatch(word) is not None and not known_as_name(word)
    )


def _partners(names: list[str], name: str) -> set[str]:
    """The heads that stand between the lines ``name`` heads in a run: who it takes turns with
    (朝陽：了解です / 大地：… / 朝陽：…). A heading heads its lines once, or in a row (備考：… /
    備考：…)."""
    places = [at for at, head in enumerate(names) if head == name]
    return set(names[places[0] : places[-1]]) - {name}


def _takes_turns(names: list[str], name: str) -> bool:
    """Whether ``name`` takes turns with a person's name (朝陽：了解です / 佐藤：… / 朝陽：…)."""
    return any(_plain_name(head) for head in _partners(names, name))


def _plain_name(head: str) -> bool:
    """A head that is a name and no heading (佐藤, 佐藤 唯, タイガ)."""
    return not _heading(head) and person_in(head) is not None


def _act(word: str) -> bool:
    """A word naming an act (質問, 回答, 報告, 開始): a Q&A's or an agenda's heading."""
    morphemes = thread_tokenizer().tokenize(word)
    return len(morphemes) == 1 and morphemes[0].part_of_speech()[2] == "サ変可能"


# What a chat's line says and a form's or an agenda's does not: a reply (了解です, 承知しました,
# ありがとうございます), a sentence ending in ね / よ, an exclamation, a laugh.
_REPLY = re.compile(
    r"了解|承知|ありがと|お疲れ|おつかれ|よろしく|すみません|[ねよ][。！!]*[ 　]*$|[！!w笑][ 　]*$"
)
# A chat log's time stamp: in brackets ([10:02]) or to the second (10:02:15); an agenda's time
# stands bare (10:30 昼食：…).
_STAMP = re.compile(r"[\[［(（].*|.*\d[:：]\d{2}[:：]\d{2}.*")


def _chatting(names: list[str], said: list[str], name: str) -> bool:
    """Whether ``name``, a word that may head a form's or an agenda's line (朝陽, 希望), heads
    a chat's lines: it takes turns with other heads or speaks between another's turns, not all
    naming acts as a Q&A's do (質問 / 回答), in lines some of which reply (了解です, 承知しました！)."""
    partners = _partners(names, name) | {
        head for head in set(names) if name in _partners(names, head)
    }
    return (
        bool(partners)
        and not all(_act(head) for head in {name, *partners})
        and any(_REPLY.search(line) for line in said)
    )


def _timed(match: re.Match[str], name: str) -> bool:
    """Whether a line with a time before it is a chat's line headed by ``name``: a log's stamp
    ([10:02] 朝陽：…) before a head naming no act, or a reply (10:02 朝陽：了解です); an agenda's
    time heads its items (10:30 昼食：弁当を配ります。)."""
    if match.group("time") is None:
        return False
    if not _heading(name):
        return True
    return (_stamped(match) and not _act(name)) or _REPLY.search(match.group("said")) is not None


def _stamped(match: re.Match[str]) -> bool:
    """Whether the line has a chat log's time stamp before it ([10:02], 10:02:15)."""
    time = match.group("time")
    return time is not None and _STAMP.fullmatch(time.strip(" 　")) is not None


def _speakers(lines: list[tuple[int, str]]) -> Iterator[Span]:
    run: list[tuple[int, re.Match[str]]] = []
    for offset, line in [*lines, (0, "")]:
        match = _SPEAKER.fullmatch(line)
        label = match.group("name").strip() if match else ""
        if (
            match is not None
            and _SENTENCE.search(match.group("said"))
            # a label heads a form's value; a given name that is a name part's header (メイ) may speak
            and (header_kind(label) is None or label in NAME_PART_HEADERS)
            and not names_business_number(label)
        ):
            run.append((offset, match))
            continue
        names = [m.group("name").strip() for _, m in run]
        said = [m.group("said") for _, m in run]
        heads = Counter(names)
        # who takes turns, and who speaks once between the turns of another (朝陽 / 大地 / 朝陽)
        between = {head for name in heads for head in _partners(names, name)}
        for place, (at, spoken) in enumerate(run):
            name = names[place]
            if _heading(name):
                speaks = (
                    _takes_turns(names, name)
                    or _chatting(names, said, name)
                    or _timed(spoken, name)
                )
            else:
                speaks = _timed(spoken, name) or (
                    len(run) >= 2 and (heads[name] >= 2 or name in between)
                )
            if not speaks:
                continue
            found = person_in(name)
            if (
                found is None
                and _KANJI_NAME.fullmatch(name)
                and (_takes_turns(names, name) or _stamped(spoken))
            ):
                found = name  # 唯, read ただ (a conjunction) alone: its place says a person
            if found is not None:
                start = at + spoken.start("name") + spoken.group("name").find(found)
                yield Span(start, start + len(found), PersonalKind.PERSON)
        run = []


def _organization(part: str) -> bool:
    return looks_like_company(part) or names_no_one(part)


def _signer(offset: int, line: str) -> Span | None:
    """The signer on ``line``: its words after a department or company, when they begin with a
    surname."""
    parts = [m for m in re.finditer(r"[^ 　]+", line.strip(" 　"))]
    shift = len(line) - len(line.lstrip(" 　"))
    while parts and _organization(parts[0].group()):
        parts.pop(0)
    if not 1 <= len(parts) <= 2:
        return None
    rest = line.strip(" 　")[parts[0].start() : parts[-1].end()]
    first = thread_tokenizer().tokenize(rest)[0].surface()
    found = person_in(rest)
    if found is None or not known_as_name(first, ("姓",)):
        return None
    start = offset + shift + parts[0].start() + rest.find(found)
    return Span(start, start + len(found), PersonalKind.PERSON)


def _first_signer(block: list[tuple[int, str]]) -> Span | None:
    """The signer on the first of ``block``'s lines, or on the next when the first holds a
    department or a company alone."""
    for offset, line in block:
        if not line.strip(" 　"):
            return None
        span = _signer(offset, line)
        if span is not None or not all(_organization(part) for part in line.split()):
            return span
    return None


def _signers(lines: list[tuple[int, str]]) -> Iterator[Span]:
    for index, (_, line) in enumerate(lines):
        contact = _CONTACT.match(line)
        if _RULE.fullmatch(line):
            span = _first_signer(lines[index + 1 : index + 3])
        elif contact is not None and header_kind(contact.group("label")) in _CONTACT_KINDS:
            span = _first_signer(lines[max(0, index - 2) : index][::-1])
        else:
            continue
        if span is not None:
            yield span


# A mail's closing line (よろしくお願いいたします。, 以上です。, 敬具): the signer may follow.
_CLOSING = re.compile(
    r".*(?:お願い(?:いた|致)?します|お願い申し上げます|以上(?:です|となります)?|敬具|草々)[。！!]*[ 　]*"
)


def _last_signer(lines: list[tuple[int, str]]) -> Span | None:
    """The signer on a mail's last line, under a closing line (よろしくお願いいたします。) or a
    line holding a department or a company alone (経理部), blank lines aside."""
    written = [(offset, line) for offset, line in lines if line.strip(" 　")]
    if len(written) < 2 or not _words_alone(written[-1][1]):
        return None
    above = written[-2][1]
    if _CLOSING.fullmatch(above.strip(" 　")) is None and not (
        _words_alone(above) and all(_organization(part) for part in above.split())
    ):
        return None
    return _signer(*written[-1])


def _words_alone(line: str) -> bool:
    """Whether ``line`` holds words alone, spaces between (経理部, 佐藤 朝陽): no row of cells."""
    return all(NAME_CHARS.fullmatch(part) for part in line.split())


def line_people(text: str) -> list[Span]:
    """The chat speakers and signature signers of ``text``."""
    lines = _lines(text)
    last = _last_signer(lines)
    return [*_speakers(lines), *_signers(lines), *([] if last is None else [last])]
