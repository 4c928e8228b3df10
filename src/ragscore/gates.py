"""Gates: thresholds on metrics, parsed from settings and ``--gates``, checked as pure functions."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Final

from ragscore.errors import ConfigError
from ragscore.metrics import METRICS
from ragscore.metrics.names import direction_of, lookup, score_name_problem
from ragscore.metrics.registry import CONDITIONAL, Direction, split_cutoff
from ragscore.numbers import decimal, holds, number_problem
from ragscore.quoting import quote, show_value
from ragscore.suggest import closest, did_you_mean

ALIASES: Final = METRICS.aliases  # declared with the metrics ("under", "recall@k")


# One gate written as an option: METRIC OP VALUE (score's --gates, the stages', trec's, monitor's).
GATE_RE: Final = re.compile(r"^\s*(?P<metric>[^<>=\s]+)\s*(?P<op>>=|<=|>|<|=)\s*(?P<value>\S+)\s*$")
OFF: Final = ("off", "none", "false")


class Status(StrEnum):
    """The result of one gate."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIPPED = "skipped"


@dataclass(frozen=True, slots=True)
class Gate:
    """A threshold on one metric: ``value op threshold`` must hold; ``warn`` is a stricter, soft bound."""

    metric: str
    op: str
    threshold: float
    warn: float | None = None
    source: str = "default"
    line: int | None = None  # where the gate was set, for errors found once the run is scored


@dataclass(frozen=True, slots=True)
class GateResult:
    """A gate checked against the run's value of its metric."""

    gate: Gate
    value: float | None
    status: Status
    seen: bool = True  # False: the run has no metric of that name (a score no trace or --scores file gave)


def format_threshold(value: float) -> str:
    """Show a threshold as briefly as it was written (0.8, 0, 0.1234567)."""
    return f"{value:.15g}"


def _operational(name: str) -> bool:
    spec = lookup(name)
    return spec is not None and spec.family == "operations"


TYPO_CUTOFF: Final = 0.85  # a name this close to a known metric is a typo, not another evaluator's score


def default_op(metric: str, directions: Mapping[str, Direction] | None = None) -> str:
    """Return the operator a bare threshold implies: a minimum or a maximum by the metric's direction."""
    direction = (directions or {}).get(metric) or direction_of(metric)
    return ">=" if direction is Direction.HIGHER else "<="


def resolve_metric(
    name: str, available: Iterable[str], k: int, where: str, line: int | None = None, external: bool = False
) -> str:
    """Turn a gate's metric name (or alias) into a metric the run computes, or explain why not.

    With ``external``, a name that is not known but may name a score from another evaluator
    (``score_name_problem``: the rule traces and --scores follow) is taken as one, known only later.
    """
    canonical = ALIASES[name].replace("@K", f"@{k}") if name in ALIASES else name
    names = list(available)
    if canonical in names:
        return canonical
    spec = lookup(canonical)
    # A metric this run does not compute may be a score's name (see CONDITIONAL), but pass@3 is
    # none: its gate asks for repeated samples.
    maybe_score = spec is None or (spec.family in CONDITIONAL and not spec.parametric)
    if external and maybe_score and score_name_problem(canonical) is None:
        return canonical  # checked once the run's scores are known: see unknown_gate_metric
    if spec is not None:
        cutoff = split_cutoff(canonical)[1]
        if "refusal_rate" in names and spec.family not in ("monitor", "operations"):  # ragscore monitor's gates
            how = "it needs a gold set: a metric of ragscore score, not of monitor"
        elif spec.family == "monitor":
            how = "it is a metric of ragscore monitor (production traces without gold)"
        elif spec.family == "repeats" or spec.family == "sessions":
            sampled = any((other := lookup(n)) is not None and other.family == "repeats" for n in names)
            how = (f"add {cutoff} to pass_k (--pass-k)" if sampled
                   else 'it needs repeated samples: set repeats = "samples" in [scoring] (--repeats samples)')
        else:
            how = (f"set k = {cutoff} (--k {cutoff})" if spec.name == "full_recall@K"
                   else f"add {cutoff} to the cutoffs (--cutoffs)")
        raise ConfigError(where, f'metric "{name}" is not computed with these settings: {how}', line)
    raise ConfigError(where, f'unknown metric {quote(name)}{did_you_mean(name, names + list(ALIASES))}', line)


