"""An LLM judge calibrated against human labels (``ragscore agree --judge SCORES --human LABELS``).

Both files are scores files (``ragscore.loaders.scores``), joined by qid. The criteria measured are
the judge file's that the labels file has too; each one's scale (``ragscore judge``'s header, or
``--scale NAME=SCALE``) says what its values may be and how agreement on it is measured, over the
questions both files give a value (``n``):

=========  ==================  ==============================================  ========  =====================
scale      a value             kappa                                           alpha     a disagreement
=========  ==================  ==============================================  ========  =====================
pass/fail  1 (pass) or 0       Cohen's, unweighted                             nominal   the labels differ
1-5        an integer 1 to 5   Cohen's, quadratic weights (as scikit-learn's)  ordinal   the values differ
0-1        a number, 0 to 1    Cohen's, unweighted, of the values binarised    interval  the binarised labels
                               at 0.5 (0.5 and above pass)                               differ
=========  ==================  ==============================================  ========  =====================

The measures are named ``kappa_NAME`` and ``alpha_NAME`` (for gates); the disagreeing questions are
listed worst first: the largest difference of the two values, then by qid.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Final, NamedTuple

from ragscore.errors import InputError, UsageError
from ragscore.goldset.agreement import alpha_at, cohen_kappa, quadratic_kappa
from ragscore.loaders.scores import SCALES, ScoreFile
from ragscore.quoting import quote
from ragscore.reports.console import plural
from ragscore.suggest import did_you_mean

ALPHA_LEVEL: Final = {"pass/fail": "nominal", "1-5": "ordinal", "0-1": "interval"}
KAPPA_KIND: Final = {"pass/fail": "unweighted", "1-5": "quadratic-weighted", "0-1": "unweighted, binarised at 0.5"}
_EXPECTED: Final = {"pass/fail": "1 (pass) or 0 (fail)", "1-5": "an integer from 1 to 5", "0-1": "a number from 0 to 1"}
PASS_AT: Final = 0.5  # a 0-1 value of at least this passes, for kappa and the disagreements
SCALE_CHOICES: Final = ", ".join(SCALES)


class Criterion(NamedTuple):
    """Agreement on one criterion: its scale, how many questions both files give a value, the measures, and the
    disagreeing questions (qid, the judge's value, the human's), worst first."""

    name: str
    scale: str
    n: int
    kappa: float | None
    alpha: float | None
    disagreeing: list[tuple[str, float, float]]


class Calibration(NamedTuple):
    """The judge against the labels: every criterion measured, the qids in one file only, and notes."""

    criteria: list[Criterion]
    shared: int  # qids in both files
    one_file_only: list[str]  # sorted
    notes: list[str]

    @property
    def metrics(self) -> dict[str, float | None]:
        """``kappa_NAME`` and ``alpha_NAME`` of every criterion, in the judge file's order."""
        return {f"{measure}_{c.name}": value for c in self.criteria
                for measure, value in (("kappa", c.kappa), ("alpha", c.alpha))}


def on_scale(scale: str, value: float) -> bool:
    """Tell whether a value is one the scale allows."""
    if scale == "pass/fail":
        return value in (0.0, 1.0)
    if scale == "1-5":
        return value.is_integer() and 1 <= value <= 5
    return 0 <= value <= 1


def shown(value: float) -> str:
    """A value as a message shows it: an integral one without its ``.0``."""
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def parse_scales(options: Sequence[str]) -> dict[str, str]:
    """Read ``--scale NAME=SCALE`` options (a name once)."""
    scales: dict[str, str] = {}
    for option in options:
        name, equals, scale = option.partition("=")
        name, scale = name.strip(), scale.strip()
        if not equals or not name:
            raise UsageError(f"--scale: expected NAME=SCALE (SCALE: {SCALE_CHOICES}), got {quote(option)}")
        if name in scales:
            raise UsageError(f"--scale: {quote(name)} given twice; give each criterion's scale once")
        scales[name] = scale
    return scales


def _check_given(scales: Mapping[str, str], common: Sequence[str]) -> None:
    """Refuse a given scale that is none, or that names no criterion both files have."""
    for name, scale in scales.items():
        if not isinstance(name, str) or not isinstance(scale, str):
            raise UsageError(f"scales: expected criterion names and scales as text, got {name!r}: {scale!r}")
        if scale not in SCALES:
            raise UsageError(f"--scale {name}={scale}: the scales are {SCALE_CHOICES}")
        if name not in common:
            shared = ", ".join(common)
            raise UsageError(f"--scale {quote(name)}: no such criterion in both files (they have {shared})"
                             + did_you_mean(name, list(common)))


