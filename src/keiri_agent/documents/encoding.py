"""Character-encoding detection for Japanese business text files.

Files from Japanese offices arrive as UTF-8 (with or without a BOM), as CP932 (Excel's "CSV"
on Windows, including NEC/IBM extensions such as ①, ㈱ and 髙), occasionally as EUC-JP or
ISO-2022-JP from older Unix systems, and as UTF-16 from Excel's "Unicode text". Detection is
deterministic and explains itself:

1. a BOM decides (UTF-32, UTF-8, UTF-16);
2. NUL bytes or a known binary signature mean "not a text file" (an error, never a guess);
3. pure 7-bit data is ASCII, or ISO-2022-JP when it carries its escape sequences;
4. data that decodes as strict UTF-8 is UTF-8;
5. otherwise CP932 and EUC-JP are decoded strictly; when both succeed, each decoded text is
   scored by how plausible its non-ASCII characters are as Japanese (kana, JIS level-1 kanji
   and common symbols score high; half-width punctuation in odd places, private-use and
   control characters score low), per byte, and CP932 wins ties (it is by far the more common).
   The lines scored are the lines that hold non-ASCII bytes, wherever they are in the file: an
   export that is ASCII for its first megabytes and names one customer in kana at the end is
   decided by that name, not by the ASCII before it.

Old systems end a text file with padding after its last line: the DOS end-of-file mark 0x1A
(Ctrl-Z) and NUL bytes up to a block size. :func:`text_end` tells where the text ends before
them, so that a reader can leave them out (and say so) instead of reading them as a last row or
refusing the file as binary.

When nothing decodes, :func:`decode_bytes` raises ``FileProcessingError(FILE_UNREADABLE)``
with a hint to save the file as UTF-8; it never substitutes replacement characters. Where a file
stops being readable is counted in the file as it is on disk, BOM included: the message says it
as a person counts (line and "先頭から N バイト目", 1-based, as the 全銀 readers do), the
details as the 0-based byte offset (``position``) and the line (``line``), by the convention of
:mod:`keiri_agent.byte_place` that ``errors.reason_of`` shares.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from functools import lru_cache

from keiri_agent.byte_place import line_at, where
from keiri_agent.documents.encoding_words import word_fit
from keiri_agent.documents.failures import invalid_input, unreadable
from keiri_agent.errors import FileProcessingError

__all__ = [
    "ENCODING_ALIASES",
    "PADDING_BYTES",
    "SCORE_SAMPLE_CHARS",
    "EncodingGuess",
    "decode_bytes",
    "decode_head",
    "detect_encoding",
    "text_end",
]

# Only this many non-ASCII characters are scored; the strict decode still covers all data.
SCORE_SAMPLE_CHARS = 20_000
# The bytes decoded for scoring (the lines holding non-ASCII bytes, from anywhere in the file):
# enough for SCORE_SAMPLE_CHARS of Japanese (2 bytes each) and the ASCII between them.
SCORE_SAMPLE_BYTES = 256 * 1024
# A file is checked strictly in pieces of this size, whose text is not kept.
VALIDATE_CHUNK_BYTES = 1 << 20
# Codecs whose own error offsets skip the BOM they strip; the check decodes with the BOM-less
# codec instead, which accepts the same bytes (a BOM is valid UTF-8) and counts from byte 0.
_CHECK_CODEC = {"utf-8-sig": "utf-8"}
# How far into the data binary signatures (NUL, control bytes) are looked for.
_BINARY_PROBE_BYTES = 8_192
# What old systems write after a text file's last line: NUL padding and the DOS EOF mark.
PADDING_BYTES = b"\x00\x1a"
# Bytes of the end of a file looked at at once for that padding.
_PADDING_PIECE = 64 * 1024
# CP932 is preferred when it reads slightly better: it is what Excel on Windows writes.
_CP932_PRIOR = 0.05
# Scores (before that preference) closer than this are a tie the characters cannot break
# (EUC-JP's 山田 is CP932's ｻｳﾅﾄ): the words of each reading decide (``encoding_words``).
TIE_MARGIN = 0.05

# Names users give that mean CP932 in practice (strict Shift_JIS lacks ①, ㈱, 髙, ～ ...).
ENCODING_ALIASES: dict[str, str] = {
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "s-jis": "cp932",
    "ms932": "cp932",
    "windows-31j": "cp932",
    "mskanji": "cp932",
    "utf8": "utf-8",
    "utf_8": "utf-8",
    "eucjp": "euc-jp",
    "euc_jp": "euc-jp",
}

_SAVE_AS_UTF8_HINT = (
    "Excel やメモ帳でファイルを開き、「名前を付けて保存」で文字コードを UTF-8"
    "（CSV UTF-8）にして保存し直してください。"
)

_BINARY_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"PK\x03\x04", "ZIP 形式（Excel .xlsx / Word .docx / ZIP など）"),
    (b"PK\x05\x06", "ZIP 形式"),
    (b"%PDF", "PDF"),
    (b"\xd0\xcf\x11\xe0", "旧 Office 形式（.xls / .doc）またはパスワード付き Office"),
    (b"\x89PNG", "PNG 画像"),
    (b"\xff\xd8\xff", "JPEG 画像"),
    (b"GIF8", "GIF 画像"),
)

_BOMS: tuple[tuple[bytes, str, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32", "BOM（UTF-32）"),
    (codecs.BOM_UTF32_BE, "utf-32", "BOM（UTF-32）"),
    (codecs.BOM_UTF8, "utf-8-sig", "BOM（UTF-8）"),
    (codecs.BOM_UTF16_LE, "utf-16", "BOM（UTF-16）"),
    (codecs.BOM_UTF16_BE, "utf-16", "BOM（UTF-16）"),
)

_ISO2022_ESCAPES = (b"\x1b$B", b"\x1b$@", b"\x1b(J", b"\x1b(I")
_HIGH_BYTE = re.compile(rb"[\x80-\xff]")
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")
# Control bytes that do not occur in text (TAB, LF, FF, CR, SUB and ESC do).
_CONTROL_BYTES = re.compile(rb"[\x01-\x08\x0b\x0e-\x19\x1c-\x1f]")

# Half-width kana read as words, which bytes of EUC-JP kanji misread as CP932 rarely do:
# marks follow kana that take them, small kana follow the kana they can modify, and a word
# does not start with a mark, a small kana, the long-vowel bar or ﾝ.
_SMALL_VOWELS = "ｧｨｩｪｫ"
_SMALL_Y = "ｬｭｮ"
_HALFWIDTH_AFTER: dict[str, str] = {
    "ﾞ": "ｳｶｷｸｹｺｻｼｽｾｿﾀﾁﾂﾃﾄﾊﾋﾌﾍﾎ",
    "ﾟ": "ﾊﾋﾌﾍﾎ",
    **dict.fromkeys(_SMALL_VOWELS, "ｳｸﾂﾃﾄｼﾁｽﾌﾞ"),
    **dict.fromkeys(_SMALL_Y, "ｷｼﾁﾆﾋﾐﾘﾃﾌﾞﾟ"),
}
_NO_RUN_START = "ﾞﾟｧｨｩｪｫｬｭｮｯｰﾝ"
_NOT_BEFORE_BAR_OR_SOKUON = "ﾝｯｰ"
# EUC-JP writes a half-width kana as SS2 (0x8E) and the kana's byte (0xA1-0xDF); CP932 reads
# each such pair as one of these 63 kanji (治爾璽痔磁示而耳自...), all of one JIS row. Real text
# rarely puts three of them in a row, and a half-width kana word in EUC-JP always does.
_SS2_KANJI = "".join(bytes((0x8E, trail)).decode("cp932") for trail in range(0xA1, 0xE0))
_SS2_STRETCH = re.compile(f"[{_SS2_KANJI}]{{3,}}")
# The weight of a kanji in such a stretch of the CP932 reading: JIS level 2's, below the
# half-width kana the EUC-JP reading gives when they read as words.
_SS2_STRETCH_WEIGHT = 0.5


def _halfwidth_plausible(ch: str, prev: str) -> bool:
    """Whether half-width kana ``ch`` may follow ``prev`` ("" at the start of a run)."""
    if not ("\uff66" <= prev <= "\uff9f"):
        return ch not in _NO_RUN_START
    allowed = _HALFWIDTH_AFTER.get(ch)
    if allowed is not None:
        return prev in allowed
    if ch in "ｯｰ":
        return prev not in _NOT_BEFORE_BAR_OR_SOKUON
    return True


@dataclass(frozen=True)
class EncodingGuess:
    """The outcome of :func:`detect_encoding`.

    ``name`` is a Python codec name ("utf-8-sig", "utf-8", "cp932", "euc-jp", "ascii",
    "utf-16", "utf-32", "iso-2022-jp"); "ascii" means pure 7-bit data, which any of the others
    reads the same way. ``confidence`` is in [0, 1]; ``reason`` is a short Japanese explanation.
    """

    name: str
    confidence: float
    reason: str


def _unreadable(file: str, message: str, **details: object) -> FileProcessingError:
    return unreadable(file, message, _SAVE_AS_UTF8_HINT, **details)


def _unreadable_from(
    file: str, data: bytes, codec: str, pos: int, *, tried: str, encoding: str
) -> FileProcessingError:
    """The error of a file that ``codec`` cannot read from byte ``pos`` on; ``tried`` says
    which encoding was tried and why, in words that lead to where it stops."""
    line = line_at(data, pos, codec)
    return _unreadable(
        file,
        f"ファイル '{file}' は{tried}{where(pos, line)}以降を読めません。",
        encoding=encoding,
        position=pos,
        line=line,
    )


def _check_binary(data: bytes, file: str) -> None:
    for magic, label in _BINARY_SIGNATURES:
        if data.startswith(magic):
            raise unreadable(
                file,
                f"ファイル '{file}' はテキストファイルではなく {label} のようです。",
                "ファイルの種類（拡張子）を確認し、テキスト（CSV など）として保存し直してください。",
                signature=label,
            )
    probe = data[:_BINARY_PROBE_BYTES]
    nul = probe.find(b"\x00")
    controls = len(_CONTROL_BYTES.findall(probe))
    if nul >= 0 or controls > max(2, len(probe) // 100):
        raise _unreadable(
            file,
            f"ファイル '{file}' はテキストファイルではないようです"
            "（NUL などの制御文字が含まれています）。",
            nul_offset=nul if nul >= 0 else None,
            control_bytes=controls,
        )


@lru_cache(maxsize=65_536)
def _char_weight(ch: str) -> float:
    """How plausible one non-ASCII character is in Japanese business text (context-free)."""
    cp = ord(ch)
    if 0x80 <= cp <= 0x9F or 0xE000 <= cp <= 0xF8FF:
        return -2.0  # C1 controls and private use: decoding artefacts or user-defined chars
    if 0xFF61 <= cp <= 0xFF65:
        return -0.5
    if 0xFF66 <= cp <= 0xFF9F:
        return 1.0
    if (
        0x3000 <= cp <= 0x30FF  # CJK punctuation, hiragana, katakana
        or 0xFF01 <= cp <= 0xFF5E  # full-width ASCII variants (～ is U+FF5E)
        or 0x2460 <= cp <= 0x24FF  # ①...⑳
        or 0x2160 <= cp <= 0x217F  # Ⅰ...Ⅹ
        or 0x3200 <= cp <= 0x33FF  # ㈱ ㍉ ㎡ ...
        or 0x2010 <= cp <= 0x203B  # dashes, quotes, ※
        or 0x2190 <= cp <= 0x21FF  # arrows
        or 0x25A0 <= cp <= 0x26FF  # ■□▲△○●◎★☆
        or cp in (0xD7, 0xF7, 0xA7, 0xB0, 0xB1, 0xB4, 0xA8, 0xB6, 0xFFE5, 0xFFE0, 0xFFE1, 0xFFE2)
    ):
        return 1.0
    if 0x4E00 <= cp <= 0x9FFF or 0xF900 <= cp <= 0xFAFF:
        try:
            sj = ch.encode("cp932")
        except UnicodeEncodeError:
            return -1.0  # JIS X 0212 kanji (EUC-JP 3-byte): very rare in business text
        lead, trail = sj[0], sj[1]
        if lead < 0x98 or (lead == 0x98 and trail <= 0x72):
            return 1.0  # JIS level 1
        if lead <= 0xEA:
            return 0.5  # JIS level 2
        # NEC-selected / IBM extensions: mostly name kanji (髙, 﨑, 德) that business data
        # does contain; slightly above level 2 so that a lone "髙" is not read as EUC-JP.
        return 0.6
    if 0x2500 <= cp <= 0x257F:
        return 0.3  # box drawing
    if 0x0391 <= cp <= 0x03C9 or 0x0401 <= cp <= 0x0451:
        return 0.0  # Greek / Cyrillic exist in JIS row 6-7 but are rare here
    return 0.0


def _score(text: str, codec: str) -> float:
    """Mean plausibility per encoded byte of the non-ASCII characters of ``text``."""
    total_weight = 0.0
    total_bytes = 0
    seen = 0
    for match in _NON_ASCII_RUN.finditer(text):
        run = match.group()
        prev = ""
        stretches = (
            {i for m in _SS2_STRETCH.finditer(run) for i in range(m.start(), m.end())}
            if codec == "cp932"
            else set()
        )
        for index, ch in enumerate(run):
            weight = _char_weight(ch)
            if "\uff66" <= ch <= "\uff9f" and not _halfwidth_plausible(ch, prev):
                weight = -1.0
            elif index in stretches:
                weight = min(weight, _SS2_STRETCH_WEIGHT)
            size = len(ch.encode(codec))
            total_weight += weight * size
            total_bytes += size
            prev = ch
        seen += len(run)
        if seen >= SCORE_SAMPLE_CHARS:
            break
    return total_weight / total_bytes if total_bytes else 0.0


def _first_error(data: bytes, codec: str) -> int | None:
    """The byte offset in ``data`` (from its first byte, BOM included) where strict decoding
    with ``codec`` fails, or None: decoded in ``VALIDATE_CHUNK_BYTES`` pieces whose text is
    dropped, so checking a file never holds it as a string."""
    decoder = codecs.getincrementaldecoder(_CHECK_CODEC.get(codec, codec))("strict")
    view = memoryview(data)
    for offset in range(0, len(data), VALIDATE_CHUNK_BYTES):
        chunk = view[offset : offset + VALIDATE_CHUNK_BYTES]
        pending = len(decoder.getstate()[0])  # bytes of a character the last piece cut
        try:
            decoder.decode(chunk, final=offset + VALIDATE_CHUNK_BYTES >= len(data))
        except UnicodeDecodeError as exc:
            return offset - pending + exc.start
    if not data:
        decoder.decode(b"", final=True)
    return None


def _head(data: bytes, codec: str, size: int) -> str:
    """The text of the first ``size`` bytes of valid ``data`` (a character cut at the end is
    left out)."""
    return codecs.getincrementaldecoder(codec)("strict").decode(data[:size], final=False)


def _non_ascii_lines(data: bytes, size: int) -> bytes:
    """The lines of ``data`` that hold a non-ASCII byte, in file order, up to about ``size``
    bytes (the last one may be cut). Only for encodings whose multibyte characters never hold
    the byte of LF (CP932, EUC-JP): each line then decodes on its own."""
    parts: list[bytes] = []
    taken = pos = 0
    while taken < size and (found := _HIGH_BYTE.search(data, pos)) is not None:
        start = data.rfind(b"\n", 0, found.start()) + 1
        end = data.find(b"\n", found.start())
        end = len(data) if end < 0 else end + 1
        end = min(end, start + size - taken)
        parts.append(data[start:end])
        taken += end - start
        pos = end
    return b"".join(parts)


def _guess(data: bytes, file: str) -> EncodingGuess:
    """:func:`detect_encoding`'s decision, with the whole of ``data`` checked strictly but
    never held as text (only the first ``SCORE_SAMPLE_BYTES`` are decoded, for scoring)."""
    for bom, name, reason in _BOMS:
        if data.startswith(bom):
            pos = _first_error(data, name)
            if pos is not None:
                tried = f" {reason} で始まりますが、{name} として "
                raise _unreadable_from(file, data, name, pos, tried=tried, encoding=name)
            return EncodingGuess(name, 1.0, reason)
    _check_binary(data, file)
    if data.isascii():
        escaped = any(esc in data for esc in _ISO2022_ESCAPES)
        if escaped and _first_error(data, "iso-2022-jp") is None:
            return EncodingGuess("iso-2022-jp", 0.95, "ISO-2022-JP のエスケープシーケンス")
        return EncodingGuess("ascii", 1.0, "7 ビット ASCII のみ")
    utf8_pos = _first_error(data, "utf-8")
    if utf8_pos is None:
        return EncodingGuess("utf-8", 0.99, "UTF-8 として矛盾なく読めた")
    sjis_pos = _first_error(data, "cp932")
    euc_pos = _first_error(data, "euc-jp")
    if sjis_pos is None and euc_pos is None:
        sample = _non_ascii_lines(data, SCORE_SAMPLE_BYTES)
        as_sjis, as_euc = _head(sample, "cp932", len(sample)), _head(sample, "euc-jp", len(sample))
        s_score = _score(as_sjis, "cp932")
        e_score = _score(as_euc, "euc-jp")
        if abs(s_score - e_score) < TIE_MARGIN:
            s_score = word_fit(_NON_ASCII_RUN.findall(as_sjis))
            e_score = word_fit(_NON_ASCII_RUN.findall(as_euc))
            how = "辞書の語で"
        else:
            how = "日本語らしさで"
        s_score += _CP932_PRIOR
        margin = abs(s_score - e_score)
        confidence = round(min(0.95, 0.5 + margin / 2), 3)
        if s_score >= e_score:
            reason = f"CP932 と EUC-JP の両方で読めたが{how} CP932 を選択 ({s_score:.2f} > {e_score:.2f})"
            return EncodingGuess("cp932", confidence, reason)
        reason = (
            f"CP932 と EUC-JP の両方で読めたが{how} EUC-JP を選択 ({e_score:.2f} > {s_score:.2f})"
        )
        return EncodingGuess("euc-jp", confidence, reason)
    if sjis_pos is None:
        return EncodingGuess("cp932", 0.9, "UTF-8 ではなく CP932（Shift_JIS）として読めた")
    if euc_pos is None:
        return EncodingGuess("euc-jp", 0.9, "UTF-8 と CP932 では読めず EUC-JP として読めた")
    raise _unreadable(
        file,
        f"ファイル '{file}' の文字コードを判別できません"
        f"（先頭から数えて UTF-8 は {utf8_pos + 1:,} バイト目、CP932 は {sjis_pos + 1:,} バイト目、"
        f"EUC-JP は {euc_pos + 1:,} バイト目で読めなくなります）。",
        utf8_error_at=utf8_pos,
        cp932_error_at=sjis_pos,
        euc_jp_error_at=euc_pos,
    )


def _detect(data: bytes, file: str) -> tuple[EncodingGuess, str]:
    guess = _guess(data, file)
    return guess, data.decode(guess.name)


def detect_encoding(data: bytes, *, file: str = "<bytes>") -> EncodingGuess:
    """Detect the encoding of ``data`` (see the module docstring for the rules).

    Raises ``FileProcessingError(FILE_UNREADABLE)`` for binary data and for data that no
    supported encoding decodes. Empty data is reported as ASCII.
    """
    return _detect(data, file)[0]


def text_end(data: bytes, encoding: str | None = None) -> int:
    """Where the text of ``data`` ends before trailing ``PADDING_BYTES`` (``len(data)`` when
    there are none). Never in UTF-16/32 (by their BOM or the ``encoding`` named), where a NUL
    byte is half of a character."""
    if any(data.startswith(bom) for bom, name, _ in _BOMS if name != "utf-8-sig"):
        return len(data)
    if encoding is not None:
        try:
            codec = codecs.lookup(_normalize_name(encoding)).name
        except LookupError:
            return len(data)  # the decoder names the unknown encoding
        if codec.startswith(("utf-16", "utf-32")):
            return len(data)
    end = len(data)
    while end:  # from the end, a piece at a time (a file of padding is looked at in C)
        start = max(0, end - _PADDING_PIECE)
        kept = len(data[start:end].rstrip(PADDING_BYTES))
        if kept:
            return start + kept
        end = start
    return 0


def _normalize_name(encoding: str) -> str:
    key = encoding.strip().lower()
    return ENCODING_ALIASES.get(key, key)


def decode_head(
    data: bytes, *, file: str = "<bytes>", encoding: str | None = None, size: int
) -> tuple[str, str, bool]:
    """``(head, encoding, whole)``: the text of the first ``size`` bytes (``whole``: that is all
    of ``data``), after the whole of ``data`` is checked as :func:`decode_bytes` checks it,
    without decoding the rest (a reader that parses the bytes itself needs only the head)."""
    if encoding is None:
        name = _guess(data, file).name
    else:
        name = _codec(encoding, data, file)
        pos = _first_error(data, name)
        if pos is not None:
            tried = f"指定された文字コード {encoding} では "
            raise _unreadable_from(file, data, name, pos, tried=tried, encoding=encoding)
    whole = len(data) <= size
    decoder = codecs.getincrementaldecoder(name)("strict")
    return decoder.decode(data[:size], final=whole), name, whole


def _codec(encoding: str, data: bytes, file: str) -> str:
    """The codec a user's encoding name means for ``data`` (Shift_JIS aliases are CP932;
    "utf-8" on data with a BOM is "utf-8-sig"; "utf-16" or "utf-32" on data without their BOM
    is little-endian, as Windows writes them and as Python reads them whole), or an error."""
    name = _normalize_name(encoding)
    try:
        "".encode(name)  # unknown names and byte-to-byte codecs (base64, zlib...) raise
    except LookupError:
        raise invalid_input(
            file,
            f"文字コード '{encoding}' は使用できません（ファイル '{file}'）。",
            "utf-8、cp932（Shift_JIS）、euc-jp などを指定するか、指定を外して自動判定にしてください。",
            encoding=encoding,
        ) from None
    codec = codecs.lookup(name).name
    if codec == "utf-8" and data.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if codec in ("utf-16", "utf-32") and not any(
        data.startswith(bom) for bom, bom_codec, _ in _BOMS if bom_codec == codec
    ):
        return f"{codec}-le"
    return name


def decode_bytes(
    data: bytes, *, file: str = "<bytes>", encoding: str | None = None
) -> tuple[str, str]:
    """Decode ``data`` strictly and return ``(text, encoding)``; a BOM is never in ``text``.

    With ``encoding`` the data is decoded with exactly that codec (Shift_JIS aliases mean
    CP932; "utf-8" on data with a BOM means "utf-8-sig"; see ``_codec``), and a failure is an
    error naming the line and the byte, not a guess. Without it, :func:`detect_encoding` decides.
    """
    if encoding is None:
        guess, text = _detect(data, file)
        return text, guess.name
    text, name, _ = decode_head(data, file=file, encoding=encoding, size=len(data))
    return text, name