def finite_number(value: object) -> float | None:
    """Return a number as a finite float, or None: for a bool, text, NaN, an infinity, or an
    integer beyond a double's range (a 400-digit threshold is a typo, not a bound)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _threshold(text: object, what: str, where: str, line: int | None) -> float:
    if isinstance(text, str):
        value = decimal(text)
        if value is None:
            raise ConfigError(where, f"expected {number_problem(text)} for {what}, got {show_value(text)}", line)
    elif isinstance(text, (int, float)) and not isinstance(text, bool):
        value = finite_number(text)
    else:
        raise ConfigError(where, f"expected a number for {what}, got {show_value(text)}", line)
    if value is None:
        raise ConfigError(where, f"expected a finite number for {what}, got {show_value(text)}", line)
    return value


def make_gate(metric: str, op: str, threshold: float, warn: float | None, source: str, line: int | None) -> Gate:
    """Build a gate, checking that a warning bound lies on the passing side of the threshold."""
    if warn is not None and not holds(warn, op, threshold) and warn != threshold:
        side = "at or above" if op in (">=", ">") else "at or below"
        raise ConfigError(source, f'"{metric}": warn must be {side} the threshold {format_threshold(threshold)}', line)
    return Gate(metric, op, threshold, warn, source)


# Families whose every non-count metric is a share or a mean of shares: from 0 to 1.
_UNIT_FAMILIES: Final = frozenset({"answer", "retrieval", "similarity", "text", "repeats", "monitor"})


def check_range(gate: Gate, name: str, source: str, line: int | None) -> Gate:
    """Refuse a bound that a metric from 0 to 1 can never meet or always meets (``under_refusal = 5``)."""
    spec = lookup(gate.metric)
    if spec is None or spec.family not in _UNIT_FAMILIES or (spec.kind == "count" and spec.name != "min_pass_rate"):
        return gate
    for bound in (gate.threshold, gate.warn):
        if bound is not None and not 0 <= bound <= 1:
            hint = f" ({format_threshold(bound / 100)}, not {format_threshold(bound)}?)" if 1 < bound <= 100 else ""
            raise ConfigError(source, f'"{name}" is from 0 to 1: a bound of {format_threshold(bound)} cannot be '
                                      f"meant{hint}", line)
    return gate


def gate_option_parts(text: str) -> list[re.Match[str]]:
    """Split ``--gates`` into its gates, each METRIC OP VALUE (an error names the first part that is not)."""
    matches = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        match = GATE_RE.match(part)
        if match is None:
            raise ConfigError("--gates", f"expected METRIC=VALUE or METRIC>=VALUE (also >, <=, <), got {quote(part)}")
        matches.append(match)
    return matches


def parse_gate_option(
    text: str, available: Iterable[str], k: int, directions: Mapping[str, Direction] | None = None,
    external: bool = False,
) -> dict[str, Gate | None]:
    """Parse ``--gates "precision=0.8,under=0.05,ndcg@10>=0.6,missing=off"`` (None removes a gate)."""
    names = list(available)
    gates: dict[str, Gate | None] = {}
    for match in gate_option_parts(text):
        metric = resolve_metric(match["metric"], names, k, "--gates", external=external)
        if match["op"] == "=" and match["value"].lower() in OFF:
            gates[metric] = None
            continue
        op = default_op(metric, directions) if match["op"] == "=" else match["op"]
        gates[metric] = check_range(Gate(metric, op, _threshold(match["value"], f'"{metric}"', "--gates", None), None,
                                         "--gates"), match["metric"], "--gates", None)
    return gates


def parse_gate_table(
    table: Mapping[str, object], available: Iterable[str], k: int, source: str, line_of: Callable[[str], int | None],
    directions: Mapping[str, Direction] | None = None, external: bool = False,
) -> dict[str, Gate | None]:
    """Parse a ``[gates]`` table: ``metric = 0.8``, ``metric = {min = .., warn = ..}``, ``metric = false``."""
    names = list(available)
    gates: dict[str, Gate | None] = {}
    for name, spec in table.items():
        line = line_of(name)
        metric = resolve_metric(name, names, k, source, line, external)
        if spec is False or (isinstance(spec, str) and spec.lower() in OFF):
            gates[metric] = None
        elif isinstance(spec, str) and (match := re.match(r"^\s*(>=|<=|>|<)\s*(\S+)\s*$", spec)):
            gates[metric] = Gate(metric, match[1], _threshold(match[2], f'"{name}"', source, line), None, source)
        elif isinstance(spec, dict):
            bounds = [key for key in ("min", "max") if key in spec]
            unknown = sorted(set(spec) - {"min", "max", "warn"})
            if unknown or len(bounds) != 1:
                raise ConfigError(
                    source,
                    f'"{name}": expected a table with one of min or max, and optionally warn; got keys {sorted(spec)}',
                    line,
                )
            op = ">=" if bounds[0] == "min" else "<="
            threshold = _threshold(spec[bounds[0]], f'"{name}" {bounds[0]}', source, line)
            warn = _threshold(spec["warn"], f'"{name}" warn', source, line) if "warn" in spec else None
            gates[metric] = make_gate(metric, op, threshold, warn, source, line)
        else:
            threshold = _threshold(spec, f'"{name}"', source, line)
            gates[metric] = Gate(metric, default_op(metric, directions), threshold, None, source)
        gate = gates[metric]
        if gate is not None:
            gates[metric] = check_range(replace(gate, line=line), name, source, line)
    return gates


def unknown_gate_metric(
    gates: Iterable[Gate | tuple[str, str, int | None]], metrics: Iterable[str], known: Iterable[str]
) -> ConfigError | None:
    """Find a gate on a metric the run did not produce whose name looks like a typo of one it knows.

    Names of scores from other evaluators are only known once the traces and --scores are read;
    a gate on a name the run never saw is skipped, unless the name is this close to another one
    (a gate is a Gate or a (metric, source, line) triple, as for regression bounds).
    """
    produced = list(metrics)
    # Operational metrics are typo targets only in a run that reports them: "latency_ms" is a
    # score's name as often as a slip for "latency_max".
    candidates = produced + [name for name in known if name not in produced and not _operational(name)] + list(
        ALIASES)
    for gate in gates:
        metric, source, line = (gate.metric, gate.source, gate.line) if isinstance(gate, Gate) else gate
        if metric in candidates:
            continue  # produced, or a known name this run did not produce (skipped, or failed when strict)
        hint = closest(metric, candidates, TYPO_CUTOFF)
        if hint is not None:
            return ConfigError(source, f'unknown metric {quote(metric)}; did you mean "{hint}"?', line)
    return None


def evaluate_gates(gates: Iterable[Gate], metrics: Mapping[str, float | None], strict: bool) -> list[GateResult]:
    """Check each gate; an undefined value is skipped, or fails when ``strict``."""
    results = []
    for gate in gates:
        value = metrics.get(gate.metric)
        if value is None:
            status = Status.FAIL if strict else Status.SKIPPED
        elif not holds(value, gate.op, gate.threshold):
            status = Status.FAIL
        elif gate.warn is not None and not holds(value, gate.op, gate.warn):
            status = Status.WARN
        else:
            status = Status.PASS
        results.append(GateResult(gate, value, status, gate.metric in metrics))
    return results


def pass_bound(results: Iterable[GateResult]) -> tuple[str, float] | None:
    """Give the operator and threshold of a run's min_pass_rate gate (None: it has none)."""
    return next(((r.gate.op, r.gate.threshold) for r in results if r.gate.metric == "min_pass_rate"), None)


def gates_pass(results: Iterable[GateResult]) -> bool:
    """Tell whether no gate failed."""
    return all(r.status is not Status.FAIL for r in results)
