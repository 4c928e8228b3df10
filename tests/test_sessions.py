"""Conversations (issue 36): the questions that share a session are its turns, judged whole; the intervals
resample whole sessions, as the turns of one session are not independent (the coverage test shows why).
"""

from __future__ import annotations

import json
import random
from fractions import Fraction
from math import comb

import pytest

from conftest import write
from ragscore.metrics.moments import poisson_interval, summarise
from ragscore.metrics.sessions import Turn, sessions


def _gold_and_traces(rng: random.Random, n_sessions: int = 30) -> tuple[list[dict], list[dict]]:
    """Sessions of 1-5 turns (numbered, listed out of order in some), some turns answered wrongly, some with gold
    tool calls; a few questions with no session; one session named only by its traces."""
    gold, traces = [], []
    for s in range(n_sessions):
        turns = list(range(1, rng.randint(2, 6)))
        if s % 3 == 0:
            rng.shuffle(turns)
        for t in turns:
            qid = f"s{s}t{t}"
            item = {"qid": qid, "answerable": True, "gold_claim_substr": [f"answer {qid}"], "turn": t}
            if s != 7:
                item["session_id"] = f"S{s}"
            if (s + t) % 4 == 0:
                item["gold_tool_calls"] = [{"name": "lookup", "arguments": {"id": t}}]
            gold.append(item)
            trace = {"qid": qid, "answer": f"answer {qid}" if rng.random() < 0.8 else "something else",
                     "tool_calls": [{"name": "lookup", "arguments": {"id": t if rng.random() < 0.8 else 0}}]}
            if s == 7:
                trace["session_id"] = "S7"
            traces.append(trace)
    gold += [{"qid": f"alone{i}", "answerable": True, "gold_claim_substr": ["alone!"]} for i in range(3)]
    traces += [{"qid": f"alone{i}", "answer": "alone!"} for i in range(3)]
    return gold, traces


def _by_hand(gold: list[dict], traces: list[dict]) -> tuple[float, float | None, int]:
    """session_pass_rate, turns_to_first_error and the number of sessions, from the definitions: a turn is correct
    when its claim holds the gold substring (no citations: precision by the claims alone) and its tool call is the
    gold one."""
    by_qid = {t["qid"]: t for t in traces}
    grouped: dict[str, list[tuple[int, bool]]] = {}
    for place, item in enumerate(gold):
        trace = by_qid[item["qid"]]
        key = item.get("session_id", trace.get("session_id"))
        if key is None:
            continue
        ok = item["gold_claim_substr"][0] in trace["answer"]
        if "gold_tool_calls" in item:
            ok = ok and trace["tool_calls"][0]["arguments"] == item["gold_tool_calls"][0]["arguments"]
        grouped.setdefault(key, []).append((item["turn"], place, ok))  # type: ignore[arg-type]
    passed, first_errors = 0, []
    for turns in grouped.values():
        turns.sort()
        flags = [ok for _, _, ok in turns]  # type: ignore[misc]
        if all(flags):
            passed += 1
        else:
            first_errors.append(flags.index(False) + 1)
    mean = sum(first_errors) / len(first_errors) if first_errors else None
    return passed / len(grouped), mean, len(grouped)


def test_sessions_are_judged_whole_as_defined(tmp_path, ragscore):
    gold, traces = _gold_and_traces(random.Random(36))
    write(tmp_path / "gold.jsonl", gold)
    write(tmp_path / "trace.jsonl", traces)
    report = ragscore("--gold", tmp_path / "gold.jsonl", "--trace", tmp_path / "trace.jsonl", "--format", "json",
                      "--no-fail").json()
    rate, first, count = _by_hand(gold, traces)
    assert report["settings"]["session"] == "session_id"  # on by itself: the gold file holds session_id
    assert report["sessions"] == {"field": "session_id", "sessions": count, "passed": round(rate * count),
                                  "turns": len(gold) - 3}
    assert report["metrics"]["session_pass_rate"] == pytest.approx(rate, abs=1e-15)
    assert report["metrics"]["turns_to_first_error"] == pytest.approx(first, abs=1e-15)
    assert 0 < rate < 1 and report["interval_methods"]["session_pass_rate"] == "wilson"


