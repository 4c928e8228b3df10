"""An input file (or standard input) read once: checked for binary input, read in bounded lines
(or, for a whole-document format, in bounded chunks), hashed as it is read."""

from __future__ import annotations

import codecs
import hashlib
import io
import lzma
import os
import stat
import sys
import zlib
from collections.abc import Generator, Iterator
from functools import partial
from itertools import chain
from typing import IO, Final, cast

from ragscore.errors import InputError
from ragscore.loaders.sniff import SNIFF_BYTES, check_text_head, decompressor

STDIN: Final = "-"
BOM: Final = b"\xef\xbb\xbf"

# The longest line read (a JSON Lines record, a CSV row): past it an input is refused at that
# line rather than read into memory whole (a binary file given by mistake may hold no line end).
MAX_LINE_BYTES: Final = 64 << 20
# The largest JSON array read (a gold set or stage file in that form is parsed whole, in memory).
MAX_DOCUMENT_BYTES: Final = 1 << 30
# Read buffer of a named input: larger than the default, which keeps reading line by line fast.
_BUFFER_BYTES: Final = 1 << 16
_CHUNK_BYTES: Final = 1 << 20
# What a damaged or truncated compressed file raises while it is read.
_DECOMPRESSION_ERRORS: Final = (EOFError, OSError, lzma.LZMAError, zlib.error)
_ARRAY_ADVICE: Final = "write JSON Lines, which are read line by line"


class InputFile:
    """An input file (or standard input) read once, as raw lines, hashing what is read."""

    def __init__(self, spec: str, *, hashed: bool = True) -> None:
        self.spec = spec
        self.name = "<stdin>" if spec == STDIN else spec
        self._hash = hashlib.sha256() if hashed else None
        self.head = b""  # the first bytes, once opened (empty when the stream cannot show them)
        self.compressed = False  # gzip, bzip2 or xz, read decompressed

    @property
    def sha256(self) -> str:
        """Return the digest of every byte read so far."""
        assert self._hash is not None, "opened without hashing"
        return self._hash.hexdigest()

    @property
    def rereadable(self) -> bool:
        """Tell whether the input can be read a second time: a regular file (not '-', a pipe or a device)."""
        try:
            return self.spec != STDIN and stat.S_ISREG(os.stat(self.spec).st_mode)
        except (OSError, ValueError):
            return False

    def _open(self) -> IO[bytes]:
        """Open the input and check its first bytes (binary input is refused before a line is read)."""
        if self.spec == STDIN:
            stream: IO[bytes] = sys.stdin.buffer
        else:
            try:
                stream = open(self.spec, "rb", buffering=_BUFFER_BYTES)  # noqa: SIM115 - _close closes it
            except FileNotFoundError:
                raise InputError(self.name, "no such file") from None
            except IsADirectoryError:
                raise InputError(self.name, "is a folder, expected a file") from None
            except OSError as exc:
                raise InputError(self.name, f"cannot read: {exc.strerror}") from None
        peek = getattr(stream, "peek", None)  # an in-memory stand-in for stdin has none
        try:
            self.head = peek(SNIFF_BYTES)[:SNIFF_BYTES] if peek is not None else b""
            opener = decompressor(self.head)
            if opener is not None:  # gzip, bzip2 or xz: read decompressed, whatever the file's name
                self.compressed = True
                stream = opener(stream)  # gzip, bz2 and lzma files buffer, and peek, themselves
                self.head = stream.peek(SNIFF_BYTES)[:SNIFF_BYTES]  # type: ignore[attr-defined]
            encoding = utf16_encoding(self.head)
            if encoding is not None:  # UTF-16 with its byte-order mark: read as UTF-8, transcoded
                stream = cast(IO[bytes], _Transcoded(stream, encoding))
                self.head = _transcoded_head(self.head, encoding)
            check_text_head(self.head, self.name)
        except _DECOMPRESSION_ERRORS as exc:
            self._close(stream)
            raise InputError(self.name, f"cannot decompress: {exc}") from None
        except BaseException:
            self._close(stream)
            raise
        return stream

    def _close(self, stream: IO[bytes]) -> None:
        if stream is not sys.stdin.buffer:
            stream.close()

    def digest_whole(self, block: int = 1 << 20) -> str:
        """Read the whole file in large blocks and return its sha256 (a regular file only: it is opened
        again), of its content decompressed, as ``raw_lines`` hashes it."""
        digest = hashlib.sha256()
        with open(self.spec, "rb") as raw:
            opener = decompressor(raw.read(16))
            raw.seek(0)
            stream: IO[bytes] = opener(raw) if opener is not None else raw
            while chunk := stream.read(block):
                digest.update(chunk)
        return digest.hexdigest()

    def raw_lines(self, stream: IO[bytes] | None = None) -> Generator[bytes, None, None]:
        """Yield the file's lines as bytes, line ends included, updating the hash.

        Reads ``stream`` (from ``_open``) when given, else opens the input; closes it at the end.
        A line longer than ``MAX_LINE_BYTES`` is an InputError at its line, read no further.
        """
        if stream is None:
            stream = self._open()
        limit = MAX_LINE_BYTES  # read at each call, so that a test can lower it
        try:
            # readline with a size reads at most that much: one line never fills the memory.
            lines = enumerate(iter(partial(stream.readline, limit + 1), b""), 1)
            if self._hash is None:
                for number, raw in lines:
                    if len(raw) > limit and raw[-1] != 10:
                        raise self._too_long(number, limit)
                    yield raw
            else:
                update = self._hash.update
                for number, raw in lines:
                    if len(raw) > limit and raw[-1] != 10:
                        raise self._too_long(number, limit)
                    update(raw)
                    yield raw
        except (_BadUtf16, *_DECOMPRESSION_ERRORS) as exc:
            raise self._unreadable(exc) from None
        finally:
            self._close(stream)

    def _too_long(self, number: int, limit: int) -> InputError:
        return InputError(self.name, f"line longer than {limit:,} bytes (the longest line ragscore reads)", number)

    def _read(self, stream: IO[bytes]) -> bytes:
        try:
            return stream.read(_CHUNK_BYTES)
        except (_BadUtf16, *_DECOMPRESSION_ERRORS) as exc:
            raise self._unreadable(exc) from None

    def _unreadable(self, exc: Exception) -> Exception:
        """Say why a transcoded or decompressed stream could not be read (anything else as it is)."""
        if isinstance(exc, _BadUtf16):
            return InputError(self.name, f"expected UTF-16 text after its byte-order mark: {exc}")
        if self.compressed:
            return InputError(self.name, f"cannot decompress: {exc}")
        return exc

    def read_rest(self, stream: IO[bytes], what: str, advice: str = "", size: int = 0) -> bytes:
        """Read the rest of ``stream`` in chunks, updating the hash; refuse a file of more than
        ``MAX_DOCUMENT_BYTES`` (``size`` of them read already). ``what`` names the file's kind."""
        limit = MAX_DOCUMENT_BYTES  # read at each call, so that a test can lower it
        chunks = []
        while chunk := self._read(stream):
            size += len(chunk)
            if size > limit:
                raise InputError(self.name, f"{what} longer than {limit:,} bytes is not read (it is held in memory "
                                            "whole)" + (f": {advice}" if advice else ""))
            if self._hash is not None:
                self._hash.update(chunk)
            chunks.append(chunk)
        return b"".join(chunks)

    def read_document(self, what: str) -> str:
        """Read a whole-document input (a JSON report) as text, at most ``MAX_DOCUMENT_BYTES``."""
        stream = self._open()
        try:
            return decode_text(self.read_rest(stream, what).removeprefix(BOM), self.name, 1)
        finally:
            self._close(stream)


