"""Benchmark ``ragscore trec`` end to end from files, side by side with trec_eval, pytrec_eval and ranx.

    pip install -e '.[bench]'                    # pytrec_eval and ranx
    python bench/trec.py                         # 10,000 queries x 1,000 documents, 3 repetitions
    python bench/trec.py --queries 1000 --repeat 5 --markdown bench/out/trec.md

It generates (once, cached under bench/out/trec/) seeded TREC qrels, graded 0-3, and a run of
QUERIES x DEPTH lines with BM25-like scores printed with six decimals, about 2% of them tied
with the line before (in no particular docno order, so that trec_eval's tie break reorders
them). Then it times, each as a fresh process from the two files to the printed figures:

  ragscore     ``ragscore trec QRELS RUN``: trec_eval's default measures
  ragscore -m all_trec   every measure ragscore has (with -q when --per-query is given)
  trec_eval    the C program with the same default measures: --trec-eval PATH, else trec_eval on
               the PATH, else Debian's trec-eval package (apt-get install, --install only), else
               built with make from a trec_eval source folder given as --trec-eval-source
  pytrec_eval  a Python process that reads both files with pytrec_eval's parse_qrel and
               parse_run and evaluates the same default measures (trec_eval's C code)
  ranx         a Python process that reads both files with Qrels.from_file and Run.from_file
               and evaluates map, mrr, r-precision, bpref and precision at trec_eval's cutoffs;
               its numba functions are compiled once and cached on disk: the first run after
               an install pays the compile ("ranx, first run"), the timed runs load the cache

and prints the minimum and median wall time of each, its peak memory, and each one's median as
a multiple of ragscore's median measured in the same run (above 1: ragscore is faster). It
checks that ragscore prints what trec_eval prints, line for line, and the same values as
pytrec_eval, before timing anything.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from run import measure  # noqa: E402

SEED = 20261124
GRADES = (0, 1, 2, 3)
GRADE_WEIGHTS = (0.6, 0.2, 0.12, 0.08)
CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)

PYTREC_EVAL = """
import json, sys
import pytrec_eval
with open(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
names = {"num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P"}
results = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(run)
measures = sorted(next(iter(results.values())))
summary = {m: pytrec_eval.compute_aggregated_measure(m, [r[m] for r in results.values()]) for m in measures}
print(json.dumps(summary))
"""

RANX = """
import json, sys
from ranx import Qrels, Run, evaluate
qrels = Qrels.from_file(sys.argv[1], kind="trec")
run = Run.from_file(sys.argv[2], kind="trec")
metrics = ["map", "mrr", "r-precision", "bpref"] + [f"precision@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
print(json.dumps(evaluate(qrels, run, metrics)))
"""


def generate(queries: int, depth: int, out: Path, seed: int = SEED) -> tuple[Path, Path]:
    """Write ``qrels.txt`` (graded 0-3) and ``run.txt`` (``depth`` documents a query, ties in score) into
    ``out``; return their paths. The same arguments always write the same bytes."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    qrels_path, run_path = out / "qrels.txt", out / "run.txt"
    collection = max(queries * depth, 1_000_000)
    with qrels_path.open("w", encoding="ascii") as qrels, run_path.open("w", encoding="ascii") as run:
        for q in range(queries):
            qid = str(301 + q)
            docs = [f"DOC{d:08d}" for d in rng.sample(range(collection), depth)]
            # BM25-like scores printed with six decimals, in rank order; about 2% of the documents tie with
            # the one before (listed in no particular docno order: trec_eval's tie break reorders them).
            scores = sorted((rng.gauss(12.0, 3.0) for _ in docs), reverse=True)
            for i in range(1, depth):
                if rng.random() < 0.02:
                    scores[i] = scores[i - 1]
            run.writelines(f"{qid} Q0 {doc} {rank} {score:.6f} bench\n"
                           for rank, (doc, score) in enumerate(zip(docs, scores, strict=True), 1))
            # Judged: some of the ranked documents (more of them near the top) and some never retrieved.
            judged = {doc for rank, doc in enumerate(docs) if rng.random() < 0.3 / (1 + rank / 50)}
            judged.update(f"DOC{d:08d}" for d in rng.sample(range(collection), rng.randint(10, 100)))
            qrels.writelines(f"{qid} 0 {doc} {rng.choices(GRADES, GRADE_WEIGHTS)[0]}\n" for doc in sorted(judged))
    return qrels_path, run_path


def find_trec_eval(args: argparse.Namespace) -> tuple[str | None, str]:
    """Return trec_eval's path (None when there is none) and how it was found, or why not."""
    if args.trec_eval:
        return args.trec_eval, "as given"
    found = shutil.which("trec_eval")
    if found:
        return found, "on the PATH"
    tried = []
    if args.install and shutil.which("apt-get"):
        policy = subprocess.run(["apt-cache", "policy", "trec-eval"], capture_output=True, text=True).stdout
        if "Candidate:" in policy and "(none)" not in policy:
            subprocess.run(["apt-get", "install", "-y", "trec-eval"], check=False)
            found = shutil.which("trec_eval")
            if found:
                return found, "Debian's trec-eval package"
        tried.append("Debian has no trec-eval package here")
    if args.trec_eval_source:
        build = HERE / "out" / "trec_eval-build"
        shutil.rmtree(build, ignore_errors=True)
        shutil.copytree(args.trec_eval_source, build)
        made = subprocess.run(["make", "-C", str(build)], capture_output=True, text=True)
        if made.returncode == 0 and (build / "trec_eval").exists():
            return str(build / "trec_eval"), f"built from {args.trec_eval_source}"
        tried.append(f"make failed in {args.trec_eval_source}: {made.stderr.strip()[-200:]}")
    tried.append("no trec_eval on the PATH (give --trec-eval PATH, --install, or --trec-eval-source DIR; "
                 "pytrec_eval's source distributions download trec_eval's source when built, they do not bundle it)")
    return None, "; ".join(tried)


def version(module: str) -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    for name in {"pytrec_eval": ("pytrec-eval-terrier", "pytrec-eval"), "ranx": ("ranx",)}[module]:
        try:
            return f"{name} {installed(name)}"
        except PackageNotFoundError:
            continue
    return ""


def _figures(text: str) -> dict[str, str]:
    """A trec_eval output's summary: measure -> value as printed."""
    return {name.strip(): value for name, _, value in (line.split("\t") for line in text.splitlines())}


def check(py: str, qrels: Path, run: Path, trec_eval: str | None, competitors: set[str]) -> list[str]:
    """Check ragscore's figures against trec_eval's (every line) and pytrec_eval's; return what was checked."""
    import json

    ours = subprocess.run([py, "-m", "ragscore", "trec", str(qrels), str(run)], capture_output=True, text=True,
                          check=True, cwd=ROOT).stdout
    said = []
    if trec_eval:
        theirs = subprocess.run([trec_eval, str(qrels), str(run)], capture_output=True, text=True, check=True).stdout
        if theirs != ours:
            raise SystemExit("ragscore trec and trec_eval print different figures:\n" + ours + "\n" + theirs)
        said.append("ragscore prints what trec_eval prints, line for line")
    if "pytrec_eval" in competitors:
        summary = json.loads(subprocess.run([py, "-c", PYTREC_EVAL, str(qrels), str(run)], capture_output=True,
                                            text=True, check=True).stdout)
        figures = _figures(ours)
        for name, value in summary.items():
            if name in figures and abs(float(figures[name]) - value) > 0.00005 + 1e-9:
                raise SystemExit(f"ragscore and pytrec_eval differ on {name}: {figures[name]} and {value}")
        said.append(f"ragscore's {len(summary)} default figures equal pytrec_eval's (to the 4 decimals printed)")
    return said


def main() -> None:
    """Parse options, generate the data, check, time every case, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=1_000, help="documents ranked per query")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ranx-repeat", type=int, help="repetitions of ranx, the slowest (default: --repeat)")
    parser.add_argument("--data", type=Path, default=HERE / "out" / "trec")
    parser.add_argument("--cases", default="ragscore,all_trec,trec_eval,pytrec_eval,ranx",
                        help="which of ragscore, all_trec, trec_eval, pytrec_eval, ranx to time")
    parser.add_argument("--trec-eval", metavar="PATH", help="the trec_eval program to time")
    parser.add_argument("--trec-eval-source", metavar="DIR", help="trec_eval's source folder, built with make")
    parser.add_argument("--install", action="store_true", help="try apt-get install trec-eval when it is missing")
    parser.add_argument("--markdown", type=Path, metavar="PATH", help="also write the table there")
    args = parser.parse_args()
    cases = set(args.cases.split(","))

    py = sys.executable
    folder = args.data / f"{args.queries}x{args.depth}"
    qrels, run = folder / "qrels.txt", folder / "run.txt"
    if not (qrels.exists() and run.exists()):
        print(f"generating {args.queries:,} queries x {args.depth:,} documents in {folder} ...", file=sys.stderr)
        generate(args.queries, args.depth, folder)
    trec_eval, how = find_trec_eval(args) if "trec_eval" in cases else (None, "not asked for")
    notes = [f"trec_eval: {how}" + (f" ({trec_eval})" if trec_eval else "")]
    notes += check(py, qrels, run, trec_eval, cases)

    timed: list[tuple[str, list[str]]] = [("ragscore trec", [py, "-m", "ragscore", "trec", str(qrels), str(run)])]
    if "all_trec" in cases:
        timed.append(("ragscore trec -m all_trec",
                      [py, "-m", "ragscore", "trec", "-m", "all_trec", str(qrels), str(run)]))
    if trec_eval:
        timed.append(("trec_eval (C)", [trec_eval, str(qrels), str(run)]))
    if "pytrec_eval" in cases:
        timed.append((f"pytrec_eval ({version('pytrec_eval')}), parsing included",
                      [py, "-c", PYTREC_EVAL, str(qrels), str(run)]))
    if "ranx" in cases:
        ranx = [py, "-c", RANX, str(qrels), str(run)]
        cache = [path for path in Path(__import__("ranx").__file__).parent.rglob("*.nbi")]
        for path in cache:  # numba's cache of compiled functions: the first run compiles them again
            path.unlink()
        first = measure(ranx)
        timed.append((f"ranx ({version('ranx')}), compiled functions cached", ranx))
        notes.append(f"ranx, first run after its numba cache is cleared (compiles): {first[0]:.2f} s, "
                     f"{first[1]:,.0f} MB")

    load = os.getloadavg()
    size_mb = (qrels.stat().st_size + run.stat().st_size) / 1e6
    lines = [f"ragscore trec benchmark: {args.queries:,} queries x {args.depth:,} documents "
             f"({args.queries * args.depth:,} run lines, {size_mb:,.0f} MB of input); {os.cpu_count()} cores, "
             f"Python {platform.python_version()}, {platform.machine()}; load average {load[0]:.2f} at the start; "
             f"wall times of {args.repeat} runs each" + (f" ({args.ranx_repeat} of ranx)" if args.ranx_repeat else "")
             + ", from the files to the printed figures",
             "",
             "| program | min s | median s | × ragscore | peak RSS MB |",
             "|---|---:|---:|---:|---:|"]
    print("\n".join(lines), flush=True)
    base = None
    for label, cmd in timed:
        repeat = args.ranx_repeat if label.startswith("ranx") and args.ranx_repeat else args.repeat
        runs = [measure(cmd) for _ in range(repeat)]
        walls = [r[0] for r in runs]
        median = statistics.median(walls)
        base = base or median
        row = (f"| {label} | {min(walls):.2f} | {median:.2f} | {median / base:.2f} | "
               f"{statistics.median(r[1] for r in runs):,.0f} |")
        print(row, flush=True)
        lines.append(row)
    notes.append(f"load average {os.getloadavg()[0]:.2f} at the end")
    lines += [""] + [f"- {note}" for note in notes]
    print("\n".join(lines[-len(notes) - 1:]))
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"(bench took {time.perf_counter() - start:.0f} s)", file=sys.stderr)
