"""Per-question rows kept out of memory: written in chunks as a part makes them, read back on each pass.

A run that lists its questions (``--per-question``, Markdown, HTML, compare, slices) needs one
row per question, and a million rows held at once cost gigabytes. So a part appends its rows, in
gold order, to a ``RowWriter``, which holds ``CHUNK`` of them: a part with no more than that
never touches the disk; past it, every full chunk is pickled to a file in the run's temporary
folder (``SpillFolder``, under ``TMPDIR``). ``Rows`` reads the parts' files again on every pass and
merges them by gold place, so a report streams its questions in gold order while holding one
chunk per part. The folder goes when the last ``Rows`` that reads it does, or when Python exits.

A part scored by an engine on other machines (Spark, Dask, Ray) or by ``ragscore partial`` keeps
its rows in memory: a file in one machine's temporary folder means nothing to another. ``ragscore
merge`` reads each partial's rows into a folder of its own as it goes (every row, as a partial
can be small and there may be hundreds), so a report pass holds one chunk per partial.
"""

from __future__ import annotations

import heapq
import os
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO, Final, NamedTuple

from ragscore.errors import RagscoreError
from ragscore.metrics.answer import Outcome
from ragscore.metrics.grounding import Findings
from ragscore.metrics.repeats import QuestionSamples
from ragscore.text import Rule

if TYPE_CHECKING:
    from tempfile import TemporaryDirectory

CHUNK: Final = 4096  # rows pickled at a time: a few megabytes


class QuestionRow(NamedTuple):
    """One question's result as the per-question reports show it."""

    place: int  # the gold item's place(line, column), which orders the rows
    qid: str
    question: str | None
    answerable: bool
    outcome: Outcome
    citations: tuple[str, ...]  # the gold citations and containment rule, which the reports' reasons name
    rule: Rule
    family_rows: tuple[Sequence[float] | None, ...]  # one per enabled optional family
    slices: tuple[tuple[str, ...], ...] = ()           # the labels of each --by path
    scores: dict[str, float] = {}                       # external scores the question has (read-only)
    sampled: QuestionSamples | None = None              # its samples (repeats = "samples"; outcome: the last)
    claim: str | None = None                            # what the trace that counted claimed (None: no claim)
    cited: tuple[str, ...] | None = None                # ... and the ids it cited (None: no trace)
    grounding: Findings | None = None                   # --metrics grounding's findings (None: not answered, or off)


class SpillError(RagscoreError):
    """The rows could not be written to the temporary folder (no usable folder, a full disk)."""


def _failed(where: str, exc: OSError) -> SpillError:
    return SpillError(f"cannot write the per-question rows to a temporary folder ({where}): "
                      f"{exc.strerror or exc}; set TMPDIR to a folder with room, or list no questions")


class SpillFolder:
    """One run's temporary folder for its rows, made on first use; removed with the last object that
    holds it (or at exit)."""

    def __init__(self) -> None:
        self._folder: TemporaryDirectory[str] | None = None
        self._named = 0

    def writer(self, prefix: str) -> RowWriter:
        """A writer of rows to a file of its own in this folder (made when it first spills)."""
        self._named += 1
        return RowWriter(self, f"{prefix}-{self._named}.rows")

    @property
    def path(self) -> str:
        if self._folder is None:
            import tempfile  # only a run with many rows pays for importing it

            try:
                self._folder = tempfile.TemporaryDirectory(prefix="ragscore-rows-")
            except OSError as exc:  # no usable folder: tempfile tried TMPDIR, /tmp, /var/tmp, /usr/tmp, ".")
                raise _failed("TMPDIR", exc) from None
        return self._folder.name

    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("a spill folder stays in its process; give workers its path")


