"""``ragscore monitor``: production traces without gold, per time window, and drift from a baseline.

Every trace is read as ``score`` reads it (formats, mappings, refusal tokens and patterns) and
counted in the window its timestamp falls in: ``ts``, ``timestamp`` or ``start_time``, epoch
seconds or ISO 8601 (read as UTC without an offset), windows aligned to the epoch in UTC. A
trace without a timestamp counts in the whole period only; one whose timestamp cannot be read
is counted as well. The metrics need no gold: refusal rate, compliance, fabricated citation
rate (a cited id not among the retrieved), empty-retrieval rate, citations per answer, answer
length in words, and latency, tokens and cost (``operations``).

A window keeps counts, exact sums and a latency sketch, never its traces: memory grows with the
windows, not the traces. Latency quantiles therefore come from the sketch, each within 1% of the
exact quantile (the report says so), as a merged partial's do.

With a baseline, each rate of each window and of the whole period is compared with the baseline
period's by a two-proportion z-test; Holm's correction runs across every test of the run, so a
day of 24 windows raises no more false alarms than one test. A significant change (either way)
larger than its ``[monitor.drift]`` bound fails the run.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ragscore.errors import UsageError
from ragscore.evaluate import open_corpus, open_input
from ragscore.gates import Gate, GateResult, Status, evaluate_gates
from ragscore.loaders.corpus import CorpusUse
from ragscore.loaders.records import no_trace_records
from ragscore.loaders.shapes import open_records
from ragscore.loaders.times import instant
from ragscore.loaders.trace import DOCUMENT_ID_PATHS, Cites, TraceView, parse_trace
from ragscore.metrics import METRICS
from ragscore.metrics.families import GROUNDING_WIDTH, grounding_check, grounding_fractions
from ragscore.metrics.moments import Moments, summarise
from ragscore.metrics.stats import holm
from ragscore.metrics.text import normalise
from ragscore.operations import CONCEPTS, RECORD_KEYS, Operations, Sketch, read
from ragscore.results import Spec
from ragscore.settings import Settings, is_refusal_token, refusal_screen

if TYPE_CHECKING:
    from ragscore.loaders.jsonl import InputFile
    from ragscore.loaders.records import Records
    from ragscore.loaders.scores import ScoreFile
    from ragscore.tables import SettingsTable

# The rates a window is tested on against the baseline (count over count), then the means; with
# --metrics grounding, the grounding family's rates too (each a count over a count).
RATES: Final = ("refusal_rate", "compliance", "fabricated_citation_rate", "empty_retrieval_rate")
GROUNDING: Final = METRICS.names("grounding")
MEANS: Final = ("citations_per_answer", "answer_length")
NAMES: Final = ("traces", *RATES, *MEANS, *METRICS.names("operations"), *GROUNDING)
TIME_KEYS: Final = ("ts", "timestamp", "start_time")  # where a trace's time is read, in order
_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}
_WINDOW_RE: Final = re.compile(r"^([1-9][0-9]{0,6})([smhdw])$")
_BUFFER: Final = 256  # a window's operational values summed exactly in batches of this many
EXAMPLES: Final = 5
MAX_WINDOWS: Final = 20_000  # a year of 30-minute windows; more is a --window too fine for the data


def window_seconds(text: str) -> int:
    """Read a window width: a count and a unit (``30s``, ``15m``, ``1h``, ``1d``, ``1w``)."""
    match = _WINDOW_RE.match(text.strip())
    if match is None:
        raise UsageError(f"--window: expected a count and a unit of s, m, h, d or w (such as 1h or 15m), got {text!r}")
    return int(match[1]) * _UNITS[match[2]]


def window_label(start: int) -> str:
    """Name a window by its start, in UTC (``2026-11-24T10:00:00Z``)."""
    return datetime.fromtimestamp(start, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(slots=True)
class Window:
    """What the metrics need of a window's traces: counts, exact sums and a latency sketch."""

    traces: int = 0
    refused: int = 0
    compliant: int = 0
    answered: int = 0
    fabricated: int = 0
    empty: int = 0
    citations: int = 0
    words: int = 0
    bad: int = 0  # unreadable latency, token or cost fields
    citing: int = 0  # answered traces that write citations (none in the whole period: citation rates undefined)
    grounding: list[int] = field(default_factory=list)  # --metrics grounding: the answered traces' summed counts
    sums: tuple[Moments, ...] = tuple(Moments() for _ in CONCEPTS)
    sketch: Sketch = field(default_factory=Sketch)
    pending: list[list[float]] = field(default_factory=lambda: [[] for _ in CONCEPTS])
    scores: dict[str, Moments] = field(default_factory=dict)  # --scores: each score's exact sum over the traces
    score_pending: dict[str, list[float]] = field(default_factory=dict)  # ... and the values waiting to be summed

    def add_scores(self, values: Mapping[str, float | None]) -> None:
        """Count a trace's scores (from --scores: its question's row; None: no value)."""
        for name, value in values.items():
            if value is not None:
                waiting = self.score_pending.setdefault(name, [])
                waiting.append(value)
                if len(waiting) >= _BUFFER:
                    self._fold(name)

    def _fold(self, name: str) -> None:
        waiting = self.score_pending.pop(name, None)
        if waiting:
            summed = summarise([waiting], (False,))[0]
            self.scores[name] = self.scores[name] + summed if name in self.scores else summed

    def add_operations(self, record: Mapping[str, object]) -> None:
        """Count a trace's latency, tokens and cost."""
        values, bad = read(record)
        self.bad += bad
        for column, value in zip(self.pending, values, strict=True):
            if value == value:  # NaN: the trace has none
                column.append(value)
        if len(self.pending[0]) >= _BUFFER or any(len(c) >= _BUFFER for c in self.pending):
            self.flush()

    def flush(self) -> None:
        """Fold the values waiting into the exact sums and the sketch."""
        for name in list(self.score_pending):
            self._fold(name)
        if not any(self.pending):
            return
        self.sums = tuple(m + summarise([column], (False,))[0] for m, column in zip(self.sums, self.pending,
                                                                                     strict=True))
        self.sketch = self.sketch + Sketch.of(self.pending[0])
        self.pending = [[] for _ in CONCEPTS]

    def __add__(self, other: Window) -> Window:
        self.flush()
        other.flush()
        return Window(
            self.traces + other.traces, self.refused + other.refused, self.compliant + other.compliant,
            self.answered + other.answered, self.fabricated + other.fabricated, self.empty + other.empty,
            self.citations + other.citations, self.words + other.words, self.bad + other.bad,
            self.citing + other.citing,
            [a + b for a, b in zip(self.grounding, other.grounding, strict=True)] if self.grounding and other.grounding
            else self.grounding or other.grounding,
            tuple(a + b for a, b in zip(self.sums, other.sums, strict=True)),
            self.sketch + other.sketch,
            scores={name: self.scores[name] + other.scores[name] if name in self.scores and name in other.scores
                    else self.scores.get(name) or other.scores[name] for name in (*self.scores, *other.scores)},
        )

    def rates(self, cites: bool = True, grounded: bool = False) -> dict[str, tuple[int, int]]:
        """Each rate as (count, denominator); ``cites``: some trace of the period cites something (else the
        fabricated citation rate is undefined, as ``score`` has it: denominator 0); ``grounded``: with the
        grounding family's rates."""
        out = {
            "refusal_rate": (self.refused, self.traces),
            "compliance": (self.compliant, self.traces),
            "fabricated_citation_rate": (self.fabricated, self.answered if cites else 0),
            "empty_retrieval_rate": (self.empty, self.traces),
        }
        if grounded:
            out.update(grounding_fractions(self.grounding or [0] * GROUNDING_WIDTH))
        return out

    def operations(self) -> Operations:
        """The window's latency, tokens and cost (quantiles from the sketch)."""
        self.flush()
        return Operations(self.traces, self.bad, self.sums, None, self.sketch)

    def metrics(self, cites: bool = True, grounded: bool = False, scores: Sequence[str] = ()
                ) -> dict[str, float | None]:
        """Every metric of the window (None where nothing is counted; ``cites``, ``grounded``: see ``rates``), then
        the mean of each of ``scores`` over the window's traces that have one."""
        out: dict[str, float | None] = {"traces": self.traces}
        rates = self.rates(cites, grounded)
        out.update((name, count / total if total else None) for name, (count, total) in rates.items()
                   if name in RATES)
        out["citations_per_answer"] = self.citations / self.answered if self.answered else None
        out["answer_length"] = self.words / self.answered if self.answered else None
        out.update(self.operations().metrics())
        out.update((name, count / total if total else None) for name, (count, total) in rates.items()
                   if name not in RATES)
        self.flush()
        for name in scores:
            summed = self.scores.get(name)
            out[name] = summed.mean() if summed is not None else None
        return out