def test_parts_processes_and_partials_give_the_one_process_report(tmp_path, ragscore, monkeypatch):
    monkeypatch.chdir(tmp_path)
    gold, traces = _gold_and_traces(random.Random(5), 40)
    write(tmp_path / "gold.jsonl", gold)
    write(tmp_path / "trace.jsonl", traces)
    common = ("--gold", "gold.jsonl", "--trace", "trace.jsonl", "--format", "json", "--no-fail")
    one = ragscore(*common, "--jobs", "1").json()
    two = ragscore(*common, "--jobs", "2").json()
    for index in (1, 2):
        assert ragscore("partial", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--part", f"{index}/2", "-o",
                        f"p{index}.json").status == 0
    merged = ragscore("merge", "p2.json", "p1.json", "--format", "json", "--no-fail").json()
    for report in (two, merged):
        for key in ("metrics", "intervals", "interval_methods", "sessions", "signature"):
            assert report[key] == one[key], key
    assert one["interval_methods"]["precision"] == "poisson_bootstrap"  # resampled by session, not Wilson


def test_turns_come_in_file_order_unless_every_turn_is_numbered():
    made = [Turn(0, "a", 2, 1, 1), Turn(1, "a", 1, 0, 1), Turn(2, "b", None, 1, 1), Turn(3, "b", 1, 0, 1)]
    judged = {s.key: s for s in sessions(made)}
    assert judged["a"].first_error == 1  # turn 1 (listed second) failed first
    assert judged["b"].first_error == 2  # not every turn numbered: file order


def test_samples_multiply_each_turn_s_share():
    turns = [Turn(0, "a", None, 3, 4), Turn(1, "a", None, 2, 4), Turn(2, "b", None, 1, 1), Turn(3, "b", None, 1, 2)]
    judged = sessions(turns, (1, 2, 3))
    a = judged[0]
    assert a.share == float(Fraction(3, 4) * Fraction(2, 4))
    assert a.pass_k == (float(Fraction(comb(3, 1), comb(4, 1)) * Fraction(comb(2, 1), comb(4, 1))),
                        float(Fraction(comb(3, 2), comb(4, 2)) * Fraction(comb(2, 2), comb(4, 2))),
                        0.0)
    assert judged[1].pass_k[1:] == (None, None)  # a turn with one sample: no pass^2


def test_sampled_sessions_in_a_run(tmp_path, ragscore):
    gold = [{"qid": f"q{i}", "answerable": True, "gold_claim_substr": ["right"], "session_id": f"S{i // 2}",
             "turn": i % 2 + 1} for i in range(4)]
    traces = [{"qid": "q0", "answer": "right"}, {"qid": "q0", "answer": "wrong"},
              {"qid": "q1", "answer": "right"}, {"qid": "q1", "answer": "right"},
              {"qid": "q2", "answer": "right"}, {"qid": "q2", "answer": "right"},
              {"qid": "q3", "answer": "wrong"}, {"qid": "q3", "answer": "right"}]
    write(tmp_path / "gold.jsonl", gold)
    write(tmp_path / "trace.jsonl", traces)
    report = ragscore("--gold", tmp_path / "gold.jsonl", "--trace", tmp_path / "trace.jsonl", "--repeats", "samples",
                      "--pass-k", "1,2", "--format", "json", "--no-fail").json()
    assert report["metrics"]["session_pass_rate"] == 0.5  # (1/2 × 1 + 1 × 1/2) / 2
    assert report["metrics"]["session_pass^2"] == 0.0 and report["metrics"]["session_pass^1"] == 0.5
    assert report["metrics"]["turns_to_first_error"] == 1.5  # S0 at turn 1, S1 at turn 2


def test_a_turn_that_is_not_an_integer_is_an_error_at_its_line(tmp_path, ragscore):
    write(tmp_path / "gold.jsonl", [{"qid": "a", "answerable": True, "session_id": "S", "turn": 1},
                                    {"qid": "b", "answerable": True, "session_id": "S", "turn": "2"}])
    write(tmp_path / "trace.jsonl", [{"qid": "a", "answer": "x"}])
    run = ragscore("--gold", tmp_path / "gold.jsonl", "--trace", tmp_path / "trace.jsonl", "--no-fail")
    assert run.status == 2 and run.err == (f"ragscore: error: {tmp_path / 'gold.jsonl'}:2: expected \"turn\" to be "
                                           "a whole number of at least 0 (the question's turn in its session), got "
                                           "\"2\"\n")


