"""What --metrics grounding costs on top of the default score, measured side by side (issue 34).

    python bench/grounding.py                 # 100,000 traces of 5 passages of about 1 KB, 3 repetitions
    python bench/grounding.py --size 20000 --repeat 1

It generates (once, cached under bench/out/grounding-N/) a seeded gold set and a trace file whose
traces carry the texts of the 5 passages they retrieved (``retrieved_chunks``, about 1 KB each,
drawn from a pool as large as the run, so that passages recur as they do over one corpus), and
claims of about 130 characters with numbers and quotes (some copied from a passage, some
changed, some with an e-mail address). Then it times the default score and the same score with
``--metrics grounding`` in turns (each by its least wall time over the turns; ``--format none``) and
prints what the family adds as a ratio to the default score's wall time (target <= 1.0).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORDS = ("the policy covers refunds within days of purchase and the report says revenue grew while costs fell "
         "for customers in each region where the board approved a new plan to expand service and support").split()


def _passage(rng: random.Random) -> str:
    """About 1 KB of sentences, some with numbers (percentages, amounts, years)."""
    sentences = []
    while sum(map(len, sentences)) < 1000:
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 16))]
        kind = rng.random()
        if kind < 0.2:
            words.insert(rng.randrange(len(words)), f"{rng.randint(1, 99)}.{rng.randint(0, 9)}%")
        elif kind < 0.35:
            words.insert(rng.randrange(len(words)), f"${rng.randint(1, 999):,}{rng.choice(['', 'M', ' million'])}")
        elif kind < 0.5:
            words.insert(rng.randrange(len(words)), str(rng.randint(1990, 2026)))
        sentence = " ".join(words)
        sentences.append(sentence[0].upper() + sentence[1:] + ".")
    return " ".join(sentences)


def _claim(rng: random.Random, passages: list[str]) -> str:
    """About 130 characters: a sentence, a quote (copied, or changed), a number, sometimes an address.

    The quote is cut from the passage the claim cites (the first) four times in five, else from another
    passage it retrieved (a misattributed quote); three in ten quotes are changed (unverified)."""
    source = (passages[0] if rng.random() < 0.8 else rng.choice(passages[1:])).split(". ")
    copied = rng.choice(source).rstrip(".")
    words = copied.split()
    quote = " ".join(words[: rng.randint(4, min(10, len(words)))])
    if rng.random() < 0.3:
        quote = quote.replace("the", "a", 1)
    opening = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 12)))
    parts = [opening[0].upper() + opening[1:],
             f'the passage says "{quote}"', f"by {rng.randint(1, 99)}% in {rng.randint(1990, 2026)}"]
    if rng.random() < 0.05:
        parts.append("write to someone@example.com")
    return ", ".join(parts) + "."


def generate(n: int, out: Path, seed: int = 20261128) -> tuple[Path, Path]:
    """Write ``gold.jsonl`` and ``trace.jsonl`` for ``n`` questions into ``out``; return their paths."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    pool = [_passage(rng) for _ in range(min(n, 20_000))]
    gold_path, trace_path = out / "gold.jsonl", out / "trace.jsonl"
    with gold_path.open("w", encoding="utf-8") as gold, trace_path.open("w", encoding="utf-8") as trace:
        for i in range(n):
            qid = f"Q{i:07d}"
            ids = [rng.randrange(len(pool)) for _ in range(5)]
            gold.write(json.dumps({"qid": qid, "question": f"What does the policy say about item {i}?",
                                   "answerable": True, "gold_citations": [f"p{ids[0]}"],
                                   "gold_claim_substr": ["policy"]}) + "\n")
            passages = [pool[j] for j in ids]
            refused = rng.random() < 0.1
            claim = "not in context" if refused else _claim(rng, passages)
            trace.write(json.dumps({"qid": qid, "retrieved_ids": [f"p{j}" for j in ids], "retrieved_chunks": passages,
                                    "answer_json": {"claim": claim, "citations": [] if refused else [f"p{ids[0]}"]}})
                        + "\n")
    return gold_path, trace_path


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=HERE / "out")
    args = parser.parse_args()
    folder = args.data / f"grounding-{args.size}"
    gold, trace = folder / "gold.jsonl", folder / "trace.jsonl"
    if not (gold.exists() and trace.exists()):
        generate(args.size, folder)
    base = [sys.executable, "-m", "ragscore", "--gold", str(gold), "--trace", str(trace), "-q", "--no-fail",
            "--format", "none"]
    size_mb = trace.stat().st_size / 1e6
    print(f"{args.size:,} traces of 5 passages ({size_mb:,.0f} MB); the least of {args.repeat} turns")
    print("| processes | default s | --metrics grounding s | added | × default | median of the turns' × | "
          "peak RSS MB (default, grounding) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    # The default run (as many processes as ragscore chooses: all cores for inputs this large), then one process.
    # The two commands take turns (the order swapped each time), so that a slower spell of a shared machine
    # falls on both, and each is timed by its least wall time: the turn least disturbed by other work (the
    # median ratio of the turns is printed too: on a machine shared with others it varies by a fifth).
    for label, jobs in (("default (all cores)", []), ("one (--jobs 1)", ["--jobs", "1"])):
        commands = {"default": [*base, *jobs], "grounding": [*base, *jobs, "--metrics", "grounding"]}
        walls: dict[str, list[float]] = {"default": [], "grounding": []}
        for turn in range(args.repeat):
            for name in (("default", "grounding") if turn % 2 == 0 else ("grounding", "default")):
                walls[name].append(timed(commands[name]))
        peaks = {name: peak_rss_mb(command) for name, command in commands.items()}
        default, grounding = min(walls["default"]), min(walls["grounding"])
        turns = statistics.median((g - d) / d for d, g in zip(walls["default"], walls["grounding"], strict=True))
        print(f"| {label} | {default:.2f} | {grounding:.2f} | {grounding - default:.2f} | "
              f"{(grounding - default) / default:.2f} | {turns:.2f} | {peaks['default']:,.0f}, "
              f"{peaks['grounding']:,.0f} |", flush=True)
    print("target (issue 34): the default run's × default <= 1.0")


def peak_rss_mb(cmd: list[str]) -> float:
    """The peak resident memory of a run (of its largest process), measured in a process of its own: the
    peak of a process's children is the largest of all it ever ran (GNU time is not needed: getrusage)."""
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, "
             "stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, *cmd], check=True, capture_output=True, text=True).stdout
    return int(out) / 1024


if __name__ == "__main__":
    main()
