"""ragscore ner, classify and link from Python: a pipeline stage's predictions against its gold annotations."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ragscore.errors import UsageError
from ragscore.keywords import checked, gate_spec
from ragscore.loaders.records import Records, Source, as_input
from ragscore.reports.common import FORMATS
from ragscore.stages.conll import SCHEME_CHOICES as SCHEME_CHOICES  # the suite checks a task's scheme

if TYPE_CHECKING:
    from ragscore.gates import GateResult


@dataclass
class StageRun:
    """One pipeline stage scored (ner, classify or link): its metrics, gates and reports."""

    stage: str
    evaluation: Any = field(repr=False)
    gate_results: list[GateResult] = field(repr=False)
    passed: bool
    document: dict[str, Any] = field(repr=False)
    input_notes: tuple[str, ...] = ()  # what reading the inputs left out (a BRAT folder's named pipe)

    @property
    def metrics(self) -> dict[str, float | int | None]:
        """Every metric of the stage by name (None where it is undefined)."""
        return dict(self.evaluation.metrics)

    @property
    def gates(self) -> list[GateResult]:
        """The result of every gate."""
        return list(self.gate_results)

    def render(self, format: str = "json") -> Iterator[str]:
        """Yield the report in ``format`` (json, markdown, text, html, junit), as the command line writes it."""
        from ragscore.stages import document

        if format == "json":
            return document.render_stage_json(self.document)
        if format == "text":
            return document.render_stage_text(self.document)
        if format == "markdown":
            from ragscore.stages.markdown import render_stage_markdown

            return render_stage_markdown(self.document)
        if format == "html":
            from ragscore.stages.html import render_stage_html

            return render_stage_html(self.document)
        if format == "junit":
            from ragscore.reports.junit import render_junit

            return iter([render_junit(self.document)])
        raise UsageError(f"unknown report format {format!r} (formats: {', '.join(FORMATS)})")

    def report(self, format: str = "json") -> str:
        """Return the report in ``format``: the command line's bytes."""
        return "".join(self.render(format))

    def notes(self) -> list[str]:
        """The notes the command line prints on standard error (without its "ragscore: " prefix)."""
        from ragscore.reports.console import gate_lines
        from ragscore.stages.notes import join_notes

        joined = self.evaluation.joined
        return [*self.input_notes, *join_notes(joined.missing_ids, joined.unknown_ids, joined.duplicate_ids),
                *gate_lines(self.gate_results, self.passed)]


# Stage files in their usual formats, by --input-format or by extension (JSON Lines otherwise).
STAGE_FORMATS: Final = ("auto", "jsonl", "conll", "iob2", "iobes", "bioes", "brat", "tsv", "csv")


_BY_EXTENSION: Final = {".conll": "conll", ".bio": "conll", ".iob": "conll", ".iob2": "conll", ".iobes": "conll",
                        ".bioes": "conll", ".ann": "brat", ".tsv": "tsv", ".csv": "csv"}


def _stage_input(source: Source, stage: str, role: str, input_format: str, notes: list[str],
                 scheme: str = "auto", schemes: dict[str, str] | None = None) -> Any:
    """Read a stage file in its format: CoNLL and BRAT for ner, TSV or CSV for classify and link."""
    if not isinstance(source, (str, os.PathLike)) or os.fspath(source) == "-":
        return as_input(source, role)
    path = os.fspath(source)
    fmt = input_format
    if fmt == "auto":
        fmt = "brat" if os.path.isdir(path) else _BY_EXTENSION.get(os.path.splitext(path)[1].lower(), "jsonl")
    if fmt == "jsonl":
        return as_input(path, role)
    from ragscore.stages import conll, standoff

    def read_conll() -> list[Any]:
        found, used = conll.read(path, fmt, scheme, notes)
        if schemes is not None:
            schemes[role] = used
        return found

    readers: dict[tuple[str, str], Any] = {
        ("ner", "conll"): read_conll, ("ner", "iob2"): read_conll, ("ner", "iobes"): read_conll,
        ("ner", "bioes"): read_conll,
        ("ner", "brat"): lambda: standoff.brat(path, notes),
        ("classify", "tsv"): lambda: standoff.classify_table(path),
        ("classify", "csv"): lambda: standoff.classify_table(path),
        ("link", "tsv"): lambda: (standoff.link_gold_table if role == "gold" else standoff.link_pred_table)(path),
        ("link", "csv"): lambda: (standoff.link_gold_table if role == "gold" else standoff.link_pred_table)(path),
    }
    reader = readers.get((stage, fmt))
    if reader is None:
        raise UsageError(f"{stage} does not read {fmt} files (it reads JSON Lines"
                         + {"ner": ", CoNLL (IOB2, IOBES) and BRAT", "classify": ", TSV and CSV",
                            "link": ", TSV and CSV"}[stage] + ")")
    return Records(reader(), role, name=path)


