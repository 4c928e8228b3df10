"""A damaged or hand-edited partial (issue 31): every key is checked for its type, its range and
what it must agree with before anything is built from it, and the error names the key.

Each case edits a real partial, written by ``ragscore partial`` from the product example, and
expects ``ragscore merge`` to say exactly what is wrong (exit status 2, one line); a property
test replaces any key of it with other JSON and asserts that merge never fails with a traceback.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import resource
import shutil
import signal
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from conftest import EXAMPLES
from ragscore.cli import main
from ragscore.json_paths import Damaged, Node
from ragscore.partial_schema import _settings

DAMAGED = "ragscore: error: p1.json: a damaged ragscore partial: "
TIME_BOUND = 20  # seconds one merge may take (a few hundredths of one are usual)
MEMORY_BOUND = 1 << 30  # how much the address space may grow during one merge


# Partials of three kinds of run: every family, rows and slices; latencies, tokens and cost (a sketch);
# repeated samples. Each with the options its partial is made with.
KINDS = {
    "product": ("--rows", "--metrics", "all", "--by", "category"),
    "operations": ("--rows",),
    "repeats": ("--rows", "--repeats", "samples", "--metrics", "retrieval"),
}


def _make(folder: Path, kind: str) -> Path:
    """A folder with an example's inputs and the partial of its whole run."""
    folder.mkdir()
    for name in ("gold.jsonl", "trace.jsonl"):
        shutil.copy(EXAMPLES / kind / name, folder / name)
    with contextlib.chdir(folder), contextlib.redirect_stderr(io.StringIO()):
        status = main(["partial", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--part", "1/1", "-o", "p1.json",
                       "--bootstrap", "50", "-q", *KINDS[kind]])
    assert status == 0
    return folder


@pytest.fixture(scope="module")
def kinds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("partials")
    return {kind: _make(root / kind, kind) for kind in KINDS}


@pytest.fixture
def made(kinds: dict[str, Path]) -> Path:
    """The product example's partial: every family, rows, slices by category."""
    return kinds["product"]


@pytest.fixture
def doc(made: Path) -> dict[str, Any]:
    return json.loads((made / "p1.json").read_text(encoding="utf-8"))


def _merged(folder: Path, text: str, *options: str) -> tuple[int, str, str]:
    """Write ``text`` as p1.json in a copy of the folder and merge it (the question list read too)."""
    (folder / "edited").mkdir(exist_ok=True)
    for name in ("gold.jsonl", "trace.jsonl"):
        shutil.copy(folder / name, folder / "edited" / name)
    (folder / "edited" / "p1.json").write_text(text, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(folder / "edited"), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["merge", "p1.json", "--per-question", "--format", "json", "-q", *options])
    return status, out.getvalue(), err.getvalue()


def _refused(folder: Path, doc: dict[str, Any], message: str) -> None:
    status, out, err = _merged(folder, json.dumps(doc))
    assert (status, out, err) == (2, "", DAMAGED + message + "\n")


