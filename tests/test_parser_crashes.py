"""Inputs that crashed parsers (issue 31): each is now one error at its line (status 2), a note, or the
number trec_eval reads, and never a traceback.

History lines nested 100,000 deep or holding a 5,000-digit integer (whole, or torn at the end);
``power`` at a confidence whose 1 - alpha/2 rounds to 1 and for a change too small to count;
``trec`` numbers read as trec_eval's C code reads them (``atol``, ``atof``); OpenInference and
OTLP spans whose ids are not text or whose times are not 64-bit; flattened attributes whose
indices would fill memory.
"""

from __future__ import annotations

import json
import math
from statistics import NormalDist
from typing import Any

import pytest

from conftest import EXAMPLES
from ragscore.errors import UsageError
from ragscore.metrics import power as power_module
from ragscore.suite import history

PRODUCT = EXAMPLES / "product"


# --- history and dashboard ---------------------------------------------------------------------------

def history_record(label: str = "v1", breakdown: object = None) -> dict[str, Any]:
    task: dict[str, Any] = {"command": "score", "status": "pass", "metrics": {"m": 0.5}, "key_metrics": ["m"]}
    if breakdown is not None:
        task["breakdown"] = {"x": breakdown}
    return {"ragscore_history": 1, "label": label, "time": None, "pass": True, "tasks": {"t": task}}


def nested_lists(levels: int) -> object:
    value: object = []
    for _ in range(levels - 1):
        value = [value]
    return value


DEEP = "[" * 100_000 + "]" * 100_000
DIGITS = '{"ragscore_history": 1, "n": ' + "9" * 5000 + "}"


@pytest.mark.parametrize(("line", "message"), [
    (DEEP, "h.jsonl:2: JSON nested too deeply to read: not a ragscore history line"),
    (DIGITS, "h.jsonl:2: JSON with an integer of too many digits to read: not a ragscore history line"),
    # A record is the first level, its tasks the second, ...: 61 lists under a task's breakdown make 65.
    (json.dumps(history_record("v2", nested_lists(61))),
     "h.jsonl:2: a history record nested deeper than 64 levels: not one ragscore run wrote"),
])
def test_a_history_line_python_cannot_read_is_an_error_at_its_line(ragscore, isolated, line, message):
    log = isolated / "h.jsonl"
    log.write_text(json.dumps(history_record()) + "\n" + line + "\n", encoding="utf-8")
    run = ragscore("dashboard", "h.jsonl", "--format", "none")
    assert (run.status, run.out, run.err) == (2, "", f"ragscore: error: {message}\n")
    with pytest.raises(UsageError) as caught:
        history.check_appendable("h.jsonl")
    assert str(caught.value) == (f'--history "h.jsonl": is not a ragscore history ({message}); name a new file or '
                                 "a history ragscore run wrote")


def test_a_record_64_levels_deep_is_read():
    record = history_record("v1", nested_lists(60))  # 4 levels to the breakdown's value, 60 lists in it
    assert history._too_deep(record) is False
    assert history._too_deep(history_record("v1", nested_lists(61))) is True


@pytest.mark.parametrize("tail", [DEEP[:150_000], DEEP, DIGITS, DIGITS[:4500]])
def test_an_unreadable_torn_last_line_is_skipped_and_cut_off_as_a_torn_line_is(ragscore, isolated, tail):
    log = isolated / "h.jsonl"
    first = history.encode(history_record())
    log.write_bytes(first + tail.encode())  # no newline: what a run killed while writing leaves
    run = ragscore("dashboard", "h.jsonl", "--format", "none")
    assert (run.status, run.err) == (
        0, "ragscore: h.jsonl: 1 incomplete line skipped (a run stopped while writing it?): line 2\n")
    assert history.check_appendable("h.jsonl") == [
        "h.jsonl: 1 incomplete line skipped (a run stopped while writing it?): line 2"]
    history.append("h.jsonl", history_record("v2"))
    assert log.read_bytes() == first + history.encode(history_record("v2"))


# --- power ---------------------------------------------------------------------------------------------

def test_a_confidence_whose_upper_quantile_rounds_to_one_reads_the_lower_tail():
    alpha = 1 - 0.9999999999999999
    assert 1 - alpha / 2 == 1.0  # inv_cdf(1.0) is its pole: the crash
    z = power_module._z(alpha)
    assert z == -NormalDist().inv_cdf(alpha / 2) and 8 < z < 9
    assert power_module._z(0.05) == NormalDist().inv_cdf(0.975)  # elsewhere the same bits as before
    sigma, n = 0.4, 100
    mde = power_module.detectable(sigma, n, alpha)
    assert mde is not None and power_module.power(mde, sigma, n, alpha) == pytest.approx(0.8, abs=1e-9)


def test_ragscore_power_at_confidence_0_9999999999999999(ragscore):
    run = ragscore("power", "--gold", PRODUCT / "gold.jsonl", "--trace", PRODUCT / "trace.jsonl", "--confidence",
                   "0.9999999999999999", "--format", "json")
    assert run.status == 0
    spread = [row for row in json.loads(run.out)["metrics"].values() if row["sd"]]  # none without a spread
    assert len(spread) >= 3 and all(math.isfinite(row["detectable"]) and row["needed"] > 0 for row in spread)


def test_a_change_too_small_to_count_is_a_usage_error(ragscore):
    message = ("a change of 1e-300 is too small to detect: it needs more than 1e+300 questions (give a larger "
               "--detect or [regression] bound)")
    with pytest.raises(UsageError) as caught:
        power_module.needed(1e-300, 0.4, 0.05)
    assert str(caught.value) == message
    run = ragscore("power", "--gold", PRODUCT / "gold.jsonl", "--trace", PRODUCT / "trace.jsonl", "--detect",
                   "1e-300")
    assert (run.status, run.out, run.err) == (2, "", f"ragscore: error: {message}\n")
    with pytest.raises(UsageError, match="a change of 4.94066e-324 is too small"):
        power_module.needed(5e-324, 0.4, 0.05)
    # Just inside the bound the count is finite (a float's digits).
    assert math.isfinite(power_module.needed(3e-150, 0.4, 0.05) or math.nan)


def test_compare_with_a_regression_bound_too_small_to_count(ragscore, isolated):
    (isolated / "g.toml").write_text("[regression]\nprecision = 1e-300\n")
    run = ragscore("compare", "--gold", PRODUCT / "gold.jsonl", "--baseline", PRODUCT / "baseline.jsonl", "--trace",
                   PRODUCT / "trace.jsonl", "--gates-file", "g.toml", "--format", "none")
    assert (run.status, run.out, run.err) == (2, "", "ragscore: error: a change of 1e-300 is too small to detect: it "
                                                     "needs more than 1e+300 questions (give a larger --detect or "
                                                     "[regression] bound)\n")


def test_a_power_under_alpha_detects_no_change_rather_than_a_negative_one():
    assert power_module.detectable(0.4, 30, 0.05, 1e-300) == pytest.approx(0.0, abs=1e-12)  # was -0.28
    assert power_module.detectable(0.4, 30, 0.05, 0.05) == pytest.approx(0.0, abs=1e-12)
    assert power_module.needed(1e-300, 0.4, 0.05, 1e-300) == pytest.approx(1e-9)  # any size: the least one
