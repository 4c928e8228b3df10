"""Tell text input from binary input by its first bytes, before a line of it is read.

A compressed or binary file given by mistake (``--gold data.jsonl.gz``, an image, a database)
holds no line end for megabytes: read line by line it would be read whole before anything is
said. Its first few kilobytes tell: a known magic number, a NUL byte (never in JSON or CSV
text), or bytes that are not UTF-8 on the first line.
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import lzma
from collections.abc import Callable
from typing import IO, Final, cast

from ragscore.errors import InputError

# How many of the first bytes are looked at (at most: a pipe may have written fewer so far).
SNIFF_BYTES: Final = 8192

_COMPRESSED: Final = "ragscore reads gzip, bzip2 and xz; decompress it first"

# Magic numbers: (prefix, what the file is, advice). The order matters where one prefix starts another.
_MAGIC: Final[tuple[tuple[bytes, str, str], ...]] = (
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file", _COMPRESSED),
    (b"\x04\x22\x4d\x18", "an lz4-compressed file", _COMPRESSED),
    (b"PK\x03\x04", "a zip archive", _COMPRESSED),
    (b"PK\x05\x06", "a zip archive", _COMPRESSED),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", _COMPRESSED),
    (b"\x89PNG\r\n\x1a\n", "a PNG image", ""),
    (b"\xff\xd8\xff", "a JPEG image", ""),
    (b"GIF87a", "a GIF image", ""),
    (b"GIF89a", "a GIF image", ""),
    (b"%PDF-", "a PDF document", ""),
    (b"\x7fELF", "an executable (ELF)", ""),
    (b"SQLite format 3\x00", "an SQLite database", ""),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an Office document (OLE)", ""),
)
# bzip2: "BZh", a block size digit, then the block magic (so that a CSV header "BZh..." is text).
_BZIP2_BLOCK: Final = b"1AY&SY"
# Byte-order marks of the encodings that are not UTF-8 (UTF-32 first: its LE mark starts with UTF-16's).
_BOMS: Final = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)
UTF8_BOM: Final = b"\xef\xbb\xbf"


def binary_kind(head: bytes) -> tuple[str, str] | None:
    """Name what a file that starts with ``head`` is, when a magic number says it is not text.

    Returns (what it is, advice), the advice possibly empty; None for anything else.
    """
    for magic, what, advice in _MAGIC:
        if head.startswith(magic):
            return what, advice
    return None


def decompressor(head: bytes) -> Callable[[IO[bytes]], IO[bytes]] | None:
    """How to read a stream whose first bytes are gzip's, bzip2's or xz's magic number; None for others."""
    if head.startswith(b"\x1f\x8b"):
        return lambda stream: cast(IO[bytes], gzip.GzipFile(fileobj=stream, mode="rb"))
    if head.startswith(b"\xfd7zXZ\x00"):
        return lambda stream: cast(IO[bytes], lzma.LZMAFile(stream, "rb"))
    if head.startswith(b"BZh") and head[3:4].isdigit() and head[4:10] == _BZIP2_BLOCK:
        return lambda stream: cast(IO[bytes], bz2.BZ2File(stream, "rb"))
    return None


def check_text_head(head: bytes, source: str) -> None:
    """Raise InputError when the first bytes of an input show that it is not UTF-8 text.

    A NUL byte is reported at its line and column; a bad UTF-8 byte only on the first line (at
    its position, with the message the line would get when read), so that errors on earlier
    lines still come first; later lines are checked as they are read.
    """
    head = head[:SNIFF_BYTES]
    kind = binary_kind(head)
    if kind is not None:
        what, advice = kind
        raise InputError(source, f"expected text, got {what}" + (f" ({advice})" if advice else ""), 1)
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            raise InputError(source, f"expected UTF-8 text, got {encoding} (it starts with the byte-order mark "
                                     f"{bom.hex(' ').upper()}): save it as UTF-8", 1)
    head = head.removeprefix(UTF8_BOM)
    nul = head.find(b"\x00")
    if nul >= 0:
        before = head[:nul]
        line = before.count(b"\n") + 1
        start = before.rfind(b"\n") + 1
        column = len(before[start:].decode("utf-8", "replace")) + 1
        what = ("UTF-16 text without its byte-order mark, it seems: save it as UTF-8" if _utf16_without_bom(head)
                else "a NUL byte")
        raise InputError(source, f"expected text, got a binary file ({what})", line, column)
    first = head.split(b"\n", 1)[0]
    try:
        # Incremental: a character that the end of the head cuts in two is not an error.
        codecs.getincrementaldecoder("utf-8")().decode(first, final=b"\n" in head)
    except UnicodeDecodeError as exc:
        column = len(first[: exc.start].decode("utf-8")) + 1
        raise InputError(source, f"expected UTF-8 text, got byte 0x{first[exc.start]:02x}{encoding_hint(first)}", 1,
                         column) from None


