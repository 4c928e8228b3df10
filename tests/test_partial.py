"""Partial results that merge (issue 17): ragscore partial / merge, and the Python API behind them."""

from __future__ import annotations

import gzip
import json
import random
import re
import zlib

import pytest

import ragscore
from conftest import EXAMPLES, write
from ragscore import owner as owner_of
from ragscore.errors import InputError, UsageError
from test_shards import _gold_and_traces, _lines, _split


def _data(folder, n=160, seed=3):
    """A run with every kind of trouble: duplicates, unknown and missing traces, unreadable ones,
    graded relevance, reference answers, a category to slice by, and scores from other evaluators."""
    rng = random.Random(seed)
    gold, traces = _gold_and_traces(n, seed)
    for item in gold:
        item["category"] = rng.choice(["billing", "shipping", "returns"])
        item["reference_answer"] = f"It is fact {item['qid'][1:]}."
        if item["answerable"]:
            item["gold_relevance"] = {item["gold_citations"][0]: 2, f"d{rng.randrange(n)}": 1}
    for trace in traces:
        if rng.random() < 0.5 and trace["qid"].startswith("q"):
            trace["scores"] = {"faithfulness": round(rng.random(), 3)}
    write(folder / "gold.jsonl", gold)
    (folder / "trace.jsonl").write_text(_lines(traces), encoding="utf-8")
    scores = "qid,judge\n" + "".join(f"{g['qid']},{rng.random():.4f}\n" for g in gold[::3])
    (folder / "scores.csv").write_text(scores, encoding="utf-8")
    return gold, traces


OPTIONS = ["--metrics", "all", "--by", "category", "--scores", "scores.csv"]


@pytest.mark.parametrize("parts", [1, 2, 3, 5, 8])
def test_merging_the_parts_gives_the_one_process_report(ragscore, isolated, parts):
    _data(isolated)
    paths = []
    for index in range(1, parts + 1):
        path = f"part-{index}-of-{parts}.json"
        made = ragscore("partial", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--part", f"{index}/{parts}",
                        "-o", path, "--per-question", "-q", *OPTIONS)
        assert (made.status, made.out) == (0, ""), made.err
        paths.append(path)
    random.Random(parts).shuffle(paths)  # any order
    for report in (["--per-question"], ["--format", "markdown"], ["--format", "text"], ["--only-failures"]):
        expected = ragscore("--gold", "gold.jsonl", "--trace", "trace.jsonl", *OPTIONS, *report)
        merged = ragscore("merge", *paths, "--scores", "scores.csv", *report)
        assert merged.status == expected.status == 1
        assert merged.out == expected.out, report
        assert merged.err == expected.err
    assert '"category"' in expected.out  # the slices are there


@pytest.mark.parametrize(("resamples", "method"), [("12500", "poisson_bootstrap"), ("12501", "normal")])
def test_intervals_merge_without_per_question_values(ragscore, isolated, resamples, method):
    # 160 questions x 12,500 resamples: within the budget of two million, so every part sums its
    # Poisson bootstrap replicates. One more resample and the run is beyond it: every part knows it
    # from the whole gold set it reads, and none spends a replicate; the normal interval it is.
    _data(isolated)
    for index in (1, 2):
        made = ragscore("partial", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--part", f"{index}/2",
                        "-o", f"p{index}.json", "-q", "--bootstrap", resamples, *OPTIONS)
        assert made.status == 0, made.err
    merged = ragscore("merge", "p2.json", "p1.json", "--scores", "scores.csv", "--format", "json")
    expected = ragscore("--gold", "gold.jsonl", "--trace", "trace.jsonl", "--bootstrap", resamples, *OPTIONS,
                        "--format", "json")
    assert merged.out == expected.out and merged.err == expected.err
    methods = expected.json()["interval_methods"]
    assert methods["mrr"] == methods["ndcg@10"] == methods["citation_precision"] == methods["faithfulness"] == method
    partial = json.loads((isolated / "p1.json").read_text(encoding="utf-8"))
    assert (partial["result"]["tally"]["shares"]["replicates"] is None) == (method == "normal")


def test_a_partial_holds_no_value_per_question(ragscore, isolated):
    sizes = []
    for n in (2500, 5000):
        _data(isolated, n)
        assert ragscore("partial", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--part", "1/2", "-o", "p.json",
                        "-q", "--metrics", "all").status == 0
        sizes.append((isolated / "p.json").stat().st_size)
    assert sizes[1] - sizes[0] < 1000, sizes  # twice the questions, the same summaries (0.1 kept 0.2 KB a question)


