"""Regenerate tests/data/stats_vectors.json from scipy and statsmodels.

Run: .venv/bin/python tests/data/make_stats_vectors.py  (needs scipy and statsmodels).
"""

from __future__ import annotations

import json
from pathlib import Path

import scipy
import statsmodels
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests

CONFIDENCES = (0.8, 0.9, 0.95, 0.99)
# (k, n): both ends, n = 1, small and large n, a middle value.
WILSON_COUNTS = [
    (0, 1), (1, 1), (0, 2), (1, 2), (2, 2), (0, 10), (3, 10), (10, 10),
    (17, 20), (0, 1000), (1, 1000), (850, 1000), (999, 1000), (1000, 1000),
]
MCNEMAR_PAIRS = [
    (0, 0), (0, 1), (1, 0), (0, 5), (5, 0), (3, 7), (7, 3), (4, 4), (5, 6),
    (1, 20), (50, 60), (500, 520), (30, 70), (0, 40),
]
HOLM_LISTS = [
    [],
    [0.04],
    [0.01, 0.04, 0.03, 0.005],
    [0.02, 0.02, 0.02],
    [0.01, 0.05, 0.01, 0.2, 0.05],
    [0.3, 0.999, 0.5, 1.0, 0.98],
    [0.0, 1.0, 0.5],
    [0.2, 0.25, 0.9],
    [0.3, 0.999, 0.4],
    [0.5, 0.3, 0.9],
    [0.001, 0.002, 0.003, 0.004, 0.005, 0.9, 0.95],
]


def main() -> None:
    """Write the vectors file next to this script."""
    wilson = []
    for k, n in WILSON_COUNTS:
        for c in CONFIDENCES:
            ci = binomtest(k, n).proportion_ci(confidence_level=c, method="wilson")
            wilson.append({"k": k, "n": n, "confidence": c, "low": float(ci.low), "high": float(ci.high)})
    mcnemar = [
        {"broken": b, "fixed": c, "p_value": 1.0 if b + c == 0 else float(binomtest(b, b + c, 0.5).pvalue)}
        for b, c in MCNEMAR_PAIRS
    ]
    holm = [
        {"p_values": ps, "adjusted": [float(x) for x in multipletests(ps, method="holm")[1]] if ps else []}
        for ps in HOLM_LISTS
    ]
    vectors = {
        "generator": f"tests/data/make_stats_vectors.py (scipy {scipy.__version__}, statsmodels {statsmodels.__version__})",
        "wilson": wilson,
        "mcnemar": mcnemar,
        "holm": holm,
    }
    out = Path(__file__).with_name("stats_vectors.json")
    out.write_text(json.dumps(vectors, indent=1) + "\n", "utf-8")


if __name__ == "__main__":
    main()
