"""The one error hierarchy: every failure a user can cause is a ``RagscoreError``."""

from __future__ import annotations

from ragscore.quoting import visible


class RagscoreError(Exception):
    """Base class of every error the command line reports as a usage or input error."""


class InputError(RagscoreError):
    """A gold or trace file breaks its data contract; carries the file, line and column."""

    def __init__(self, source: str, message: str, line: int | None = None, column: int | None = None) -> None:
        self.source = source
        self.line = line
        self.column = column
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = visible(self.source)  # a file name may hold a newline: the message stays one line
        if self.line is not None and self.source.endswith(" records>"):  # records given to the Python API
            return f"{where}, record {self.line}: {self.message}"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.message}"


class SideInputError(InputError):
    """An error in an input beside the traces (a corpus, a chunking) or in the gold set as one reads it: never
    located in the trace file, nor said to come from its format."""


class ConfigError(InputError):
    """A settings or gates file (or ``--gates``) is malformed or names something unknown."""


class UsageError(RagscoreError):
    """The command line itself is inconsistent (for example ``-`` given for two inputs)."""