def test_every_grouping_of_merges_gives_the_same_bytes(isolated):
    _data(isolated)
    parts = [ragscore.partial("gold.jsonl", "trace.jsonl", (i, 6), metrics="all", per_question=True)
             for i in range(6)]
    one = ragscore.score("gold.jsonl", "trace.jsonl", metrics="all", per_question=True).report()
    left = parts[0]
    for p in parts[1:]:
        left = left.merge(p)
    right = parts[5]
    for p in reversed(parts[:5]):
        right = p.merge(right)
    pairs = [parts[i].merge(parts[i + 1]) for i in (0, 2, 4)]
    nested = pairs[2].merge(pairs[0]).merge(pairs[1])
    through_json = [ragscore.Partial.from_json(p.to_json()) for p in (pairs[1], parts[0], parts[1], pairs[2])]
    rebuilt = through_json[0].merge(through_json[1]).merge(through_json[2]).merge(through_json[3])
    for merged in (left, right, nested, rebuilt):
        assert merged.complete
        assert ragscore.finalize(merged, per_question=True).report() == one
    # The merged partial itself is one text however it was grouped (exact summaries in one form).
    assert left.to_json() == right.to_json() == nested.to_json() == rebuilt.to_json()


def test_sharded_compressed_traces_merge_with_their_files_listed(ragscore, isolated):
    _data(isolated)
    (isolated / "logs").mkdir()
    for n, shard in enumerate(_split((isolated / "trace.jsonl").read_text(encoding="utf-8"), 4)):
        (isolated / "logs" / f"t{n}.jsonl.gz").write_bytes(gzip.compress(shard.encode(), mtime=0))
    for index in (1, 2, 3):
        assert ragscore("partial", "--gold", "gold.jsonl", "--trace", "logs/*.gz", "--part", f"{index}/3",
                        "-o", f"p{index}.json", "-q").status == 0
    merged = ragscore("merge", "p3.json", "p1.json", "p2.json")
    expected = ragscore("--gold", "gold.jsonl", "--trace", "logs/*.gz")
    assert merged.out == expected.out and merged.err == expected.err
    assert [f["path"] for f in merged.json()["inputs"]["trace"]["files"]] == [f"logs/t{n}.jsonl.gz" for n in range(4)]


def test_an_engine_routes_records_by_owner(isolated):
    """What a Spark, Dask or Ray job does: each partition holds its part's traces, as records."""
    gold, traces = _data(isolated)
    n = 4
    partitions = [[] for _ in range(n)]
    for trace in traces:
        partitions[ragscore.owner(trace["qid"], n)].append(trace)
    parts = [ragscore.partial(gold, records, (i, n), metrics="all") for i, records in enumerate(partitions)]
    merged = parts[0]
    for p in parts[1:]:
        merged = merged.merge(ragscore.Partial.from_json(p.to_json()))
    run = ragscore.finalize(merged)
    expected = ragscore.score(gold, traces, metrics="all")
    assert run.metrics == expected.metrics and run.intervals == expected.intervals
    assert run.document["counts"] == expected.document["counts"]
    assert run.document["labels"] == expected.document["labels"]
    assert run.document["diagnoses"] == expected.document["diagnoses"]
    # Notes quote the first unknown and duplicate traces by record number, which is each
    # partition's own: the same notes, the examples in another order.
    def shown(notes):
        return [re.sub(r"<trace records>:\d+", "<trace records>:N", note.split(": e.g.")[0]) for note in notes]

    assert shown(run.notes()) == shown(expected.notes())
    # The traces' digest is one of the parts' digests (records have no file to hash as a whole).
    assert run.document["inputs"]["gold"] == expected.document["inputs"]["gold"]
    assert run.document["inputs"]["trace"]["path"] == "<trace records>"
    # A record routed to the wrong partition is an error, not a question silently left out.
    stray = partitions[1] + [partitions[2][0]]
    with pytest.raises(InputError) as caught:
        ragscore.partial(gold, stray, (1, n))
    qid = partitions[2][0]["qid"]
    assert str(caught.value) == (f"<trace records>, record {len(stray)}: the trace of qid \"{qid}\" belongs to part 3 "
                                 f"of 4, not 2: route each trace to ragscore.owner(qid, 4)")


