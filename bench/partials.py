"""Benchmark partial results (issue 17): a part's cost against the whole run's, and the merge.

    python bench/partials.py                        # 1M questions, 8 and 64 parts
    python bench/partials.py --size 100000 --parts 8 --merge-parts 16

On a generated run (bench/generate.py, cached under bench/out/) it measures, as wall time in
one process and as ratios measured in the same run:

  score       ragscore's default score of the whole run (JSON report), --jobs 1
  partial     ragscore partial --part 1/N of the same run: about 1/N of the scoring, plus
              reading (and skipping) the other parts' lines; ratio to score
  merge       ragscore merge of M partials of the run (made once, not timed); the merged report
              is checked to equal score's, byte for byte

and prints each as a median of --repeat runs.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import generate  # noqa: E402


def _timed(args: list[str], repeat: int) -> tuple[float, bytes]:
    times, out = [], b""
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(args, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
        if done.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr.decode()}")
        out = done.stdout
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--parts", type=int, default=8, help="N of the partial timed (part 1 of N)")
    parser.add_argument("--merge-parts", type=int, default=64, help="how many partials the merge reads")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=HERE / "out")
    args = parser.parse_args()
    folder = args.data / f"n{args.size}"
    gold, trace = folder / "gold.jsonl", folder / "trace.jsonl"
    if not gold.exists():
        generate(args.size, folder)
    ragscore = [sys.executable, "-m", "ragscore"]
    inputs = ["--gold", str(gold), "--trace", str(trace)]
    score, expected = _timed([*ragscore, *inputs, "-q", "--jobs", "1"], args.repeat)
    part, _ = _timed([*ragscore, "partial", *inputs, "-q", "--part", f"1/{args.parts}", "-o",
                      str(folder / "bench-part.json")], args.repeat)
    parts = folder / f"parts-{args.merge_parts}"
    parts.mkdir(exist_ok=True)
    paths = [parts / f"part-{i}.json" for i in range(1, args.merge_parts + 1)]
    for i, path in enumerate(paths, 1):
        if not path.exists():
            subprocess.run([*ragscore, "partial", *inputs, "-q", "--part", f"{i}/{args.merge_parts}", "-o",
                            str(path)], check=True)
    merge, merged = _timed([*ragscore, "merge", "-q", *map(str, paths)], args.repeat)
    # The merged report names the inputs as the partials saw them: compare all but the paths.
    same = merged.replace(str(folder).encode(), b"") == expected.replace(str(folder).encode(), b"")
    size = sum(path.stat().st_size for path in paths)
    print(f"{args.size:,} questions; medians of {args.repeat}")
    print(f"score (--jobs 1)        {score:8.2f} s")
    print(f"partial 1/{args.parts:<13} {part:8.2f} s  {part / score:5.2f}x score  (1/{args.parts} = "
          f"{1 / args.parts:.2f})")
    print(f"merge of {args.merge_parts} partials   {merge:8.2f} s  {merge / score:5.2f}x score  "
          f"({size / 1e6:.1f} MB of partials)")
    print(f"merged report equals score's: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
