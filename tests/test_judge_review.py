"""ragscore judge against endpoints that misbehave below the chat completion: raw replies written byte for byte,
broken HTTP, redirects, keys echoed in part (a second reader's findings on issue 37)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from conftest import write
from judge_server import Answer, JudgeServer, completion, scored
from ragscore.judging.api import in_ci
from ragscore.judging.client import CallFailed, Client, EndpointError, api_key
from ragscore.judging.ledger import read_ledger

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-test-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
BODY = {"model": "m", "messages": [{"role": "user", "content": "judge this"}], "temperature": 0.0}


@contextmanager
def raw_server(reply: Callable[[bytes], bytes | list[bytes]], pause: float = 0.0) -> Iterator[str]:
    """A server on 127.0.0.1 that answers each request (its head and body, read whole) with ``reply``'s bytes as they
    are (a list: its parts, ``pause`` seconds apart), then closes the connection; yields its base URL."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            with connection:
                connection.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data:
                    data += connection.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                while len(body) < length:
                    body += connection.recv(65536)
                answer = reply(head + b"\r\n\r\n" + body)
                for part in answer if isinstance(answer, list) else [answer]:
                    try:
                        connection.sendall(part)
                    except OSError:  # the client gave up
                        break
                    time.sleep(pause)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        stop.set()
        thread.join()
        listener.close()


def client(url: str, retries: int = 1, waits: list[float] | None = None) -> Client:
    return Client(url, KEY, timeout=5, retries=retries, sleep=(waits if waits is not None else []).append)