def test_owner_is_the_split_of_jobs():
    for qid in ["q1", "Q-0042", "é", "東京", ""]:
        for n in (1, 2, 7, 64):
            assert ragscore.owner(qid, n) == zlib.crc32(qid.encode("utf-8", "surrogatepass")) % n
    with pytest.raises(UsageError):
        ragscore.owner("q1", 0)
    assert ragscore.owner("q1", 2**32) == zlib.crc32(b"q1")  # the most parts a question can fall in
    with pytest.raises(UsageError, match=r"^part: expected at most 4,294,967,296 parts, got 4,294,967,297$"):
        ragscore.owner("q1", 2**32 + 1)
    with pytest.raises(UsageError, match=r"^part: expected at most 4,294,967,296 parts, got 10,000,000,000$"):
        ragscore.partial([], [{"qid": "q1"}], (0, 10**10))
    with pytest.raises(TypeError):
        ragscore.owner(1, 2)


def _partials(ragscore, parts=3, *extra, prefix="p"):
    paths = []
    for index in range(1, parts + 1):
        path = f"{prefix}{index}.json"
        run = ragscore("partial", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--part", f"{index}/{parts}",
                       "-o", path, "-q", *extra)
        assert run.status == 0, run.err
        paths.append(path)
    return paths


def test_merging_what_is_not_one_run_is_an_error_naming_the_cause(ragscore, isolated):
    gold, _ = _data(isolated)
    p1, p2, p3 = _partials(ragscore)
    cases = [
        ([p1, p2], "merge: part 3 of 3 missing: a report needs every part"),
        ([p1], "merge: parts 2, 3 of 3 missing: a report needs every part"),
        ([p1, p2, p3, p2], "merge: part 2/3 is in both p2.json and p2.json"),
    ]
    _partials(ragscore, 2, prefix="two")
    cases.append(([p1, "two2.json"], "merge: two2.json and p1.json are not parts of one run: one has 2 parts, the "
                                      "other 3"))
    cases.append((["two1.json", p2], "merge: p2.json and two1.json are not parts of one run: one has 3 parts, the "
                                     "other 2"))
    _partials(ragscore, 3, "--k", "3", prefix="k")
    cases.append(([p1, p2, "k3.json"], "merge: k3.json and p1.json are not parts of one run: scored with other "
                                       "settings (k)"))
    write(isolated / "gold.jsonl", gold[:-1])
    _partials(ragscore, 3, prefix="g")
    cases.append(([p1, p2, "g3.json"], "merge: g3.json and p1.json are not parts of one run: other gold sets"))
    for paths, message in cases:
        run = ragscore("merge", *paths)
        assert run.status == 2 and run.out == "", paths
        assert run.err.startswith(f"ragscore: error: {message}"), (paths, run.err)


def test_what_a_merge_cannot_give_is_an_error(ragscore, isolated):
    _data(isolated)
    paths = _partials(ragscore)
    expectations = [
        (["--format", "markdown"], "merge: a Markdown or HTML report lists the questions, and the partials keep no "
                                   "rows: make them with --rows (or --per-question)"),
        (["--per-question"], "merge: the partials keep no per-question rows: make them with per-question rows "
                             "(ragscore partial --per-question, or --rows)"),
        (["--gates", "ndcg@10>=0.5"], "merge: the gates need the retrieval metrics, which the partials were not "
                                      "scored with: make the partials with --metrics retrieval"),
        (["--scores", "scores.csv"], "merge: the partials were made without a --scores file"),
    ]
    for options, message in expectations:
        run = ragscore("merge", *paths, *options)
        assert (run.status, run.out, run.err) == (2, "", f"ragscore: error: {message}\n"), options
    with_scores = _partials(ragscore, 3, "--scores", "scores.csv", prefix="s")
    run = ragscore("merge", *with_scores)
    assert run.err == "ragscore: error: merge: the partials were made with a --scores file: give it to merge too\n"
    (isolated / "other.csv").write_text("qid,judge\nq0001,0.5\n", encoding="utf-8")
    run = ragscore("merge", *with_scores, "--scores", "other.csv")
    assert run.err == ("ragscore: error: merge: other.csv is not the --scores file the partials were made with "
                       "(scores.csv: another sha256)\n")
    (isolated / "gates.toml").write_text("[diagnose]\nsamples = 2\n", encoding="utf-8")
    run = ragscore("merge", *paths)
    assert run.err == ("ragscore: error: merge: the diagnosis rules ([diagnose] of the gates file) are not those "
                       "the partials were made with: merge with the same gates file\n")


