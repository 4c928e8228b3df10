"""Score a RAG run on Ray: the traces shuffled to their question's part, ragscore scoring each part.

    python ray_score.py GOLD TRACE_GLOB OUT_JSON [--parts N] [--metrics M] [--address A]

TRACE_GLOB (quoted, so that the shell leaves it alone) names one or many .jsonl or .jsonl.gz files,
read in sorted order as `ragscore score --trace` reads them. Every trace line goes to the part
`ragscore.owner(qid, N)` through Ray Data's own shuffle (`Dataset.groupby("part")`); each group
becomes a `ragscore.partial` of its traces (`map_groups`), and the partials merge here into the JSON
report, written to OUT_JSON. The exit status is score's: 0 when the gates pass, 1 when one fails, 2
on an error. Without --address (or RAY_ADDRESS), Ray starts on this machine and stops with the run.

The settings and gates are read here, as `ragscore score` reads them (./gates.toml,
[tool.ragscore] of ./pyproject.toml, --metrics), and sent to the workers with the tasks. The
workers read GOLD and the trace files themselves and need ragscore installed: on a cluster, give
paths every node can read (a shared file system).

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

import ray

import ragscore

COLUMNS = ("part", "file", "line", "text")


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
    parser.add_argument("--address", help="a Ray cluster's address (default: RAY_ADDRESS, else a Ray on this machine)")
    args = parser.parse_args(argv)
    paths = sorted(path for path in glob.glob(args.traces, recursive=True) if os.path.isfile(path))
    if not paths:
        parser.error(f"{args.traces}: no file matches")
    config = ragscore.load_config(metrics=args.metrics)
    parts, gold = args.parts, args.gold

    def rows(file):  # a file's traces as rows of a dataset
        return [dict(zip(COLUMNS, trace, strict=True)) for trace in routed(file["file"], file["path"], parts)]

    def scored(group):  # one part's traces (a batch of columns) -> its partial result
        traces = list(zip(*(group[column].tolist() for column in COLUMNS), strict=True))
        return {"part": [traces[0][0]], "partial": [score_part(traces[0][0], traces, parts, gold, config)]}

    ray.init(address=args.address)
    try:
        files = ray.data.from_items([{"file": file, "path": path} for file, path in enumerate(paths)],
                                    override_num_blocks=len(paths))  # a task per file
        by_part = files.flat_map(rows).groupby("part")  # the shuffle
        done = {row["part"]: row["partial"] for row in by_part.map_groups(scored).take_all()}
    finally:
        ray.shutdown()
    # A part that no trace went to still holds questions (all missing): score it here.
    texts = [done.get(part) or score_part(part, [], parts, gold, config) for part in range(parts)]
    merged = reduce(ragscore.Partial.merge, map(ragscore.Partial.from_json, texts))
    run = ragscore.finalize(merged, config=config)
    with open(args.out, "w", encoding="utf-8") as out:
        out.write(run.report("json"))
    for note in run.notes():
        print(f"ray_score: {note}", file=sys.stderr)
    return 0 if run.passed else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:  # a task's error, as the engine passes it on; status 2, as ragscore's errors
        traceback.print_exc()
        sys.exit(2)
