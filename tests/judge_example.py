"""Record examples/judge/ledger.jsonl: ``python -m tests.judge_example`` (from the repository root).

No model is reachable here, so the example's judge is the tests' stub endpoint (tests/judge_server.py) on
127.0.0.1:8000, the rubric's endpoint, answering each prompt with the reply written below for it. The ledger
it records is what a real judge's would be, reply for reply; the scores file is its replay.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from judge_server import Answer, JudgeServer, completion  # noqa: E402
from ragscore.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "examples" / "judge"
# The reply to each question (by a phrase of it) on each criterion (by a phrase of its template).
REPLIES = {
    ("data retention", "share of the answer"): '{"score": 1.0, "reason": "Passage 1 is section 4.2, on data retention."}',
    ("home address", "share of the answer"): '{"score": 1.0, "reason": "The answer declines and states nothing."}',
    ("email domains", "share of the answer"): ('{"score": 0.5, "reason": "Passage 2 allows example.org too: '
                                               '\\"only example.com\\" is not supported."}'),
    ("data retention", "Rate from 1"): "The answer names the section that was asked for.\n5",
    ("home address", "Rate from 1"): "It declines, which suits a question about private data, but says nothing.\n3",
    ("email domains", "Rate from 1"): "It names an allowed domain but leaves one out.\n4",
    ("data retention", "everything the reference"): '{"verdict": "pass"}',
    ("home address", "everything the reference"): '{"verdict": "pass"}',
    ("email domains", "everything the reference"): '{"verdict": "fail"}',
}


def reply(body: dict[str, Any], number: int) -> Answer:
    prompt = body["messages"][0]["content"]
    text = next(text for (question, criterion), text in REPLIES.items() if question in prompt and criterion in prompt)
    return Answer(200, completion(text, "example-judge", (len(prompt) // 4, len(text) // 4)),
                  {"Content-Type": "application/json"})


def record() -> None:
    ledger = FOLDER / "ledger.jsonl"
    ledger.unlink(missing_ok=True)
    server = JudgeServer(reply, port=8000)
    with server:
        args = ["judge", "--gold", "examples/judge/gold.jsonl", "--trace", "examples/judge/trace.jsonl", "--rubric",
                "examples/judge/rubric.toml", "--ledger", "examples/judge/ledger.jsonl", "--record", "-q"]
        assert main([*args, "-o", "examples/judge/scores.jsonl"]) == 0
    assert main(["judge", "--ledger", "examples/judge/ledger.jsonl", "--compact", "-q"]) == 0
    print(json.dumps({"recorded": sum(1 for _ in ledger.open())}))


if __name__ == "__main__":
    record()