def test_a_partial_file_that_is_not_one_is_an_input_error(ragscore, isolated):
    _data(isolated)
    (p1,) = _partials(ragscore, 1)
    doc = json.loads((isolated / p1).read_text(encoding="utf-8"))
    cases = {
        "junk.json": ("{not json", "junk.json:1:2: not a ragscore partial: invalid JSON (Expecting property name "
                                   "enclosed in double quotes)"),
        "report.json": (ragscore("--gold", "gold.jsonl", "--trace", "trace.jsonl").out,
                        'report.json: not a ragscore partial (expected "format": "ragscore-partial")'),
        "future.json": (json.dumps({**doc, "version": 5}),
                        "future.json: a ragscore partial of version 5; this ragscore (0.1.0) reads version 4: make "
                        "the partials again with it"),
        "damaged.json": (json.dumps({**doc, "result": {**doc["result"], "tally": {}}}),
                         'damaged.json: a damaged ragscore partial: "result.tally.answered" is missing'),
        "tampered.json": (json.dumps({**doc, "settings": {**doc["settings"], "k": 3}}),
                          'tampered.json: a damaged ragscore partial: "signature" does not match the settings'),
    }
    for name, (text, message) in cases.items():
        (isolated / name).write_text(text, encoding="utf-8")
        run = ragscore("merge", name)
        assert (run.status, run.out, run.err) == (2, "", f"ragscore: error: {message}\n"), name


def test_a_summary_no_run_can_make_is_refused_not_a_crash(ragscore, isolated):
    """Sums, scales and replicates that no run can make, and JSON no reader should choke on: an
    input error (exit status 2), never a traceback at report time."""
    _data(isolated)
    (p1,) = _partials(ragscore, 1, "--metrics", "all")
    doc = json.loads((isolated / p1).read_text(encoding="utf-8"))
    shares = doc["result"]["tally"]["shares"]
    assert shares["n"] and shares["replicates"] is not None

    def with_shares(**changes):
        return {**doc, "result": {**doc["result"], "tally": {**doc["result"]["tally"], "shares": {**shares, **changes}}}}

    edits = {
        "a scale beyond a double's": with_shares(scale=2**70),
        "a sum beyond its values": with_shares(total=hex(2**2000)),
        "a sum of squares below the square of the sum": with_shares(squares="0x0"),
        "no sum of squares for a mean": with_shares(squares=None),
        "a replicate scale beyond a double's": with_shares(replicates={**shares["replicates"], "scale": 2**70}),
        "a replicate sum beyond its values": with_shares(
            replicates={**shares["replicates"], "sums": [hex(2**2000)] * len(shares["replicates"]["sums"])}),
        "too few replicates": with_shares(replicates={**shares["replicates"], "sums": ["0x0"], "weights": [1]}),
        "a hexadecimal integer with an underscore": with_shares(total="0x_1"),
        "a value beyond any score": with_shares(high=1e300),
        "traces as a list": {**doc, "traces": []},
        "a confidence of 2": {**doc, "settings": {**doc["settings"], "confidence": 2.0}},
        "a negative bootstrap": {**doc, "settings": {**doc["settings"], "bootstrap": -5}},
    }
    texts = {name: json.dumps(edit) for name, edit in edits.items()}
    texts["a number of 5,000 digits"] = json.dumps(doc).replace('"parts": 1', '"parts": 1' + "0" * 5000, 1)
    texts["JSON nested too deep"] = "[" * 100_000 + "]" * 100_000
    exact = {"a number of 5,000 digits": "not a ragscore partial: invalid JSON (a number has too many digits)",
             "JSON nested too deep": "not a ragscore partial: invalid JSON (nested too deeply to read)"}
    for name, text in texts.items():
        (isolated / "bad.json").write_text(text, encoding="utf-8")
        run = ragscore("merge", "bad.json")
        assert run.status == 2 and run.out == "", name
        if name in exact:
            assert run.err == f"ragscore: error: bad.json: {exact[name]}\n", name
        assert re.fullmatch(r"ragscore: error: bad\.json: (a damaged ragscore partial|not a ragscore partial)[^\n]*\n",
                            run.err), (name, run.err)


