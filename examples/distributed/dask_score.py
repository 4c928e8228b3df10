"""Score a RAG run on Dask: the traces shuffled to their question's part, ragscore scoring each part.

    python dask_score.py GOLD TRACE_GLOB OUT_JSON [--parts N] [--metrics M] [--scheduler S]

TRACE_GLOB (quoted, so that the shell leaves it alone) names one or many .jsonl or .jsonl.gz files,
read in sorted order as `ragscore score --trace` reads them. Every trace line goes to the part
`ragscore.owner(qid, N)` through Dask's own shuffle (`Bag.groupby`); each part becomes a
`ragscore.partial` of its traces, and the partials merge on this machine into the JSON report,
written to OUT_JSON. The exit status is score's: 0 when the gates pass, 1 when one fails, 2 on an
error.

The settings and gates are read here, as `ragscore score` reads them (./gates.toml,
[tool.ragscore] of ./pyproject.toml, --metrics), and sent to the workers with the tasks. The
workers read GOLD and the trace files themselves: on a cluster, give paths every worker can read
(a shared file system).

The report equals `ragscore score --gold GOLD --trace TRACE_GLOB --json OUT_JSON` except for its
"inputs": the workers hand ragscore records, not files, so "inputs.trace" names
"<trace records>" and its sha256 is the digest of the parts' digests, not the files' list.
Metrics, intervals, gates, counts, labels and diagnoses are the same to the bit: each part sorts
its traces back into their order in the files, so the later of two traces for one question
replaces the earlier one as in one process. Notes (on standard error here) number a trace by its
place in its part, not its file and line.

A trace must hold its "qid" (a string or an integer) to be routed: a trace that joins its
question by its text stops the run with its file and line. Score such a run in one process.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import sys
import traceback
from functools import reduce

import dask.bag as db

import ragscore


def lines(path):
    """Yield (line number, text) for each non-blank line of a JSON-lines file, gzip-compressed or not."""
    with open(path, "rb") as file:
        gzipped = file.read(2) == b"\x1f\x8b"
    with (gzip.open if gzipped else open)(path, "rb") as file:
        for number, raw in enumerate(file, 1):
            try:
                text = raw.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise ValueError(f"{path}:{number}: not UTF-8 ({exc.reason})") from None
            if text.strip():
                yield number, text


def routed(file, path, parts):
    """Return each trace of a file as (part, file, line, text): its part is the owner of its qid."""
    out = []
    for number, text in lines(path):
        try:
            record = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: not a JSON line ({exc})") from None
        qid = record.get("qid") if isinstance(record, dict) else None
        if isinstance(qid, int) and not isinstance(qid, bool):
            qid = str(qid)  # ragscore reads an integer qid as its digits
        if not isinstance(qid, str) or not qid:
            raise ValueError(f'{path}:{number}: a trace without a "qid" cannot be routed to its part; give every '
                             "trace a qid, or score the run in one process (ragscore score)")
        out.append((ragscore.owner(qid, parts), file, number, text))
    return out


def score_part(part, traces, parts, gold, config):
    """Return the partial result (JSON) of one part, its traces taken in their order in the files."""
    traces = sorted(traces, key=lambda trace: trace[1:3])  # (file, line): the shuffle keeps no order
    records = [json.loads(text) for _, _, _, text in traces]
    return ragscore.partial(gold, records, part=(part, parts), config=config).to_json()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("gold")
    parser.add_argument("traces", metavar="trace_glob")
    parser.add_argument("out", metavar="out_json")
    parser.add_argument("--parts", type=int, default=8, help="parts to score apart (default 8)")
    parser.add_argument("--metrics", help="as ragscore score --metrics")
    parser.add_argument("--scheduler", default="processes",
                        help="synchronous, threads, processes (the default) or a dask.distributed scheduler's address")
    args = parser.parse_args(argv)
    paths = sorted(path for path in glob.glob(args.traces, recursive=True) if os.path.isfile(path))
    if not paths:
        parser.error(f"{args.traces}: no file matches")
    config = ragscore.load_config(metrics=args.metrics)
    parts, gold = args.parts, args.gold
    scheduler = args.scheduler
    if "://" in scheduler:  # a cluster: dask.distributed's client becomes the scheduler
        from dask.distributed import Client

        scheduler = Client(scheduler)

    traces = db.from_sequence(list(enumerate(paths)), npartitions=len(paths))  # a task per file
    traces = traces.map(lambda file_path: routed(*file_path, parts)).flatten()
    by_part = traces.groupby(lambda trace: trace[0], npartitions=parts)  # the shuffle
    scored = dict(by_part.map(lambda group: (group[0], score_part(*group, parts, gold, config)))
                  .compute(scheduler=scheduler))
    # A part that no trace went to still holds questions (all missing): score it here.
    texts = [scored.get(part) or score_part(part, [], parts, gold, config) for part in range(parts)]
    merged = reduce(ragscore.Partial.merge, map(ragscore.Partial.from_json, texts))
    run = ragscore.finalize(merged, config=config)
    with open(args.out, "w", encoding="utf-8") as out:
        out.write(run.report("json"))
    for note in run.notes():
        print(f"dask_score: {note}", file=sys.stderr)
    return 0 if run.passed else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:  # a task's error, as the engine passes it on; status 2, as ragscore's errors
        traceback.print_exc()
        sys.exit(2)
