"""The report of ``ragscore compare``: its document, and its Markdown for a pull-request comment."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from ragscore.comparison import Delta, GatePower, Mcnemar, Regression
from ragscore.metrics.names import direction_of
from ragscore.reports.common import cell, change_mark, code, fmt, signature_line, verdict
from ragscore.settings import Settings
from ragscore.version import __version__

SIGNIFICANT: Final = "*"
_TEST_NAMES: Final = {
    "t": "paired t-test over the questions both runs count; effect: Cohen's d of the differences",
    "wilcoxon": "Wilcoxon signed-rank test; effect: the rank-biserial correlation",
    "sign": "sign test; effect: positive minus negative differences (candidate − baseline), over the nonzero ones",
    "permutation": "paired permutation test of the mean difference; effect: Cohen's d",
}


def build_compare_document(
    inputs: Mapping[str, Mapping[str, str]],
    settings: Settings,
    deltas: Mapping[str, Delta],
    test: Mcnemar | None,
    regressions: list[Regression],
    paired_test: str = "bootstrap",
    correction: str = "holm",
    power: Mapping[str, GatePower] | None = None,
) -> dict[str, Any]:
    """Assemble the comparison: verdict first, then every metric's move, then the changed questions.

    With a test other than the bootstrap, each metric also has its statistic, effect size and the
    questions tested, and the document names the test and the correction (a bootstrap comparison
    reads as before)."""
    doc = {
        "pass": all(r.status != "fail" for r in regressions),
        "schema": 1,
        "kind": "compare",
        "version": __version__,
        "signature": settings.signature(),
        "inputs": dict(inputs),
        "metrics": {
            name: {
                "baseline": d.baseline,
                "candidate": d.candidate,
                "delta": d.delta,
                "delta_interval": None if d.interval is None else list(d.interval),
                "p_value": d.p_value,
                "p_adjusted": d.p_adjusted,
                "method": d.method,
                **({} if paired_test == "bootstrap" else _tested(d)),
            }
            for name, d in deltas.items()
        },
        # None with repeated samples: a question's correctness is then a pass rate, tested as pass@k and pass^k.
        "mcnemar": None if test is None else {"fixed": len(test.fixed), "broken": len(test.broken),
                                              "p_value": test.p_value},
        "changed": {"fixed": test.fixed if test else [], "broken": test.broken if test else []},
        "regressions": {
            r.metric: {"allowed": r.allowed, "worse_by": r.worse_by, "p_adjusted": r.p_adjusted, "status": r.status,
                       **_power(power, r.metric)}
            for r in regressions
        },
    }
    if paired_test != "bootstrap" or correction != "holm":
        doc["test"] = {"name": paired_test, "correction": correction}
    return doc


def _power(power: Mapping[str, GatePower] | None, metric: str) -> dict[str, Any]:
    """A regression gate's pairs, detectable change (80% power) and the questions its bound needs."""
    p = (power or {}).get(metric)
    if p is None:
        return {}
    return {"pairs": p.pairs, "detectable": p.detectable, "needed": p.needed}


def _tested(d: Delta) -> dict[str, Any]:
    """A test's statistic, effect size, the pairs it tested and (sampled permutations) the p-value's error."""
    t = d.test
    return {"statistic": t.statistic if t else None, "effect": t.effect if t else None, "pairs": t.n if t else None,
            "p_se": t.p_se if t else None}


def _arrow(name: str, delta: float | None) -> str:
    """Say whether a move is better or worse for this metric (an arrow alone cannot)."""
    return change_mark(delta, direction_of(name))


def _signed(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:+d}" if isinstance(value, int) else f"{value:+.4f}"


def render_compare_markdown(doc: dict[str, Any], alpha: float) -> Iterator[str]:
    """Render the comparison for a pull-request comment: deltas, marks, broken and fixed questions."""
    failed = [m for m, r in doc["regressions"].items() if r["status"] == "fail"]
    detail = f"regressions in {', '.join(code(m) for m in failed)}" if failed else "no regression gate failed"
    yield f"# ragscore compare\n\n**{verdict(doc['pass'])}**: {detail}.\n\n"
    chosen = doc.get("test", {"name": "bootstrap", "correction": "holm"})
    methods = {m["method"] for m in doc["metrics"].values() if m["method"]}
    how = _TEST_NAMES.get(chosen["name"]) or ("paired bootstrap over questions" if methods == {"bootstrap"}
                                              else "paired normal approximation" if methods == {"normal"}
                                              else "paired tests over questions")
    after = {"holm": "after Holm's correction across metrics", "bonferroni": "after Bonferroni's correction across "
             "metrics", "none": "uncorrected"}[chosen["correction"]]
    label = {"holm": "p (Holm)", "bonferroni": "p (Bonferroni)", "none": "p"}[chosen["correction"]]
    yield f"{SIGNIFICANT} significant at {alpha:g} {after} ({how}).\n\n"
    tested = chosen["name"] != "bootstrap"  # the test's effect size beside the p-value
    yield (f"| metric | baseline | candidate | change | {'effect' if tested else 'interval'} | {label} |\n"
           "|---|---|---|---|---|---|\n")
    for name, m in doc["metrics"].items():
        mark = SIGNIFICANT if m["p_adjusted"] is not None and m["p_adjusted"] < alpha else ""
        bounds = m["delta_interval"]
        interval = "" if bounds is None else f"{_signed(bounds[0])} to {_signed(bounds[1])}"
        if tested:
            interval = "" if m.get("effect") is None else f"{m['effect']:+.3f}"
        p = "" if m["p_adjusted"] is None else f"{m['p_adjusted']:.4f}{mark}"
        yield (f"| {code(name)} | {fmt(m['baseline'])} | {fmt(m['candidate'])} | {_signed(m['delta'])} "
               f"{_arrow(name, m['delta'])} | {interval} | {p} |\n")
    mc = doc["mcnemar"]
    if mc is None:
        yield ("\nPer-question correctness is a pass rate with repeated samples: McNemar's test does not apply; "
               "`pass@k` and `pass^k` above are compared question by question.\n")
    else:
        yield (f"\nPer-question correctness (OK or REFUSAL_OK): {mc['fixed']} fixed, {mc['broken']} broken, "
               f"exact McNemar p = {mc['p_value']:.4f}.\n")
    for title, key in (("Broken", "broken"), ("Fixed", "fixed")):
        qids = doc["changed"][key]
        if qids:
            yield f"\n**{title}** ({len(qids)}): " + ", ".join(cell(q) for q in qids) + "\n"
    if doc["regressions"]:
        yield ("\n| regression gate | allowed | worse by | status | detectable change | questions needed |\n"
               "|---|---|---|---|---|---|\n")
        for name, r in doc["regressions"].items():
            needed = "" if r.get("needed") is None else f"{r['needed']:,}"
            yield (f"| {code(name)} | {r['allowed']:g} | {fmt(r['worse_by'])} | {r['status']} | "
                   f"{fmt(r.get('detectable'))} | {needed} |\n")
        yield ("\nDetectable change: what this many paired questions detect with 80% power; questions needed: "
               "what the allowed change needs (the normal test of the observed paired differences).\n")
    yield signature_line(doc["signature"])


