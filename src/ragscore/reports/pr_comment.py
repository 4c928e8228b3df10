"""Markdown for a pull request's conversation (``--format pr-comment``): one comment a workflow updates in place.

Its first visible line is the verdict and the gates that failed; then a table of the key metrics; then the
questions behind the verdict (failures, or the questions a comparison flipped) in collapsed ``<details>``;
its last line is a hidden marker, ``<!-- ragscore:KEY -->``, by which the posting step finds the comment to
update (KEY: ``--comment-key``, else the suite's name, else the gold file's name without its extensions).

A comment never exceeds GitHub's limit of 65,536 characters, whatever its input: past ``LIMIT`` the tables
(the key metrics' or the tasks' as well as the collapsed lists) lose whole rows from their ends, each its
share of what is left, and each says how many rows it left out; the first line names at most ``MOST`` failed
gates (tasks, windows) and counts the rest, a name from input it shows is cut at ``NAME`` characters, and the
marker's key at ``KEY`` (its end then a hash of the whole). Every cell holding input text is escaped
(``reports.common.cell``): no input text can close a table, a ``<details>`` or the marker.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Final

from ragscore.metrics.names import lookup
from ragscore.reports.common import cell, code, cut_for_table, fmt, gate_rule, verdict
from ragscore.version import __version__

LIMIT: Final = 60_000  # characters (UTF-16 code units, as GitHub counts): well under its 65,536
CORE: Final = ("precision", "chr", "under_refusal", "over_refusal")  # score's key metrics besides the gated ones
MOST: Final = 10  # failed gates (tasks, windows) the first line names; it counts the rest
NAME: Final = 100  # characters of a name from input (a metric, a task, a suite) the lines outside tables show
PATH: Final = 300  # characters of a path (several trace files: each of them) those lines show
KEY: Final = 64  # characters of the marker's key
_KEY_RE: Final = re.compile(r"[^A-Za-z0-9._-]+")


def comment_key(given: str | None, fallback: str) -> str:
    """The marker's key: ``given`` (``--comment-key``), else ``fallback``, as letters, digits, ``.``, ``_`` and
    ``-`` (any other run of characters becomes one ``-``; an HTML comment cannot be closed from it); past ``KEY``
    characters, its beginning and a hash of the whole, so that two long keys stay two."""
    text = _KEY_RE.sub("-", (given if given is not None else fallback).strip()).strip("-")
    if len(text) > KEY:
        text = f"{text[:KEY - 13]}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"
    return text or "ragscore"


def short(name: object, limit: int = NAME) -> str:
    """A name from input outside a table, as inline code, cut at ``limit`` characters."""
    return code(cut_for_table(str(name), limit))


def some(items: Sequence[str], sep: str = ", ", most: int = MOST) -> str:
    """The first ``most`` items joined, and how many more: ``a, b and 3 more``."""
    shown = sep.join(items[:most])
    return shown + (f" and {len(items) - most:,} more" if len(items) > most else "")


def key_of_path(path: str) -> str:
    """A file's name without its extensions: ``eval/gold.jsonl.gz`` → ``gold``."""
    name = PurePath(path.split(",")[0].strip() or "ragscore").name
    return name.split(".")[0] or name


def counted(n: int, one: str, many: str) -> str:
    """``1 question``, ``2 questions``."""
    return f"{n:,} {one if n == 1 else many}"


def marker(key: str) -> str:
    """The hidden last line the posting step finds the comment by."""
    return f"<!-- ragscore:{key} -->"


