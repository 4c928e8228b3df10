"""Say why a run fails and what to try: metrics past a rule's threshold become diagnoses.

A diagnosis names the metric, its value, the threshold it crossed and the severity, the likely
root causes and suggested actions (from the first case of the rule whose conditions hold, or
the rule's general ones), and the worst questions for that metric (``samples``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple

from ragscore.diagnose.rules import (
    DEFAULT_SAMPLES,
    NO_CITATIONS,
    NOTHING_RETRIEVED,
    Rule,
    builtin_rules,
    past,
    rule_for,
)
from ragscore.metrics.names import lookup
from ragscore.metrics.registry import Direction

__all__ = ["DEFAULT_SAMPLES", "Diagnosis", "Sample", "builtin_rules", "diagnose", "sample_targets"]


class Sample(NamedTuple):
    """One of the worst questions for a metric."""

    qid: str
    question: str | None
    claim: str | None  # None: the question has no trace
    value: float


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """A metric past a rule's threshold, and what to make of it."""

    metric: str
    value: float
    threshold: float
    severity: str  # "critical" or "warning"
    direction: Direction
    root_causes: tuple[str, ...]
    suggested_actions: tuple[str, ...]
    low_samples: tuple[Sample, ...]
    because: str | None = None  # the conditions of the case that chose the causes, e.g. "chr < 0.75"

    def as_dict(self) -> dict[str, object]:
        """Return the diagnosis as the JSON report writes it."""
        return {
            "metric": self.metric,
            "value": self.value,
            "threshold": self.threshold,
            "severity": self.severity,
            "direction": self.direction.value,
            "because": self.because,
            "root_causes": list(self.root_causes),
            "suggested_actions": list(self.suggested_actions),
            "low_samples": [s._asdict() for s in self.low_samples],
        }


def sample_targets(metrics: Sequence[str], rules: Mapping[str, Rule]) -> tuple[tuple[str, Direction, float], ...]:
    """Name the metrics whose worst questions are collected while scoring: those with a rule.

    Each comes with its direction and the bound a question's own value must be past to be quoted
    (the warning threshold, else the critical one).
    """
    targets = []
    for name in metrics:
        rule = rule_for(name, rules)
        if rule is not None:
            bound = rule.warning if rule.warning is not None else rule.critical
            assert bound is not None  # parse_rules requires one of them
            targets.append((name, rule.better(name), bound))
    return tuple(targets)


# Metrics that a run whose traces write no citations fails for that reason first: precision counts the claims
# alone then, and compliance counts a trace without a citation list as non-compliant.
_CITATION_DRIVEN: Final = frozenset({"precision", "compliance"})


def _retrieval_metric(name: str) -> bool:
    """Tell whether a metric measures what was retrieved (full recall, or the retrieval family's)."""
    spec = lookup(name)
    return spec is not None and (spec.family == "retrieval" or spec.name == "full_recall@K")


def diagnose(
    metrics: Mapping[str, float | None],
    rules: Mapping[str, Rule],
    k: int,
    samples: Mapping[str, Sequence[Sample]],
    cites: bool = True,
    retrieves: bool = True,
) -> list[Diagnosis]:
    """Check every metric that has a rule; return the diagnoses, critical first, in metric order.

    ``cites`` says whether any answered trace cites anything: if not, precision counts the claims
    alone, and its diagnosis names the missing citations first (``NO_CITATIONS``), before the rule's
    general causes (its cases, which test chr, never apply), not a retrieval cause. ``retrieves`` says
    whether any trace retrieved anything readable: if not, a retrieval metric's diagnosis names that first
    (``NOTHING_RETRIEVED``), not index drift.
    """
    found = []
    for name, value in metrics.items():
        rule = rule_for(name, rules)
        if rule is None or value is None:
            continue
        direction = rule.better(name)
        severity = threshold = None
        for level, bound in zip(("critical", "warning"), (rule.critical, rule.warning), strict=True):
            if bound is not None and past(value, bound, direction):
                severity, threshold = level, bound
                break
        if severity is None or threshold is None:
            continue
        causes, actions, because = rule.causes, rule.actions, None
        retrieval = not retrieves and _retrieval_metric(name)
        for case in rule.cases if (cites or name not in _CITATION_DRIVEN) and not retrieval else ():
            if all(condition.holds(metrics, k) for condition in case.when):
                causes, actions = case.causes or causes, case.actions or actions
                because = " and ".join(str(c).replace("@K", f"@{k}") for c in case.when)
                break
        if not cites and name in _CITATION_DRIVEN:
            causes, actions = NO_CITATIONS.causes + causes, NO_CITATIONS.actions + actions
            because = "no trace citing anything"
        if retrieval:
            causes, actions = NOTHING_RETRIEVED.causes + causes, NOTHING_RETRIEVED.actions + actions
            because = "no trace retrieving anything readable"
        found.append(Diagnosis(name, value, threshold, severity, direction, causes, actions,
                               tuple(samples.get(name, ())), because))
    found.sort(key=lambda d: d.severity != "critical")  # stable: metric order within a severity
    return found
