"""Time the text family against the reference packages, side by side in one run.

    python bench/text.py                 # 20,000 answers, 3 repetitions
    python bench/text.py --n 5000 --repeat 1

The answers are the benchmark's own (bench/generate.py): each answered, answerable question's
claim against its reference answers. Both sides score every one of them:

  ragscore    ragscore.metrics.overlap.text_row (what the text family calls per question): SQuAD
              EM and F1, ROUGE-1/2/L/Lsum (precision, recall, F), sentence BLEU and chrF, and the
              corpus statistics, in one call
  references  rouge-score's RougeScorer.score_multi, sacrebleu's sentence_bleu and sentence_chrf,
              and the SQuAD v2.0 script's EM and F1 (its rules restated: it is not a package),
              one call each

The values are checked to agree (1e-9) before anything is timed, and the ratio printed is
ragscore's time over the references' (medians). Then each of ragscore's four metrics is timed
alone on the same answers (SQuAD, ROUGE, BLEU's statistics, chrF's statistics): where its time
goes. rouge-score and sacrebleu come with the test extra (``pip install -e '.[test]'``);
bench/run.py --text N runs the same comparison.
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import re
import statistics
import string
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "src"))

from generate import generate  # noqa: E402

from ragscore.metrics.overlap import text_metric_names, text_row  # noqa: E402
from ragscore.metrics.overlap.bleu import bleu_counts, chrf_counts  # noqa: E402
from ragscore.metrics.overlap.rouge import ROUGE_TYPES, rouge_multi  # noqa: E402
from ragscore.metrics.overlap.squad import squad_scores  # noqa: E402

_PUNCTUATION = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def _normalize(s: str) -> str:
    """The SQuAD v2.0 script's normalize_answer."""
    s = "".join(ch for ch in s.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", s).split())


def _f1(gold: str, pred: str) -> float:
    gold_toks, pred_toks = _normalize(gold).split(), _normalize(pred).split()
    common = collections.Counter(gold_toks) & collections.Counter(pred_toks)
    same = sum(common.values())
    if not gold_toks or not pred_toks:
        return float(gold_toks == pred_toks)
    if same == 0:
        return 0.0
    precision, recall = same / len(pred_toks), same / len(gold_toks)
    return 2 * precision * recall / (precision + recall)


class ReferencesMissing(Exception):
    """rouge-score or sacrebleu is not installed."""


def answers(n: int, data: Path = HERE / "out") -> list[tuple[str, list[str]]]:
    """The first ``n`` answered, answerable questions' (claim, reference answers) of the benchmark's data."""
    size = max(n * 2, 1000)
    folder = data / str(size)
    gold, trace = folder / "gold.jsonl", folder / "trace.jsonl"
    if not (gold.exists() and trace.exists()):
        generate(size, folder)
    refs = {}
    with gold.open(encoding="utf-8") as stream:
        for line in stream:
            item = json.loads(line)
            if item["answerable"]:
                refs[item["qid"]] = item["gold_answers"]
    pairs = []
    with trace.open(encoding="utf-8") as stream:
        for line in stream:
            t = json.loads(line)
            claim = t["answer_json"]["claim"]
            if t["qid"] in refs and claim != "not in context":
                pairs.append((claim, refs[t["qid"]]))
            if len(pairs) == n:
                break
    return pairs


def _cpu(run: Callable[[], object], repeat: int) -> float:
    """The median CPU seconds of ``repeat`` calls of ``run``."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return statistics.median(times)


def measure(n: int, repeat: int, data: Path = HERE / "out") -> tuple[int, dict[str, float]]:
    """Check that ragscore and the references agree on ``n`` answers, then time both and each of
    ragscore's metrics alone: (answers, CPU seconds by name: ragscore, references, squad, rouge,
    bleu, chrf). Raises ReferencesMissing without the references, SystemExit when a value differs."""
    try:
        from rouge_score.rouge_scorer import RougeScorer
        from sacrebleu import sentence_bleu, sentence_chrf
    except ImportError:
        raise ReferencesMissing("the text bench needs rouge-score and sacrebleu: pip install -e '.[test]'") from None

    scorer = RougeScorer(list(ROUGE_TYPES), use_stemmer=False)
    pairs = answers(n, data)

    def ours() -> list[tuple[float, ...]]:
        return [text_row(claim, refs) for claim, refs in pairs]

    def theirs() -> list[tuple[float, ...]]:
        out = []
        for claim, refs in pairs:
            kept = [g for g in refs if _normalize(g)] or [""]
            em = max(float(_normalize(g) == _normalize(claim)) for g in kept)
            f1 = max(_f1(g, claim) for g in kept)
            rouge = scorer.score_multi(refs, claim)
            out.append((em, f1, *(v for kind in ROUGE_TYPES for v in rouge[kind]),
                        sentence_bleu(claim, refs).score / 100, sentence_chrf(claim, refs).score / 100))
        return out

    mine, reference = ours(), theirs()
    names = text_metric_names()
    for a, b in zip(mine, reference, strict=True):
        for name, x, y in zip(names, a[:len(names)], b, strict=True):
            if abs(x - min(y, 1.0)) > 1e-9:
                raise SystemExit(f"{name}: ragscore {x!r}, reference {y!r}: not the same computation")
    # Imports and the answers are there for good: a full collection triggered in one timed call
    # would scan them (rouge-score brings nltk), charging whichever call it falls in.
    gc.collect()
    gc.freeze()
    parts: dict[str, Callable[[str, list[str]], object]] = {
        "squad": squad_scores,
        "rouge": lambda claim, refs: rouge_multi(refs, claim),
        "bleu": bleu_counts,
        "chrf": chrf_counts,
    }
    try:
        timings = {"ragscore": _cpu(ours, repeat), "references": _cpu(theirs, repeat)}
        for name, part in parts.items():
            for claim, refs in pairs[:100]:  # warm up: the first calls of a metric cost more
                part(claim, refs)
            timings[name] = _cpu(lambda part=part: [part(c, r) for c, r in pairs], repeat)  # type: ignore[misc]
    finally:
        gc.unfreeze()
    return len(pairs), timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    try:
        answered, timings = measure(args.n, args.repeat)
    except ReferencesMissing as exc:
        raise SystemExit(str(exc)) from None
    ratio = timings["ragscore"] / timings["references"]
    print(f"# text family, {answered:,} answers (CPU s, medians of {args.repeat})")
    print("| scorer | CPU s | µs per answer | × references |")
    print("|---|---:|---:|---:|")
    for name, seconds in timings.items():
        label = name if name in ("ragscore", "references") else f"ragscore's {name} alone"
        print(f"| {label} | {seconds:.2f} | {seconds / answered * 1e6:.0f} | {seconds / timings['references']:.2f} |")
    print(f"\nragscore / references: {ratio:.3f} (target <= 0.25)")


if __name__ == "__main__":
    main()
