"""The benchmark scripts run, and print what the README's performance section quotes.

They are not timed here (timings belong to bench/, as ratios in one run): a tiny run checks
that every case, the targets table and the profiles come out, so the script cannot rot
between the runs that feed the README.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_run_prints_every_case_the_targets_and_the_profiles(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "bench/run.py", "--sizes", "300", "--repeat", "1", "--cases", "floor,default,full",
         "--text", "200", "--profile", "--data", str(tmp_path)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for case in ("floor", "default", "full"):
        assert re.search(rf"^\| 300 \| [\d.]+ \| {case} \| [\d.]+ \| [\d.]+ \|", out, re.M), case
    assert "the standard-library modules every run imports" in out
    targets = out[out.index("# targets (issue 21)"):].split("\n\n")[0].splitlines()[3:]
    names = [row.split(" | ")[0].lstrip("| ") for row in targets]
    assert names[0] == "default score <= 1.0 x the floor, 300 questions"
    assert names[-1] == "start-up <= 1.5 x python -c 'import json'"
    assert all(row.endswith(("| met |", "| gap |")) for row in targets)
    if "text family: not measured" not in out:  # rouge-score and sacrebleu come with the test extra
        assert "text family <= 0.25 x the references" in names
        assert re.search(r"each metric alone, µs per answer\): chrf \d+, bleu \d+, rouge \d+, squad \d+", out)
    assert "# where the default score's time goes: one process, 300 questions" in out
    assert re.search(r"^\| \d+\.\d% \| [\d,]+ \| jsonl\.py:\d+ decode_line \|", out, re.M)
    memory = out[out.index("# what a full run holds per question"):]
    assert re.search(r"^\| [\d,]+ \| src/ragscore/metrics/families\.py: the optional families' per-question values",
                     memory, re.M)


@pytest.mark.parametrize(("ratio", "met"), [(1.0, "met"), (1.01, "gap")])
def test_a_target_is_met_only_within_its_bound(ratio: float, met: str, capsys: pytest.CaptureFixture[str]) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from run import print_targets
    finally:
        sys.path.remove(str(ROOT / "bench"))
    print_targets({(1_000_000, "default"): (ratio, 650.0, 590.0), (1_000_000, "full"): (20.0, 1100.0, 1000.0)},
                  1.5, 0.25)
    rows = capsys.readouterr().out.splitlines()[4:]
    assert rows == [
        f"| default score <= 1.0 x the floor, 1,000,000 questions | {ratio:.2f} x | {met} |",
        "| default score <= 600 MB summed over processes, 1,000,000 | RSS 650 MB, PSS 590 MB | gap |",
        "| full run < 1 GB summed over processes, 1,000,000 | RSS 1,100 MB, PSS 1,000 MB | gap |",
        "| text family <= 0.25 x the references | 0.25 x | met |",
        "| start-up <= 1.5 x python -c 'import json' | 1.50 x | met |",
    ]
