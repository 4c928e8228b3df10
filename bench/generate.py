"""Generate a realistic, seeded gold set and trace file of N questions for the benchmark.

About 20 retrieved ids per trace, 20% unanswerable questions, 10% refusals, gold answers and
graded relevance present, a few duplicate and unknown traces and a few missing ones: the mix a
nightly job over production traces sees. ``python bench/generate.py N OUT_DIR``.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

WORDS = (
    "backup restore snapshot retention policy encryption key rotation schedule storage bucket "
    "region replica quota invoice account admin token session audit export import archive "
    "network latency cluster node upgrade version release support contract limit error"
).split()


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def generate(n: int, out: Path, seed: int = 20261122) -> tuple[Path, Path]:
    """Write ``gold.jsonl`` and ``trace.jsonl`` for ``n`` questions into ``out``; return their paths."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    gold_path, trace_path = out / "gold.jsonl", out / "trace.jsonl"
    with gold_path.open("w", encoding="utf-8") as gold, trace_path.open("w", encoding="utf-8") as trace:
        for i in range(n):
            qid = f"Q{i:07d}"
            answerable = rng.random() >= 0.2
            doc = rng.randrange(n * 3 + 10)
            cites = [f"doc{doc}#{p}" for p in range(1, rng.randint(1, 3) + 1)]
            fact = f"{_sentence(rng, 3)} {rng.randint(1, 999)}"
            item = {
                "qid": qid,
                "question": f"What does {_sentence(rng, 3)} do?",
                "answerable": answerable,
                "gold_claim_substr": [fact],
                "gold_citations": cites if answerable else [],
                "gold_relevance": {c: rng.randint(1, 3) for c in cites} if answerable else {},
                "gold_answers": [f"It sets {fact}."],
                "tags": {"lang": "en", "team": rng.choice(["core", "billing", "infra"])},
            }
            gold.write(json.dumps(item) + "\n")
            if rng.random() < 0.001:
                continue  # a missing trace
            retrieved = [f"doc{rng.randrange(n * 3 + 10)}#{rng.randint(1, 9)}" for _ in range(20)]
            if answerable and rng.random() < 0.85:
                for c in cites:
                    retrieved[rng.randrange(20)] = c
            refused = rng.random() < (0.0375 if answerable else 0.35)  # about 10% overall
            hit = rng.random() < 0.8
            claim = "not in context" if refused else (f"The value is {fact}." if rng.random() < 0.9 else _sentence(rng, 8))
            citations = [] if refused else ([cites[0]] if hit and answerable else [retrieved[rng.randrange(20)]])
            line = {"qid": qid, "question": item["question"], "retrieved_ids": retrieved,
                    "answer_json": {"claim": claim, "citations": citations}}
            text = json.dumps(line) + "\n"
            trace.write(text)
            if rng.random() < 0.001:
                trace.write(text)  # a duplicate trace (the last one counts)
            if rng.random() < 0.001:
                trace.write(json.dumps(dict(line, qid=f"X{i:07d}")) + "\n")  # an unknown trace
    return gold_path, trace_path


def main() -> None:
    """Parse the command line and generate."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int, help="number of questions")
    parser.add_argument("out", type=Path, help="output folder")
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args()
    for path in generate(args.n, args.out, args.seed):
        print(f"{path} {path.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
