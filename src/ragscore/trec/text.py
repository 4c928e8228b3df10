"""trec_eval's text output: one run's as trec_eval prints it, several runs' with one value column per run.

trec_eval scores one run. Given several, ``ragscore trec`` prints trec_eval's lines
(``measure <tab> topic <tab> value``) with a value for each run, in the order given, so that
column i of the ``all`` lines is what trec_eval prints for run i: a ``runid`` line first (a header,
whatever the measures), then with ``-q`` each topic's lines (``-`` for a run that did not score
the topic), then ``num_q`` (when trec_eval prints it) and the summaries. The paired tests are in
the reports (``--format``).

A qid or run tag is printed as trec_eval prints it, unless it holds a control character or the
``##[`` that GitHub's runner reads as a workflow command anywhere in a line: then it shows as an
escape (``#\\x23[error]``, ``\\x1b``), as in every report.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragscore.quoting import has_unsafe, visible
from ragscore.trec.measures import Evaluated, render


def _shown(value: float, integer: bool) -> str:
    return f"{int(value)}" if integer else f"{value:6.4f}"


def render_runs(runs: Sequence[Evaluated], per_query: bool = False, names: Sequence[str] | None = None) -> str:
    """Print trec_eval's output for every run side by side (``runs`` evaluated with the same measures).

    ``names`` are those of the summary lines after num_q (an evaluation that scored no topic has none).
    """
    lines = []

    def line(name: str, topic: str, values: Sequence[str]) -> None:
        lines.append(f"{name:<22}\t{topic}\t" + "\t".join(values))

    line("runid", "all", [ev.run_name for ev in runs])
    if per_query:
        topics = sorted({qid for ev in runs for qid in ev.per_query},
                        key=lambda qid: qid.encode("utf-8", "surrogateescape"))
        for qid in topics:
            rows = [ev.per_query.get(qid) for ev in runs]
            scored = next(row for row in rows if row is not None)
            for index, (name, _, _) in enumerate(scored):
                if name != "gm_map":
                    line(name, qid, ["-" if row is None else _shown(row[index][1], row[index][2]) for row in rows])
    first = next((ev for ev in runs if ev.per_query), runs[0])  # a run that scored nothing has no names
    shown = [name for name, _, _ in first.summary] if names is None else ["num_q", *names]
    for index, name in enumerate(shown):
        if runs[0].headed or name != "num_q":
            line(name, "all", [_shown(ev.summary[index][1], ev.summary[index][2]) for ev in runs])
    return "\n".join(lines) + "\n"


def render_text(runs: Sequence[Evaluated], per_query: bool = False, names: Sequence[str] | None = None) -> str:
    """Print trec_eval's output for one run, or for several side by side (``render_runs``), input text escaped.

    The qids and run tags are the only input text in it, and none holds white space (the files are
    split at it): escaping all but the tabs and newlines of the output escapes exactly them. Output
    whose input text is plain (every ordinary qid) is trec_eval's, byte for byte.
    """
    text = render(runs[0], per_query) if len(runs) == 1 else render_runs(runs, per_query, names)
    # One search over them all (a run can have a million topics), a space between two so that no
    # "##[" spans two of them.
    if has_unsafe(" ".join(name for ev in runs for name in (ev.run_name, *ev.per_query))):
        return visible(text, keep_lines=True)
    return text