def _stage(stage: str, gold: Source, pred: Source, gates: str | Mapping[str, Any] | None,
           gates_file: str | os.PathLike[str] | None, strict: bool | None, cutoffs: Sequence[int] | None,
           cwd: str | os.PathLike[str] | None, input_format: str = "auto", scheme: str = "auto") -> StageRun:
    from ragscore.gates import evaluate_gates, gates_pass
    from ragscore.stages.config import load_stage_config
    from ragscore.stages.conll import SCHEME_CHOICES
    from ragscore.stages.document import build_stage_document
    from ragscore.stages.evaluate import evaluate_stage

    if strict is not None and not isinstance(strict, bool):
        raise UsageError(f"strict: expected true or false, got {strict!r}")
    config = load_stage_config(
        stage, gates=None if gates is None else gate_spec(gates),
        gates_file=None if gates_file is None else os.fspath(gates_file), strict=strict,
        cutoffs=None if cutoffs is None else checked("cutoffs", cutoffs), cwd=None if cwd is None else Path(cwd))
    if input_format not in STAGE_FORMATS:
        raise UsageError(f"input_format: expected one of {', '.join(STAGE_FORMATS)}, got {input_format!r}")
    if scheme not in SCHEME_CHOICES:
        raise UsageError(f"scheme: expected one of {', '.join(SCHEME_CHOICES)}, got {scheme!r}")
    notes: list[str] = []
    schemes: dict[str, str] = {}  # the scheme each CoNLL input was read in
    ev = evaluate_stage(config, _stage_input(gold, stage, "gold", input_format, notes, scheme, schemes),
                        _stage_input(pred, stage, "pred", input_format, notes, scheme, schemes))
    if scheme != "auto" and not schemes:
        raise UsageError(f"--scheme {scheme} reads CoNLL tags, and neither input is a CoNLL file")
    results = evaluate_gates(config.gates, ev.metrics, config.strict)
    passed = gates_pass(results)
    return StageRun(stage, ev, results, passed, build_stage_document(ev, config, results, passed, schemes),
                    tuple(dict.fromkeys(notes)))  # gold and predictions in one folder: one note


def ner(gold: Source, pred: Source, *, gates: str | Mapping[str, Any] | None = None,
        gates_file: str | os.PathLike[str] | None = None, strict: bool | None = None,
        cwd: str | os.PathLike[str] | None = None, input_format: str = "auto", scheme: str = "auto") -> StageRun:
    """Score named-entity extraction: strict and partial entity matching (``[ner]`` settings apply).
    Files may be JSON Lines, CoNLL (``.conll``, ``.bio``, ``.iob``, ``.iobes``, ``.bioes``) or BRAT (a
    ``.ann`` beside its ``.txt``, or a folder of them); ``input_format`` overrides the extension.
    ``scheme`` (auto, iob1, iob2, iobes, bilou) is the CoNLL tags' scheme: auto tells it from the tags."""
    return _stage("ner", gold, pred, gates, gates_file, strict, None, cwd, input_format, scheme)


def classify(gold: Source, pred: Source, *, gates: str | Mapping[str, Any] | None = None,
             gates_file: str | os.PathLike[str] | None = None, strict: bool | None = None,
             cwd: str | os.PathLike[str] | None = None, input_format: str = "auto") -> StageRun:
    """Score type classification: accuracy, per-class and macro/weighted F1 (``[classify]`` settings apply).
    Files may be JSON Lines, or TSV/CSV with a header (``id, label``)."""
    return _stage("classify", gold, pred, gates, gates_file, strict, None, cwd, input_format)


def link(gold: Source, pred: Source, *, gates: str | Mapping[str, Any] | None = None,
         gates_file: str | os.PathLike[str] | None = None, strict: bool | None = None,
         cutoffs: Sequence[int] | None = None, cwd: str | os.PathLike[str] | None = None,
         input_format: str = "auto") -> StageRun:
    """Score entity linking: hits@K and MRR over ranked candidates, NIL detection (``[link]`` settings apply).
    Files may be JSON Lines, or TSV/CSV with a header (gold ``id, mention, kb_id``; predictions
    ``id, kb_id, score``, a row per candidate)."""
    return _stage("link", gold, pred, gates, gates_file, strict, cutoffs, cwd, input_format)


STAGES: Final = {"ner": ner, "classify": classify, "link": link}  # each stage's command, by its name