_KEY_METRICS: Final = ("precision", "chr", "under_refusal", "over_refusal")


def flipped(worse: int, better: int) -> str:
    """``2 questions got worse, 1 got better``."""
    from ragscore.reports.pr_comment import counted

    return f"{counted(worse, 'question', 'questions')} got worse, {better:,} got better"


def render_compare_comment(doc: Mapping[str, Any], flips: Mapping[str, tuple[str, str, str]], key: str | None,
                           alpha: float) -> Iterator[str]:
    """A comparison as a pull-request comment: the verdict and the regression gates that failed; the key metrics
    (those with a regression gate, then precision, chr, under- and over-refusal) with baseline, candidate, change,
    interval and significance; the questions that flipped, those that got worse first, in a collapsed list."""
    from ragscore.reports.pr_comment import (
        PATH,
        Listing,
        assemble,
        comment_key,
        footer,
        key_of_path,
        short,
        some,
        table,
    )

    failed = [(name, r) for name, r in doc["regressions"].items() if r["status"] == "fail"]
    if failed:
        because = (f"{len(failed)} of {len(doc['regressions'])} regression gates failed: "
                   + some([f"{short(name)} worse by {fmt(r['worse_by'])} (allowed {r['allowed']:g})"
                           for name, r in failed], "; "))
    elif doc["regressions"]:
        because = f"all {len(doc['regressions'])} regression gates passed"
    else:
        because = "no regression gates"
    changed = doc["changed"]
    moved = flipped(len(changed["broken"]), len(changed["fixed"])) if doc["mcnemar"] is not None else (
        "with repeated samples a question's correctness is a pass rate, and no question flips: `pass@k` and "
        "`pass^k` compare them question by question")
    head: list[str | Listing] = [
        f"**ragscore compare: {verdict(doc['pass'])}** · {because}", "",
        f"Candidate {short(doc['inputs']['trace']['path'], PATH)} against baseline "
        f"{short(doc['inputs']['baseline']['path'], PATH)}: {moved}."]
    level = f"{(1 - alpha) * 100:g}% interval"
    names = [*doc["regressions"], *(n for n in _KEY_METRICS if n not in doc["regressions"] and n in doc["metrics"])]
    metrics = []
    for name in names:
        m = doc["metrics"].get(name)
        if m is None:
            continue
        interval = "" if m["delta_interval"] is None else f"{_signed(m['delta_interval'][0])} to " \
                                                         f"{_signed(m['delta_interval'][1])}"
        significant = m["p_adjusted"] is not None and m["p_adjusted"] < alpha
        p = "" if m["p_adjusted"] is None else f"{m['p_adjusted']:.4f}" + (" (significant)" if significant else "")
        metrics.append(f"| {code(name)} | {fmt(m['baseline'])} | {fmt(m['candidate'])} | {_signed(m['delta'])} "
                       f"{_arrow(name, m['delta'])} | {interval} | {p} |")
    head += ["", Listing("", table(["metric", "baseline", "candidate", "change", level, "p (adjusted)"]), metrics,
                         "metrics")]

    def labels(q: str) -> str:
        before, after, _ = flips.get(q, ("", "", ""))
        return f"| {cell(q)} | {code(before) if before else ''} | {code(after) if after else ''} |"

    listings = []
    if changed["broken"]:
        rows = [f"{labels(q)} {cell(flips[q][2]) if q in flips else ''} |" for q in changed["broken"]]
        listings.append(Listing(f"Got worse (right in the baseline, not in the candidate): {len(rows):,}",
                                table(["qid", "baseline", "candidate", "now"]), rows, "questions that got worse"))
    if changed["fixed"]:
        rows = [labels(q) for q in changed["fixed"]]
        listings.append(Listing(f"Got better (right in the candidate only): {len(rows):,}",
                                table(["qid", "baseline", "candidate"]), rows, "questions that got better"))
    details = [(flipped(len(changed["broken"]), len(changed["fixed"])), listings)] if listings else []
    yield from assemble(head, details, footer(doc["signature"]),
                        comment_key(key, key_of_path(doc["inputs"]["gold"]["path"])))
