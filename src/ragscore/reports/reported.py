"""The result of a command that is its report document (compare several, agree, power, monitor, dashboard):
rendered to JSON or one of its own formats, as the command line writes it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ragscore.errors import UsageError

Renderer = Callable[[dict[str, Any]], Iterator[str]]  # a report document -> the text of one format, piece by piece


@dataclass
class Reported:
    """A command's result held as its report document: JSON, or a format of ``RENDERERS`` (format -> the
    function that renders the document), rendered piece by piece; it passed unless the document says otherwise."""

    document: dict[str, Any] = field(repr=False)
    KIND: ClassVar[str] = "report"
    RENDERERS: ClassVar[dict[str, Renderer]] = {}

    @property
    def passed(self) -> bool:
        """Whether every gate passed (a result without gates passes)."""
        return bool(self.document.get("pass", True))

    def render(self, format: str = "json") -> Iterator[str]:
        """Yield the report in ``format``, as the command line writes it."""
        if format == "json":
            from ragscore.reports.json_report import render_json

            return render_json(self.document)
        renderer = self.RENDERERS.get(format)
        if renderer is None:
            raise UsageError(f"unknown {self.KIND} format {format!r} (formats: json, {', '.join(self.RENDERERS)})")
        return renderer(self.document)

    def report(self, format: str = "json") -> str:
        """Return the report in ``format``: the command line's bytes."""
        return "".join(self.render(format))

    def notes(self) -> list[str]:
        """What the command line prints on standard error."""
        return []
