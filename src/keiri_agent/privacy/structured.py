"""Personal data masked inside JSON: tool-call arguments, tool results, structured replies.

A provider takes a tool call's arguments as JSON text for the tool's schema, and a model reads a
JSON tool result or record as data. Masking such text as prose would miss what only its key says
(``{"口座番号": "3958211"}``: seven digits alone are no account number) and what JSON escapes hide
(``"連絡先\\n090-4412-7788"``: the ``n`` glued to the number). Here a JSON value is walked:
a string under a personal key (``privacy.headers.header_kind``: 氏名, 電話, 口座番号...) becomes the
placeholder of that kind as a whole (under a number's key only if it holds a digit, under an
e-mail key only if it holds an at sign: 不明 stays 不明), any other string is masked as text, keys are masked as text,
and booleans and null stay as they are. A number is data too: records read from a table, plan
values and tool results carry account, phone and employee numbers as JSON numbers
(``{"口座番号": 1234567}``, a phone number that lost its leading 0 as ``312345678``, a column
with blanks as ``1234567.0``). An integer under a personal key of a numbered kind becomes that
kind's placeholder, and any other integer is masked when its digits read as an identifier by
form (a マイナンバー or a card number with a valid check digit) or are a value the job has
learnt; amounts, counts and other numbers stay numbers. The result is JSON again, with the same
keys; its types are the same but where a number was masked (a placeholder is a string), as the
value it hid must not reach the model in any type. Text that is not valid JSON (a truncated
tool call) is masked as text with its escapes
read as line breaks.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from keiri_agent.privacy.headers import (
    MAX_LABELLED_CHARS,
    header_kind,
    holds_no_one,
    non_personal_header,
)
from keiri_agent.privacy.kinds import PersonalKind
from keiri_agent.privacy.vault import MIN_KNOWN_CHARS, Vault, placeholder_pattern

__all__ = ["mask_json_text", "mask_structured"]

# A JSON escape (\n, \", \u00e9...): read as line breaks of the same length when detecting.
_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|.)", re.DOTALL)
_PLACEHOLDER = placeholder_pattern()
# Under a key of these kinds a value without a digit (不明, 未登録) is no identifier.
_NUMBERED = frozenset(
    (
        PersonalKind.MY_NUMBER,
        PersonalKind.CARD,
        PersonalKind.ACCOUNT,
        PersonalKind.PHONE,
        PersonalKind.EMPLOYEE_ID,
        PersonalKind.ID_CARD,
    )
)
# Under a key of these kinds an integer is the identifier itself (口座番号 1234567, 郵便番号
# 1500002, 生年月日 19850401).
_NUMBERED_VALUES = _NUMBERED | {PersonalKind.ADDRESS, PersonalKind.BIRTH_DATE}
_DIGIT = re.compile(r"[0-9０-９]")
_AT = re.compile(r"[@＠]")


def _text(vault: Vault, text: str, counts: Counter[str], *, names: bool = True) -> str:
    view = _ESCAPE.sub(lambda m: "\n" * len(m.group()), text) if "\\" in text else None
    masked = vault.mask(text, names=names, view=view)
    for kind, n in masked.counts.items():
        counts[kind] += n
    return masked.text


def _labelled(vault: Vault, key: str | None, value: str, counts: Counter[str]) -> str:
    kind = header_kind(key) if key else None
    stripped = value.strip()
    if (
        kind is None
        or not MIN_KNOWN_CHARS <= len(stripped) <= MAX_LABELLED_CHARS
        or _PLACEHOLDER.fullmatch(stripped)
        or (kind in _NUMBERED and not _DIGIT.search(stripped))
        or (kind is PersonalKind.EMAIL and not _AT.search(stripped))
        or holds_no_one(kind, stripped)  # "担当者": "未定"
    ):
        return _text(vault, value, counts)
    counts[kind.value] += 1
    return vault.learn(kind, stripped)


def _number(vault: Vault, key: str | None, value: int, counts: Counter[str]) -> int | str:
    """An integer under ``key``: its placeholder when it is an identifier, else itself."""
    text = str(value)
    kind = header_kind(key) if key else None
    if kind in _NUMBERED_VALUES and value >= 0 and len(text) >= MIN_KNOWN_CHARS:
        assert kind is not None
        counts[kind.value] += 1
        return vault.learn(kind, text)
    if key is not None and non_personal_header(key):
        return value  # an amount, a count, an order number: never an identifier
    masked = _text(vault, text, counts, names=False)  # digits hold no name: no Sudachi
    return value if masked == text else masked


def _walk(vault: Vault, value: Any, key: str | None, counts: Counter[str]) -> Any:
    if isinstance(value, str):
        return _labelled(vault, key, value, counts)
    if isinstance(value, int) and not isinstance(value, bool):
        return _number(vault, key, value, counts)
    if isinstance(value, float) and value.is_integer() and key and header_kind(key) is not None:
        return _number(vault, key, int(value), counts)  # a number column with blanks: 1234567.0
    if isinstance(value, Mapping):
        return {
            (_text(vault, k, counts) if isinstance(k, str) else k): _walk(vault, v, str(k), counts)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return type(value)(_walk(vault, v, key, counts) for v in value)
    return value


def mask_structured(vault: Vault, value: Any, counts: Counter[str]) -> Any:
    """``value`` (a tool call's arguments, a record) with its personal data masked; the kinds
    masked are added to ``counts``."""
    return _walk(vault, value, None, counts)


def mask_json_text(vault: Vault, text: str, counts: Counter[str]) -> str:
    """``text`` masked: walked as JSON when it is a JSON object or array, else as text."""
    if text.lstrip()[:1] in ("{", "["):
        try:
            data = json.loads(text)
        except ValueError:
            return _text(vault, text, counts)
        masked = mask_structured(vault, data, counts)
        if masked == data:
            return text  # nothing personal: the text as it was, spacing and all
        return json.dumps(masked, ensure_ascii=False, indent=2 if "\n" in text.strip() else None)
    return _text(vault, text, counts)