def size(text: str) -> int:
    """The length GitHub limits: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


@dataclass
class Listing:
    """A table of rows that may be cut from its end to fit: a title line (none when empty), the table's header,
    the rows."""

    title: str
    header: Sequence[str]
    rows: Sequence[str]
    what: str = "rows"  # what a row is, for the line saying how many were left out

    def render(self, kept: int) -> list[str]:
        out = [*([self.title, ""] if self.title else []), *self.header, *self.rows[:kept]]
        left = len(self.rows) - kept
        if left:
            out += ["", _left_out(left, self.what)]
        return out

    def scaffold(self) -> list[str]:
        """Its lines but the rows, with the line saying what it left out at its longest."""
        return [*([self.title, ""] if self.title else []), *self.header, "", _left_out(10**9, self.what)]


def _left_out(count: int, what: str) -> str:
    return (f"*{count:,} more {what} left out, to keep this comment under GitHub's 65,536 characters (the full "
            "report lists them).*")


def assemble(head: Sequence[str | Listing], details: Sequence[tuple[str, Sequence[Listing]]], tail: Sequence[str],
             key: str) -> Iterator[str]:
    """The comment: ``head`` (its lines, and its tables as listings), each ``(summary, listings)`` as a collapsed
    ``<details>``, ``tail``, the marker; the listings' rows cut to fit ``LIMIT`` (each listing gets an equal share
    of the room, or what it needs when that is less, and what it does not use passes on)."""
    listings = [part for part in head if isinstance(part, Listing)] + [listing for _, group in details
                                                                       for listing in group]
    scaffold = [*tail, marker(key)]
    for part in head:
        scaffold += part.scaffold() if isinstance(part, Listing) else [part]
    for summary, group in details:
        scaffold += ["", "<details>", f"<summary>{summary}</summary>", "", "</details>"]
        for listing in group:
            scaffold += [*listing.scaffold(), ""]
    costs = [[size(row) + 1 for row in listing.rows] for listing in listings]
    # Shares: a listing that needs less than an equal share of what is left takes what it needs, the smallest
    # first; the others divide the rest equally. A share a listing's whole rows leave unused passes on.
    shares = [0] * len(listings)
    left = max(LIMIT - sum(size(line) + 1 for line in scaffold), 0)
    for rank, index in enumerate(sorted(range(len(listings)), key=lambda i: sum(costs[i]))):
        shares[index] = min(sum(costs[index]), left // (len(listings) - rank))
        left -= shares[index]
    kept: dict[int, int] = {}
    spare = left
    for listing, share, row_costs in zip(listings, shares, costs, strict=True):
        used = count = 0
        for cost in row_costs:
            if used + cost > share + spare:
                break
            used += cost
            count += 1
        kept[id(listing)] = count
        spare += share - used
    lines: list[str] = []
    for part in head:
        lines += part.render(kept[id(part)]) if isinstance(part, Listing) else [part]
    for summary, group in details:
        lines += ["", "<details>", f"<summary>{summary}</summary>", ""]
        for listing in group:
            lines += [*listing.render(kept[id(listing)]), ""]
        lines.append("</details>")
    lines += [*tail, marker(key)]
    for line in lines:
        yield line + "\n"


def table(header: Sequence[str]) -> list[str]:
    """A Markdown table's header lines."""
    return ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]


def finding(metric: str, gate: Mapping[str, Any]) -> str:
    """A failed gate against its bound: ``precision`` = 0.7000, expected >= 0.8."""
    return f"{short(metric)} = {fmt(gate['value'])}, expected {gate_rule(gate)}"  # the rule: ours, no input


def failed_gates_line(gates: Mapping[str, Mapping[str, Any]]) -> str:
    """What follows the verdict: each failed gate against its bound (the first ``MOST``), else how the gates
    ended."""
    failed = [(name, gate) for name, gate in gates.items() if gate["status"] == "fail"]
    if failed:
        return f"{len(failed)} of {len(gates)} gates failed: " + some([finding(n, g) for n, g in failed], "; ")
    if not gates:
        return "no gates"
    warned = sum(1 for gate in gates.values() if gate["status"] == "warn")
    return f"all {len(gates)} gates passed" + (f" ({warned} with a warning)" if warned else "")


def footer(signature: str) -> list[str]:
    """The comment's last visible line: the version and where the rest is."""
    del signature  # the settings are in the JSON report; a comment stays short
    return ["", f"<sub>ragscore {__version__} · the full report is the run's JSON, Markdown or HTML report</sub>"]


# --- score ------------------------------------------------------------------------------------------------------


