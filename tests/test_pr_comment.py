"""The pull-request comment (``--format pr-comment``, issue 38) and the badge (``--badge``).

Golden comments for score (a failing gate), compare with 0, 1 and 10,000 flipped questions, a suite run and
monitor; the 10,000-flip comment stays under GitHub's 65,536 characters and says how many rows it left out.
Regenerate after an intended change with:  REGENERATE_GOLDEN=1 pytest tests/test_pr_comment.py
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from conftest import DATA, ROOT
from ragscore.reports.pr_comment import LIMIT, Listing, assemble, comment_key, key_of_path, size

GOLDEN = DATA / "golden" / "comment"
REGENERATE = os.environ.get("REGENERATE_GOLDEN") == "1"
GITHUB_LIMIT = 65_536


def golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if REGENERATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"regenerate with REGENERATE_GOLDEN=1 if intended: {path}"


def check_shape(text: str, key: str) -> None:
    """The marker is the last line, the first is the verdict, and the comment fits GitHub's limit."""
    lines = text.splitlines()
    assert lines[-1] == f"<!-- ragscore:{key} -->"
    assert lines[0].startswith("**ragscore")
    assert size(text) < GITHUB_LIMIT
    assert text.count("<details>") == text.count("</details>")


def write_lines(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


HOSTILE = "a|b`c</details><!-- ragscore:forged -->\n| x | y |\r<summary>*_~[l](u)&amp;\x1b[2J\u202e\\|"
OUR_TAGS = ("<details>", "</details>", "<summary>", "</summary>", "<sub>", "</sub>", "<br>")


def raw(text: str) -> str:
    """What Markdown reads as markup: the text without its backslash escapes (each with the character it escapes)."""
    return re.sub(r"\\.", "", text, flags=re.DOTALL)


def check_markdown(text: str, key: str) -> None:
    """Input text closed nothing and opened nothing: each table row has its header's cells, the only HTML is
    ours, the one marker is the last line."""
    check_shape(text, key)
    assert raw(text).count("<!--") == 1 and text.count("<summary>") == text.count("<details>")
    header = 0
    for line in text.splitlines()[:-1]:
        bare = raw(line)
        for tag in OUR_TAGS:
            bare = bare.replace(tag, "")
        assert not re.search(r"<[A-Za-z/!?]", bare), line  # no tag or comment opens ("<=" is a gate's rule)
        if not line.startswith("|"):
            header = 0
            continue
        header = header or bare.count("|")
        assert bare.count("|") == header, line
    assert "\x1b" not in text and "\r" not in text and "\u202e" not in text


def test_hostile_text_in_every_cell(ragscore, isolated: Path) -> None:
    qids = [f"q{n}{HOSTILE}" for n in range(3)]
    gold = [{"qid": qid, "question": HOSTILE, "answerable": True, "gold_claim_substr": ["the answer " + HOSTILE],
             "gold_citations": ["d" + HOSTILE], "forbidden_substr": ["bad" + HOSTILE]} for qid in qids]
    claims = ["bad" + HOSTILE, "nothing", "the answer " + HOSTILE]
    write_lines(isolated / "gold.jsonl", gold)
    write_lines(isolated / "t.jsonl", [{"qid": qid, "retrieved_ids": ["d" + HOSTILE], "answer_json": {
        "claim": claim, "citations": ["d" + HOSTILE]}} for qid, claim in zip(qids, claims, strict=True)])
    write_lines(isolated / "b.jsonl", [{"qid": qid, "retrieved_ids": ["d" + HOSTILE], "answer_json": {
        "claim": "the answer " + HOSTILE, "citations": ["d" + HOSTILE]}} for qid in qids])
    score = ragscore("--gold", "gold.jsonl", "--trace", "t.jsonl", "--format", "pr-comment", "-q", "--comment-key",
                     HOSTILE)
    assert score.status == 1 and "<summary>2 questions failed</summary>" in score.out
    check_markdown(score.out, comment_key(HOSTILE, ""))
    compare = ragscore("compare", "--gold", "gold.jsonl", "--trace", "t.jsonl", "--baseline", "b.jsonl", "--format",
                       "pr-comment", "-q", "--no-fail")
    assert "2 questions got worse" in compare.out
    check_markdown(compare.out, "gold")
    (isolated / "ragscore.toml").write_text(
        f"name = {json.dumps(HOSTILE)}\n[tasks.qa]\ncommand = \"score\"\ngold = \"gold.jsonl\"\ntrace = \"t.jsonl\"\n"
        f"[tasks.ner]\ngold = {json.dumps('missing' + ''.join(c for c in HOSTILE if c.isprintable()))}\n"
        "pred = \"p.jsonl\"\n", encoding="utf-8")
    suite = ragscore("run", "ragscore.toml", "--format", "pr-comment", "-q")
    assert suite.status == 2 and "| `ner` | could not run: missing" in suite.out
    check_markdown(suite.out, comment_key(HOSTILE, ""))
    monitor = ragscore("monitor", "--trace", "t.jsonl", "--format", "pr-comment", "-q")
    check_markdown(monitor.out, "t")


def test_score_with_a_failing_gate(ragscore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    run = ragscore("--gold", "examples/product/gold.jsonl", "--trace", "examples/product/trace.jsonl",
                   "--format", "pr-comment")
    assert run.status == 1  # a gate failed: the comment says which
    check_shape(run.out, "gold")
    assert run.out.startswith("**ragscore: FAIL** · 2 of 6 gates failed: `under_refusal` = 0.2500, expected <= 0.05")
    golden("score.md", run.out)


def test_score_with_repeated_samples_counts_samples_and_lists_each_question_a_sample_failed(
        ragscore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    run = ragscore("--gold", "examples/repeats/gold.jsonl", "--trace", "examples/repeats/trace.jsonl", "--repeats",
                   "samples", "--format", "pr-comment", "-q")
    check_shape(run.out, "gold")
    # 14 answered of 5 questions would be misread: they are samples.
    assert "5 questions of `examples/repeats/gold.jsonl`, in 22 samples: 14 samples answered, 8 refused." in run.out
    # r-02's last sample is OK, but two of its five were not; r-03's last was the one wrong sample of five.
    assert "| r-02 | 3/5 | `OVER_REFUSAL` ×1, `NO_CITATION_HIT` ×1 |" in run.out
    assert "| r-03 | 4/5 | `HALLUCINATION` ×1 |" in run.out and "| r-01 |" not in run.out
    assert "<summary>4 questions failed in a sample</summary>" in run.out


def test_merged_partials_without_rows_say_what_failed_rather_than_list_nothing(ragscore, isolated: Path) -> None:
    common = ["--gold", ROOT / "examples/product/gold.jsonl", "--trace", ROOT / "examples/product/trace.jsonl", "-q"]
    for part in (1, 2):
        assert ragscore("partial", *common, "--part", f"{part}/2", "-o", f"p{part}.json").status == 0
    run = ragscore("merge", "p1.json", "p2.json", "--format", "pr-comment", "-q", "--no-fail")
    check_shape(run.out, "gold")
    assert "<details>" not in run.out
    assert ("\n9 questions failed (`OVER_REFUSAL` 2, `HALLUCINATION` 2, `NO_CITATION_HIT` 2, `CLAIM_MISMATCH` 1, "
            "`FORBIDDEN` 1, `MISSING_TRACE` 1), not listed here, as the run kept no rows (`partial --rows`; in "
            "Python `keep_rows=True`).\n") in run.out
    for part in (1, 2):
        assert ragscore("partial", *common, "--part", f"{part}/2", "-o", f"p{part}.json", "--rows").status == 0
    rows = ragscore("merge", "p1.json", "p2.json", "--format", "pr-comment", "-q", "--no-fail")
    assert "not listed here" not in rows.out and "<summary>9 questions failed</summary>" in rows.out


def test_compare_with_no_and_one_flipped_question(ragscore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)
    same = ragscore("compare", "--gold", "examples/product/gold.jsonl", "--trace", "examples/product/trace.jsonl",
                    "--baseline", "examples/product/trace.jsonl", "--format", "pr-comment", "--comment-key",
                    "release")
    check_shape(same.out, "release")
    assert "<details>" not in same.out and "0 questions got worse, 0 got better" in same.out
    golden("compare-0.md", same.out)
    traces = [json.loads(line) for line in (ROOT / "examples/product/trace.jsonl").read_text().splitlines()]
    first = next(t for t in traces if t["qid"] == "Q001")
    first["answer_json"] = {"claim": "I cannot say.", "citations": []}  # right before, a refusal now
    write_lines(tmp_path / "one.jsonl", traces)
    one = ragscore("compare", "--gold", "examples/product/gold.jsonl", "--trace", str(tmp_path / "one.jsonl"),
                   "--baseline", "examples/product/trace.jsonl", "--format", "pr-comment", "--no-fail")
    check_shape(one.out, "gold")
    assert "| Q001 | `OK` | `OVER_REFUSAL` | answerable but refused |" in one.out
    golden("compare-1.md", one.out.replace(str(tmp_path), "TMP"))


def test_compare_with_repeated_samples_says_no_question_flips(ragscore, monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)
    traces = [json.loads(line) for line in (ROOT / "examples/repeats/trace.jsonl").read_text().splitlines()]
    for trace in traces:
        if trace["qid"] == "r-01":  # right before, refused in every sample now
            trace["answer_json"] = {"claim": "I cannot say.", "citations": []}
    write_lines(tmp_path / "worse.jsonl", traces)
    run = ragscore("compare", "--gold", "examples/repeats/gold.jsonl", "--trace", tmp_path / "worse.jsonl",
                   "--baseline", "examples/repeats/trace.jsonl", "--repeats", "samples", "--format", "pr-comment",
                   "--no-fail", "-q")
    check_shape(run.out, "gold")
    assert "got worse" not in run.out  # not "0 questions got worse": with samples none is counted as flipped
    assert ("against baseline `examples/repeats/trace.jsonl`: with repeated samples a question's correctness is a pass rate, and no "
            "question flips: `pass@k` and `pass^k` compare them question by question.") in run.out


def test_ten_thousand_flipped_questions_fit_and_say_what_they_left_out(ragscore, isolated: Path) -> None:
    gold = [{"qid": f"question-{n:05d}-" + "x" * 40, "question": f"q{n}", "answerable": True,
             "gold_claim_substr": ["the answer is yes"], "gold_citations": ["d1"]} for n in range(10_000)]
    right = [{"qid": g["qid"], "retrieved_ids": ["d1"], "answer_json": {"claim": "The answer is yes.",
                                                                        "citations": ["d1"]}} for g in gold]
    wrong = [{"qid": g["qid"], "retrieved_ids": ["d1"], "answer_json": {"claim": "The answer is no.",
                                                                        "citations": ["d1"]}} for g in gold]
    write_lines(isolated / "gold.jsonl", gold)
    write_lines(isolated / "right.jsonl", right)
    write_lines(isolated / "wrong.jsonl", wrong)
    run = ragscore("compare", "--gold", "gold.jsonl", "--trace", "wrong.jsonl", "--baseline", "right.jsonl",
                   "--format", "pr-comment", "--bootstrap", "50", "--no-fail")
    check_shape(run.out, "gold")
    assert size(run.out) <= LIMIT
    assert "10,000 questions got worse, 0 got better" in run.out
    kept = run.out.count("| `OK` | `CLAIM_MISMATCH` |")
    assert 300 < kept < 10_000
    assert f"*{10_000 - kept:,} more questions that got worse left out" in run.out
    golden("compare-10000.md", run.out)
    # Both ways at once: the two lists share what is left.
    half = wrong[:5_000] + right[5_000:]
    write_lines(isolated / "half.jsonl", half)
    write_lines(isolated / "other.jsonl", right[:5_000] + wrong[5_000:])
    both = ragscore("compare", "--gold", "gold.jsonl", "--trace", "half.jsonl", "--baseline", "other.jsonl",
                    "--format", "pr-comment", "--bootstrap", "50", "--no-fail")
    check_shape(both.out, "gold")
    assert "more questions that got worse left out" in both.out and "more questions that got better left out" in both.out


def test_a_suite_run(ragscore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT / "examples" / "suite")
    run = ragscore("run", "ragscore.toml", "--format", "pr-comment")
    check_shape(run.out, "Stashwell-support-bot")
    assert "| `release` | `under_refusal` = 0.2500, expected worse by <= 0.1 |" in run.out
    golden("run.md", run.out)


def test_monitor(ragscore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT / "examples" / "monitor")
    run = ragscore("monitor", "--trace", "today.jsonl", "--baseline", "baseline.jsonl", "--gates-file", "gates.toml",
                   "--format", "pr-comment", "--pr-comment", "/dev/null")
    check_shape(run.out, "today")
    golden("monitor.md", run.out)


def test_monitor_says_which_traces_no_window_holds(ragscore, isolated: Path) -> None:
    traces = [json.loads(line) for line in (ROOT / "examples/monitor/today.jsonl").read_text().splitlines()]
    for n, trace in enumerate(traces[:30]):
        trace["ts"] = "not a time" if n % 3 == 0 else None
    write_lines(isolated / "t.jsonl", traces)
    run = ragscore("monitor", "--trace", "t.jsonl", "--format", "pr-comment", "-q")
    check_shape(run.out, "t")
    assert ("480 traces of `t.jsonl` in 12 windows of `1h`; 20 without a timestamp, 10 with one that cannot be read "
            "(in the whole period only).") in run.out


def test_the_comment_file_and_the_report_are_written_together(ragscore, monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "comment.md"
    run = ragscore("--gold", "examples/gold.jsonl", "--trace", "examples/trace.jsonl", "--pr-comment", out,
                   "--comment-key", "qa bot/main", "--format", "none")
    assert run.status == 0
    check_shape(out.read_text(encoding="utf-8"), "qa-bot-main")
    assert out.read_text(encoding="utf-8").startswith("**ragscore: PASS** · all 6 gates passed")


@pytest.mark.parametrize("option", ["--pr-comment", "--badge", "--json", "--markdown"])
def test_a_report_option_naming_standard_output_is_refused(ragscore, isolated: Path, option: str) -> None:
    # "-" was written as a file named "-" (two such options: one of the reports lost).
    gold = ROOT / "examples" / "gold.jsonl"
    run = ragscore("--gold", gold, "--trace", ROOT / "examples" / "trace.jsonl", option, "-")
    assert run.status == 2 and not (isolated / "-").exists()
    assert run.err == (f'ragscore: error: {option} "-": a report option names a file; --format prints a report on '
                       "standard output (or name /dev/stdout)\n")
    assert ragscore("partial", "--gold", gold, "--trace", ROOT / "examples" / "trace.jsonl", "--part", "1/1", "-o",
                    "-", "-q").status == 0  # where "-" is standard output, it still is


@pytest.mark.parametrize(("given", "fallback", "expected"), [
    (None, "gold", "gold"), ("qa bot", "x", "qa-bot"), ("--> <script>", "x", "script"), ("", "x", "ragscore"),
    (None, "a/b/c.jsonl.gz", "a-b-c.jsonl.gz"), ("ünïcode", "x", "n-code"),
])
def test_the_key_cannot_close_the_marker(given: str | None, fallback: str, expected: str) -> None:
    key = comment_key(given, fallback)
    assert key == expected
    assert all(c.isascii() and (c.isalnum() or c in "._-") for c in key)  # no ">": nothing closes the comment


def test_a_long_key_is_cut_and_stays_apart_from_another() -> None:
    one, other = comment_key("k" * 70_000 + "1", "x"), comment_key("k" * 70_000 + "2", "x")
    assert len(one) == len(other) == 64 and one != other and one.startswith("k" * 51 + "-")
    assert comment_key("k" * 64, "x") == "k" * 64


def test_key_of_a_path() -> None:
    assert key_of_path("eval/gold.jsonl.gz") == "gold"
    assert key_of_path("gold") == "gold"
    assert key_of_path("a.b/trace.jsonl, b.jsonl") == "trace"


def test_assemble_shares_the_room_between_lists_and_never_passes_the_limit() -> None:
    long = ["| " + "é" * 300 + " |"] * 400  # 2-byte characters count once; astral ones twice
    astral = ["| " + "\U0001f600" * 200 + " |"] * 400
    lines = "".join(assemble(["**ragscore: FAIL**"], [("two lists", [Listing("A", ["| a |", "|---|"], long),
                                                                      Listing("B", ["| b |", "|---|"], astral)])],
                             [], "k"))
    assert size(lines) <= LIMIT
    assert "more rows left out" in lines
    a = lines.count("é" * 300)
    b = lines.count("\U0001f600" * 200)
    assert a > 50 and b > 50  # neither list took all the room
    small = "".join(assemble(["**ragscore: PASS**"], [("one", [Listing("A", ["| a |"], ["| 1 |", "| 2 |"])])], [],
                             "k"))
    assert "left out" not in small and small.endswith("<!-- ragscore:k -->\n")


def test_the_head_tables_and_the_first_line_are_cut_to_fit_too(ragscore, isolated: Path) -> None:
    # A suite of 600 tasks that cannot run, each with a long error: the task table and the first line too.
    (isolated / "ragscore.toml").write_text('name = "' + "n" * 5_000 + '"\n' + "".join(
        f'[tasks.t{n:04d}]\ncommand = "classify"\ngold = "missing-{"y" * 200}-{n}.jsonl"\npred = "p.jsonl"\n'
        for n in range(600)), encoding="utf-8")
    suite = ragscore("run", "ragscore.toml", "--format", "pr-comment", "-q")
    assert suite.status == 2
    check_shape(suite.out, comment_key(None, "n" * 5_000))
    assert size(suite.out) <= LIMIT
    first = suite.out.splitlines()[0]
    assert first.endswith("600 of 600 tasks could not run: t0000, t0001, t0002, t0003, t0004, t0005, t0006, t0007, "
                          "t0008, t0009 and 590 more") and len(first) < 300
    assert "more tasks left out" in suite.out and "more rows left out" in suite.out
    # score: 256 gated scores with long names (the first line names ten failed gates, the metric table is cut).
    names = [f"s{n:03d}_" + "z" * 200 for n in range(256)]
    gold = [{"qid": f"q{n}", "question": "x", "answerable": True, "gold_claim_substr": ["the answer"],
             "gold_citations": ["d"]} for n in range(3)]
    write_lines(isolated / "gold.jsonl", gold)
    write_lines(isolated / "t.jsonl", [{"qid": g["qid"], "retrieved_ids": ["d"],
                                        "answer_json": {"claim": "the answer", "citations": ["d"]}} for g in gold])
    (isolated / "s.csv").write_text("qid," + ",".join(names) + "\n" + "".join(
        f"{g['qid']}," + ",".join("0.1" for _ in names) + "\n" for g in gold), encoding="utf-8")
    (isolated / "gates.toml").write_text("[gates]\n" + "".join(f'"{name}" = 0.9\n' for name in names))
    score = ragscore("--gold", "gold.jsonl", "--trace", "t.jsonl", "--scores", "s.csv", "--format", "pr-comment", "-q")
    assert score.status == 1
    check_shape(score.out, "gold")
    assert size(score.out) <= LIMIT
    first = score.out.splitlines()[0]
    assert first.endswith(" and 246 more") and first.count("expected >= 0.9") == 10 and len(first) < 2_000
    assert "| `s000_" + "z" * 200 + "` | 0.1000 |" in score.out  # a table shows the whole name
    assert "more metrics left out" in score.out


def test_a_row_bigger_than_the_room_is_left_out() -> None:
    huge = "| " + "x" * (LIMIT + 10) + " |"
    text = "".join(assemble(["**ragscore: FAIL**", Listing("", ["| m |", "|---|"], [huge, "| small |"], "metrics")],
                            [("one", [Listing("A", ["| a |", "|---|"], ["| 1 |", huge])])], [], "k"))
    assert size(text) <= LIMIT
    assert "*2 more metrics left out" in text and "*1 more rows left out" in text and "| 1 |" in text


def test_badges(ragscore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)
    common = ["--gold", "examples/product/gold.jsonl", "--trace", "examples/product/trace.jsonl", "--format", "none",
              "-q", "--no-fail"]
    badge = tmp_path / "badge.json"
    assert ragscore(*common, "--badge", badge).status == 0
    assert json.loads(badge.read_text()) == {"schemaVersion": 1, "label": "ragscore", "message": "fail", "color": "red"}
    for metric, message, color in (("precision", "0.8065", "brightgreen"), ("under_refusal", "0.2500", "red"),
                                   ("full_recall@5", "0.9375", "blue")):
        assert ragscore(*common, "--badge", badge, "--badge-metric", metric).status == 0
        assert json.loads(badge.read_text()) == {"schemaVersion": 1, "label": metric, "message": message,
                                                 "color": color}
    wrong = ragscore(*common, "--badge", badge, "--badge-metric", "precison")
    assert wrong.status == 2 and 'did you mean "precision"?' in wrong.err
    monkeypatch.chdir(ROOT / "examples" / "suite")
    suite = ragscore("run", "ragscore.toml", "--badge", badge, "--badge-metric", "qa:chr", "--format", "none", "-q")
    assert suite.status == 1  # the suite's own verdict; the badge shows the task's metric
    assert json.loads(badge.read_text())["message"] == "0.8710"
    assert ragscore("run", "ragscore.toml", "--badge", badge, "--badge-metric", "qq:chr", "--format", "none",
                    "-q").status == 2
