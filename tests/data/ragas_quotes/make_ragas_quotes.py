"""Regenerate tests/data/ragas_quotes/ragas.json: ragas' QuotedSpansAlignment on traces.jsonl.

Run: python tests/data/ragas_quotes/make_ragas_quotes.py  (needs ragas: pip install -e '.[ragas]').
Writes ragas.json next to this script, or to the path given as its one argument.

For each trace, ragas is given what the trace holds: ``response`` = the claim,
``retrieved_contexts`` = its ``retrieved_chunks`` (an empty list when it has none). Recorded: the
spans ragas judges and, for each, whether it matched (ragas' own ``extract_quoted_spans`` and
``count_matched_spans``, the two steps of the metric), the metric's value and reason, the mean of
the values (ragas scores each sample), and the older function ``quoted_spans_alignment`` on the
whole set (a ratio over the set's spans). No model and no network: the metric is plain string
matching, and ragas' usage tracking is turned off before ragas is imported.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

os.environ["RAGAS_DO_NOT_TRACK"] = "true"  # ragas reports usage unless told not to: never from here

from ragas.metrics.collections import QuotedSpansAlignment  # noqa: E402
from ragas.metrics.collections.quoted_spans.util import count_matched_spans, extract_quoted_spans  # noqa: E402
from ragas.metrics.quoted_spans import quoted_spans_alignment  # noqa: E402

HERE = Path(__file__).resolve().parent


def outputs(traces: list[dict[str, Any]]) -> dict[str, Any]:
    """ragas' verdicts on ``traces``, as ragas.json holds them."""
    metric = QuotedSpansAlignment()  # the defaults: casefold=True, min_span_words=3
    samples = []
    for trace in traces:
        response = trace["answer_json"]["claim"]
        contexts = list(trace.get("retrieved_chunks", []))
        result = metric.score(response=response, retrieved_contexts=contexts)
        spans = extract_quoted_spans(response, min_len=metric.min_span_words)
        matched = [count_matched_spans([span], contexts, casefold=metric.casefold)[0] == 1 for span in spans]
        # The two steps give the metric's value: its matched spans over its spans, 1.0 with no span.
        assert result.value == (sum(matched) / len(matched) if matched else 1.0), (trace["qid"], result)
        samples.append({"qid": trace["qid"], "spans": spans, "matched": matched, "value": result.value,
                        "reason": result.reason})
    legacy = quoted_spans_alignment([t["answer_json"]["claim"] for t in traces],
                                    [list(t.get("retrieved_chunks", [])) for t in traces])
    return {
        "generator": f"tests/data/ragas_quotes/make_ragas_quotes.py (ragas {version('ragas')}, "
                     f"langchain-community {version('langchain-community')}, "
                     f"Python {platform.python_version()})",
        "metric": "ragas.metrics.collections.QuotedSpansAlignment() (casefold=True, min_span_words=3)",
        "samples": samples,
        "mean": sum(s["value"] for s in samples) / len(samples),
        "legacy": {"function": "ragas.metrics.quoted_spans.quoted_spans_alignment(answers, sources)", **legacy},
    }


def main(argv: list[str]) -> None:
    """Write ragas.json (or the path given)."""
    traces = [json.loads(line) for line in (HERE / "traces.jsonl").read_text("utf-8").splitlines()]
    target = Path(argv[0]) if argv else HERE / "ragas.json"
    target.write_text(json.dumps(outputs(traces), indent=1, ensure_ascii=False) + "\n", "utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