def render_score_comment(doc: Mapping[str, Any], key: str | None = None) -> Iterator[str]:
    """A score run as a pull-request comment: the verdict and failed gates, the key metrics (the gated ones, then
    precision, chr, under- and over-refusal) with their intervals and gates, and the questions that failed (those
    not OK or REFUSAL_OK), with their reasons, when the run kept its questions. With repeated samples the counts
    are of samples, and a question failed when one of its samples did (its wrong samples' labels instead)."""
    gates = doc["gates"]
    counts = doc["counts"]
    gold = doc["inputs"]["gold"]["path"]
    repeats = doc.get("repeats")
    sampled = f", in {repeats['samples']:,} samples" if repeats else ""
    head = [f"**ragscore: {verdict(doc['pass'])}** · {failed_gates_line(gates)}", "",
            f"{counts['total']:,} questions of {short(gold, PATH)}{sampled}: {doc['answered']:,} "
            f"{'samples ' if repeats else ''}answered, {doc['refused']:,} refused"
            + (f", {counts['missing']:,} without a trace" if counts.get("missing") else "") + "."]
    intervals = doc.get("intervals", {})
    level = f"{doc['settings'].get('confidence', 0.95) * 100:g}% interval"
    names = [*gates, *(name for name in CORE if name not in gates and name in doc["metrics"])]
    metrics = []
    for name in names:
        gate = gates.get(name)
        bounds = intervals.get(name)
        shown = "" if name not in intervals else "n/a" if bounds is None else f"{fmt(bounds[0])}–{fmt(bounds[1])}"
        metrics.append(f"| {code(name)} | {fmt(doc['metrics'].get(name))} | {shown} | "
                       f"{gate_rule(gate) if gate else ''} | {gate['status'] if gate else ''} |")
    parts: list[str | Listing] = [*head, "", Listing("", table(["metric", "value", level, "gate", "status"]), metrics,
                                                     "metrics")]
    wrong = {label: n for label, n in doc.get("labels", {}).items() if label not in ("OK", "REFUSAL_OK") and n}
    if "questions" not in doc and wrong:  # merged from partials without rows: say so, rather than list none
        parts += ["", f"{counted(sum(wrong.values()), *UNITS[bool(repeats)])} ("
                  + ", ".join(f"{code(label)} {n:,}" for label, n in wrong.items())
                  + "), not listed here, as the run kept no rows (`partial --rows`; in Python `keep_rows=True`)."]
    details: list[tuple[str, list[Listing]]] = []
    if "questions" in doc and repeats:
        failures = [q for q in doc["questions"] if q["samples"]["correct"] < q["samples"]["n"]]
        if failures:
            rows = [f"| {cell(q['qid'])} | {q['samples']['correct']}/{q['samples']['n']} | "
                    + ", ".join(f"{code(label)} ×{n}" for label, n in q["samples"]["labels"].items()
                                if label not in ("OK", "REFUSAL_OK")) + " |" for q in failures]
            details.append((counted(len(failures), "question failed in a sample", "questions failed in a sample"),
                            [Listing(f"Questions with a sample not OK, in gold order ({len(failures):,}):",
                                     table(["qid", "samples right", "the other samples' labels"]), rows,
                                     "questions")]))
    elif "questions" in doc:
        failures = [q for q in doc["questions"] if q["label"] not in ("OK", "REFUSAL_OK")]
        if failures:
            rows = [f"| {cell(q['qid'])} | {code(q['label'])} | {cell(q['reason'])} |" for q in failures]
            details.append((counted(len(failures), "question failed", "questions failed"),
                            [Listing(f"Questions not OK, in gold order ({len(failures):,}):",
                                     table(["qid", "label", "reason"]), rows, "questions")]))
    yield from assemble(parts, details, footer(doc["signature"]), comment_key(key, key_of_path(gold)))


UNITS: Final = {False: ("question failed", "questions failed"), True: ("sample failed", "samples failed")}


def direction_of(name: str) -> str:
    """``higher`` or ``lower`` is better, or empty (a count, an unregistered score)."""
    spec = lookup(name)
    return spec.direction.value if spec is not None else ""