def _signed(doc: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """Change settings as a hand-editor who also writes the signature they make would."""
    settings = replace(_settings(Node(doc["settings"])), **changes)
    return {**doc, "settings": {**doc["settings"], **changes}, "signature": settings.signature()}


def test_the_partial_as_written_merges(made, doc):
    status, out, err = _merged(made, json.dumps(doc))
    assert status in (0, 1) and len(json.loads(out)["questions"]) == doc["result"]["questions"]


def test_traces_of_no_part(made, doc):
    doc["traces"] = {}
    _refused(made, doc, '"traces" name the traces of 0 parts, for the 1 it covers')


def test_more_hits_than_answers(made, doc):
    tally = doc["result"]["tally"]
    tally["hit"] = tally["answered"] + 5
    _refused(made, doc, f'"result.tally.hit" ({tally["hit"]}) is greater than "result.tally.answered" '
                        f'({tally["answered"]})')


@pytest.mark.parametrize(("key", "value", "shown", "expected"), [
    ("hybrid_alpha", float("nan"), "nan", "a number from 0 to 1"),
    ("hybrid_alpha", 1e308, "1e+308", "a number from 0 to 1"),
    ("similarity_threshold", -5, "-5", "a number from -1 to 1"),
    ("text_tokenizer", "<script>", "'<script>'", "one of 'reference', 'unicode'"),
])
def test_settings_are_checked_as_a_settings_file_is(made, doc, key, value, shown, expected):
    doc["settings"][key] = value
    _refused(made, doc, f'[settings] expected "{key}" to be {expected}, got {shown}')


def test_settings_written_otherwise_than_ragscore_writes_them(made, doc):
    doc["settings"]["cutoffs"] = [10, 5, 3, 1]  # the same cutoffs, read sorted: not as ragscore wrote them
    _refused(made, doc, '"settings.cutoffs" is not written as ragscore writes these settings')
    doc["settings"]["cutoffs"] = [1, 3, 5, 10]
    doc["settings"]["colour"] = "blue"
    _refused(made, doc, '"settings.colour" is an unknown key')


def test_an_outcome_flag_as_text(made, doc):
    doc["result"]["rows"][0][4][1] = "yes"
    _refused(made, doc, '"result.rows[0][4][1]" (the outcome\'s answered): expected true or false, got "yes"')


def test_a_slice_label_as_a_number(made, doc):
    doc["result"]["rows"][2][8][0][0] = 5
    _refused(made, doc, '"result.rows[2][8][0][0]" (a row\'s slices): expected a label (text), got 5')


@pytest.mark.parametrize(("claim", "shown"), [(float("nan"), "NaN"), (5, "5"), (["x"], "a list")])
def test_a_diagnosis_sample_whose_claim_is_not_text(made, doc, claim, shown):
    name, picks = next((name, picks) for name, picks in doc["result"]["samples"].items() if picks)
    picks[0][3] = claim
    _refused(made, doc, f'"result.samples.{name}[0][3]" (a diagnosis sample\'s claim): expected text or null, '
                        f"got {shown}")


def test_a_partial_of_a_trillion_parts_is_refused_before_anything_is_allocated(made, doc):
    doc["parts"] = 10**12
    _refused(made, doc, '"parts": expected a count of at most 4,294,967,296, got 1000000000000')


def test_a_partial_of_the_most_parts_says_which_are_missing_without_counting_them(made, doc):
    doc["parts"] = 2**32
    status, out, err = _merged(made, json.dumps(doc))
    assert (status, out, err) == (2, "", "ragscore: error: merge: parts 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, ... of "
                                         "4294967296 missing: a report needs every part\n")


def test_trace_lines_that_do_not_add_up(made, doc):
    accounting, traced = doc["result"]["accounting"], doc["result"]["tally"]["traced"]
    accounting["lines"] += 100
    _refused(made, doc, f'"result.accounting.lines" ({accounting["lines"]}) is not the unknown '
                        f'({accounting["unknown"]}) and duplicate ({accounting["duplicates"]}) traces and the traced '
                        f"questions ({traced})")


def test_a_row_value_its_family_never_counted(made, doc):
    # A text statistic of -1e308 made the report's corpus BLEU fail (math domain error).
    rows = doc["result"]["rows"]
    n, row = next((n, row) for n, row in enumerate(rows) if row[7][2] is not None)
    column = doc["result"]["columns"][2]["columns"][23]
    row[7][2][23] = -1e308
    _refused(made, doc, f'"result.rows[{n}][7][2][23]" (a row\'s family_rows) (-1e+308) is not among the values its family\'s summary '
                        f"counted ({column['low']!r} to {column['high']!r})")


def test_nan_written_as_json_where_a_partial_writes_null(made, doc):
    doc["result"]["tally"]["shares"]["low"] = float("nan")
    _refused(made, doc, '"result.tally.shares.low": expected a number (null for NaN, "inf" or "-inf"), got NaN')


def test_keys_missing_or_unknown(made, doc):
    del doc["result"]["accounting"]["duplicates"]
    _refused(made, doc, '"result.accounting.duplicates" is missing')
    doc["result"]["accounting"]["duplicates"] = 1
    doc["result"]["extra"] = True
    _refused(made, doc, '"result.extra" is an unknown key')


def test_a_key_of_input_text_is_quoted_in_the_path(made, doc):
    doc["result"]["samples"]["##[error]\nx"] = []
    _refused(made, doc, '"result.samples[\\"#\\x23[error]\\nx\\"]" are the worst questions of a metric that no '
                        "diagnosis target names")


def test_other_settings_signed_again_are_read_and_checked_against_the_rest(made, doc):
    # Settings that a settings file may hold, signed again: the rest of the partial must fit them.
    _refused(made, _signed(doc, cutoffs=(1, 3)), '"result.columns[0]" holds 30 columns of width 30, for 18 values '
                                                 "per question")
    status, _, err = _merged(made, json.dumps(_signed(doc, confidence=0.5)))
    assert status in (0, 1) and "error" not in err


# --- any key, any value ----------------------------------------------------------------------------

DEEP = "\x00deep\x00"  # written in the JSON text as 100,000 nested lists (json.dumps would recurse)
SPECIAL: list[Any] = [float("nan"), float("inf"), -float("inf"), 1e308, -1e308, 10**300, -(10**300), 2**64, 2**32,
                      -1, 0, 1, 0.5, "", "x", "0x1", "-0x5", "0x" + "f" * 4000, "inf", "##[error]x", "OK", "higher",
                      "native", "SUBSTR", None, True, False, [], {}, [None], [[]], {"x": 1}, DEEP]
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                    max_leaves=6)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:12]):
            yield from _paths(item, (*path, index))