def criteria_scales(judge: ScoreFile, human: ScoreFile, given: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """The criteria measured (the judge file's that the labels file has too), each with its scale (``given``,
    else the judge's header, else the labels file's), and a note on each criterion only one file has."""
    common = [name for name in judge.names if name in human.names]
    notes = [f"{quote(name)} is in the {role} file only (left out)" for role, own, other in
             (("judge's", judge, human), ("labels'", human, judge)) for name in own.names if name not in other.names]
    if not common:
        raise UsageError(f"agree: {quote(judge.source)} and {quote(human.source)} have no criterion in common "
                         f"(the judge's: {', '.join(judge.names)}; the labels': {', '.join(human.names)})")
    _check_given(given, common)
    scales = {}
    for name in common:
        stated = {file.source: file.judge.criteria[name] for file in (judge, human)
                  if file.judge is not None and name in file.judge.criteria}
        if name in given:
            scales[name] = given[name]
        elif len(set(stated.values())) > 1:
            raise UsageError(f"agree: the files' headers give {quote(name)} two scales ("
                             + ", ".join(f"{scale} in {quote(source)}" for source, scale in stated.items())
                             + f"): --scale {name}=SCALE chooses one")
        elif stated:
            scales[name] = next(iter(stated.values()))
        else:
            raise UsageError(f"agree: no scale for the criterion {quote(name)} (no ragscore judge header gives one): "
                             f"give it with --scale {name}=SCALE ({SCALE_CHOICES})")
    return scales, notes


def check_values(file: ScoreFile, scales: Mapping[str, str]) -> None:
    """Refuse the first value (in file order) that is off its criterion's scale, at its file and line."""
    for row in sorted(file.rows.values(), key=lambda r: r.line):
        for name, scale in scales.items():
            value = row.values.get(name)
            if value is not None and not on_scale(scale, value):
                raise InputError(file.source, f"{json.dumps(name)} is on the {scale} scale: expected "
                                              f"{_EXPECTED[scale]}, got {shown(value)}", row.line)


def check_join(file: ScoreFile) -> None:
    """Refuse a file that is not joined by qid."""
    if file.join != "qid":
        raise InputError(file.source, f'expected a "qid" column: agree joins the judge\'s scores and the human '
                                      f'labels by qid (this file has "{file.join}" or "user_input")')


def measure(name: str, scale: str, pairs: Sequence[tuple[str, float, float]]) -> Criterion:
    """Kappa, alpha and the disagreements of one criterion over (qid, judge, human) pairs."""
    judged, labelled = [p[1] for p in pairs], [p[2] for p in pairs]
    if scale == "1-5":
        kappa = quadratic_kappa(judged, labelled)
        differ = [p for p in pairs if p[1] != p[2]]
    else:
        cut = PASS_AT if scale == "0-1" else 1.0  # pass/fail: 1 passes
        kappa = cohen_kappa([v >= cut for v in judged], [v >= cut for v in labelled])
        differ = [p for p in pairs if (p[1] >= cut) != (p[2] >= cut)]
    alpha = alpha_at([(p[1], p[2]) for p in pairs], ALPHA_LEVEL[scale])
    differ.sort(key=lambda p: (-abs(p[1] - p[2]), p[0]))
    return Criterion(name, scale, len(pairs), kappa, alpha, differ)


def calibrate(judge: ScoreFile, human: ScoreFile, given: Mapping[str, str]) -> Calibration:
    """Measure the judge's agreement with the human labels on every criterion both files have."""
    for file in (judge, human):
        check_join(file)
    scales, notes = criteria_scales(judge, human, given)
    for file in (judge, human):
        check_values(file, scales)
    shared = [qid for qid in judge.rows if qid in human.rows]
    one_file_only = sorted(set(judge.rows).symmetric_difference(human.rows))
    for file in (judge, human):
        if file.duplicates:
            first = ", ".join(key for _, key in file.duplicates[:5])
            notes.append(f"{quote(file.source)}: {plural(len(file.duplicates), 'qid is', 'qids are')} given again "
                         f"(the last row counts): {first}" + (", ..." if len(file.duplicates) > 5 else ""))
    criteria = []
    for name, scale in scales.items():
        pairs = []
        for qid in shared:
            a, b = judge.rows[qid].values.get(name), human.rows[qid].values.get(name)
            if a is not None and b is not None:
                pairs.append((qid, a, b))
        criteria.append(measure(name, scale, pairs))
    return Calibration(criteria, len(shared), one_file_only, notes)
