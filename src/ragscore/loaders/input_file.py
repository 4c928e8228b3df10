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
from bisect import bisect_right
from collections.abc import Callable, Generator, Iterator
from functools import partial
from itertools import chain, repeat
from typing import IO, Final, cast

from ragscore.errors import InputError
from ragscore.loaders.shards import Shards
from ragscore.loaders.sniff import SNIFF_BYTES, check_text_head, decompressor, encoding_hint

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
    """An input file (or standard input, or several files read as one) read once, as raw lines,
    hashing what is read."""

    def __init__(self, spec: str | Shards, *, hashed: bool = True) -> None:
        self.spec = spec
        self.name = "<stdin>" if spec == STDIN else str(spec)
        self._hash = hashlib.sha256() if hashed else None
        self.head = b""  # the first bytes, once opened (empty when the stream cannot show them)
        self.compressed = False  # gzip, bzip2 or xz, read decompressed
        # Several files: the line each one starts at in the stream, and each one's sha256, as read.
        self.starts: list[int] = []
        self.members: list[tuple[str, str]] = []

    @property
    def sha256(self) -> str:
        """Return the digest of every byte read so far."""
        assert self._hash is not None, "opened without hashing"
        return self._hash.hexdigest()

    @property
    def rereadable(self) -> bool:
        """Tell whether the input can be read a second time: regular files (not '-', a pipe or a device)."""
        paths = self.spec.paths if isinstance(self.spec, Shards) else (self.spec,)
        try:
            return STDIN not in paths and all(stat.S_ISREG(os.stat(path).st_mode) for path in paths)
        except (OSError, ValueError):
            return False

    def locate(self, line: int) -> tuple[str, int]:
        """Say which file, and which of its lines, a line of the stream is (several files read as one)."""
        if isinstance(self.spec, Shards) and not self.starts:  # not read in this process: count its lines
            counter = InputFile(self.spec, hashed=False)
            try:
                with counter._open() as stream:
                    while counter._read(stream):
                        pass
            except InputError:
                pass  # a file that cannot be read: the lines before it are counted
            self.starts, self.members = counter.starts, [(path, "") for path, _ in counter.members]
        if not self.starts:
            return self.name, line
        index = max(bisect_right(self.starts, line) - 1, 0)
        return self.members[index][0] if index < len(self.members) else self.name, line - self.starts[index] + 1

    def where(self, line: int) -> str:
        """Name a line of the stream as ``file:line``."""
        name, number = self.locate(line)
        return f"{name}:{number}"

    def located(self, exc: InputError) -> InputError:
        """The same error, at its file's own line when the stream holds several files."""
        if not isinstance(self.spec, Shards) or exc.source != self.name or exc.line is None:
            return exc
        name, line = self.locate(exc.line)
        return InputError(name, exc.message, line, exc.column)

    def _open(self) -> IO[bytes]:
        """Open the input and check its first bytes (binary input is refused before a line is read)."""
        if isinstance(self.spec, Shards):
            return cast(IO[bytes], _Concatenated(self, self.spec.paths))
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
        digest = self._hash = hashlib.sha256()
        if isinstance(self.spec, Shards):
            with self._open() as stream:
                while chunk := self._read(stream, block):
                    digest.update(chunk)
            return digest.hexdigest()
        with open(self.spec, "rb") as raw:
            opener = decompressor(raw.read(16))
            raw.seek(0)
            stream = opener(raw) if opener is not None else raw
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

    def _read(self, stream: IO[bytes], size: int = _CHUNK_BYTES) -> bytes:
        try:
            return stream.read(size)
        except (_BadUtf16, *_DECOMPRESSION_ERRORS) as exc:
            raise self._unreadable(exc) from None

    def _unreadable(self, exc: Exception) -> Exception:
        """Say why a transcoded or decompressed stream could not be read (anything else as it is)."""
        if isinstance(exc, _BadUtf16):
            return InputError(self.name, f"expected UTF-16 text after its byte-order mark, got {exc.what}", exc.line,
                              exc.column)
        if self.compressed:
            return InputError(self.name, f"cannot decompress: {exc}")
        return exc

    def read_rest(self, stream: IO[bytes], what: str, advice: str = "", size: int = 0) -> bytes:
        """Read the rest of ``stream`` in chunks, updating the hash; refuse a file of more than
        ``MAX_DOCUMENT_BYTES`` (``size`` of them read already). ``what`` names the file's kind."""
        limit = MAX_DOCUMENT_BYTES  # read at each call, so that a test can lower it
        chunks = []
        while size <= limit and (chunk := self._read(stream)):
            size += len(chunk)
            if self._hash is not None:
                self._hash.update(chunk)
            chunks.append(chunk)
        if size > limit:
            raise InputError(self.name, f"{what} longer than {limit:,} bytes is not read (it is held in memory "
                                        "whole)" + (f": {advice}" if advice else ""))
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
    """A UTF-16 stream read as UTF-8 bytes (the lines, the hash and every error then see UTF-8).

    Each chunk is decoded and encoded again whole, and lines are read from the UTF-8 bytes: they
    end at a line feed only, as UTF-8 input's do (a carriage return alone ends none). Bytes that
    are not UTF-16 (a lone surrogate, an odd last byte) are an error at their line and column
    (counted in characters, as a UTF-8 line's are), raised once the lines before them are read.
    """

    def __init__(self, stream: IO[bytes], encoding: str) -> None:
        super().__init__()
        self._stream = stream
        self._read1 = getattr(stream, "read1", stream.read)  # what a pipe holds so far, not a full chunk
        mark = stream.read(2)  # the byte-order mark tells the byte order: read with no mark from here
        self._codec = "utf-16-le" if mark == b"\xff\xfe" else "utf-16-be"
        self._decoder = codecs.getincrementaldecoder(self._codec)(errors="strict")
        self._buffer = io.BytesIO()  # the last chunk, as UTF-8
        self._ends = 0  # line ends decoded so far
        self._after = 0  # characters decoded since the last line end
        self._ended = False
        self._error: _BadUtf16 | None = None  # raised once the text before it is read

    def readable(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> bytes:
        limit = -1 if size is None or size < 0 else size
        line = self._buffer.readline(limit)
        while line[-1:] != b"\n" and (limit < 0 or len(line) < limit) and self._more():
            line += self._buffer.readline(limit - len(line) if limit >= 0 else -1)
        return line

    def read(self, size: int | None = -1) -> bytes:
        limit = -1 if size is None or size < 0 else size
        data = self._buffer.read(limit)
        while (limit < 0 or len(data) < limit) and self._more():
            data += self._buffer.read(limit - len(data) if limit >= 0 else -1)
        return data

    def _more(self) -> bool:
        """Decode the next chunk of the stream into the buffer; False at the end (raise a pending error there)."""
        if self._ended:
            if self._error is not None:
                raise self._error
            return False
        chunk = self._read1(_CHUNK_BYTES)
        try:
            text = self._decoder.decode(chunk, final=not chunk)
            self._count(text)
        except UnicodeDecodeError as exc:  # the lines before it are read first: their errors come first
            text = exc.object[: exc.start - exc.start % 2].decode(self._codec)
            self._count(text)
            self._error = _BadUtf16(self._what(exc), self._ends + 1, self._after + 1)
            chunk = b""
        self._buffer = io.BytesIO(text.encode("utf-8", "surrogatepass"))
        self._ended = not chunk
        return True

    def _count(self, text: str) -> None:
        ends = text.count("\n")
        self._ends += ends
        self._after = len(text) - text.rfind("\n") - 1 if ends else self._after + len(text)

    def _what(self, exc: UnicodeDecodeError) -> str:
        """Say what the bytes that are not UTF-16 are."""
        units = exc.object[exc.start : exc.start + 2]
        if len(units) < 2 or exc.reason in ("truncated data", "unexpected end of data"):
            return "the end of the file in the middle of a character"
        return f"a lone surrogate U+{int.from_bytes(units, 'little' if self._codec.endswith('le') else 'big'):04X}"

    def close(self) -> None:
        try:
            self._stream.close()
        finally:
            super().close()


class _Concatenated(io.RawIOBase):
    """Several files read one after the other as one stream of lines (``--trace`` given several times).

    Each file is opened as a file on its own is (decompressed, transcoded, its first bytes checked);
    a file whose last line has no line end gets one, so that it does not run into the next file's
    first line; a UTF-8 byte-order mark at the start of a later file is left out. The owner learns
    the line each file starts at and, when it hashes, each file's sha256.
    """

    def __init__(self, owner: InputFile, paths: tuple[str, ...]) -> None:
        super().__init__()
        self._owner, self._paths = owner, paths
        self._index = -1
        self._file: InputFile | None = None
        self._stream: IO[bytes] | None = None
        self._hash: hashlib._Hash | None = None
        self._lines = 0  # line ends given out so far
        self._last = b""  # the last byte given out of the current file
        owner.starts.clear()
        owner.members.clear()
        self._advance()
        owner.head = self._file.head if self._file is not None else b""

    def readable(self) -> bool:
        return True

    def _advance(self) -> None:
        """Close the current file and open the next one (if any)."""
        self._finish()
        self._index += 1
        if self._index >= len(self._paths):
            return
        path = self._paths[self._index]
        self._file = InputFile(path, hashed=False)
        try:
            stream = self._file._open()
        except InputError as exc:  # at its place in the stream, so that an earlier file's errors come first
            raise self._in_stream(exc) from None
        self._stream = stream
        head = self._file.head
        if head.removeprefix(BOM).lstrip(b" \t\r\n")[:1] == b"[":
            self._stream = None
            stream.close()
            raise self._in_stream(InputError(path, "a JSON array cannot be read as one of several trace files: write "
                                                   "JSON Lines (one record per line)"))
        self._hash = hashlib.sha256() if self._owner._hash is not None else None
        self._owner.starts.append(self._lines + 1)
        self._owner.members.append((path, ""))
        self._last = b""
        if self._index and head.startswith(BOM):
            skipped = self._call(stream.read, len(BOM))
            if self._hash is not None:
                self._hash.update(skipped)

    def _in_stream(self, exc: InputError) -> InputError:
        """An error of the file being opened, at its line in the stream (``InputFile.located`` turns it
        back into the file's own; an error of no line is at the file's first)."""
        self._owner.starts.append(self._lines + 1)
        self._owner.members.append((self._paths[self._index], ""))
        return InputError(self._owner.name, exc.message, self._lines + (exc.line or 1), exc.column)

    def _finish(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
            if self._hash is not None:
                path, _ = self._owner.members[-1]
                self._owner.members[-1] = (path, self._hash.hexdigest())

    def _call(self, read: Callable[[int], bytes], size: int) -> bytes:
        try:
            return read(size)
        except (_BadUtf16, *_DECOMPRESSION_ERRORS) as exc:
            assert self._file is not None
            raise self._file._unreadable(exc) from None

    def _more(self) -> bool:
        """Tell whether the current file's last line needs a line end: another file follows it."""
        return self._last not in (b"", b"\n") and self._index + 1 < len(self._paths)

    def readline(self, size: int | None = -1) -> bytes:
        limit = -1 if size is None else size
        while self._stream is not None:
            line = self._call(self._stream.readline, limit)
            if line:
                if self._hash is not None:
                    self._hash.update(line)
                self._last = line[-1:]
                if line[-1] == 10:
                    self._lines += 1
                elif (limit < 0 or len(line) < limit) and self._more():  # the file's last line
                    line += b"\n"
                    self._lines += 1
                    self._last = b"\n"
                return line
            self._advance()
        return b""

    def read(self, size: int | None = -1) -> bytes:
        limit = -1 if size is None else size
        while self._stream is not None:
            chunk = self._call(self._stream.read, limit)
            if chunk:
                if self._hash is not None:
                    self._hash.update(chunk)
                self._lines += chunk.count(b"\n")
                self._last = chunk[-1:]
                return chunk
            end = self._more()
            self._lines += end
            self._advance()
            if end:
                return b"\n"
        return b""

    def close(self) -> None:
        try:
            if self._stream is not None:
                self._stream.close()
                self._stream = None
        finally:
            super().close()


class _BadUtf16(ValueError):
    """Bytes that are not UTF-16 in a file that starts with its byte-order mark: what they are, and where."""

    def __init__(self, what: str, line: int, column: int) -> None:
        super().__init__(what)
        self.what, self.line, self.column = what, line, column


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
    blanks, size, first = _skip_blank(lines)
    if first.lstrip(b" \t\r\n").removeprefix(BOM if not blanks else b"").startswith(b"["):
        try:
            rest = file.read_rest(stream, "a JSON array", _ARRAY_ADVICE, size)  # refused past the limit, blanks too
            document = b"\n" * blanks + first + rest  # no more bytes than the file's own
        finally:
            lines.close()
        return decode_text(document.removeprefix(BOM), file.name, 1), iter(())
    return None, _again(blanks, first, lines)


def peek(lines: Iterator[bytes]) -> tuple[bytes, Iterator[bytes]]:
    """Return the first non-blank line and every line, that one included, to be read from the start.

    The blank lines before it are counted, not kept (see ``Resumed``): a file of millions of them
    costs no memory.
    """
    if isinstance(lines, Resumed):  # read up to its first non-blank line already
        return lines.first, lines
    blanks, _, first = _skip_blank(lines)
    return first, _again(blanks, first, lines)


def _skip_blank(lines: Iterator[bytes]) -> tuple[int, int, bytes]:
    """Read up to the first non-blank line (a UTF-8 byte-order mark on the first is blank): return
    how many blank lines came before it, their bytes and its own, and that line (b"" if none)."""
    blanks = size = 0
    for raw in lines:
        size += len(raw)
        if (raw if blanks else raw.removeprefix(BOM)).strip(b" \t\r\n"):
            return blanks, size, raw
        blanks += 1
    return blanks, size, b""


def _again(blanks: int, first: bytes, lines: Iterator[bytes]) -> Iterator[bytes]:
    """The lines ``_skip_blank`` read, and the rest (see ``Resumed``)."""
    rest = chain((first,), lines) if first else lines
    return Resumed(blanks, first, rest) if blanks else rest


class Resumed(Iterator[bytes]):
    """Lines read again from the first non-blank one, after ``blanks`` blank lines that were not kept.

    Iterated, it gives each blank line as a bare line end (to every reader a blank line is only a
    line to count, whatever blank it was), then ``rest``; a reader that numbers lines itself
    (``iter_jsonl``) skips them: ``rest`` starts at line ``blanks + 1``.
    """

    def __init__(self, blanks: int, first: bytes, rest: Iterator[bytes]) -> None:
        self.blanks, self.first, self.rest = blanks, first, rest
        self._lines = chain(repeat(b"\n", blanks), rest)

    def __next__(self) -> bytes:
        return next(self._lines)


def decode_text(raw: bytes, source: str, line: int) -> str:
    """Decode one line (or a whole document) as UTF-8, naming the first bad byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = raw.rfind(b"\n", 0, exc.start) + 1  # the bad line's, within a whole document
        end = raw.find(b"\n", exc.start)
        line += raw.count(b"\n", 0, start)
        column = len(raw[start : exc.start].decode("utf-8")) + 1
        hint = encoding_hint(raw[start : end if end >= 0 else len(raw)])
        raise InputError(source, f"expected UTF-8 text, got byte 0x{raw[exc.start]:02x}{hint}", line, column) from None