def test_a_session_field_nobody_names_is_noted_and_a_bad_one_refused(tmp_path, ragscore):
    write(tmp_path / "gold.jsonl", [{"qid": "a", "answerable": True, "gold_claim_substr": ["right"]}])
    write(tmp_path / "trace.jsonl", [{"qid": "a", "answer": "right"}])
    run = ragscore("--gold", tmp_path / "gold.jsonl", "--trace", tmp_path / "trace.jsonl", "--no-fail",
                   "--session", "conversation")
    assert 'no gold item or trace names a session in "conversation": the session metrics are n/a' in run.err
    bad = ragscore("--gold", tmp_path / "gold.jsonl", "--trace", tmp_path / "trace.jsonl", "--session", "a..b")
    assert bad.status == 2 and "--session: expected a field name" in bad.err


def test_without_sessions_nothing_changes(tmp_path, ragscore):
    write(tmp_path / "gold.jsonl", [{"qid": "a", "answerable": True, "gold_claim_substr": ["right"]}])
    write(tmp_path / "trace.jsonl", [{"qid": "a", "answer": "right"}])
    report = ragscore("--gold", tmp_path / "gold.jsonl", "--trace", tmp_path / "trace.jsonl", "--format", "json",
                      "--no-fail").json()
    assert "session" not in report["settings"] and "sessions" not in report
    assert "session_pass_rate" not in report["metrics"] and report["interval_methods"]["precision"] == "wilson"


def _coverage(keyed_by_session: bool, reps: int = 200) -> float:
    """How often a 95% Poisson-bootstrap interval of a mean holds the true mean, on data whose turns are correlated
    within their session (each session is mostly right or mostly wrong)."""
    rng = random.Random(2026)
    held = 0
    for rep in range(reps):
        keys, values = [], []
        for s in range(30):
            p = rng.choice((0.1, 0.9))  # the session's own difficulty: its turns go together
            for t in range(10):
                keys.append(f"s{s}" if keyed_by_session else f"s{s}t{t}")
                values.append(float(rng.random() < p))
        m = summarise([values], (True,), keys, f"cover{rep}", 400)[0]
        low, high = poisson_interval(m, 0.95)
        held += low <= 0.5 <= high
    return held / reps


def test_resampling_sessions_covers_and_resampling_turns_does_not():
    by_turn, by_session = _coverage(False), _coverage(True)
    assert by_turn < 0.75, by_turn      # too narrow: 300 turns counted as independent, 30 sessions in truth
    assert by_session >= 0.9, by_session



def test_the_reported_interval_is_the_session_keyed_one(tmp_path, ragscore):
    gold, traces = _gold_and_traces(random.Random(11), 20)
    write(tmp_path / "gold.jsonl", gold)
    write(tmp_path / "trace.jsonl", traces)
    report = ragscore("--gold", tmp_path / "gold.jsonl", "--trace", tmp_path / "trace.jsonl", "--format", "json",
                      "--no-fail", "--per-question").json()
    by_qid = {t["qid"]: t for t in traces}
    keys, values = [], []
    for item, question in zip(gold, report["questions"], strict=True):
        session = item.get("session_id", by_qid[item["qid"]].get("session_id"))
        keys.append(f"session:{session}" if session is not None else f"qid:{item['qid']}")
        values.append(1.0 if question["label"] == "OK" else 0.0)
    want = poisson_interval(summarise([values], (True,), keys, "0", 1000)[0], 0.95)
    assert report["intervals"]["precision"] == list(want)


def _two_runs(tmp_path, sessions: bool = True):
    rng = random.Random(9)
    gold, base, cand = [], [], []
    for s in range(25):
        p = rng.choice((0.2, 0.9))
        for t in range(4):
            qid = f"s{s}t{t}"
            item = {"qid": qid, "answerable": True, "gold_claim_substr": ["right answer"]}
            if sessions:
                item.update(session_id=f"S{s}", turn=t + 1)
            gold.append(item)
            base.append({"qid": qid, "answer": "right answer" if rng.random() < p else "nope"})
            cand.append({"qid": qid, "answer": "right answer" if rng.random() < min(1, p + 0.1) else "nope"})
    for name, rows in (("gold.jsonl", gold), ("base.jsonl", base), ("cand.jsonl", cand)):
        write(tmp_path / name, rows)
    return gold