def test_partial_usage_errors(ragscore, isolated):
    _data(isolated)
    for part, shown in (("0/3", '"0/3"'), ("4/3", '"4/3"'), ("x", '"x"'), ("1/0", '"1/0"'), ("1/1_0", '"1/1_0"'),
                        ("1/" + "9" * 30, '"1/' + "9" * 30 + '"')):
        run = ragscore("partial", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--part", part, "-o", "p.json")
        assert run.status == 2 and run.err.endswith(f"expected I/N with 1 <= I <= N (part I of N), got {shown}\n")
    # owner() never gives a question a part past 2**32, and merge refuses a partial claiming more
    run = ragscore("partial", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--part", "1/4294967297", "-o", "p.json")
    assert run.status == 2 and run.err.endswith('argument --part: expected at most 4,294,967,296 parts, got "1/4294967297"\n')
    assert not (isolated / "p.json").exists()
    run = ragscore("partial", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--part", "1/2", "-o", "gold.jsonl")
    assert run.status == 2 and "a report never overwrites an input" in run.err
    # Traces that join by question text cannot be split; one part of one is the whole run.
    write(isolated / "byq.jsonl", [{"question": "question 1?", "answer_json": {"claim": "not in context"}}])
    run = ragscore("partial", "--gold", "gold.jsonl", "--trace", "byq.jsonl", "--part", "1/2", "-o", "p.json")
    assert run.status == 2 and "these inputs cannot be scored in parts: traces without a qid" in run.err
    assert "make one partial of the whole run (--part 1/1, or part=(0, 1))" in run.err
    whole = ragscore("partial", "--gold", "gold.jsonl", "--trace", "byq.jsonl", "--part", "1/1", "-o", "p.json")
    assert whole.status == 0, whole.err
    # So can a trace file that is one JSON array (its records may span lines): the reason is named.
    write(isolated / "array.json", json.dumps([{"qid": "q1", "answer_json": {"claim": "not in context"}}], indent=1))
    run = ragscore("partial", "--gold", "gold.jsonl", "--trace", "array.json", "--part", "1/2", "-o", "p.json")
    assert run.status == 2 and "JSON that is not JSON Lines (one array, or records over several lines)" in run.err
    assert ragscore("partial", "--gold", "gold.jsonl", "--trace", "array.json", "--part", "1/1", "-o", "a.json").status == 0
    assert ragscore("merge", "p.json", "-q").out == ragscore("--gold", "gold.jsonl", "--trace", "byq.jsonl").out
    # An input error is the part's, with its file and line; the output file is left as it was.
    before = (isolated / "p.json").read_bytes()
    (isolated / "bad.jsonl").write_text('{"qid": "q0001",}\n', encoding="utf-8")
    owner = owner_of("q0001", 2) + 1
    run = ragscore("partial", "--gold", "gold.jsonl", "--trace", "bad.jsonl", "--part", f"{owner}/2", "-o", "p.json")
    assert run.status == 2 and run.err.startswith("ragscore: error: bad.jsonl:1:17: invalid JSON"), run.err
    assert (isolated / "p.json").read_bytes() == before


def test_numbers_are_read_back_bit_for_bit_nan_and_infinities_too():
    from ragscore.json_paths import Damaged, Node, read_number
    from ragscore.partials import _int, _nums

    values = [0.1, 1 / 3, -0.0, 1e-310, float("nan"), float("inf"), float("-inf"), 5e300]
    written = json.loads(json.dumps(_nums(values), allow_nan=False))
    assert written[4:7] == [None, "inf", "-inf"]
    back = [read_number(x) for x in written]
    assert [x.hex() for x in back if x == x] == [x.hex() for x in values if x == x]
    assert back[4] != back[4]
    assert read_number(2) == 2.0
    # NaN and the infinities are written null, "inf" and "-inf": JSON's NaN and Infinity are not a partial's.
    for bad in (True, "1.0", [1.0], float("nan"), float("inf"), 10**400):
        with pytest.raises(Damaged):
            read_number(bad)
    # The integers of exact sums outgrow a double (and JSON readers that read numbers as doubles).
    for n in (0, 1, -1, 2**53 + 1, -(3**700), 10**5000):
        assert Node(json.loads(json.dumps(_int(n)))).hexadecimal() == n
    for bad in (12, "12", "0xg", None):
        with pytest.raises(Damaged):
            Node(bad).hexadecimal()


def _merged_equals_score(ragscore, gold, trace, parts=3, stdin=None, extra=()):
    """Make the parts (reading ``stdin`` for "-"), merge them and compare with score, bytes and notes."""
    paths = []
    for index in range(1, parts + 1):
        path = f"m{index}.json"
        if stdin is not None:
            import sys
            from io import BytesIO, TextIOWrapper
            saved = sys.stdin
            sys.stdin = TextIOWrapper(BytesIO(stdin.read_bytes()), encoding="utf-8")
        try:
            made = ragscore("partial", "--gold", gold, "--trace", trace, "--part", f"{index}/{parts}", "-o", path,
                            "-q", *extra)
        finally:
            if stdin is not None:
                sys.stdin = saved
        assert made.status == 0, made.err
        paths.append(path)
    expected = ragscore("--gold", stdin.name if gold == "-" else gold, "--trace",
                        stdin.name if trace == "-" else trace, *extra)
    merged = ragscore("merge", *paths)
    return merged, expected


def test_gold_read_through_a_mapping_or_as_ragas_and_standard_input_keep_their_texts(ragscore, isolated):
    gold, _ = _data(isolated)
    # A mapped gold set: its quoted questions are read through the mapping, not raw.
    write(isolated / "mapped.jsonl", [{"meta": {"text": g["question"], "ok": g["answerable"]},
                                       **{k: v for k, v in g.items() if k not in ("question", "answerable")}}
                                      for g in gold])
    (isolated / "gates.toml").write_text('[gold.fields]\nquestion = "meta.text"\nanswerable = "meta.ok"\n',
                                         encoding="utf-8")
    merged, expected = _merged_equals_score(ragscore, "mapped.jsonl", "trace.jsonl")
    assert (merged.out, merged.err) == (expected.out, expected.err)
    assert '"question": "question' in merged.out  # the worst questions are quoted with their text
    assert ragscore("--gold", "mapped.jsonl", "--trace", "trace.jsonl", "--jobs", "2").out == expected.out
    (isolated / "gates.toml").unlink()
    # A ragas dataset as its own gold set.
    lines = (EXAMPLES / "formats" / "ragas.jsonl").read_text(encoding="utf-8").splitlines()
    records = [{"qid": f"r{n}", **json.loads(line)} for n, line in enumerate(lines)]
    write(isolated / "ragas.jsonl", records)
    merged, expected = _merged_equals_score(ragscore, "ragas.jsonl", "ragas.jsonl")
    assert (merged.out, merged.err) == (expected.out, expected.err)
    # Standard input cannot be read again: the part keeps its texts.
    for gold_in, trace_in, source in (("-", "trace.jsonl", "gold.jsonl"), ("gold.jsonl", "-", "trace.jsonl")):
        merged, expected = _merged_equals_score(ragscore, gold_in, trace_in, stdin=isolated / source)
        assert merged.out.replace('"path": "-"', "") == expected.out.replace(f'"path": "{source}"', "")


def test_partials_of_other_trace_files_or_formats_do_not_merge(ragscore, isolated):
    _data(isolated)
    lines = (isolated / "trace.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (isolated / "fewer.jsonl").write_text("".join(lines[:100]), encoding="utf-8")
    p1, p2, p3 = _partials(ragscore)
    assert ragscore("partial", "--gold", "gold.jsonl", "--trace", "fewer.jsonl", "--part", "2/3", "-o", "f2.json",
                    "-q").status == 0
    run = ragscore("merge", p1, "f2.json", p3)
    assert run.status == 2 and run.err.startswith("ragscore: error: merge: f2.json and p1.json are not parts of one "
                                                  "run: other trace files (sha256 ")
    # The same files named another way (another folder, another mount): one run, named as the lowest
    # part names them, so the order of the arguments never changes a byte.
    (isolated / "sub").mkdir()
    for index in (2, 3):
        made = ragscore("partial", "--gold", isolated / "gold.jsonl", "--trace", isolated / "trace.jsonl",
                        "--part", f"{index}/3", "-o", isolated / f"s{index}.json", "-q")
        assert made.status == 0, made.err
    expected = ragscore("merge", p1, p2, p3).out
    assert ragscore("merge", "s3.json", p1, "s2.json").out == expected
    assert ragscore("merge", p3, p2, p1).out == expected


def test_records_whose_parts_detect_other_formats_do_not_merge_silently(isolated):
    gold = [{"qid": f"q{i}", "answerable": False} for i in range(40)]
    native = [{"qid": f"q{i}", "answer_json": {"claim": "not in context"}} for i in range(40)]
    ragas = [{"qid": f"q{i}", "user_input": "?", "response": "not in context"} for i in range(40)]
    parts = [[], [], []]
    for record in native:
        parts[ragscore.owner(record["qid"], 3)].append(record)
    parts[1] = [r for r in ragas if ragscore.owner(r["qid"], 3) == 1]
    partials = [ragscore.partial(gold, records, (i, 3)) for i, records in enumerate(parts)]
    with pytest.raises(UsageError) as caught:
        partials[0].merge(partials[1]).merge(partials[2])
    assert "the parts read their traces in different formats (native in partial 1, ragas in partial 2)" in str(
        caught.value)
    # A part with no records detects nothing: the format is the parts' that read some.
    only = [[r for r in ragas if ragscore.owner(r["qid"], 8) == i] for i in range(8)]
    only[0] = []
    merged = ragscore.Partial.from_json(ragscore.partial(gold, only[0], (0, 8)).to_json())
    for i in range(1, 8):
        merged = merged.merge(ragscore.partial(gold, only[i], (i, 8)))
    run = ragscore.finalize(merged)
    assert run.document["settings"]["trace_format"] == "ragas"
    assert run.document["signature"] == ragscore.score(gold, ragas).document["signature"]


def test_a_partial_whose_counts_do_not_add_up_is_refused(ragscore, isolated):
    _data(isolated)
    (p1,) = _partials(ragscore, 1)
    doc = json.loads((isolated / p1).read_text(encoding="utf-8"))
    tally = doc["result"]["tally"]
    answered, refused = tally["answered"], tally["refused"]
    for change, message in (
            ({"answered": answered + 1000}, f'"result.tally.answered" ({answered + 1000:,}) and "result.tally.refused" '
                                            f"({refused}) do not add up to the 160 questions"),
            ({"hit": -5}, '"result.tally.hit": expected a count (an integer of at least 0), got -5')):
        edited = {**doc, "result": {**doc["result"], "tally": {**tally, **change}}}
        (isolated / "edited.json").write_text(json.dumps(edited), encoding="utf-8")
        run = ragscore("merge", "edited.json")
        assert (run.status, run.err) == (2, f"ragscore: error: edited.json: a damaged ragscore partial: {message}\n")


def test_finalize_takes_gates_not_scoring_settings(isolated):
    _data(isolated)
    merged = ragscore.partial("gold.jsonl", "trace.jsonl")
    run = ragscore.finalize(merged, gates={"precision": 0.99}, strict=True)
    assert run.document["gates"]["precision"]["threshold"] == 0.99 and run.document["settings"]["strict"] is True
    for setting in ({"k": 3}, {"metrics": "all"}, {"seed": "7"}):
        with pytest.raises(UsageError, match="is a scoring setting: the partials were scored with theirs"):
            ragscore.finalize(merged, **setting)


def test_grounding_findings_of_repeated_samples_merge(ragscore, isolated):
    """With samples a row's grounding findings are its last sample's (a refusal: none) and its counts every answered
    sample's: a partial of such rows merges into the one-process report."""
    write(isolated / "g.jsonl", [{"qid": "q", "answerable": True, "gold_claim_substr": ["thirty days"]}])
    answered = {"qid": "q", "answer": 'Refunds: "accepted within thirty days of purchase" [d1].',
                "retrieved_ids": ["d1"], "retrieved_chunks": ["Refunds are accepted within thirty days of purchase."],
                "citations": ["d1"]}
    write(isolated / "t.jsonl", [answered, {"qid": "q", "answer": "not in context", "retrieved_ids": ["d1"],
                                            "retrieved_chunks": ["Refunds are accepted within thirty days."]}])
    common = ("--gold", "g.jsonl", "--trace", "t.jsonl", "--metrics", "grounding", "--repeats", "samples",
              "--per-question")
    assert ragscore("partial", *common, "--part", "1/1", "-o", "p.json").status == 0
    merged = ragscore("merge", "p.json", "--format", "json", "--no-fail", "--per-question").json()
    whole = ragscore(*common, "--format", "json", "--no-fail").json()
    merged.pop("inputs")
    whole.pop("inputs")
    assert merged == whole and whole["grounding"]["quotes_judged"] == 1