@dataclass(slots=True)
class Tally:
    """How many traces had one problem, and the first lines that had it (each line once)."""

    count: int = 0
    lines: list[int] = field(default_factory=list)

    def note(self, line: int) -> None:
        """Count a trace of ``line`` (a line holding several spans is listed once)."""
        self.count += 1
        if len(self.lines) < EXAMPLES and line not in self.lines:
            self.lines.append(line)


@dataclass(slots=True)
class Watched:
    """Every trace of a monitored period, by window, and what could not be read."""

    width: int
    windows: dict[int, Window] = field(default_factory=dict)  # by start (epoch seconds)
    untimed: Window = field(default_factory=Window)           # traces without a usable timestamp
    lines: int = 0
    no_time: Tally = field(default_factory=Tally)       # no ts, timestamp or start_time
    bad_time: Tally = field(default_factory=Tally)      # one that cannot be read (or before 1970)
    unreadable: Tally = field(default_factory=Tally)    # no claim and no refusal field (read as empty answers)
    bad_retrieved: Tally = field(default_factory=Tally)  # a retrieved entry without an id (read as nothing)
    bad_refused: Tally = field(default_factory=Tally)   # a "refused" field neither true nor false (read as absent)
    trace_format: str = "native"
    source: InputFile | Records | None = None  # the traces read (their name, lines and sha256)
    grounded: bool = False                      # --metrics grounding: each window counts its answers' findings
    corpus: CorpusUse | None = None             # --corpus: what was read of it
    scores: tuple[str, ...] = ()                # --scores: the score names, each a metric
    unscored: Tally = field(default_factory=Tally)  # traces whose qid the scores file lacks (or with no qid)

    def total(self) -> Window:
        """The whole period: every window and the traces without a timestamp."""
        total = Window()
        for window in (*self.windows.values(), self.untimed):
            total = total + window
        return total

    def ordered(self) -> list[tuple[int, Window]]:
        """Every window from the first to the last, in time order; one without traces is empty."""
        if not self.windows:
            return []
        first, last = min(self.windows), max(self.windows)
        return [(start, self.windows.get(start) or Window()) for start in range(first, last + 1, self.width)]


