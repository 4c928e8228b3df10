"""Benchmark ragscore against the parse floor, in one run, and print the ratios.

    python bench/run.py                      # 100k and 1M questions, 3 repetitions each
    python bench/run.py --sizes 20000 --repeat 1

For each size it generates (once, cached under bench/out/) a seeded gold set and trace file,
then measures the wall time and the peak memory (RSS, and proportional set size, which counts
the pages that forked workers share once, each summed over the process and its workers) of:

  floor     one Python process that reads both files and json.loads every line, nothing else
  default   ragscore's default score (every answer metric and its interval, gates, diagnoses;
            --format none: no report written)
  compare   ragscore compare of the trace file against itself (two runs, paired tests)
  intervals a score with the retrieval and similarity families on (most of their intervals are
            over per-question means), in one process: the seconds that summarising every
            metric's values exactly and computing every interval from the summaries add to
            scoring, as a ratio to the default score's wall time
  full      every metric family and report on: --metrics all, --per-question JSON and
            Markdown written

and prints each as a ratio to the floor and to the default score measured in the same run
(medians of the repetitions). Times come from runs that nothing watches; the peak memory from
one more run of each case, sampled every 10 ms (sampling /proc costs CPU in proportion to the
memory it reads, so it would slow the runs it times).
It also times the 3-question example against ``python -c "import json"`` (start-up: Python
itself), with compiled bytecode allowed (PYTHONDONTWRITEBYTECODE unset, as on a user's machine),
and, for scale, the standard-library modules every run imports; and the text family against
the reference packages (bench/text.py's comparison on --text answers, when rouge-score and
sacrebleu are installed).

Last it prints the performance targets (issue 21) with what this run measured: met, or the
gap. ``--profile`` adds where each gap comes from, measured in the same run: the default score's
own-time profile in one process, what one process holds per question at the end of a full
run's trace pass (tracemalloc, grouped by source file), and the text family's time by metric.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from generate import generate  # noqa: E402

INTERVALS = """
import sys, time
import ragscore.evaluate as evaluate
from ragscore.config import Overrides, load_config
from ragscore.results import Wants
from ragscore.intervals import compute_intervals
settings = load_config(Overrides(families=("retrieval", "similarity")), None).settings
summarise, spent = evaluate._summarise, [0.0]
def timed(*args):  # the exact summaries of every metric's values, made while scoring
    start = time.perf_counter()
    summarise(*args)
    spent[0] += time.perf_counter() - start
evaluate._summarise = timed
ev = evaluate.evaluate(sys.argv[1], sys.argv[2], settings, Wants())
start = time.perf_counter()
intervals = compute_intervals(ev)
print(spent[0] + time.perf_counter() - start, len(intervals))
"""

PROFILE_TIME = """
import cProfile, os, pstats, sys
from ragscore.cli import main
gold, trace = sys.argv[1:3]
profile = cProfile.Profile()
profile.enable()
main(["--gold", gold, "--trace", trace, "-q", "--no-fail", "--format", "none", "--jobs", "1"])
profile.disable()
stats = pstats.Stats(profile)
rows = sorted(stats.stats.items(), key=lambda item: -item[1][2])[:12]  # type: ignore[attr-defined]
print(stats.total_tt)  # type: ignore[attr-defined]
for (path, line, function), (_, calls, own, _, _) in rows:
    where = f"{os.path.basename(path)}:{line} {function}" if line else function  # "<built-in method ...>"
    print(f"{own}\t{calls}\t{where}")
"""

# The full run of the table, in one process, with two snapshots: before the gold set is read,
# and once every trace is joined and every missing question judged, before the rows are written.
PROFILE_MEMORY = """
import os, sys, tempfile, tracemalloc
import ragscore.evaluate as evaluate
from ragscore.cli import main
gold, trace = sys.argv[1:3]
taken = []
score_files, judge_missing = evaluate.score_files, evaluate._judge_missing
def before(*args, **keywords):
    taken.append(tracemalloc.take_snapshot())
    return score_files(*args, **keywords)
def after(*args):
    judge_missing(*args)
    taken.append(tracemalloc.take_snapshot())
