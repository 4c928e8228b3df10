"""ragscore agree and split from Python: ``agree``, ``agree_judge`` and ``split``, and the agreement's result."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ragscore.errors import UsageError
from ragscore.goldset.report import render_markdown
from ragscore.keywords import gate_spec, slice_paths
from ragscore.reports.reported import Renderer, Reported

if TYPE_CHECKING:
    from ragscore.gates import GateResult


@dataclass
class Agreement(Reported):
    """How far annotators' gold sets agree (kappa, alpha, citation overlap), or a judge's scores and human labels
    (kappa and alpha per criterion): the disagreeing questions, gates."""

    gate_results: list[GateResult] = field(default_factory=list, repr=False)
    read_notes: list[str] = field(default_factory=list, repr=False)  # what reading the files found (judge mode)
    KIND: ClassVar[str] = "agreement"
    RENDERERS: ClassVar[dict[str, Renderer]] = {
        "markdown": render_markdown}

    @property
    def metrics(self) -> dict[str, float | None]:
        """Every agreement measure by name."""
        return dict(self.document["metrics"])

    def notes(self) -> list[str]:
        """What the command line prints on standard error: disagreements, then the gates' verdict."""
        from ragscore.goldset.report import agree_notes, judge_notes

        if "criteria" in self.document:
            return judge_notes(self.document, self.gate_results, self.read_notes)
        return agree_notes(self.document, self.gate_results)


def agree(
    annotations: Sequence[str | os.PathLike[str]], *, fields: Sequence[str] = (), gates: str | Mapping[str, Any] | None
    = None, strict: bool = False,
) -> Agreement:
    """Compare two or more annotators' gold files (the same questions, by qid): Cohen's kappa and
    Krippendorff's alpha on ``answerable`` and on each of ``fields`` (dotted paths, as ``--by``),
    Jaccard and exact agreement on ``gold_citations``, and the disagreeing qids; ``gates`` as
    ``--gates`` (``"kappa=0.85"``)."""
    from ragscore.gates import evaluate_gates, gates_pass, parse_gate_option
    from ragscore.goldset.agreement import agreement_metrics, distinct_files
    from ragscore.goldset.report import build_agree_document
    from ragscore.loaders.gold import KEEP_EXTRA, load_gold, slice_labels
    from ragscore.loaders.jsonl import InputFile
    from ragscore.reports.document import input_entry

    if len(annotations) < 2:
        raise UsageError(f"agree: give two or more annotators' gold files, got {len(annotations)}")
    paths = [os.fspath(a) for a in annotations]
    distinct_files(paths)
    files, inputs = [], []
    for path in paths:
        gold_file = InputFile(path)
        gold_set = load_gold(gold_file, keep=frozenset({KEEP_EXTRA}))
        files.append({item.qid: (item.answerable, frozenset(item.citations),
                                 tuple("|".join(slice_labels(item, f)) for f in fields)) for item in gold_set.items})
        inputs.append(input_entry(gold_file, gold_file.sha256))
    metrics, disagreeing, partial = agreement_metrics(files, fields)
    spec = None if gates is None else gate_spec(gates)
    parsed = parse_gate_option(spec, list(metrics), 5) if spec else {}
    results = evaluate_gates([g for g in parsed.values() if g is not None], metrics, strict)
    shared = sum(1 for qid in files[0] if all(qid in f for f in files[1:]))
    doc = build_agree_document(inputs, list(fields), shared, partial, metrics, disagreeing, results,
                               gates_pass(results))
    return Agreement(doc, results)


