"""What the evidence family costs, measured side by side with the default score (issue 35).

    python bench/evidence.py                  # 100,000 questions, 20 retrieved spans each, 3 turns
    python bench/evidence.py --size 20000 --repeat 1

It generates (once, cached under bench/out/evidence-N/) a seeded corpus of about 20,000 documents of about
5,000 characters, chunked into overlapping chunks of about 500 characters (``chunks.jsonl``: the whole
chunking), and N answerable questions, each with 1 to 3 gold spans of 50 to 400 characters (mostly in one
document, sometimes in a second). Two gold files hold the same questions: ``gold.jsonl`` without
``gold_spans`` and ``gold-spans.jsonl`` with them (the evidence family turns on by itself). Two trace files
hold the same traces: ``trace-spans.jsonl`` lists 20 retrieved entries that carry their own span
(``{"id", "doc", "start", "end"}``: the chunks that hold some of the gold most of the time, often a
neighbour in the same document, most from elsewhere) and 1 to 3 citations of retrieved ids;
``trace-ids.jsonl`` lists the same 20 chunks by id alone, their spans read from ``--chunks chunks.jsonl``.

Then it times, in turns (the order swapped each turn; each command by its least wall time over the turns,
the median of the turns' ratios printed too; ``--format none``; the least CPU time of each, its workers'
included, and its ratio, which other work on a shared machine disturbs less; peak RSS from one more run of
each in a process of its own), with all cores and with one process (``--jobs 1``):

  spans    (a) the default score of trace-spans.jsonl against gold.jsonl (the family off) and (b) the same
           traces against gold-spans.jsonl (the family on)
  chunks   (a') the default score of trace-ids.jsonl against gold.jsonl and (c) the same traces against
           gold-spans.jsonl with --chunks chunks.jsonl

Each pair parses the same trace JSON, so the ratio (b)/(a), (c)/(a') is what the family adds (with reading
the gold spans, and for (c) the chunking). Target: <= 1.5.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from bisect import bisect_left
from pathlib import Path

from grounding import peak_rss_mb  # bench/ is first on the path, as the scripts import each other

HERE = Path(__file__).resolve().parent
TARGET = 1.5
RETRIEVED = 20
WORDS = ("the policy covers refunds within days of purchase and the report says revenue grew while costs fell "
         "for customers in each region where the board approved a new plan").split()


def _chunking(rng: random.Random, length: int) -> list[tuple[int, int]]:
    """Overlapping chunks of 400 to 600 characters, each starting 50 to 150 before the last one's end."""
    out = []
    start = 0
    while True:
        end = min(start + rng.randint(400, 600), length)
        out.append((start, end))
        if end >= length:
            return out
        start = end - rng.randint(50, 150)


def _gold_spans(rng: random.Random, lengths: list[int]) -> list[tuple[int, int, int]]:
    """1 to 3 spans of 50 to 400 characters: in one document, a second span in another one time in five."""
    doc = rng.randrange(len(lengths))
    out = []
    for n in range(rng.randint(1, 3)):
        if n and rng.random() < 0.2:
            doc = rng.randrange(len(lengths))
        size = rng.randint(50, 400)
        start = rng.randrange(lengths[doc] - size)
        out.append((doc, start, start + size))
    return out