JOIN_KEYS: Final = ("qid", "q_id", "q", "question")
LATEST: Final = 1e11  # later than this (year 5138), a number is epoch milliseconds or worse: unreadable


def watch(spec: Spec, settings: Settings, width: int, windowed: bool = True, what: str = "--trace",
          scores: ScoreFile | None = None) -> Watched:
    """Read every trace of ``spec`` once and count it in its window (``windowed=False``: all in one,
    as a baseline period is); an input without a trace is an error. ``scores``: a --scores file joined to the
    traces by their qid, each score a metric (the mean over the traces that have it)."""
    traces = open_input(spec)
    grounded = "grounding" in settings.families
    out = Watched(width, source=traces, grounded=grounded, scores=scores.names if scores is not None else ())
    rows = scores.rows if scores is not None else None
    corpus = open_corpus(traces, settings, 0, 1, joined=False)
    resolve = corpus.resolve if corpus is not None else None
    out.trace_format, shape, records = open_records(traces, settings.trace_format, settings.trace_fields)
    refusals, patterns = settings.refusal_forms(), settings.refusal_regexes()
    screen = refusal_screen(settings.refusal_patterns)  # whether any matches: one search of their alternation
    patterns = patterns if screen is None else (screen,)
    document_id = DOCUMENT_ID_PATHS if shape is None else shape.document_id
    mapped_time = shape is None or "ts" not in shape.mapped  # a mapped ts: the record's own keys are not read
    windows = out.windows
    first, last = math.inf, -math.inf  # the earliest and latest window's start
    for line, _column, record, obj, _key in records:
        out.lines += 1
        question = ""
        scored = None
        if type(obj) is dict:  # production traces are joined to nothing: their join keys are not read
            question = next((q for key in ("question", "q") if type(q := obj.get(key)) is str), "")
            if rows is not None:  # ... but to the scores file, by qid
                qid = obj.get("qid")
                found = rows.get(str(qid)) if type(qid) is str or type(qid) is int else None
                scored = found.values if found is not None else None
            obj = {key: value for key, value in obj.items() if key not in JOIN_KEYS}
            obj["question"] = ""
        view = parse_trace(obj, traces.name, line, document_id)
        if resolve is not None:
            view, obj = resolve(view, obj)  # type: ignore[arg-type]  # parse_trace checked: a dict
        window = out.untimed
        if windowed:
            stamp = _stamp(obj, record if mapped_time else None)
            if isinstance(stamp, _NoTime):
                out.no_time.note(line)
            elif stamp is None:
                out.bad_time.note(line)
            else:
                start = int(stamp // width) * width
                if start not in windows:
                    # Every window from the first to the last is reported, traces or not: count them all.
                    first, last = min(start, first), max(start, last)
                    if (last - first) // width >= MAX_WINDOWS:
                        raise _too_many_windows(traces.name, first, last, width)
                    windows[start] = Window()
                window = windows[start]
        if view.claim_from is None and view.refused_from is None:
            out.unreadable.note(line)
        if view.retrieved_bad:
            out.bad_retrieved.note(line)
        if view.refused_bad:
            out.bad_refused.note(line)
        answered = _count(window, view, refusals, patterns)
        if grounded and answered:
            row = grounding_check()(view, obj, question)  # type: ignore[arg-type]  # a dict
            window.grounding = [a + int(b) for a, b in zip(window.grounding or [0] * GROUNDING_WIDTH, row,
                                                           strict=True)]
        if type(obj) is dict and not RECORD_KEYS.isdisjoint(obj):
            window.add_operations(obj)
        if rows is not None:
            if scored is None:
                out.unscored.note(line)
            else:
                window.add_scores(scored)
    if not out.lines:
        raise no_trace_records(traces, what)
    if corpus is not None:
        out.corpus = corpus.use
    return out


def _too_many_windows(name: str, first: float, last: float, width: int) -> UsageError:
    """Refuse traces that span more windows than a report holds, before the windows are made."""
    count = int((last - first) // width) + 1
    seconds = f"{width:,} second" + ("s" if width > 1 else "")
    return UsageError(f"--window: the traces of {name} span {count:,} windows of {seconds} (from "
                      f"{window_label(int(first))} to {window_label(int(last) + width)}), more than the "
                      f"{MAX_WINDOWS:,} a report holds: choose a wider window")


class _NoTime:
    """The mark of a trace without a timestamp (None marks one that cannot be read)."""


_NO_TIME: Final = _NoTime()


def _stamp(obj: object, record: object) -> float | None | _NoTime:
    """Find a trace's timestamp as read (a mapping's ``ts``; a span format's first start), else in
    its record as written (``record`` None: not there): epoch seconds from 0 to 1e11, or an ISO
    8601 time from 1970 on."""
    for source in (obj, record):
        if type(source) is dict:
            for key in TIME_KEYS:
                if key in source and source[key] is not None:
                    moment = instant(source[key])
                    return moment if moment is not None and 0 <= moment < LATEST else None
    return _NO_TIME


def _count(window: Window, view: TraceView, refusals: frozenset[str], patterns: Sequence[re.Pattern[str]]) -> bool:
    """Count one trace: refused or answered, compliant, fabricated, empty retrieval, citations, words; say
    whether it answered.

    As ``score`` judges a trace: an explicit refusal field decides, else a claim that is a refusal
    token (trimmed as tokens are: ``is_refusal_token``) or matches a refusal pattern (normalised, stripped) is
    a refusal.
    """
    window.traces += 1
    retrieved = view.retrieved
    window.empty += not retrieved
    if view.refused is not None:
        refused = view.refused
    else:
        claim = view.claim
        claim = (claim.lower() if claim.isascii() else normalise(claim)).strip()
        refused = is_refusal_token(claim, refusals) or any(p.search(claim) is not None for p in patterns)
    if refused:
        window.refused += 1
        window.compliant += 1
        return False
    window.answered += 1
    window.compliant += view.cites is Cites.LIST and view.claim_from is not None
    if view.cites is not Cites.INVALID:
        window.fabricated += any(c not in retrieved for c in view.citations)
        window.citations += len(dict.fromkeys(view.citations))
    window.citing += view.cites is not Cites.ABSENT  # a citations field, even an empty list
    window.words += len(view.claim.split())
    return True


# --- drift --------------------------------------------------------------------------------------


def two_proportion_test(x1: int, n1: int, x2: int, n2: int) -> tuple[float | None, float | None]:
    """Give the pooled two-proportion z statistic and its two-sided p-value (statsmodels'
    ``proportions_ztest``); (None, None) when a side is empty or the pooled rate is 0 or 1."""
    if not n1 or not n2:
        return None, None
    pooled = (x1 + x2) / (n1 + n2)
    if pooled in (0.0, 1.0):
        return None, None
    z = (x1 / n1 - x2 / n2) / math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    return z, math.erfc(abs(z) / math.sqrt(2))


@dataclass(frozen=True, slots=True)
class Drift:
    """One rate of one window (or the whole period) against the baseline period."""

    window: str  # a window's start, or "all"
    metric: str
    baseline: float | None
    current: float | None
    z: float | None
    p_value: float | None
    p_adjusted: float | None
    significant: bool
    bound: float | None
    failed: bool
    skipped: bool = False  # the window (or the baseline) has fewer traces than min_n: not tested


def drifts(
    scopes: Iterable[tuple[str, Window]], baseline: Window, bounds: Mapping[str, float], confidence: float,
    min_n: int, grounded: bool = False,
) -> list[Drift]:
    """Test each rate of each scope against the baseline; Holm across every test. A scope (or a
    baseline) of fewer than ``min_n`` traces is not tested: the normal approximation needs counts."""
    base_rates = baseline.rates(baseline.citing > 0, grounded)
    cites = any(window.citing for _, window in scopes)
    rows = []
    for label, window in scopes:
        small = window.traces < min_n or baseline.traces < min_n
        for metric, (count, total) in window.rates(cites, grounded).items():
            base_count, base_total = base_rates[metric]
            z, p = (None, None) if small else two_proportion_test(count, total, base_count, base_total)
            rows.append((label, metric, base_count / base_total if base_total else None,
                         count / total if total else None, z, p, small))
    tested = [i for i, row in enumerate(rows) if row[5] is not None]
    adjusted = dict(zip(tested, holm([rows[i][5] for i in tested]), strict=True))  # type: ignore[misc]
    out = []
    for i, (label, metric, base, current, z, p, small) in enumerate(rows):
        p_adj = adjusted.get(i)
        significant = p_adj is not None and p_adj < 1 - confidence
        bound = bounds.get(metric)
        change = None if base is None or current is None else current - base
        # A tolerance, as for regression gates: 0.35 - 0.3 must not fail a bound of 0.05.
        failed = (significant and bound is not None and change is not None
                  and abs(change) > bound + 1e-12 * max(1.0, bound))
        out.append(Drift(label, metric, base, current, z, p, p_adj, significant, bound, failed, small))
    return out


# --- gates --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WindowResult:
    """A window's metrics and gates."""

    start: int
    traces: int
    metrics: dict[str, float | None]
    gates: list[GateResult]
    small: bool  # fewer traces than min_n: its gates are skipped


def check_gates(window: Window, gates: Sequence[Gate], min_n: int, strict: bool, cites: bool,
                grounded: bool = False, scores: Sequence[str] = ()
                ) -> tuple[dict[str, float | None], list[GateResult], bool]:
    """Give a window (or the period) its metrics and gates; below ``min_n`` traces every gate is
    skipped but those on ``traces`` (a quiet hour is what they look for). ``cites``, ``grounded``: see
    ``Window.rates``."""
    metrics = window.metrics(cites, grounded, scores)
    results = evaluate_gates(gates, metrics, strict)
    small = window.traces < min_n
    if small:
        results = [r if r.gate.metric == "traces" else GateResult(r.gate, r.value, Status.SKIPPED) for r in results]
    return metrics, results, small


def check_windows(watched: Watched, gates: Sequence[Gate], min_n: int, strict: bool, cites: bool
                  ) -> list[WindowResult]:
    """Give every window from the first to the last its metrics and check the gates on it."""
    out = []
    for start, window in watched.ordered():
        metrics, results, small = check_gates(window, gates, min_n, strict, cites, watched.grounded, watched.scores)
        out.append(WindowResult(start, window.traces, metrics, results, small))
    return out


@dataclass(frozen=True, slots=True)
class Observed:
    """A monitored period checked: its windows, its own metrics and gates, and its drift."""

    windows: list[WindowResult]
    total: Window
    metrics: dict[str, float | None]
    gates: list[GateResult]
    small: bool
    drift: list[Drift] | None
    passed: bool


def observe(current: Watched, baseline: Window | None, config: MonitorConfig, confidence: float) -> Observed:
    """Check the gates on every window and on the period, and (with a baseline) every rate's drift."""
    from ragscore.gates import gates_pass

    total = current.total()
    cites = total.citing > 0  # the whole period decides, as a whole run does in score
    windows = check_windows(current, config.gates, config.min_n, config.strict, cites)
    metrics, results, small = check_gates(total, config.gates, config.min_n, config.strict, cites, current.grounded,
                                          current.scores)
    drift = None
    if baseline is not None:
        scopes = [("all", total), *((window_label(start), w) for start, w in current.ordered())]
        drift = drifts(scopes, baseline, config.drift, confidence, config.min_n, current.grounded)
    passed = (gates_pass(results) and all(gates_pass(w.gates) for w in windows)
              and not any(d.failed for d in drift or ()))
    return Observed(windows, total, metrics, results, small, drift, passed)


# --- settings -----------------------------------------------------------------------------------


def monitor_signature(config: MonitorConfig, settings: Settings, trace_format: str) -> str:
    """One line naming the version and every setting that changes a monitor's numbers or verdict."""
    from ragscore.settings import patterns_signed, signed
    from ragscore.version import __version__

    parts = [f"ragscore:{__version__}", "monitor", f"window:{config.window}", f"min_n:{config.min_n}",
             f"strict:{'yes' if config.strict else 'no'}", "refusal:" + signed(list(settings.refusal_tokens))]
    parts.append(patterns_signed(settings.refusal_patterns))
    if trace_format != "native":
        parts.append(f"trace:{trace_format}")
    if settings.trace_fields:
        parts.append("trace_fields:" + signed(dict(settings.trace_fields)))
    if "grounding" in settings.families:
        parts.append("metrics:grounding")
    if settings.judge is not None:
        parts.append("judge:" + signed(dict(settings.judge)))
    if config.drift:
        parts.append("drift:" + signed(dict(sorted(config.drift.items()))))
    parts.append(f"ci:{settings.confidence:g}")
    return "|".join(parts)

MONITOR_KEYS: Final = ("window", "min_n", "strict", "gates", "drift")
DEFAULT_WINDOW: Final = "1h"


@dataclass(frozen=True, slots=True)
class MonitorConfig:
    """``[monitor]``: the window, the gates on each window and on the whole period, the drift bounds."""

    window: str = DEFAULT_WINDOW
    min_n: int = 30  # a window with fewer traces is not gated (a handful of traces swings any rate)
    strict: bool = False
    gates: tuple[Gate, ...] = ()
    drift: dict[str, float] = field(default_factory=dict)  # rate -> the largest change that may pass


def load_monitor_config(
    cwd: Path, gates_file: str | None, window: str | None = None, min_n: int | None = None,
    gates: str | None = None, strict: bool | None = None, scores: Sequence[str] = (),
) -> MonitorConfig:
    """Read ``[tool.ragscore.monitor]`` of ./pyproject.toml, then ``[monitor]`` of the gates file, then
    the options given (which win); ``scores``: the --scores file's names, which gates may name too."""
    from ragscore.gates import finite_number, parse_gate_option, parse_gate_table
    from ragscore.quoting import show_value
    from ragscore.suggest import did_you_mean
    from ragscore.tables import command_tables, keyed_table, subtable

    def checked(value: object, source: str, text: str, name: str) -> SettingsTable:
        return keyed_table(value, source, text, name, MONITOR_KEYS)

    config = MonitorConfig()
    found: dict[str, Gate | None] = {}
    for table in command_tables("monitor", cwd, gates_file, checked):
        data = table.data
        if "window" in data:
            if not isinstance(data["window"], str) or _WINDOW_RE.match(data["window"].strip()) is None:
                raise table.error("window", 'expected "window" to be a count and a unit of s, m, h, d or w (such as '
                                            f'"1h" or "15m"), got {show_value(data["window"])}')
            config = replace(config, window=data["window"])
        if "min_n" in data:
            value = data["min_n"]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise table.error("min_n", f'expected "min_n" to be a positive integer, got {show_value(value)}')
            config = replace(config, min_n=value)
        if "strict" in data:
            if not isinstance(data["strict"], bool):
                raise table.error("strict", f'expected "strict" to be true or false, got {show_value(data["strict"])}')
            config = replace(config, strict=data["strict"])
        if "gates" in data:
            sub = subtable(table, "gates")
            found.update(parse_gate_table(sub.data, (*NAMES, *scores), 5, sub.source, sub.line_of))
        if "drift" in data:
            sub = subtable(table, "drift")
            bounds = dict(config.drift)
            for key, bound in sub.data.items():
                if key not in (*RATES, *GROUNDING):
                    raise sub.error(key, f'a drift bound is for a rate ({", ".join((*RATES, *GROUNDING))}), got '
                                         f'"{key}"{did_you_mean(key, [*RATES, *GROUNDING])}')
                number = finite_number(bound)
                if number is None or not 0 <= number <= 1:
                    raise sub.error(key, f'expected "{key}" to be the largest change that passes, from 0 to 1, got '
                                         f"{show_value(bound)}")
                bounds[key] = number
            config = replace(config, drift=bounds)
    if gates is not None:
        found.update(parse_gate_option(gates, (*NAMES, *scores), 5))
    if window is not None:
        window_seconds(window)
        config = replace(config, window=window)
    if min_n is not None:
        config = replace(config, min_n=min_n)
    if strict is not None:
        config = replace(config, strict=strict)
    return replace(config, gates=tuple(gate for gate in found.values() if gate is not None))