def test_a_broken_http_reply_is_tried_again_then_fails_that_judgment() -> None:
    good = completion('{"score": 1}', "m")
    replies = iter([b"HELLO THERE\r\n\r\n",  # no status line
                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n",  # a chunk size that is none
                    b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(good), good)])
    waits: list[float] = []
    with raw_server(lambda request: next(replies)) as url:
        reply = client(url, retries=2, waits=waits).complete(BODY)
    assert reply.text == '{"score": 1}' and waits == [1.0, 2.0]
    with raw_server(lambda request: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab") as url:
        try:
            client(url, retries=1).complete(BODY)
        except CallFailed as exc:
            assert str(exc) == "a broken HTTP reply (IncompleteRead) (2 tries)"
        else:
            raise AssertionError("a chunk cut short gave a reply")


def test_a_redirect_is_never_followed_and_the_key_never_sent_on() -> None:
    seen: list[bytes] = []

    def elsewhere(request: bytes) -> bytes:  # where the redirect points: it must never be asked
        seen.append(request)
        return b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"

    with raw_server(elsewhere) as other:
        for status in (301, 302, 303, 307, 308):
            def redirect(request: bytes, status: int = status) -> bytes:
                return (b"HTTP/1.1 %d Moved\r\nLocation: %s/chat/completions\r\nContent-Length: 0\r\n\r\n"
                        % (status, other.encode()))

            with raw_server(redirect) as url:
                try:
                    client(url).complete(BODY)
                except EndpointError as exc:
                    assert str(exc) == (f"--endpoint {url}/chat/completions: the endpoint redirects (HTTP {status}) to "
                                        f'"{other}/chat/completions"; a redirect is never followed (the key would go '
                                        "with it): give --endpoint the base URL it redirects to")
                else:
                    raise AssertionError("a redirect gave a reply")
    assert seen == []


def test_a_key_echoed_across_where_a_reply_is_cut_is_scrubbed_whole() -> None:
    """The key is taken out of a reply before the reply is shortened for a note, wherever it falls."""
    answer: list[bytes] = []
    with raw_server(lambda request: answer[-1]) as url:
        for at in (0, 100, 180, 199, 4070, 4090, 65530, 65536 - 20):
            body = b"x" * at + KEY.encode() + b" and more" * 3
            for status in (200, 500):
                answer.append(b"HTTP/1.1 %d X\r\nContent-Length: %d\r\n\r\n%s" % (status, len(body), body))
                try:
                    client(url, retries=0).complete(BODY)
                except CallFailed as exc:
                    why = str(exc)
                else:
                    raise AssertionError("not JSON gave a reply")
                assert why.startswith(("the reply is not JSON: ", "HTTP 500: "))
                for size in range(8, len(KEY) + 1):  # no 8 characters of the key in a row
                    assert all(KEY[start:start + size] not in why for start in range(len(KEY) - size + 1)), (at, why)


def test_a_key_a_header_cannot_carry_is_an_error_that_never_shows_it(isolated: Path, ragscore,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    write(isolated / "trace.jsonl", [{"qid": "q1", "answer_json": {"claim": "Paris.", "citations": []}}])
    (isolated / "rubric.toml").write_text('[judge]\nmodel = "m"\n[criteria.ok]\ntemplate = "{answer}"\nscale = "0-1"\n',
                                          encoding="utf-8")
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    for key in (f"{KEY}\nX-Other: 1", f"{KEY[:10]} {KEY[10:]}", f"\u201c{KEY}\u201d"):
        monkeypatch.setenv("OPENAI_API_KEY", key)
        run = ragscore("judge", "--trace", "trace.jsonl", "--rubric", "rubric.toml", "--ledger", "ledger.jsonl",
                       "--endpoint", "http://127.0.0.1:9/v1", "--record")
        assert (run.status, run.out) == (2, "")
        assert run.err == ("ragscore: error: OPENAI_API_KEY holds a character a key cannot have (a space, a line "
                           "break, a character that is not ASCII, such as a curly quote): set it to the key alone\n")
    monkeypatch.setenv("OPENAI_API_KEY", f"  {KEY}\n")  # around it: trimmed
    assert api_key() == KEY
    monkeypatch.delenv("OPENAI_API_KEY")
    assert api_key() is None


TRACES = [{"qid": "q1", "retrieved_ids": [{"id": "d1", "text": "Paris is the capital of France."}],
           "answer_json": {"claim": "Paris.", "citations": ["d1"]}},
          {"qid": "q2", "retrieved_ids": [{"id": "d2", "text": "Lyon is a city."}],
           "answer_json": {"claim": "Lyon.", "citations": ["d2"]}}]
RUBRIC = ('[judge]\nmodel = "judge-small"\n[criteria.ok]\ntemplate = "{question}|{answer}|{contexts}"\nscale = "0-1"\n'
          'json_field = "score"\n')


@pytest.fixture
def small(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two traced questions (no gold set) and a rubric of one 0-1 criterion, outside CI."""
    write(isolated / "trace.jsonl", TRACES)
    (isolated / "rubric.toml").write_text(RUBRIC, encoding="utf-8")
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("RAGSCORE_JUDGE_API_KEY", raising=False)
    return isolated


def judge_args(url: str, *more: str, ledger: str = "ledger.jsonl") -> list[str]:
    return ["judge", "--trace", "trace.jsonl", "--rubric", "rubric.toml", "--ledger", ledger, "--endpoint", url, *more]


def test_a_ledger_score_edited_off_its_scale_or_infinite_is_an_error_at_its_line(small: Path, ragscore) -> None:
    with JudgeServer(scored(lambda prompt: 0.5)) as server:
        url = server.url
        assert ragscore(*judge_args(url, "--record", "-q")).status == 0
    first, second = Path("ledger.jsonl").read_text(encoding="utf-8").splitlines()
    assert '"score":0.5,' in second

    def edited(score: str) -> None:
        line = second.replace('"score":0.5', '"score":' + score)
        Path("ledger.jsonl").write_text(f"{first}\n{line}\n", encoding="utf-8")

    for score, message in (
            ("7", "a ledger record's score is off its criterion's scale: 7 is outside the scale 0-1 (a line edited "
                  "by hand? delete it to judge again)"),
            ("Infinity", "a ledger record's score must be a number or null, got Infinity"),
            ("NaN", "a ledger record's score must be a number or null, got NaN"),
            ("1" + "0" * 400, "a ledger record's score must be a number or null, got a number of more than 57 digits")):
        edited(score)
        run = ragscore(*judge_args(url, "--replay"))
        assert (run.status, run.out, run.err) == (2, "", f"ragscore: error: ledger.jsonl:2: {message}\n")
    # A whole number on the scale is the score it says, written as a recorded score is.
    edited("1")
    run = ragscore(*judge_args(url, "--replay"))
    assert run.status == 0
    assert sorted(line.split('"ok": ')[1] for line in run.out.splitlines()[1:]) == ["0.5}", "1.0}"]


def test_ctrl_c_during_calls_stops_at_once_and_keeps_what_came_back(small: Path) -> None:
    """Ctrl-C while calls hang (or wait to be tried again) ends the run at once: the threads making the calls are
    not waited for, and the judgments that came back are in the ledger for the next run."""
    write(small / "trace.jsonl", [{**TRACES[0], "qid": f"q{n}", "answer_json": {"claim": f"A{n}.", "citations": []}}
                                  for n in range(6)])

    def script(body: dict[str, Any], number: int) -> Answer:
        prompt = body["messages"][0]["content"]
        if "A0." in prompt:
            return scored(lambda prompt: 1.0)(body, number)
        if "A1." in prompt:
            return Answer(429, b"slow down", {"Retry-After": "100"})
        return Answer(200, completion('{"score": 1}', "m"), delay=30)

    with JudgeServer(script) as server:
        process = subprocess.Popen(
            [sys.executable, "-m", "ragscore", "judge", *judge_args(server.url, "--record", "--jobs", "3")[1:]],
            cwd=small, env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # noqa: PLW1509
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(server.requests) < 3:  # the one answered, the 429, one hanging
            time.sleep(0.02)
        time.sleep(0.3)
        process.send_signal(signal.SIGINT)
        start = time.monotonic()
        try:
            _, err = process.communicate(timeout=20)
        finally:
            process.kill()
        assert time.monotonic() - start < 5, "Ctrl-C waited for the calls under way"
    assert process.returncode == 130 and b"Traceback" not in err
    kept = read_ledger("ledger.jsonl")
    assert [record["qid"] for record in kept.records.values()] == ["q0"] and kept.skipped == []


def test_a_stopped_client_is_not_tried_again() -> None:
    """judge() stopped from Python (its loop raising): the client's waits between tries end, and no call is tried
    again."""
    with raw_server(lambda request: b"HTTP/1.1 503 Busy\r\nRetry-After: 100\r\nContent-Length: 0\r\n\r\n") as url:
        caller = Client(url, KEY, timeout=5, retries=4)
        threading.Timer(0.3, caller.stop).start()
        start = time.monotonic()
        try:
            caller.complete(BODY)
        except CallFailed as exc:
            assert str(exc) == "HTTP 503 (1 tries; stopped)"
        else:
            raise AssertionError("a 503 gave a reply")
        assert time.monotonic() - start < 5


def test_traces_judged_otherwise_than_meant_are_counted_and_named(small: Path, ragscore) -> None:
    """A trace replaced by a later one, one that joins no gold question, one without a claim, passages without a
    text: each is judged (or not) as a note says, never silently."""
    write(small / "gold.jsonl", [{"qid": q, "question": f"{q}?", "answerable": True, "gold_claim_substr": ["x"]}
                                 for q in ("q1", "q2", "q3")])
    write(small / "trace.jsonl", [
        {"qid": "q1", "retrieved_ids": ["d1", "d9"], "answer_json": {"claim": "First.", "citations": []}},
        {"qid": "q2", "retrieved_ids": [{"id": "d2", "text": "Lyon is a city."}]},  # no claim
        {"qid": "zz", "answer_json": {"claim": "Of no gold question.", "citations": []}},
        {"qid": "q1", "retrieved_ids": ["d1", "d9"], "answer_json": {"claim": "Last.", "citations": []}},
        {"qid": "q3", "retrieved_ids": [{"id": "d3", "text": "Whole."}], "answer_json": {"claim": "Fine."}},
    ])
    write(small / "corpus.jsonl", [{"id": "d1", "text": "Paris is the capital of France."}])
    with JudgeServer(scored(lambda prompt: 1.0)) as server:
        run = ragscore(*judge_args(server.url, "--gold", "gold.jsonl", "--record"))
        asked = sorted(body["messages"][0]["content"] for body, _ in server.requests)
        with_corpus = ragscore(*judge_args(server.url, "--gold", "gold.jsonl", "--record", "--corpus", "corpus.jsonl",
                                           ledger="corpus-ledger.jsonl"))
        no_gold = ragscore(*judge_args(server.url, "--record", ledger="production.jsonl"))
    assert run.status == 0
    assert asked == ["q1?|Last.|", "q2?||[1] Lyon is a city.", "q3?|Fine.|[1] Whole."]
    notes = run.err.splitlines()
    assert 'ragscore: 1 trace line matches no gold question (not judged): "zz"' in notes
    assert ('ragscore: 1 trace line was replaced by a later line for the same question (the last is judged): "q1"'
            in notes)
    assert ("ragscore: 1 trace has no claim or refusal field (judged with an empty {answer}): trace.jsonl:2: its keys "
            'are "qid", "retrieved_ids": map the claim with --map claim=PATH (see "Your traces" in the README)'
            in notes)
    assert ("ragscore: 1 judged trace retrieves passages without a text in the trace (--corpus gives passage texts by "
            'id) ({contexts} lacks them): "q1"' in notes)
    assert ("ragscore: 1 judged trace retrieves passages without a text in the trace or --corpus ({contexts} lacks "
            'them): "q1"' in with_corpus.err.splitlines())
    assert no_gold.status == 0
    assert no_gold.err.splitlines()[:3] == [
        'ragscore: 1 trace line was replaced by a later line for the same qid (the last is judged): "q1"',
        "ragscore: 1 trace has no claim or refusal field (judged with an empty {answer}; --map claim=PATH reads it "
        "from another field): trace.jsonl:2",
        'ragscore: 1 judged trace retrieves passages without a text in the trace (--corpus gives passage texts by id) '
        '({contexts} lacks them): "q1"']
    # A rubric that names neither {answer} nor {contexts} is told of neither.
    (small / "rubric.toml").write_text(RUBRIC.replace("{question}|{answer}|{contexts}", "{question}"), encoding="utf-8")
    replayed = ragscore(*judge_args("http://127.0.0.1:9/v1", "--gold", "gold.jsonl", "--replay"))
    assert "{answer}" not in replayed.err and "{contexts}" not in replayed.err and '"zz"' in replayed.err


def test_the_timeout_bounds_the_whole_call_not_each_read() -> None:
    """A server that trickles its reply, each part well within the timeout, has no reply within the timeout."""
    data = completion('{"score": 1}', "m")
    head = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(data)
    parts = [head] + [data[n:n + 24] for n in range(0, len(data), 24)]
    with raw_server(lambda request: parts, pause=0.05) as url:
        start = time.monotonic()
        try:
            Client(url, KEY, timeout=0.3, retries=0).complete(BODY)
        except CallFailed as exc:
            assert str(exc) == "no reply within 0.3 s (1 tries)"
        else:
            raise AssertionError(f"a reply trickled over {len(parts) * 0.05:.1f} s came back within 0.3 s")
        assert time.monotonic() - start < 2
        assert Client(url, KEY, timeout=len(parts) * 0.05 + 3, retries=0).complete(BODY).text == '{"score": 1}'


@pytest.mark.parametrize(("environ", "ci"), [
    ({}, False), ({"CI": ""}, False), ({"CI": "false"}, False), ({"CI": "No"}, False), ({"CI": " 0 "}, False),
    ({"CI": "true"}, True), ({"CI": "1"}, True), ({"CI": "woodpecker"}, True), ({"GITHUB_ACTIONS": "true"}, True),
    ({"GITHUB_ACTIONS": "false"}, False), ({"GITHUB_ACTIONS": "1"}, False),
])
def test_in_ci_as_the_docs_say(environ: dict[str, str], ci: bool) -> None:
    assert in_ci(environ) is ci


@pytest.mark.parametrize(("name", "family"), [("precision", "answer"), ("ndcg@10", "retrieval"),
                                              ("pass@1", "repeats"), ("refusal_rate", "monitor"),
                                              ("traces", "monitor")])
def test_a_criterion_named_like_a_metric_is_refused_before_any_call(small: Path, ragscore, name: str,
                                                                     family: str) -> None:
    """score (or monitor) would refuse the scores file, or monitor would put the score in its own metric's place:
    the rubric is refused at the criterion's line, before a judgment is paid for."""
    (small / "rubric.toml").write_text(RUBRIC + f'\n[criteria."{name}"]\ntemplate = "{{answer}}"\nscale = "0-1"\n',
                                       encoding="utf-8")
    run = ragscore(*judge_args("http://127.0.0.1:9/v1", "--record"))
    assert (run.status, run.out) == (2, "")
    assert run.err == (f'ragscore: error: rubric.toml:8: the criterion "{name}" names its scores: a score is named '
                       f'"{name}", like a ragscore metric ({family}): rename the score\n')
    assert not Path("ledger.jsonl").exists()


def test_monitor_refuses_a_score_named_like_its_own_metric(small: Path, ragscore) -> None:
    """A --scores column named refusal_rate took the place of monitor's refusal rate, silently."""
    write(small / "scores.jsonl", [{"qid": "q1", "refusal_rate": 0.0}, {"qid": "q2", "refusal_rate": 0.0}])
    run = ragscore("monitor", "--trace", "trace.jsonl", "--scores", "scores.jsonl", "--format", "none")
    assert (run.status, run.err) == (2, 'ragscore: error: scores.jsonl: a score is named "refusal_rate", like a '
                                        "ragscore metric (monitor): rename the score\n")
    write(small / "scores.jsonl", [{"qid": "q1", "helpful": 1.0}, {"qid": "q2", "helpful": 0.0}])
    assert ragscore("monitor", "--trace", "trace.jsonl", "--scores", "scores.jsonl", "--format", "none").status == 0


def test_compare_refuses_the_scores_of_one_run_alone(isolated: Path, ragscore) -> None:
    """Scores given for one run only had nothing to be compared with: their metrics were left out and a regression gate
    on one skipped, without a word."""
    examples = ROOT / "examples" / "judge"
    both = ["compare", "--gold", examples / "gold.jsonl", "--trace", examples / "trace.jsonl", "--baseline",
            examples / "trace.jsonl", "--format", "json"]
    for given, lacking, option in (("candidate", "baseline", "--scores"), ("baseline", "candidate",
                                                                             "--baseline-scores")):
        run = ragscore(*both, option, examples / "scores.jsonl")
        assert (run.status, run.out) == (2, "")
        assert run.err == (f"ragscore: error: compare: the {given}'s scores are given (--scores, --baseline-scores) but "
                           f"not the {lacking}'s: give each run's scores file, or neither\n")
    run = ragscore(*both, "--scores", examples / "scores.jsonl", "--baseline-scores", examples / "scores.jsonl")
    assert run.status == 0 and "faithfulness" in json.loads(run.out)["metrics"]


def test_a_reply_cut_off_at_max_tokens_gives_no_last_number(small: Path, ragscore) -> None:
    """A reply the server cut at max_tokens (finish_reason "length") ends where it was cut: its last number is no
    verdict. A JSON object read whole is whole, cut or not."""
    (small / "rubric.toml").write_text(RUBRIC + '\n[criteria.free]\ntemplate = "{answer}!"\nscale = "1-5"\n',
                                       encoding="utf-8")

    def script(body: dict[str, Any], number: int) -> Answer:
        text = '{"score": 1}' if body["messages"][0]["content"].count("|") else "Claim 1 holds, claim 2 gets 3 of"
        data = completion(text, "m").replace(b'"finish_reason":"stop"', b'"finish_reason":"length"')
        assert b'"length"' in data
        return Answer(200, data)

    with JudgeServer(script) as server:
        run = ragscore(*judge_args(server.url, "--record"))
    assert run.status == 0
    rows = [json.loads(line) for line in run.out.splitlines()[1:]]
    assert rows == [{"qid": "q1", "ok": 1.0, "free": None}, {"qid": "q2", "ok": 1.0, "free": None}]
    assert ('"q1" free: the reply was cut off at max_tokens (finish_reason "length"): its last number may not be its '
            "score (raise max_tokens, or ask for JSON: json_field)") in run.err


def test_compare_refuses_a_judge_against_scores_of_the_same_name_that_name_none(isolated: Path, ragscore) -> None:
    """A judge's scores against scores of the same names from an unnamed source (a file without the judge's header)
    were compared as if one judge gave both."""
    examples = ROOT / "examples" / "judge"
    judged = examples / "scores.jsonl"
    Path("plain.jsonl").write_text("".join(judged.read_text(encoding="utf-8").splitlines(keepends=True)[1:]),
                                   encoding="utf-8")
    common = ["compare", "--gold", examples / "gold.jsonl", "--trace", examples / "trace.jsonl", "--format", "none"]
    shown = ('the baseline\'s "example-judge" at "127.0.0.1:8000" (rubric sha256 edc5118127a7), the candidate\'s none '
             "named (scores without ragscore judge's header)")
    run = ragscore(*common, "--baseline", examples / "trace.jsonl", "--baseline-scores", judged, "--scores",
                   "plain.jsonl")
    assert (run.status, run.err) == (2, f"ragscore: error: compare: the runs' scores were judged differently ({shown}): "
                                        "a changed judge shifts every score; rejudge both with one judge, or give "
                                        "--allow-judge-change to compare them anyway\n")
    assert ragscore("--gold", examples / "gold.jsonl", "--trace", examples / "trace.jsonl", "--scores", judged,
                    "--per-question", "--json", "base.json", "--format", "none", "--no-fail").status == 0
    run = ragscore(*common, "--baseline-report", "base.json", "--scores", "plain.jsonl")
    assert (run.status, run.err) == (2, f"ragscore: error: base.json: the baseline report's scores were judged "
                                        f"differently ({shown}): a changed judge shifts every score; rejudge with one "
                                        "judge, or give --allow-judge-change to compare them anyway\n")
    allowed = ragscore(*common, "--baseline-report", "base.json", "--scores", "plain.jsonl", "--allow-judge-change")
    assert allowed.status == 0 and f"the runs were judged differently: {shown}" in allowed.err
    # Scores of other names than the judge's are no judge's to compare.
    write(isolated / "other.jsonl", [{"qid": "A0001", "other": 1.0}])
    assert ragscore(*common, "--baseline", examples / "trace.jsonl", "--baseline-scores", judged, "--scores",
                    "other.jsonl").status == 0