# What the bytes 0x80-0xff of Windows-1252 (and so of Latin-1, from 0xa0) decode to in text
# written in it: letters of Western European languages and typographic punctuation and signs. A
# line whose bytes past ASCII are all of these, in words that are mostly ASCII letters, was most
# likely written in it. (Â and Ã are left out: in a line that is not UTF-8 they are far more often
# the first byte of a UTF-8 character cut short, or of text decoded twice.)
_WESTERN: Final = frozenset(
    "ÀÁÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞßàáâãäåæçèéêëìíîïðñòóôõöøùúûüýþ"
    "ŠšŒœŽžŸ€‘’‚“”„–—…•™«»‹›°£¢¥¤©®§¿¡\xa0·´¨ªº²³¹µ¶¸¼½¾±×÷‰†‡¦¬¯"
)
_EAST_ASIAN: Final = ("shift_jis", "gbk", "euc_kr", "big5")
_SAVE: Final = ": if the file is, save it as UTF-8"


def encoding_hint(raw: bytes) -> str:
    """Name the likely encoding of a line that is not UTF-8, as a parenthesis for an error message;
    empty when nothing is likely.

    Windows-1252 (or Latin-1) when every byte past ASCII reads there as a Western European letter,
    sign or typographic punctuation, no more of them letters than ASCII letters, and none part of
    valid UTF-8; an East Asian encoding when the line reads in one of them as three or more
    ideographs, Hangul or kana only; a single-byte encoding of another script (Cyrillic, Greek,
    Arabic...) when most letters are bytes past ASCII. It names what the line looks like: a UTF-8
    file with one stray byte looks like nothing else on its other lines.
    """
    high = bytes(b for b in raw if b >= 0x80)
    ascii_letters = sum(1 for b in raw if 65 <= b <= 90 or 97 <= b <= 122)
    try:
        western = raw.decode("cp1252")
    except UnicodeDecodeError:
        western = None
    if western is not None and raw.decode("utf-8", "ignore").isascii():
        beyond = [c for c in western if ord(c) >= 0x80]
        if all(c in _WESTERN for c in beyond) and sum(c.isalpha() for c in beyond) <= ascii_letters:
            return (" (this line looks like Windows-1252 or Latin-1 text" + _SAVE
                    + ", e.g. iconv -f WINDOWS-1252 -t UTF-8)")
    if len(high) >= 6:  # three characters at least: fewer read as ideographs by chance
        for codec in _EAST_ASIAN:
            try:
                text = raw.decode(codec)
            except UnicodeDecodeError:
                continue
            if all(_east_asian(c) for c in text if ord(c) >= 0x80):
                return (" (this line looks like text in an East Asian encoding such as Shift_JIS, GBK, EUC-KR or "
                        "Big5, or another legacy encoding" + _SAVE + ")")
    if len(high) >= 6 and len(high) > ascii_letters and _letters(high, "cp1251") >= 0.8 * len(high):
        return (" (this line looks like text in a single-byte encoding of another script, such as Windows-1251 "
                "(Cyrillic), Windows-1253 (Greek), Windows-1256 (Arabic) or KOI8-R" + _SAVE + ")")
    return ""


def _letters(data: bytes, codec: str) -> int:
    """Count the letters the bytes read as in a single-byte codec."""
    return sum(c.isalpha() for c in data.decode(codec, "replace"))


def _east_asian(char: str) -> bool:
    """Tell whether a character is an ideograph, Hangul, kana, or CJK punctuation or full-width form."""
    code = ord(char)
    return 0x3000 <= code <= 0x9FFF or 0xAC00 <= code <= 0xD7AF or 0xFF00 <= code <= 0xFFEF


def _utf16_without_bom(head: bytes) -> bool:
    """Tell whether bytes look like ASCII text in UTF-16 (every other byte zero) with no byte-order mark."""
    even, odd = head[0::2], head[1::2]
    for zeros, text in ((odd, even), (even, odd)):
        text = text[: len(zeros)]
        if (len(zeros) >= 4 and zeros.count(0) >= 0.9 * len(zeros)
                and sum(32 <= b < 127 or b in b"\t\r\n" for b in text) >= 0.9 * len(text)):
            return True
    return False