evaluate.score_files, evaluate._judge_missing = before, after
tracemalloc.start()
with tempfile.TemporaryDirectory() as folder:
    main(["--gold", gold, "--trace", trace, "-q", "--no-fail", "--format", "none", "--jobs", "1", "--metrics",
          "all", "--per-question", "--json", os.path.join(folder, "r.json"), "--markdown",
          os.path.join(folder, "r.md")])
for stat in taken[1].compare_to(taken[0], "filename")[:8]:
    print(f"{stat.size_diff}\t{os.path.relpath(stat.traceback[0].filename)}")
"""

FLOOR = """
import json, sys
loads = json.loads
for name in sys.argv[1:]:
    with open(name, "rb") as f:
        for line in f:
            loads(line)
"""


def _children(pid: int) -> list[int]:
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return found


def _memory_kb(pid: int) -> tuple[int, int]:
    """Return (RSS, PSS) of a process; PSS counts pages shared by forked workers once across them."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1])
    except OSError:
        pass
    return rss, pss


ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str]) -> float:
    """Run a command unwatched; return its wall time (s)."""
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT, env=ENV)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed ({done.returncode}): {done.stderr.decode()}")
    return wall


def measure(cmd: list[str]) -> tuple[float, float, float]:
    """Run a command watched; return its wall time (s) and the peak RSS and PSS of its process tree (MB)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT, env=ENV)
    peak_rss = peak_pss = 0
    while proc.poll() is None:
        pids, tree = [proc.pid], []
        while pids:
            pid = pids.pop()
            tree.append(pid)
            pids += _children(pid)
        sizes = [_memory_kb(p) for p in tree]
        peak_rss = max(peak_rss, sum(r for r, _ in sizes))
        peak_pss = max(peak_pss, sum(p for _, p in sizes))
        time.sleep(0.01)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed ({proc.returncode}): {proc.stderr.read().decode()}")
    return wall, peak_rss / 1024, peak_pss / 1024


def script_lines(py: str, script: str, *args: str) -> list[str]:
    """Run a Python script in a fresh process (from the project's folder); return its output's lines."""
    return subprocess.run([py, "-c", script, *args], capture_output=True, text=True, check=True, cwd=ROOT,
                          env=ENV).stdout.splitlines()


def interval_seconds(py: str, gold: Path, trace: Path, repeat: int) -> tuple[float, int]:
    """Time computing every interval of a scored run (median), in a fresh process; count them."""
    times, count = [], 0
    for _ in range(repeat):
        out = script_lines(py, INTERVALS, str(gold), str(trace))[0].split()
        times.append(float(out[0]))
        count = int(out[1])
    return statistics.median(times), count


def main() -> None:
    """Parse options, run every case, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000", help="comma-separated question counts")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=HERE / "out")
    parser.add_argument("--cases", default="floor,default,compare,intervals,full",
                        help="which of floor, default, compare, intervals, full to run (intervals needs default)")
    parser.add_argument("--text", type=int, default=5000, metavar="N",
                        help="answers for the text family's comparison with the references (0: skip)")
    parser.add_argument("--profile", action="store_true", help="also print where each gap comes from")
    args = parser.parse_args()
    if "intervals" in args.cases.split(",") and "default" not in args.cases.split(","):
        parser.error("--cases: intervals is a ratio to the default score: add default")

    py = sys.executable
    env_note = f"{os.cpu_count()} cores, Python {platform.python_version()}, {platform.machine()}"
    print(f"# ragscore benchmark ({env_note}); medians of {args.repeat} runs, ratios to the floor")
    print("| questions | input MB | case | wall s | × floor | × default | peak RSS MB | peak PSS MB |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|")
    figures = []
    measured: dict[tuple[int, str], tuple[float, float, float]] = {}  # (size, case) -> (× floor, RSS, PSS)
    for n in (int(s) for s in args.sizes.split(",")):
        folder = args.data / str(n)
        gold, trace = folder / "gold.jsonl", folder / "trace.jsonl"
        if not (gold.exists() and trace.exists()):
            generate(n, folder)
        size_mb = (gold.stat().st_size + trace.stat().st_size) / 1e6
        base = [py, "-m", "ragscore", "--gold", str(gold), "--trace", str(trace), "-q", "--no-fail"]
        cases = {
            "floor": [py, "-c", FLOOR, str(gold), str(trace)],
            "default": base + ["--format", "none"],
            "compare": [py, "-m", "ragscore", "compare", "--gold", str(gold), "--baseline", str(trace), "--trace",
                        str(trace), "-q", "--no-fail", "--format", "none"],
            "full": base + ["--format", "none", "--metrics", "all", "--per-question",
                            "--json", str(folder / "report.json"), "--markdown", str(folder / "report.md")],
        }
        floor_wall = default_wall = None
        for name, cmd in cases.items():
            if name not in args.cases.split(",") and name != "floor":
                continue
            wall = statistics.median(timed(cmd) for _ in range(args.repeat))
            _, rss, pss = measure(cmd)  # a separate run: sampling its memory costs CPU
            floor_wall = floor_wall or wall
            if name == "default":
                default_wall = wall
            measured[n, name] = (wall / floor_wall, rss, pss)
            versus = f"{wall / default_wall:.2f}" if default_wall and name != "floor" else ""
            print(f"| {n:,} | {size_mb:,.0f} | {name} | {wall:.2f} | {wall / floor_wall:.2f} | {versus} | {rss:,.0f} | "
                  f"{pss:,.0f} |", flush=True)
        if "intervals" in args.cases.split(","):
            figures.append((n, *interval_seconds(py, gold, trace, args.repeat), default_wall))
    for n, seconds, count, default_wall in figures:
        print(f"\n{n:,} questions: summarising the values and computing all {count} intervals (--metrics "
              f"retrieval,similarity) take {seconds:.3f} s in one process, {seconds / default_wall:.3f} x the default "
              "score's wall time")
    small = [py, "-m", "ragscore", "--gold", "examples/gold.jsonl", "--trace", "examples/trace.jsonl"]
    timed(small)  # writes the bytecode caches, as a first run on a user's machine does
    imported = script_lines(py, STDLIB, *small[3:])[-1].split(",")
    stdlib = [py, "-c", f"import {', '.join(imported)}"]
    walls = {name: statistics.median(timed(cmd) for _ in range(max(args.repeat, 11)))
             for name, cmd in (("example", small), ("python", [py, "-c", "import json"]), ("stdlib", stdlib))}
    startup = walls["example"] / walls["python"]
    print(f"\n3-question example: {walls['example']:.3f} s wall (median), python -c 'import json' "
          f"{walls['python']:.3f} s: {startup:.2f} x (target <= 1.5); the {len(imported)} standard-library modules "
          f"it imports take {walls['stdlib'] / walls['python']:.2f} x by themselves")
    text = text_ratio(args.text, args.repeat, args.profile, args.data) if args.text else None
    print_targets(measured, startup, text)
    if args.profile:
        sizes = sorted({n for n, _ in measured})
        if sizes:
            profile_default(py, args.data / str(sizes[0]), sizes[0])
            profile_memory(py, args.data / str(sizes[0]), sizes[0])


# What the allocations made in each source file hold (profile_memory).
HELD = {
    "loaders/jsonl.py": "decoded text: the gold fields kept (qid, question, ids, grades, reference answers), the "
                        "trace's claim and cited ids",
    "metrics/families.py": "the optional families' per-question values",
    "loaders/gold.py": "gold items",
    "metrics/answer.py": "outcomes (labels and their evidence, for the rows)",
    "evaluate.py": "the join's per-question arrays and lists",
}
# Prints the standard-library modules a run imports (its start-up's floor, without ragscore's own).
STDLIB = """
import runpy, sys
sys.argv[0] = "ragscore"
try:
    runpy.run_module("ragscore", run_name="__main__")
except SystemExit:
    pass
print(",".join(sorted(name for name in sys.modules if name in sys.stdlib_module_names and name != "__main__")))
"""
MILLION = 1_000_000


def text_ratio(n: int, repeat: int, breakdown: bool, data: Path) -> float | None:
    """bench/text.py's comparison on ``n`` answers: ragscore's CPU time over the references'
    (None when the references are not installed; values that differ end the bench)."""
    from text import ReferencesMissing, measure

    try:
        answered, timings = measure(n, repeat, data)
    except ReferencesMissing as exc:
        print(f"\ntext family: not measured ({exc})")
        return None
    ratio = timings["ragscore"] / timings["references"]
    print(f"\ntext family, {answered:,} answers: ragscore {timings['ragscore'] / answered * 1e6:.0f} µs per answer, "
          f"the references {timings['references'] / answered * 1e6:.0f} µs: {ratio:.2f} x (target <= 0.25)")
    if breakdown:
        print("  where ragscore's time goes (each metric alone, µs per answer): " + ", ".join(
            f"{name} {timings[name] / answered * 1e6:.0f}" for name in ("chrf", "bleu", "rouge", "squad")))
    return ratio


def print_targets(measured: dict[tuple[int, str], tuple[float, float, float]], startup: float,
                  text: float | None) -> None:
    """Print each target of issue 21 with what this run measured: met, the gap, or not measured.

    Memory is summed RSS (a page the forked workers share counts once per process), the
    stricter of the two sums; values are compared as printed.
    """
    def row(target: str, value: str | None, met: bool) -> None:
        verdict = "not measured" if value is None else "met" if met else "gap"
        print(f"| {target} | {value or '-'} | {verdict} |")

    print("\n# targets (issue 21)\n| target | this run | |\n|---|---|---|")
    for n in (100_000, MILLION):
        ratio = measured.get((n, "default"), (None,))[0]
        shown = None if ratio is None else f"{ratio:.2f} x"
        row(f"default score <= 1.0 x the floor, {n:,} questions", shown, ratio is not None and round(ratio, 2) <= 1.0)
    for case, bound, target in (("default", 600, "default score <= 600 MB"), ("full", 1024, "full run < 1 GB")):
        _, rss, pss = measured.get((MILLION, case), (None, None, None))
        shown = None if rss is None else f"RSS {rss:,.0f} MB, PSS {pss:,.0f} MB"
        met = rss is not None and (round(rss) <= bound if case == "default" else round(rss) < bound)
        row(f"{target} summed over processes, {MILLION:,} questions", shown, met)
    row("text family <= 0.25 x the references", None if text is None else f"{text:.2f} x",
        text is not None and round(text, 2) <= 0.25)
    row("start-up <= 1.5 x python -c 'import json'", f"{startup:.2f} x", round(startup, 2) <= 1.5)


def profile_default(py: str, folder: Path, n: int) -> None:
    """Print the default score's own-time profile in one process (cProfile)."""
    out = script_lines(py, PROFILE_TIME, str(folder / "gold.jsonl"), str(folder / "trace.jsonl"))
    total = float(out[0])
    print(f"\n# where the default score's time goes: one process, {n:,} questions, cProfile "
          f"({total:.2f} s with the profiler's overhead), own time\n| share | calls | function |\n|---:|---:|---|")
    for row in out[1:]:
        own, calls, where = row.split("\t")
        print(f"| {float(own) / total:.1%} | {int(calls):,} | {where} |")


def profile_memory(py: str, folder: Path, n: int) -> None:
    """Print what the full run holds per question once its traces are joined (one process, tracemalloc)."""
    size = min(n, 20_000)
    small = folder.parent / str(size)
    if not (small / "gold.jsonl").exists():
        generate(size, small)
    out = script_lines(py, PROFILE_MEMORY, str(small / "gold.jsonl"), str(small / "trace.jsonl"))
    rows = [(int(grown), where) for grown, where in (line.split("\t") for line in out)]
    total = sum(grown for grown, _ in rows)
    print(f"\n# what the full run holds per question once its traces are joined: one process, {size:,} "
          f"questions, allocated since before the gold set was read (tracemalloc, the top files: "
          f"{total / size:,.0f} bytes per question, {total / size * MILLION / 2**30:.2f} GiB at a million)\n"
          "| bytes per question | allocated in |\n|---:|---|")
    for grown, where in rows:
        what = next((label for end, label in HELD.items() if where.endswith(end)), "")
        print(f"| {grown / size:,.0f} | {where}{': ' + what if what else ''} |")


if __name__ == "__main__":
    main()