@dataclass(slots=True)
class RowFile:
    """One part's rows in gold order: pickled lists at ``offsets`` in ``path`` (if any), then ``tail``."""

    count: int = 0
    path: str | None = None
    offsets: list[int] = field(default_factory=list)  # where each chunk starts in the file
    tail: list[QuestionRow] = field(default_factory=list)
    owner: SpillFolder | None = None  # keeps the folder while these rows are read (never pickled)
    # The rows' gold places, when read from a partial: a merge checks that no question is in two parts.
    places: array[int] | None = None

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[QuestionRow]:
        for offset in self.offsets:  # no file stays open between chunks: a pass may merge many parts
            yield from self._chunk(offset)
        yield from self.tail

    def _chunk(self, offset: int) -> list[QuestionRow]:
        import pickle  # imported only by a run that spilled

        assert self.path is not None  # a file with chunks has a path
        try:
            with open(self.path, "rb") as f:
                f.seek(offset)
                rows: list[QuestionRow] = pickle.load(f)
        except OSError as exc:  # the folder was removed under the run, say
            raise SpillError(f"cannot read the per-question rows back from the temporary folder: "
                             f"{exc.strerror or exc}") from None
        return rows

    def __getstate__(self) -> tuple[object, ...]:
        return self.count, self.path, self.offsets, self.tail

    def __setstate__(self, state: tuple[object, ...]) -> None:
        self.count, self.path, self.offsets, self.tail = state  # type: ignore[assignment]
        self.owner = self.places = None


class RowWriter:
    """Collect a part's rows in gold order; past ``CHUNK`` rows, pickle each full chunk to
    ``name`` in ``folder`` (a path, or the run's ``SpillFolder``). With no folder, keep them all."""

    def __init__(self, folder: str | SpillFolder | None, name: str) -> None:
        self._folder, self._name = folder, name
        self._rows: list[QuestionRow] = []
        self._file: RowFile = RowFile(owner=folder if isinstance(folder, SpillFolder) else None)
        self._out: BinaryIO | None = None

    def append(self, row: QuestionRow) -> None:
        if len(self._rows) >= CHUNK and self._folder is not None:
            self._spill()
        self._rows.append(row)

    def _spill(self) -> None:
        import pickle  # only a run with many rows pays for importing it

        file = self._file
        folder = self._folder.path if isinstance(self._folder, SpillFolder) else self._folder
        assert folder is not None  # only a writer with a folder spills
        try:
            if self._out is None:
                file.path = os.path.join(folder, self._name)
                self._out = open(file.path, "xb")  # noqa: SIM115 (closed by finish or close)
            offset = self._out.tell()
            pickle.dump(self._rows, self._out, pickle.HIGHEST_PROTOCOL)
            self._out.flush()  # each chunk is read back by a fresh open
        except OSError as exc:  # a full disk, or a folder removed under the run
            self.close()
            raise _failed(folder, exc) from None
        file.count += len(self._rows)
        file.offsets.append(offset)
        self._rows = []

    def finish(self, *, spill_rest: bool = False) -> RowFile:
        """Close the file; the rows written, then the rest from memory (``spill_rest``: on disk too,
        when there is a folder)."""
        if spill_rest and self._rows and self._folder is not None:
            self._spill()
        self.close()
        file = self._file
        file.count += len(self._rows)
        file.tail, self._rows = self._rows, []
        return file

    def close(self) -> None:
        """Close the file, if one is open (a writer given up on: its folder removes what it wrote)."""
        if self._out is not None:
            self._out.close()
            self._out = None


class Rows:
    """Every question's row in gold order, read again on each pass: several parts' rows merged by place."""

    __slots__ = ("_parts",)

    def __init__(self, parts: Sequence[RowFile | Rows]) -> None:
        self._parts = tuple(parts)  # each RowFile holds its own folder

    def __len__(self) -> int:
        return sum(len(p) for p in self._parts)

    @property
    def parts(self) -> tuple[RowFile | Rows, ...]:
        """The parts' rows, each in gold order."""
        return self._parts

    def __iter__(self) -> Iterator[QuestionRow]:
        if len(self._parts) == 1:
            return iter(self._parts[0])
        return heapq.merge(*self._parts)  # rows start with their gold place, unique across parts

    def __reduce__(self) -> tuple[object, ...]:
        return Rows, (self._parts,)
