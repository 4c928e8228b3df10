"""ragscore judge (issue 37): LLM-judge scores recorded in a ledger against a real HTTP server, replayed offline.

The server (tests/judge_server.py) is a stub on 127.0.0.1 whose requests are checked and whose replies are built
with the openai SDK's types. Replay is checked to open no socket at all.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from judge_server import Answer, JudgeServer, completion, error, scored
from ragscore.errors import UsageError
from ragscore.judging.api import judge
from ragscore.judging.ledger import judgment_key, read_ledger
from ragscore.judging.replies import read_score
from ragscore.loaders.scores import load_scores

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-test-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
GOLD = [
    {"qid": "q1", "question": "What is the capital of France?", "answerable": True,
     "gold_claim_substr": ["Paris"], "gold_answers": ["Paris is the capital of France."]},
    {"qid": "q2", "question": "How long is the warranty?", "answerable": True,
     "gold_claim_substr": ["two years"], "gold_claim": "The warranty lasts two years."},
    {"qid": "q3", "question": "Who won in 1900?", "answerable": False},
    {"qid": "q4", "question": "Never traced?", "answerable": True, "gold_claim_substr": ["x"]},
]
TRACES = [
    {"qid": "q1", "retrieved_ids": [{"id": "d1", "text": "Paris is the capital and largest city of France."},
                                    {"id": "d2", "text": "Lyon is a city in France."}],
     "answer_json": {"claim": "Paris.", "citations": ["d1"]}},
    {"qid": "q2", "retrieved_ids": [{"id": "d3", "text": "The warranty lasts three years."}],
     "answer_json": {"claim": "It lasts two years.", "citations": ["d3"]}},
    {"qid": "q3", "retrieved_ids": [], "answer_json": {"claim": "not in context", "citations": []}},
]
RUBRIC = '''[judge]
model = "judge-small"
temperature = 0
max_tokens = 50

[criteria.faithful]
template = """Question: {question}
Answer: {answer}
Passages:
{contexts}
Reply {{"score": 1}} when the passages support the answer, else {{"score": 0}}."""
scale = "pass/fail"
json_field = "score"

[criteria.correct]
template = "Reference: {reference}\\nAnswer: {answer}\\nScore 1 to 5 as JSON {{\\"score\\": N}}."
scale = "1-5"
json_field = "score"
'''


def supported(prompt: str) -> object:
    """The stub judge: passes an answer its passages support (Paris), scores 5 for Paris on the 1-5 scale."""
    if "Score 1 to 5" in prompt:
        return 5 if "Paris" in prompt.split("Answer:")[1] else 2
    return 1 if "Answer: Paris." in prompt else 0


def write_lines(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def inputs(isolated: Path) -> Path:
    write_lines(isolated / "gold.jsonl", GOLD)
    write_lines(isolated / "trace.jsonl", TRACES)
    (isolated / "rubric.toml").write_text(RUBRIC, encoding="utf-8")
    return isolated


def run_judge(server_url: str | None, mode: str | None = None, environ: dict[str, str] | None = None,
              **more: Any) -> Any:
    options = {"rubric": "rubric.toml", "ledger": "ledger.jsonl", "endpoint": server_url or "http://127.0.0.1:9/v1",
               "mode": mode, "environ": {"RAGSCORE_JUDGE_API_KEY": KEY} if environ is None else environ,
               "sleep": lambda seconds: None, **more}
    return judge("gold.jsonl", "trace.jsonl", **options)


def test_record_then_replay_gives_the_same_scores_with_the_server_stopped(inputs: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    with JudgeServer(scored(supported)) as server:
        recorded = run_judge(server.url, "record")
        url = server.url
        bodies = [body for body, _ in server.requests]
        headers = [h for _, h in server.requests]
    assert recorded.scores == {"q1": {"faithful": 1.0, "correct": 5.0}, "q2": {"faithful": 0.0, "correct": 2.0},
                               "q3": {"faithful": 0.0, "correct": 2.0}, "q4": {"faithful": None, "correct": None}}
    assert recorded.counts == {"questions": 4, "untraced": 1, "judgments": 6, "from_ledger": 0, "called": 6,
                               "failed": 0, "unjudged": 0}
    # What was asked: the rubric's parameters, the template filled with the question's texts.
    assert {json.dumps({k: v for k, v in b.items() if k != "messages"}, sort_keys=True) for b in bodies} == {
        '{"max_tokens": 50, "model": "judge-small", "temperature": 0.0}'}
    prompts = {b["messages"][0]["content"] for b in bodies}
    assert ("Question: What is the capital of France?\nAnswer: Paris.\nPassages:\n[1] Paris is the capital and "
            'largest city of France.\n\n[2] Lyon is a city in France.\nReply {"score": 1} when the passages support '
            'the answer, else {"score": 0}.') in prompts
    assert "Reference: Paris is the capital of France.\nAnswer: Paris.\nScore 1 to 5 as JSON {\"score\": N}." in prompts
    assert any(p.startswith("Reference: The warranty lasts two years.") for p in prompts)  # gold_claim: the reference
    assert all(h["Authorization"] == f"Bearer {KEY}" for h in headers)
    ledger = read_ledger("ledger.jsonl")
    assert len(ledger.records) == 6 and all(r["answered_by"] == "judge-small-2026-01-01" for r in
                                            ledger.records.values())
    assert all({k: r["usage"][k] for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
               == {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15} for r in ledger.records.values())

    def no_socket(*args: object, **kwargs: object) -> None:
        raise AssertionError("replay opened a socket")

    monkeypatch.setattr(socket.socket, "connect", no_socket)
    monkeypatch.setattr(socket, "create_connection", no_socket)
    replayed = run_judge(url, "replay")
    assert replayed.scores == recorded.scores
    assert replayed.counts["from_ledger"] == 6 and replayed.counts["called"] == 0
    assert list(replayed.lines()) == list(recorded.lines())
    # In CI (CI or GITHUB_ACTIONS set) replay is the default: no socket either.
    for environ in ({"CI": "true"}, {"GITHUB_ACTIONS": "true"}):
        assert run_judge(url, None, environ=environ).scores == recorded.scores


def test_a_changed_model_rubric_text_or_parameter_misses_the_ledger(inputs: Path) -> None:
    with JudgeServer(scored(supported)) as server:
        run_judge(server.url, "record")
        assert len(server.requests) == 6
        assert run_judge(server.url, "record").counts["called"] == 0  # all in the ledger
        assert len(server.requests) == 6
        changed = run_judge(server.url, "replay", model="judge-large")
        assert changed.counts["unjudged"] == 6 and changed.counts["from_ledger"] == 0
        assert all(v is None for row in changed.scores.values() for v in row.values())
        for old, new in (("temperature = 0", "temperature = 0.5"), ("Passages:", "Evidence:"),
                         ('scale = "1-5"', 'scale = "0-1"'), ("max_tokens = 50", "max_tokens = 60")):
            (inputs / "rubric.toml").write_text(RUBRIC.replace(old, new), encoding="utf-8")
            missed = run_judge(server.url, "replay")
            assert missed.counts["unjudged"] > 0, new
        # Another endpoint (its base URL is in the key) misses too.
        (inputs / "rubric.toml").write_text(RUBRIC, encoding="utf-8")
        assert run_judge(server.url.replace("127.0.0.1", "localhost"), "replay").counts["unjudged"] == 6
        assert run_judge(server.url, "replay").counts["unjudged"] == 0


def test_retry_after_500_and_timeouts(inputs: Path) -> None:
    waits: list[float] = []

    def script(body: dict[str, Any], number: int) -> Answer:
        if number == 1:
            return Answer(429, b'{"error": {"message": "slow down"}}', {"Retry-After": "7"})
        if number == 2:
            return Answer(503, b"upstream busy")
        return scored(supported)(body, number)

    with JudgeServer(script) as server:
        result = run_judge(server.url, "record", jobs=1, sleep=waits.append)
    assert waits == [7.0, 2.0]  # the server's Retry-After, then the second try's backoff (1, 2, 4, ...)
    assert result.counts["failed"] == 0 and result.counts["called"] == 6

    always = Answer(500, b"internal error")
    with JudgeServer(lambda body, number: always) as server:
        waits.clear()
        result = run_judge(server.url, "record", jobs=1, retries=2, sleep=waits.append, ledger="l500.jsonl")
        assert len(server.requests) == 6 * 3
    assert waits == [1.0, 2.0] * 6
    assert result.counts["failed"] == 6 and not read_ledger("l500.jsonl").records  # no reply: nothing recorded
    assert result.failed[0] == ("q1", "faithful", "HTTP 500: internal error (3 tries)")

    slow = Answer(200, completion('{"score": 1}', "m"), delay=1.5)
    with JudgeServer(lambda body, number: slow) as server:
        result = run_judge(server.url, "record", timeout=0.2, retries=1, ledger="slow.jsonl")
    assert result.counts["failed"] == 6
    assert result.failed[0][2] == "no reply within 0.2 s (2 tries)"


def test_malformed_replies_and_scores_off_the_scale_are_counted_failures(inputs: Path) -> None:
    def script(body: dict[str, Any], number: int) -> Answer:
        prompt = body["messages"][0]["content"]
        if "Paris." in prompt and "Score 1 to 5" in prompt:
            return Answer(200, completion('{"score": 7}', "m"))  # off the 1-5 scale
        if "two years" in prompt and "Score 1 to 5" in prompt:
            return Answer(200, b"<html>gateway</html>")  # not JSON at all
        if "two years" in prompt:
            return Answer(200, b'{"choices": []}')  # JSON, but no chat completion
        if "not in context" in prompt and "Score 1 to 5" in prompt:
            return Answer(200, completion("I think it deserves a good score.", "m"))  # no JSON object
        return scored(supported)(body, number)

    with JudgeServer(script) as server:
        result = run_judge(server.url, "record")
    reasons = {(q, c): why for q, c, why in result.failed}
    assert reasons == {
        ("q1", "correct"): "7 is outside the scale 1-5 (a whole number from 1 to 5)",
        ("q2", "correct"): "the reply is not JSON: <html>gateway</html>",
        ("q2", "faithful"): "the reply is not a chat completion with a message's text (choices[0].message.content)",
        ("q3", "correct"): "the reply is not a JSON object",
    }
    assert result.scores["q1"] == {"faithful": 1.0, "correct": None}
    # A reply whose score cannot be read is recorded with its reason, and replayed as the same failure...
    ledger = read_ledger("ledger.jsonl")
    assert sorted(r["error"] for r in ledger.records.values() if r["error"]) == [
        "7 is outside the scale 1-5 (a whole number from 1 to 5)", "the reply is not a JSON object"]
    replayed = run_judge(server.url, "replay")
    assert {(q, c) for q, c, _ in replayed.failed} == {("q1", "correct"), ("q3", "correct")}
    assert {(q, c) for q, c in replayed.unjudged} == {("q2", "correct"), ("q2", "faithful")}


def test_a_failed_reply_is_asked_again_when_recording(inputs: Path) -> None:
    answers = iter([completion('{"score": 9}', "m")])

    def script(body: dict[str, Any], number: int) -> Answer:
        if "Paris." in body["messages"][0]["content"] and "Score 1 to 5" in body["messages"][0]["content"]:
            data = next(answers, None)
            if data is not None:
                return Answer(200, data)
        return scored(supported)(body, number)

    with JudgeServer(script) as server:
        first = run_judge(server.url, "record")
        assert first.scores["q1"]["correct"] is None
        second = run_judge(server.url, "record")
        assert second.scores["q1"]["correct"] == 5.0 and second.counts["called"] == 1
    assert read_ledger("ledger.jsonl").count == 7  # the failed record stays; the later one wins


def test_the_endpoint_refusing_the_key_stops_the_run(inputs: Path, ragscore) -> None:
    with JudgeServer(lambda body, number: error(401, f"Incorrect API key provided: {KEY}")) as server:
        with pytest.raises(UsageError) as caught:
            run_judge(server.url, "record")
        run = ragscore("judge", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--rubric", "rubric.toml",
                       "--ledger", "ledger.jsonl", "--endpoint", server.url, "--record")
    assert KEY not in str(caught.value)
    assert "the endpoint refused the key (HTTP 401: Incorrect API key provided: [key])" in str(caught.value)
    assert run.status == 2 and run.out == "" and run.err.count("\n") == 1 and "Traceback" not in run.err


def test_the_key_never_appears_in_any_output(inputs: Path, monkeypatch: pytest.MonkeyPatch, ragscore) -> None:
    monkeypatch.setenv("RAGSCORE_JUDGE_API_KEY", KEY)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)

    def echo(body: dict[str, Any], number: int) -> Answer:  # a server that echoes the key wherever it can
        prompt = body["messages"][0]["content"]
        if "Score 1 to 5" in prompt and "Paris" in prompt:
            return Answer(500, f"bad key {KEY}".encode())
        if "Score 1 to 5" in prompt:
            return Answer(200, completion(f"The key was {KEY}, score 9", "m"))
        if "two years" in prompt:
            return Answer(200, f"not json {KEY}".encode())
        return Answer(200, completion(json.dumps({"score": 1, "key": KEY}), KEY))

    with JudgeServer(echo) as server:
        run = ragscore("judge", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--rubric", "rubric.toml",
                       "--ledger", "ledger.jsonl", "--endpoint", server.url, "--retries", "0", "-o", "scores.jsonl")
        assert all(h["Authorization"] == f"Bearer {KEY}" for _, h in server.requests)
    assert run.status == 0
    for text in (run.out, run.err, Path("ledger.jsonl").read_text(), Path("scores.jsonl").read_text()):
        assert KEY not in text
    assert "[key]" in Path("ledger.jsonl").read_text()  # scrubbed where the server wrote it
    assert "HTTP 500: bad key [key] (1 tries)" in run.err


def test_a_killed_run_leaves_a_ledger_the_next_run_resumes(inputs: Path) -> None:
    slow = scored(supported)

    def script(body: dict[str, Any], number: int) -> Answer:
        answer = slow(body, number)
        answer.delay = 0.4
        return answer

    with JudgeServer(script) as server:
        process = subprocess.Popen(
            [sys.executable, "-m", "ragscore", "judge", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--rubric",
             "rubric.toml", "--ledger", "ledger.jsonl", "--endpoint", server.url, "--record", "--jobs", "1", "-q"],
            cwd=inputs, env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if Path("ledger.jsonl").exists() and Path("ledger.jsonl").read_bytes().count(b"\n") >= 2:
                break
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait()
        kept = read_ledger("ledger.jsonl")
        assert 2 <= len(kept.records) < 6
        with open("ledger.jsonl", "ab") as ledger:  # as if killed in the middle of a write
            ledger.write(b'{"answered_by":"judge-sm')
        asked_before = len(server.requests)
        resumed = run_judge(server.url, "record")
        assert resumed.counts["from_ledger"] == len(kept.records)
        assert resumed.counts["called"] == 6 - len(kept.records)
        assert len(server.requests) - asked_before == 6 - len(kept.records)
    assert read_ledger("ledger.jsonl").skipped == []  # the torn line was cut before the next append
    assert len(read_ledger("ledger.jsonl").records) == 6
    assert resumed.counts["failed"] == 0 and resumed.scores["q1"] == {"faithful": 1.0, "correct": 5.0}


def test_compact_writes_canonical_bytes(inputs: Path, ragscore) -> None:
    with JudgeServer(scored(supported)) as server:
        run_judge(server.url, "record", jobs=4)
    lines = Path("ledger.jsonl").read_bytes().splitlines(keepends=True)
    Path("other.jsonl").write_bytes(b"".join(reversed(lines)) + lines[0])  # another order, a duplicate
    for name in ("ledger.jsonl", "other.jsonl"):
        run = ragscore("judge", "--ledger", name, "--compact")
        assert run.status == 0
    assert Path("ledger.jsonl").read_bytes() == Path("other.jsonl").read_bytes()
    keys = [json.loads(line)["key"] for line in Path("ledger.jsonl").read_text().splitlines()]
    assert keys == sorted(keys) and len(keys) == 6
    assert "7 records compacted to 6" in run.err


def test_the_scores_file_names_the_judge_and_score_takes_it(inputs: Path, ragscore) -> None:
    with JudgeServer(scored(supported)) as server:
        run = ragscore("judge", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--rubric", "rubric.toml",
                       "--ledger", "ledger.jsonl", "--endpoint", server.url, "--record", "-o", "scores.jsonl")
        host = server.url.split("/")[2]
    assert run.status == 0 and run.out == ""
    lines = Path("scores.jsonl").read_text().splitlines()
    header = json.loads(lines[0])["ragscore_judge"]
    assert header["endpoint"] == host and header["model"] == "judge-small"
    assert header["criteria"] == {"faithful": "pass/fail", "correct": "1-5"}
    assert [json.loads(line) for line in lines[1:]] == [
        {"qid": "q1", "faithful": 1.0, "correct": 5.0}, {"qid": "q2", "faithful": 0.0, "correct": 2.0},
        {"qid": "q3", "faithful": 0.0, "correct": 2.0}, {"qid": "q4", "faithful": None, "correct": None}]
    assert load_scores("scores.jsonl").judge is not None
    scored_run = ragscore("--gold", "gold.jsonl", "--trace", "trace.jsonl", "--scores", "scores.jsonl")
    report = json.loads(scored_run.out)
    assert report["metrics"]["faithful"] == pytest.approx(1 / 3) and report["metrics"]["correct"] == 3.0
    assert report["settings"]["judge"] == {"endpoint": host, "model": "judge-small", "rubric": header["rubric"]}
    assert f'judge:{{"endpoint": "{host}"' in report["signature"]


def test_compare_refuses_runs_judged_differently_unless_allowed(inputs: Path, ragscore) -> None:
    with JudgeServer(scored(supported)) as server:
        common = ["judge", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--rubric", "rubric.toml", "--ledger",
                  "ledger.jsonl", "--endpoint", server.url, "--record"]
        assert ragscore(*common, "-o", "small.jsonl").status == 0
        assert ragscore(*common, "--model", "judge-large", "-o", "large.jsonl").status == 0
    both = ["compare", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--baseline", "trace.jsonl", "--format",
            "none"]
    same = ragscore(*both, "--scores", "small.jsonl", "--baseline-scores", "small.jsonl")
    assert same.status == 0
    refused = ragscore(*both, "--scores", "large.jsonl", "--baseline-scores", "small.jsonl")
    assert refused.status == 2 and "judged differently" in refused.err and '"judge-small"' in refused.err
    allowed = ragscore(*both, "--scores", "large.jsonl", "--baseline-scores", "small.jsonl", "--allow-judge-change")
    assert allowed.status == 0 and "the runs were judged differently" in allowed.err
    # A committed baseline report carries its judge in its settings.
    assert ragscore("--gold", "gold.jsonl", "--trace", "trace.jsonl", "--scores", "small.jsonl", "--per-question",
                    "--json", "base.json", "--format", "none", "--no-fail").status == 0
    against = ["compare", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--baseline-report", "base.json",
               "--format", "json"]
    assert ragscore(*against, "--scores", "small.jsonl").status == 0
    refused = ragscore(*against, "--scores", "large.jsonl")
    assert refused.status == 2 and "the baseline report's scores were judged differently" in refused.err
    allowed = ragscore(*against, "--scores", "large.jsonl", "--allow-judge-change")
    assert allowed.status == 0
    assert "correct" in json.loads(allowed.out)["metrics"]


def test_replay_without_the_judgment_is_unjudged_and_strict_fails(inputs: Path, ragscore) -> None:
    common = ["judge", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--rubric", "rubric.toml", "--ledger",
              "ledger.jsonl", "--replay"]
    run = ragscore(*common)
    assert run.status == 0
    assert "6 scores unjudged (the ledger lacks them" in run.err and '"q1" faithful' in run.err
    assert not Path("ledger.jsonl").exists()  # a replay writes nothing
    assert [json.loads(line) for line in run.out.splitlines()[1:]][0] == {"qid": "q1", "faithful": None,
                                                                          "correct": None}
    strict = ragscore(*common, "--strict")
    assert strict.status == 1 and "--strict: a score is missing" in strict.err


def test_samples_are_averaged_and_keyed_apart(inputs: Path) -> None:
    (inputs / "rubric.toml").write_text(RUBRIC.replace("max_tokens = 50", "max_tokens = 50\nsamples = 3"),
                                        encoding="utf-8")
    with JudgeServer(lambda body, number: Answer(200, completion(json.dumps({"score": number % 2}), "m"))) as server:
        result = run_judge(server.url, "record", jobs=1)
        assert len(server.requests) == 6 * 3
    faithful = [row["faithful"] for qid, row in result.scores.items() if qid != "q4"]
    assert all(v in (1 / 3, 2 / 3) for v in faithful)
    ledger = read_ledger("ledger.jsonl")
    assert sorted({r["sample"] for r in ledger.records.values()}) == [0, 1, 2]


def test_the_key_of_a_judgment() -> None:
    base = judgment_key("http://h/v1", "m", {"template": "t", "scale": "0-1", "json_field": None},
                        {"temperature": 0.0}, 0, "prompt")
    assert len(base) == 64
    for changed in (judgment_key("http://h/v2", "m", {"template": "t", "scale": "0-1", "json_field": None},
                                 {"temperature": 0.0}, 0, "prompt"),
                    judgment_key("http://h/v1", "m2", {"template": "t", "scale": "0-1", "json_field": None},
                                 {"temperature": 0.0}, 0, "prompt"),
                    judgment_key("http://h/v1", "m", {"template": "t", "scale": "0-1", "json_field": "s"},
                                 {"temperature": 0.0}, 0, "prompt"),
                    judgment_key("http://h/v1", "m", {"template": "t", "scale": "0-1", "json_field": None},
                                 {"temperature": 0.0, "seed": 1}, 0, "prompt"),
                    judgment_key("http://h/v1", "m", {"template": "t", "scale": "0-1", "json_field": None},
                                 {"temperature": 0.0}, 1, "prompt"),
                    judgment_key("http://h/v1", "m", {"template": "t", "scale": "0-1", "json_field": None},
                                 {"temperature": 0.0}, 0, "prompt ")):
        assert changed != base


@pytest.mark.parametrize(("reply", "scale", "field", "expected"), [
    ('{"score": 0.75}', "0-1", "score", (0.75, None)),
    ('```json\n{"score": 4, "why": "ok"}\n```', "1-5", "score", (4.0, None)),
    ('{"score": 4.5}', "1-5", "score", (None, "4.5 is outside the scale 1-5 (a whole number from 1 to 5)")),
    ('{"score": true}', "pass/fail", "score", (1.0, None)),
    ('{"verdict": "FAIL"}', "pass/fail", "verdict", (0.0, None)),
    ('{"score": "high"}', "0-1", "score", (None, '"high" is not a number')),
    ('{"other": 1}', "0-1", "score", (None, 'the reply\'s JSON object has no field "score"')),
    ("[1]", "0-1", "score", (None, "the reply is not a JSON object")),
    ("Reasoning: 3 of the 4 claims hold. Score: 0.8", "0-1", None, (0.8, None)),
    ("Step 1 ... so the answer rates 4", "1-5", None, (4.0, None)),
    ("It scores 1.5", "0-1", None, (None, "1.5 is outside the scale 0-1")),
    ("Verdict: PASS", "pass/fail", None, (1.0, None)),
    ("Not sure, fail.", "pass/fail", None, (0.0, None)),
    ("no verdict here", "pass/fail", None, (None, "the reply holds no pass, fail or number")),
    ("no digits", "0-1", None, (None, "the reply holds no number")),
    ("model-v2 says 0.5", "0-1", None, (0.5, None)),
    ("Score: 4/5.", "1-5", None, (4.0, None)),
    ("The answer earns 3.", "1-5", None, (3.0, None)),
    # An integer too large for a float is off the scale, not an OverflowError; -0 is 0 (never "-0.0" in a file).
    ('{"score": 1' + "0" * 400 + "}", "0-1", "score", (None, "a number of more than 57 digits is outside the scale "
                                                            "0-1")),
    ('{"score": 1' + "0" * 400 + "}", "pass/fail", "score", (None, "a number of more than 57 digits is not pass or "
                                                                "fail")),
    ('{"score": 12345678901234567890}', "1-5", "score", (None, "12345678901234567890 is outside the scale 1-5 (a "
                                                               "whole number from 1 to 5)")),
    ('{"score": -0.0}', "0-1", "score", (0.0, None)),
    ('{"score": -0}', "pass/fail", "score", (0.0, None)),
    ("Score: -0", "0-1", None, (0.0, None)),
    # A denominator is none of the reply's numbers, however written; a range's end gives no score; a verdict word
    # outranks the numbers after it.
    ("Score: 4 out of 5", "1-5", None, (4.0, None)),
    ("Score: 4 / 5", "1-5", None, (4.0, None)),
    ("I'd give it 4 (on a 1-5 scale)", "1-5", None,
     (None, "the reply's last number, 5, ends a range (such as 1-5 or 1 to 5): no score is read from it")),
    ("4, on a scale from 1 to 5", "1-5", None,
     (None, "the reply's last number, 5, ends a range (such as 1-5 or 1 to 5): no score is read from it")),
    ("Score: 1e-1", "0-1", None, (0.1, None)),
    ("Score: 4,5", "1-5", None, (None, "the reply holds no number")),
    ("1,000 claims checked; score 3", "1-5", None, (3.0, None)),
    ("Verdict: pass. 0 issues found", "pass/fail", None, (1.0, None)),
    ("FAIL - 2 of 3 claims unsupported", "pass/fail", None, (0.0, None)),
    ("The passage supports it: 1", "pass/fail", None, (1.0, None)),
])
def test_reading_a_reply(reply: str, scale: str, field: str | None, expected: tuple[float | None, str | None]
                         ) -> None:
    read = read_score(reply, scale, field)
    assert read == expected
    assert read[0] is None or str(read[0]) == str(expected[0])  # 0.0, not -0.0


@pytest.mark.parametrize(("rubric", "message"), [
    ('[judge]\nmodl = "m"\n[criteria.a]\ntemplate = "{answer}"\nscale = "0-1"\n',
     'rubric.toml:2: [judge] unknown key "modl"; did you mean "model"? (known: model, endpoint, temperature, '
     "max_tokens, seed, samples)"),
    ('[criteria.a]\ntemplate = "{answr}"\nscale = "0-1"\n',
     'rubric.toml:2: [criteria.a] the template names {answr}: a template may name only {question}, {answer}, '
     '{contexts}, {reference}; did you mean "answer"? (write a literal brace as {{ or }})'),
    ('[criteria.a]\ntemplate = "{answer}"\nscale = "1-10"\n',
     'rubric.toml:3: [criteria.a] expected scale to be one of "0-1", "1-5", "pass/fail", got "1-10"'),
    ('[judge]\ntemperature = 3\n[criteria.a]\ntemplate = "{answer}"\nscale = "0-1"\n',
     "rubric.toml:2: [judge] expected temperature to be a number from 0 to 2, got 3"),
    ('[judge]\nsamples = 0\n[criteria.a]\ntemplate = "{answer}"\nscale = "0-1"\n',
     "rubric.toml:2: [judge] expected samples to be a whole number from 1 to 100, got 0"),
    ("[judge]\nmodel = \"m\"\n", "rubric.toml: expected at least one criterion: a [criteria.NAME] table with a "
                                  "template and a scale"),
    ('[criterion.a]\ntemplate = "{answer}"\n', 'rubric.toml:1: unknown table "criterion"; did you mean "criteria"? '
                                               "(a rubric holds [judge] and [criteria.NAME] tables)"),
])
def test_a_rubric_mistake_is_an_error_at_its_line(inputs: Path, ragscore, rubric: str, message: str) -> None:
    (inputs / "rubric.toml").write_text(rubric, encoding="utf-8")
    run = ragscore("judge", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--rubric", "rubric.toml",
                   "--ledger", "ledger.jsonl", "--model", "m", "--replay")
    assert (run.status, run.out) == (2, "")
    assert run.err == f"ragscore: error: {message}\n"


@pytest.mark.parametrize(("args", "message"), [
    (["--endpoint", "ftp://h/v1"], '--endpoint "ftp://h/v1": expected an http:// or https:// URL such as '
                                   "https://api.openai.com/v1"),
    (["--endpoint", "https://user:pw@h/v1"], "--endpoint: give the URL without credentials, query or fragment (the key "
                                             "goes in RAGSCORE_JUDGE_API_KEY)"),
    (["--compact", "--gold", "gold.jsonl"], "judge --compact takes --ledger alone, not --gold"),
])
def test_usage_mistakes(inputs: Path, ragscore, args: list[str], message: str) -> None:
    common = ["--gold", "gold.jsonl", "--trace", "trace.jsonl", "--rubric", "rubric.toml"] if "--compact" not in args \
        else []
    run = ragscore("judge", *common, "--ledger", "ledger.jsonl", "--replay" if "--compact" not in args else "-q",
                   *args)
    assert (run.status, run.out) == (2, "")
    assert run.err == f"ragscore: error: {message}\n"
    assert not Path("ledger.jsonl").exists()


def test_a_ledger_line_of_another_shape_is_an_error_at_its_line(inputs: Path, ragscore) -> None:
    Path("ledger.jsonl").write_text('{"ragscore_judgment": 1, "key": "abc"}\n', encoding="utf-8")
    run = ragscore("judge", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--rubric", "rubric.toml",
                   "--ledger", "ledger.jsonl", "--replay")
    assert (run.status, run.err) == (2, "ragscore: error: ledger.jsonl:1: a ledger record's key must be a sha256 in "
                                        "hex\n")


def test_the_example_ledger_replays_to_the_example_scores(ragscore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    run = ragscore("judge", "--gold", "examples/judge/gold.jsonl", "--trace", "examples/judge/trace.jsonl",
                   "--rubric", "examples/judge/rubric.toml", "--ledger", "examples/judge/ledger.jsonl", "--replay",
                   "--strict")
    assert run.status == 0, run.err
    assert run.out == (ROOT / "examples" / "judge" / "scores.jsonl").read_text(encoding="utf-8")
    # Compacted: recording it again gives the same records, in key order.
    lines = (ROOT / "examples" / "judge" / "ledger.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["key"] for line in lines] == sorted(json.loads(line)["key"] for line in lines)


def test_production_traces_judged_without_gold_and_monitored(isolated: Path, ragscore) -> None:
    today = [json.loads(line) for line in (ROOT / "examples" / "monitor" / "today.jsonl").read_text().splitlines()]
    traces = [{**trace, "qid": f"t{n}"} for n, trace in enumerate(today[:60])] + [today[60]]  # the last: no qid
    write_lines(isolated / "today.jsonl", traces)
    (isolated / "rubric.toml").write_text('[judge]\nmodel = "judge-small"\n[criteria.helpful]\ntemplate = '
                                          '"{question}|{answer}|{contexts}"\nscale = "0-1"\njson_field = "score"\n',
                                          encoding="utf-8")
    with JudgeServer(scored(lambda prompt: 0.0 if "not in context" in prompt else 1.0)) as server:
        run = ragscore("judge", "--trace", "today.jsonl", "--rubric", "rubric.toml", "--ledger", "ledger.jsonl",
                       "--endpoint", server.url, "--record", "-o", "scores.jsonl")
        # One call per distinct prompt: traces that give the same texts share their judgment.
        prompts = {f"|{t['answer_json']['claim'].strip()}|" for t in traces[:60]}
        assert len(server.requests) == len(prompts) < 60, run.err
    assert run.status == 0 and "1 trace has no qid: not judged" in run.err
    rows = [json.loads(line) for line in Path("scores.jsonl").read_text().splitlines()[1:]]
    assert [row["qid"] for row in rows] == [f"t{n}" for n in range(60)]
    expected = [0.0 if trace["answer_json"]["claim"] == "not in context" else 1.0 for trace in traces[:60]]
    assert [row["helpful"] for row in rows] == expected
    monitored = ragscore("monitor", "--trace", "today.jsonl", "--scores", "scores.jsonl", "--window", "1d",
                         "--gates", "helpful>=0.99")
    report = json.loads(monitored.out)
    assert report["metrics"]["helpful"] == pytest.approx(sum(expected) / 60)
    assert report["settings"]["judge"]["model"] == "judge-small"
    assert report["counts"]["unscored"] == 1 and "has no row in the --scores file" in monitored.err
    assert report["gates"]["helpful"]["status"] == "fail" and monitored.status == 1
    for window in report["windows"]:
        assert "helpful" in window["metrics"]
    metrics = ragscore("monitor", "--trace", "today.jsonl", "--scores", "scores.jsonl", "--format", "openmetrics",
                       "--no-fail")
    assert f'ragscore_monitor_score{{name="helpful",scope="period"}} {sum(expected) / 60!r}' in metrics.out


def test_a_suite_compares_judged_runs(inputs: Path, ragscore) -> None:
    with JudgeServer(scored(supported)) as server:
        common = ["judge", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--rubric", "rubric.toml", "--ledger",
                  "ledger.jsonl", "--endpoint", server.url, "--record"]
        assert ragscore(*common, "-o", "small.jsonl").status == 0
        assert ragscore(*common, "--model", "judge-large", "-o", "large.jsonl").status == 0
    task = ('[tasks.release]\ncommand = "compare"\ngold = "gold.jsonl"\ntrace = "trace.jsonl"\nbaseline = '
            '"trace.jsonl"\nscores = "large.jsonl"\nbaseline_scores = "small.jsonl"\n')
    Path("suite.toml").write_text(task, encoding="utf-8")
    refused = ragscore("run", "suite.toml", "--format", "json")
    summary = json.loads(refused.out)["summary"][0]
    assert refused.status == 2 and summary["status"] == "error" and "judged differently" in summary["error"]
    Path("suite.toml").write_text(task + "allow_judge_change = true\n", encoding="utf-8")
    allowed = ragscore("run", "suite.toml", "--format", "json")
    assert json.loads(allowed.out)["tasks"]["release"]["status"] == "pass", allowed.err