def generate(n: int, out: Path, seed: int = 20261205) -> dict[str, Path]:
    """Write the corpus's chunking, both gold files and both trace files for ``n`` questions into ``out``."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    lengths = [rng.randint(4000, 6000) for _ in range(min(20_000, max(100, n // 5)))]
    chunkings = [_chunking(rng, length) for length in lengths]
    starts = [[s for s, _ in chunks] for chunks in chunkings]
    paths = {name: out / f"{name}.jsonl" for name in ("chunks", "gold", "gold-spans", "trace-spans", "trace-ids")}
    with paths["chunks"].open("w", encoding="utf-8") as f:
        for doc, chunks in enumerate(chunkings):
            for c, (start, end) in enumerate(chunks):
                f.write(json.dumps({"id": f"d{doc}#{c}", "doc": f"d{doc}", "start": start, "end": end}) + "\n")
    files = {name: paths[name].open("w", encoding="utf-8") for name in ("gold", "gold-spans", "trace-spans",
                                                                          "trace-ids")}
    try:
        for i in range(n):
            qid = f"Q{i:07d}"
            spans = _gold_spans(rng, lengths)
            holding = []  # the chunks that share a character with a gold span
            for doc, start, end in spans:
                first = max(bisect_left(starts[doc], start) - 2, 0)
                holding += [(doc, c) for c in range(first, bisect_left(starts[doc], end))
                            if chunkings[doc][c][1] > start and (doc, c) not in holding]
            fact = " ".join(rng.choice(WORDS) for _ in range(3)) + f" {rng.randint(1, 999)}"
            item = {"qid": qid, "question": f"What does the policy say about item {i}?", "answerable": True,
                    "gold_claim_substr": [fact], "gold_citations": [f"d{d}#{c}" for d, c in holding]}
            files["gold"].write(json.dumps(item) + "\n")
            item["gold_spans"] = [{"doc": f"d{d}", "start": s, "end": e} for d, s, e in spans]
            files["gold-spans"].write(json.dumps(item) + "\n")
            ranked: list[tuple[int, int] | None] = [None] * RETRIEVED
            if rng.random() < 0.85:  # some of the gold retrieved, near the top
                for chunk in rng.sample(holding, rng.randint(1, len(holding))):
                    free = [r for r in range(RETRIEVED) if ranked[r] is None]
                    ranked[min(rng.choice(free), rng.choice(free))] = chunk
            doc = spans[0][0]
            for _ in range(rng.randint(0, 3)):  # neighbours in the gold's document
                free = [r for r in range(RETRIEVED) if ranked[r] is None]
                chunk = (doc, rng.randrange(len(chunkings[doc])))
                if chunk not in ranked:
                    ranked[rng.choice(free)] = chunk
            for r in range(RETRIEVED):
                while ranked[r] is None:
                    d = rng.randrange(len(lengths))
                    chunk = (d, rng.randrange(len(chunkings[d])))
                    if chunk not in ranked:
                        ranked[r] = chunk
            chosen = [chunk for chunk in ranked if chunk is not None]
            ids = [f"d{d}#{c}" for d, c in chosen]
            cited = rng.sample(range(RETRIEVED), rng.randint(1, 3))
            if rng.random() < 0.7:
                cited[0] = next((r for r, chunk in enumerate(chosen) if chunk in holding), cited[0])
            claim = f"The value is {fact}." if rng.random() < 0.9 else " ".join(rng.choice(WORDS) for _ in range(8))
            answer = {"claim": claim, "citations": list(dict.fromkeys(ids[r] for r in cited))}
            entries = [{"id": ident, "doc": f"d{d}", "start": chunkings[d][c][0], "end": chunkings[d][c][1]}
                       for ident, (d, c) in zip(ids, chosen, strict=True)]
            files["trace-spans"].write(json.dumps({"qid": qid, "retrieved_ids": entries, "answer_json": answer}) + "\n")
            files["trace-ids"].write(json.dumps({"qid": qid, "retrieved_ids": ids, "answer_json": answer}) + "\n")
    finally:
        for f in files.values():
            f.close()
    return paths


def timed(cmd: list[str]) -> tuple[float, float]:
    """A run's wall time and the CPU time (user and system) of its processes, its workers' too (each waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def commands(paths: dict[str, Path]) -> dict[str, tuple[list[str], list[str]]]:
    """Each variant's two commands: the default score (the family off) and the evidence family's (on)."""
    def score(gold: str, trace: str, *more: str) -> list[str]:
        return [sys.executable, "-m", "ragscore", "--gold", str(paths[gold]), "--trace", str(paths[trace]), "-q",
                "--no-fail", "--format", "none", *more]

    return {"spans": (score("gold", "trace-spans"), score("gold-spans", "trace-spans")),
            "chunks": (score("gold", "trace-ids"), score("gold-spans", "trace-ids", "--chunks", str(paths["chunks"])))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=HERE / "out")
    parser.add_argument("--variants", default="spans,chunks", help="which of spans, chunks to run")
    args = parser.parse_args()
    folder = args.data / f"evidence-{args.size}"
    paths = {name: folder / f"{name}.jsonl" for name in ("chunks", "gold", "gold-spans", "trace-spans", "trace-ids")}
    if not all(path.exists() for path in paths.values()):
        paths = generate(args.size, folder)
    mb = {name: path.stat().st_size / 1e6 for name, path in paths.items()}
    print(f"{args.size:,} questions, {RETRIEVED} retrieved spans each (traces: {mb['trace-spans']:,.0f} MB with "
          f"spans, {mb['trace-ids']:,.0f} MB of ids; chunks.jsonl {mb['chunks']:,.0f} MB); the least of "
          f"{args.repeat} turns")
    print("| variant | processes | default s | evidence s | × default | median of the turns' × | CPU s (default, "
          "evidence) | CPU × | peak RSS MB (default, evidence) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    pairs = commands(paths)
    # The two commands take turns (the order swapped each time), so that a slower spell of a shared machine
    # falls on both, and each is timed by its least wall time: the turn least disturbed by other work (the
    # median ratio of the turns is printed too: on a machine shared with others it varies by a fifth). The CPU
    # time of each (its least over the turns) varies less when other work competes for the cores.
    for variant in args.variants.split(","):
        off, on = pairs[variant]
        for label, jobs in (("all cores", []), ("one (--jobs 1)", ["--jobs", "1"])):
            runs = {"default": [*off, *jobs], "evidence": [*on, *jobs]}
            walls: dict[str, list[float]] = {"default": [], "evidence": []}
            cpus: dict[str, list[float]] = {"default": [], "evidence": []}
            for turn in range(args.repeat):
                for name in (("default", "evidence") if turn % 2 == 0 else ("evidence", "default")):
                    wall, cpu = timed(runs[name])
                    walls[name].append(wall)
                    cpus[name].append(cpu)
            peaks = {name: peak_rss_mb(command) for name, command in runs.items()}
            default, evidence = min(walls["default"]), min(walls["evidence"])
            turns = statistics.median(e / d for d, e in zip(walls["default"], walls["evidence"], strict=True))
            cpu_default, cpu_evidence = min(cpus["default"]), min(cpus["evidence"])
            print(f"| {variant} | {label} | {default:.2f} | {evidence:.2f} | {evidence / default:.2f} | "
                  f"{turns:.2f} | {cpu_default:.2f}, {cpu_evidence:.2f} | {cpu_evidence / cpu_default:.2f} | "
                  f"{peaks['default']:,.0f}, {peaks['evidence']:,.0f} |", flush=True)
    print(f"target (issue 35): evidence <= {TARGET} x default (spans: (b)/(a); chunks: (c)/(a'))")


if __name__ == "__main__":
    main()