def test_compare_pairs_whole_sessions(tmp_path, ragscore, monkeypatch):
    """The paired bootstrap resamples sessions (as a direct call with the sessions' groups does), from the traces
    or from a baseline report alike; the t test takes one pair per session."""
    from ragscore.comparison import _mean
    from ragscore.metrics.stats import paired_bootstrap

    monkeypatch.chdir(tmp_path)
    _two_runs(tmp_path)
    common = ("--gold", "gold.jsonl", "--format", "json", "--no-fail")
    traces = ragscore("compare", *common, "--baseline", "base.jsonl", "--trace", "cand.jsonl")
    assert traces.status == 0, traces.err
    by_traces = json.loads(traces.out)["metrics"]["precision"]
    base = ragscore(*common, "--trace", "base.jsonl", "--per-question").json()
    cand = ragscore(*common, "--trace", "cand.jsonl", "--per-question").json()
    (tmp_path / "base.json").write_text(json.dumps(base), encoding="utf-8")
    by_report = json.loads(ragscore("compare", *common, "--baseline-report", "base.json", "--trace",
                                                  "cand.jsonl").out)["metrics"]["precision"]
    assert by_report["delta_interval"] == by_traces["delta_interval"] and by_report["p_value"] == by_traces["p_value"]
    columns = [[float(q["label"] == "OK") for q in run["questions"]] for run in (base, cand)]
    groups = [tuple(range(4 * s, 4 * s + 4)) for s in range(25)]
    want = paired_bootstrap(columns[0], columns[1], _mean, 0.95, 1000, "0:precision", groups)
    assert by_traces["delta_interval"] == list(want[0]) and by_traces["p_value"] == want[1]
    t = json.loads(ragscore("compare", *common, "--baseline", "base.jsonl", "--trace", "cand.jsonl",
                                          "--test", "t").out)["metrics"]["precision"]
    assert t["pairs"] == 25 and t["method"] == "t"


@pytest.mark.parametrize(("gold", "trace", "where", "error"), [
    ({"session_id": "S", "turn": -3}, {}, "gold.jsonl:1", 'expected "turn" to be a whole number of at least 0'),
    ({"session_id": "S", "turn": True}, {}, "gold.jsonl:1", 'expected "turn" to be a whole number'),
    ({"session_id": ["A", "B"]}, {}, "gold.jsonl:1",
     'expected "session_id" to name a session (text or an integer), got an array'),
    ({"session_id": ""}, {}, "gold.jsonl:1", 'expected "session_id" to name a session'),
    ({"turn": 1}, {"session_id": 1.5}, "trace.jsonl:1", 'expected "session_id" to name a session'),
])
def test_a_value_that_names_no_session_or_turn_is_an_error_at_its_line(gold, trace, where, error, tmp_path, ragscore):
    write(tmp_path / "gold.jsonl", [{"qid": "a", "answerable": True, "gold_claim_substr": ["right"], **gold}])
    write(tmp_path / "trace.jsonl", [{"qid": "a", "answer": "right", **trace}])
    run = ragscore("--gold", tmp_path / "gold.jsonl", "--trace", tmp_path / "trace.jsonl", "--no-fail",
                   "--session", "session_id")
    assert run.status == 2 and f"{tmp_path / where}: {error}" in run.err and "Traceback" not in run.err


def test_a_part_without_questions_and_gates_on_session_metrics(tmp_path, ragscore, monkeypatch):
    """One question in two processes (a part holds none); a gate on a session metric of sessions that turned on by
    themselves; rates of the families resampled by session; --session none turns them off."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "gold.jsonl", [{"qid": "a1", "answerable": True, "gold_claim_substr": ["answer a1"],
                                     "session_id": "A", "turn": 1, "gold_tool_calls": [{"name": "f"}]}])
    write(tmp_path / "trace.jsonl", [{"qid": "a1", "answer": "answer a1", "tool_calls": [{"name": "f"}]}])
    common = ("--gold", "gold.jsonl", "--trace", "trace.jsonl", "--format", "json", "--no-fail")
    one = ragscore(*common, "--gates", "session_pass_rate>=0.5").json()
    two = ragscore(*common, "--gates", "session_pass_rate>=0.5", "--jobs", "2").json()
    assert one["metrics"]["session_pass_rate"] == 1.0 and two["metrics"] == one["metrics"]
    assert one["gates"]["session_pass_rate"]["status"] == "pass"
    assert one["interval_methods"]["trajectory_exact_match"] == "poisson_bootstrap"
    for index in (1, 2):
        assert ragscore("partial", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--part", f"{index}/2", "-o",
                        f"p{index}.json").status == 0
    assert ragscore("merge", "p1.json", "p2.json", "--format", "json", "--no-fail").json()["metrics"] == one["metrics"]
    off = ragscore(*common, "--session", "none").json()
    assert "sessions" not in off and off["interval_methods"]["trajectory_exact_match"] == "wilson"
