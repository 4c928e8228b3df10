"""What ragscore monitor prints on standard error: what it could not place or read, the windows that failed,
the rates that drifted, the period's gates and the verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragscore.gates import Status, format_threshold
from ragscore.reports.common import clean, fmt, gate_bound
from ragscore.reports.console import gate_lines, lines_of, plural
from ragscore.results import EXAMPLES

if TYPE_CHECKING:
    from ragscore.monitoring.windows import Observed, Watched


def monitor_notes(watched: Watched, baseline: Watched | None, seen: Observed, min_n: int, verdict: str) -> list[str]:
    """Say what ``ragscore monitor`` could not place or read, which windows failed, which rates drifted,
    then the whole period's gates and the verdict."""
    from ragscore.monitoring.windows import window_label

    notes = []
    for run in (watched, baseline):
        if run is None:
            continue
        source = run.source
        assert source is not None
        where = "" if run is watched else "baseline: "
        for tally, what in (
            (run.no_time, "no timestamp (ts, timestamp or start_time; counted in the whole period only)"),
            (run.bad_time, "a timestamp that cannot be read (epoch seconds from 0 to 1e11, or ISO 8601 from 1970; "
                           "counted in the whole period only)"),
            (run.unreadable, "no claim or refusal field (read as empty answers)"),
            (run.bad_retrieved, "a retrieved list with an entry that gives no id (read as nothing retrieved)"),
            (run.bad_refused, 'a "refused" field that is neither true nor false (read as absent: the claim decides)'),
            (run.unscored, "no row in the --scores file (joined by qid; left out of the scores' means)"),
        ):
            if tally.count and (run is watched or tally is not run.no_time):
                notes.append(f"{where}{plural(tally.count, 'trace has', 'traces have')} {what}: "
                             f"{lines_of(source, tally.lines, tally.count)}")
    total = seen.total
    if total.answered and not total.citing:
        notes.append("no trace cites anything: write answer_json.citations, or --map citations=PATH; "
                     "fabricated_citation_rate is n/a")
    operations = total.operations()
    if total.bad:
        fields = plural(total.bad, "latency, token or cost field", "latency, token or cost fields")
        notes.append(f"operations: {fields} could not be read (not a number from 0 to 1e15); counted as missing")
    for concept, count in operations.counts().items():
        if count["questions"] and count["missing"]:
            notes.append(f"operations: {count['missing']} of {total.traces} traces have no {concept} (left out of "
                         "its metrics, not counted as 0)")
    if operations.sums[0].n:
        notes.append("latency quantiles come from a sketch (each within 1% of the exact quantile): monitor keeps no "
                     "trace in memory")
    small = [w for w in seen.windows if w.small and w.gates]
    if small:
        notes.append(f"{plural(len(small), 'window has', 'windows have')} fewer traces than min_n ({min_n}): "
                     "their gates are skipped (but those on traces)")
    if seen.small and seen.gates:
        notes.append(f"the period has fewer traces than min_n ({min_n}): its gates are skipped (but those on traces)")
    if baseline is not None and baseline.total().traces < min_n:
        notes.append(f"baseline: fewer traces than min_n ({min_n}): no rate is compared with it")
    failed = [(w, r) for w in seen.windows for r in w.gates if r.status is Status.FAIL]
    lines = [f"FAIL    {r.gate.metric}[{window_label(w.start)}] = {fmt(r.value)} "
             f"(gate {gate_bound(r.gate.op, r.gate.threshold)})" for w, r in failed]
    if len(lines) > EXAMPLES:
        lines = lines[:EXAMPLES] + [f"FAIL    {len(lines) - EXAMPLES} more window gates failed (every one is in "
                                    "the reports)"]
    notes += lines
    for d in seen.drift or ():
        if d.significant:
            status = "DRIFT  " if d.failed else "changed"
            bound = f"; bound {format_threshold(d.bound)}" if d.bound is not None else ""
            notes.append(f"{status} {d.metric}[{d.window}] {fmt(d.baseline)} -> {fmt(d.current)} "
                         f"(p = {d.p_adjusted:.3g}, Holm{bound})")
    notes += gate_lines(seen.gates, seen.passed)[:-1]  # the period's gates; the verdict covers the windows too
    notes.append(f"{'pass' if seen.passed else 'FAIL'}: {verdict}")
    return [clean(note) for note in notes]