def agree_judge(
    judge: str | os.PathLike[str], human: str | os.PathLike[str], *, scales: Mapping[str, str] | None = None,
    gates: str | Mapping[str, Any] | None = None, strict: bool = False,
) -> Agreement:
    """Calibrate an LLM judge against human labels: two scores files (CSV or JSON Lines, joined by qid),
    the judge's (``ragscore judge`` writes one, its header giving each criterion's scale) and the humans'.
    On every criterion both have, over the questions both give a value: Cohen's kappa and Krippendorff's
    alpha as the criterion's scale says (``ragscore.goldset.calibration``), and the questions they
    disagree on, worst first. ``scales`` gives or overrides a criterion's scale (``{"relevance": "1-5"}``:
    ``0-1``, ``1-5`` or ``pass/fail``); ``gates`` as ``--gates`` (``"kappa_faithfulness=0.6"``)."""
    from ragscore.gates import evaluate_gates, gates_pass, parse_gate_option
    from ragscore.goldset.calibration import calibrate
    from ragscore.goldset.report import build_judge_document
    from ragscore.loaders.scores import load_scores
    from ragscore.metrics.registry import Direction
    from ragscore.quoting import quote
    from ragscore.reports.common import shown_path
    from ragscore.reports.files import file_identity

    paths = os.fspath(judge), os.fspath(human)
    if file_identity(paths[0])[0] == file_identity(paths[1])[0]:
        raise UsageError(f"agree: --judge {quote(paths[0])} and --human {quote(paths[1])} are the same file: the "
                         "judge's scores and the human labels are two files")
    if scales is not None and not isinstance(scales, Mapping):
        raise UsageError(f"scales: expected a mapping of criterion names to scales, got {type(scales).__name__}")
    given = dict(scales or {})
    judge_file = load_scores(paths[0], frozenset(given), hashed=True)
    header = frozenset(judge_file.judge.criteria) if judge_file.judge is not None else frozenset()
    human_file = load_scores(paths[1], frozenset(given) | header, hashed=True)
    calibration = calibrate(judge_file, human_file, given)
    metrics = calibration.metrics
    spec = None if gates is None else gate_spec(gates)
    higher = dict.fromkeys(metrics, Direction.HIGHER)  # agreement: more is better, whatever a criterion is called
    parsed = parse_gate_option(spec, list(metrics), 5, higher) if spec else {}
    results = evaluate_gates([g for g in parsed.values() if g is not None], metrics, strict)
    inputs = [{"path": shown_path(path), "sha256": file.sha256} for path, file in zip(paths, (judge_file, human_file),
                                                                                      strict=True)]
    doc = build_judge_document(inputs, judge_file.judge, calibration, results, gates_pass(results))
    return Agreement(doc, results, calibration.notes)


def split(
    gold: str | os.PathLike[str], out: str | os.PathLike[str], *, by: Sequence[str] = (),
    ratios: Sequence[int] = (70, 15, 15), seed: str = "0", names: Sequence[str] | None = None,
) -> dict[str, int]:
    """Split a JSON Lines gold set into files of ``out`` (``train.jsonl``, ``dev.jsonl``,
    ``test.jsonl`` for three ratios), every stratum of the ``by`` fields in the ratios to within
    one item, each line copied as it is; the same seed gives the same bytes. Returns each file's
    item count."""
    from ragscore.goldset.agreement import check_split_paths, order_key, split_names, split_paths, split_sizes
    from ragscore.loaders.gold import KEEP_EXTRA, line_of, load_gold, slice_labels
    from ragscore.loaders.jsonl import InputFile
    from ragscore.quoting import quote
    from ragscore.reports.files import write_reports

    chosen = split_names(ratios, names)
    paths = split_paths(os.fspath(out), chosen)
    check_split_paths(os.fspath(gold), paths)  # before anything is read: the gold set is never a split's file
    by = slice_paths(by)
    gold_file = InputFile(os.fspath(gold))
    gold_set = load_gold(gold_file, keep=frozenset({KEEP_EXTRA}))
    strata: dict[tuple[str, ...], list[tuple[bytes, int]]] = {}
    for position, item in enumerate(gold_set.items):
        key = tuple("|".join(slice_labels(item, path)) for path in by)
        strata.setdefault(key, []).append((order_key(seed, item.qid), line_of(gold_set.places[position])))
    split_of: dict[int, int] = {}
    for members in strata.values():
        members.sort()
        start = 0
        for index, size in enumerate(split_sizes(len(members), ratios)):
            for _, line in members[start : start + size]:
                split_of[line] = index
            start += size
    if len(split_of) != len(gold_set.items):
        raise UsageError(f"split: {gold_file.name} holds more than one item on a line: split reads JSON Lines")
    texts: list[list[str]] = [[] for _ in ratios]
    for number, raw in enumerate(InputFile(os.fspath(gold)).raw_lines(), 1):
        target = split_of.get(number)
        if target is not None:
            text = raw.decode("utf-8")
            texts[target].append(text if text.endswith("\n") else text + "\n")
    try:
        Path(out).mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file on the way (a/b where a is a file), no permission
        raise UsageError(f"split: {quote(os.fspath(out))}: cannot make the folder: {exc.strerror or exc}") from None
    write_reports({path: iter(lines) for path, lines in zip(paths, texts, strict=True)})
    return {name: len(lines) for name, lines in zip(chosen, texts, strict=True)}
