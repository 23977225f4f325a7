"""Where in a file's bytes text stops being readable, counted as a person counts: one convention.

A place is counted in the file as it is on disk, BOM included. Details keep it as the 0-based
byte offset (``position``) and the 1-based line (``line``); a message says it with
:func:`where`, its line and its byte counted from 1 ("3 行目（先頭から 35 バイト目）", as the
全銀 readers do). Python's ``utf-8-sig`` codec strips a BOM before it decodes, so its own
``UnicodeDecodeError`` holds the bytes after the BOM and counts 3 bytes early (naming ``utf-8``,
like any UTF-8 error); :func:`decode_text` decodes as ``bytes.decode`` does but raises the error
over the whole data, so that :func:`decode_failure_place` (and ``errors.reason_of`` with it) says
the place an editor shows. The bottom layer (below ``errors``): it imports nothing of this package.
"""

from __future__ import annotations

import codecs

__all__ = ["LINE_CHUNK_BYTES", "decode_failure_place", "decode_text", "line_at", "where"]

# Text counted for its lines is decoded in pieces of this size, none of which is kept.
LINE_CHUNK_BYTES = 1 << 20


def where(pos: int, line: int) -> str:
    """Where a file stops being readable, as a person counts: its line, and its byte counted
    from 1 at the file's first byte (BOM included)."""
    return f"{line} 行目（先頭から {pos + 1:,} バイト目）"


def line_at(data: bytes, pos: int, codec: str) -> int:
    """The 1-based text line of byte ``pos`` (the start of a character) of ``data``, whose
    first ``pos`` bytes ``codec`` reads: counted over the decoded text in pieces."""
    decoder = codecs.getincrementaldecoder(codec)("strict")
    view = memoryview(data)[:pos]
    return 1 + sum(
        decoder.decode(view[offset : offset + LINE_CHUNK_BYTES]).count("\n")
        for offset in range(0, pos, LINE_CHUNK_BYTES)
    )


def decode_text(data: bytes, codec: str) -> str:
    """``data.decode(codec)``, strictly; its ``UnicodeDecodeError`` holds all of ``data`` and
    counts from its first byte, BOM included (``utf-8-sig``'s own holds and counts the bytes
    after the BOM it strips)."""
    try:
        return data.decode(codec)
    except UnicodeDecodeError as exc:
        stripped = len(data) - len(exc.object)  # the BOM the codec took off before decoding
        if not stripped:
            raise
        raise UnicodeDecodeError(
            exc.encoding, data, exc.start + stripped, exc.end + stripped, exc.reason
        ) from None


def decode_failure_place(exc: UnicodeDecodeError) -> tuple[int, int]:
    """``(position, line)`` of where a codec stopped, in the bytes its error holds (a whole file
    when it was decoded with :func:`decode_text` or at once, as ``read_text`` does)."""
    return exc.start, line_at(exc.object, exc.start, exc.encoding)