def utf16_encoding(head: bytes) -> str | None:
    """The codec of a UTF-16 input with a byte-order mark (UTF-32's starts like UTF-16 LE's: not it)."""
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return None
    return "utf-16" if head.startswith((b"\xff\xfe", b"\xfe\xff")) else None


def _transcoded_head(head: bytes, encoding: str) -> bytes:
    return codecs.getincrementaldecoder(encoding)(errors="replace").decode(head).encode("utf-8", "surrogatepass")


class _Transcoded(io.RawIOBase):
    """A UTF-16 stream read as UTF-8 bytes (the lines, the hash and every error then see UTF-8)."""

    def __init__(self, stream: IO[bytes], encoding: str) -> None:
        super().__init__()
        self._text = io.TextIOWrapper(stream, encoding=encoding, errors="strict", newline="")

    def readable(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> bytes:
        try:
            return self._text.readline(-1 if size is None or size < 0 else size).encode("utf-8", "surrogatepass")
        except UnicodeDecodeError as exc:
            raise _BadUtf16(str(exc)) from None

    def read(self, size: int | None = -1) -> bytes:
        try:
            return self._text.read(-1 if size is None or size < 0 else size).encode("utf-8", "surrogatepass")
        except UnicodeDecodeError as exc:
            raise _BadUtf16(str(exc)) from None

    def close(self) -> None:
        self._text.close()
        super().close()


class _BadUtf16(ValueError):
    """Bytes that are not UTF-16 in a file that starts with its byte-order mark."""


def array_or_lines(file: InputFile) -> tuple[str | None, Iterator[bytes]]:
    """Open an input that holds JSON Lines or one JSON array (a leading ``[``): return the array's
    text (read whole, at most ``MAX_DOCUMENT_BYTES``) and no lines, or None and the lines."""
    stream = file._open()
    start = file.head.removeprefix(BOM).lstrip(b" \t\r\n")[:1]
    if start == b"[":  # read in chunks, not lines: an array is often written on one line
        try:
            document = file.read_rest(stream, "a JSON array", _ARRAY_ADVICE)
        finally:
            file._close(stream)
        return decode_text(document.removeprefix(BOM), file.name, 1), iter(())
    lines = file.raw_lines(stream)
    if start:
        return None, lines
    # The first bytes are blank (or could not be seen): read up to the first non-blank line.
    head: list[bytes] = []
    for raw in lines:
        head.append(raw)
        if raw.removeprefix(BOM).strip(b" \t\r\n") if len(head) == 1 else raw.strip(b" \t\r\n"):
            break
    if b"".join(head).removeprefix(BOM).lstrip(b" \t\r\n").startswith(b"["):
        try:
            document = b"".join(head) + file.read_rest(stream, "a JSON array", _ARRAY_ADVICE, sum(map(len, head)))
        finally:
            lines.close()
        return decode_text(document.removeprefix(BOM), file.name, 1), iter(())
    return None, chain(head, lines)


def decode_text(raw: bytes, source: str, line: int) -> str:
    """Decode one line (or a whole document) as UTF-8, naming the first bad byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line += before.count(b"\n")
        column = len(before[before.rfind(b"\n") + 1 :].decode("utf-8")) + 1
        raise InputError(
            source, f"expected UTF-8 text, got byte 0x{raw[exc.start]:02x}", line, column
        ) from None