@contextlib.contextmanager
def _bounded() -> Iterator[None]:
    """Bound one run's time (SIGALRM) and, on Linux, the growth of its address space."""
    def hung(signum: int, frame: object) -> None:
        raise TimeoutError(f"merge took more than {TIME_BOUND} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(TIME_BOUND)
    limits = resource.getrlimit(resource.RLIMIT_AS)
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii") if sys.platform.startswith("linux") else ""
        used = next((int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmSize:")), None)
        if used is not None and limits[0] == resource.RLIM_INFINITY:
            resource.setrlimit(resource.RLIMIT_AS, (used + MEMORY_BOUND, limits[1]))
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, limits)
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@st.composite
def _edits(draw: st.DrawFn, paths: list[tuple[Any, ...]]) -> list[tuple[tuple[Any, ...], str, Any]]:
    edits = []
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths))
        kind = draw(st.sampled_from(["replace", "replace", "special", "special", "delete", "add", "nudge"]))
        value = draw(JSON) if kind in ("replace", "add") else draw(st.sampled_from(SPECIAL)) if kind == "special" \
            else draw(st.sampled_from([-1, 1, 1000, -(10**6)])) if kind == "nudge" else None
        edits.append((path, kind, value))
    return edits


def _apply(doc: dict[str, Any], edits: list[tuple[tuple[Any, ...], str, Any]]) -> None:
    for path, kind, value in edits:
        parent: Any = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            current = parent[path[-1]]
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit removed or replaced where this one goes
        if not isinstance(parent, (dict, list)):
            continue
        if kind == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif kind == "add" and isinstance(current, dict):
            current["added"] = value
        elif kind == "nudge":
            if type(current) is int:
                parent[path[-1]] = current + value
        else:
            parent[path[-1]] = value


@pytest.mark.parametrize("kind", list(KINDS))
@settings(max_examples=60, deadline=None, database=None, phases=[Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_any_key_replaced_by_any_value_is_an_error_never_a_crash(kinds, kind, data):
    made = kinds[kind]
    original = json.loads((made / "p1.json").read_text(encoding="utf-8"))
    paths = [p for p in _paths(original) if p and p[0] not in ("format", "version")]
    edits = data.draw(_edits(paths))
    doc = copy.deepcopy(original)
    _apply(doc, edits)
    if data.draw(st.booleans()) and "settings" in doc:  # signed again: the signature is no shortcut
        with contextlib.suppress(Damaged):
            doc["signature"] = _settings(Node(doc["settings"])).signature()
    text = json.dumps(doc).replace(json.dumps(DEEP), "[" * 100_000 + "]" * 100_000)
    with _bounded():
        status, out, err = _merged(made, text)
    where = f"{edits}: exit {status}\n{err[-2000:]}"
    assert status in (0, 1, 2) and "Traceback" not in err, where
    if status == 2:
        assert err.count("\n") == 1 and err.startswith("ragscore: error: ") and out == "", where


def test_two_partials_that_hold_the_row_of_one_question(made):
    # Each partial is whole; together they hold one question twice, which the report listed twice
    # (or failed on, comparing the two rows field by field): each question belongs to one part.
    with contextlib.chdir(made), contextlib.redirect_stderr(io.StringIO()):
        for index in (1, 2):
            assert main(["partial", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--part", f"{index}/2", "-o",
                         f"half{index}.json", "--rows", "--bootstrap", "50", "-q"]) == 0
    docs = [json.loads((made / f"half{index}.json").read_text(encoding="utf-8")) for index in (1, 2)]
    a, b = docs if docs[0]["result"]["rows"][0][0] < docs[1]["result"]["rows"][1][0] else docs[::-1]
    b["result"]["rows"][0] = a["result"]["rows"][0]  # still in gold order within b
    (made / "edited").mkdir(exist_ok=True)
    for doc, index in zip(docs, (1, 2), strict=True):
        (made / "edited" / f"half{index}.json").write_text(json.dumps(doc), encoding="utf-8")
    for name in ("gold.jsonl", "trace.jsonl"):
        shutil.copy(made / name, made / "edited" / name)
    err = io.StringIO()
    with contextlib.chdir(made / "edited"), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        status = main(["merge", "half2.json", "half1.json", "--per-question"])
    line = a["result"]["rows"][0][0] >> 32
    assert (status, err.getvalue()) == (2, f"ragscore: error: merge: half1.json and half2.json both hold the row of "
                                           f"the question on line {line} of the gold set: each question belongs to "
                                           "one part (a partial is damaged or edited by hand)\n")


def test_a_version_of_hostile_text_is_quoted(made, doc):
    doc["version"] = "##[error]pwned\n" + "x" * 500
    status, out, err = _merged(made, json.dumps(doc))
    assert (status, out, err) == (2, "", 'ragscore: error: p1.json: a ragscore partial of version "#\\x23[error]pwned\\n'
                                         + "x" * 11 + "…[475 characters]…" + "x" * 14 + '"; this ragscore (0.1.0) '
                                         "reads version 4: make the partials again with it\n")
