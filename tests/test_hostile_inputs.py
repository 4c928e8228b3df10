"""Inputs given by mistake or made to hurt: binary files, endless lines, broken JSON, pipes read
once, a baseline report that lies, vectors at the edges of floating point."""

from __future__ import annotations

import copy
import gzip
import io
import json
import math
import os
import subprocess
import sys
import tracemalloc
import zipfile
from functools import partial
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT, write
from ragscore.errors import InputError
from ragscore.loaders import input_file
from ragscore.loaders.input_file import InputFile
from ragscore.loaders.jsonl import json_error, value_index
from ragscore.loaders.sniff import check_text_head
from ragscore.metrics.retrieval import cosine, similarity_values
from ragscore.parallel import choose_jobs

GOLD = EXAMPLES / "gold.jsonl"
TRACE = EXAMPLES / "trace.jsonl"
PRODUCT = EXAMPLES / "product"
GOLD_LINE = b'{"qid": "a", "answerable": true}\n'


def _zip(data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("gold.jsonl", data)
    return out.getvalue()


# Binary input, told by its first bytes --------------------------------------------------------

COMPRESSED = "(ragscore reads gzip, bzip2 and xz; decompress it first)"


@pytest.mark.parametrize(("data", "error"), [
    (gzip.compress(b"\x00" * 10, mtime=0), "g:1:1: expected text, got a binary file (a NUL byte)"),  # read decompressed
    (_zip(GOLD_LINE), f"g:1: expected text, got a zip archive {COMPRESSED}"),
    (b"\xfd7zXZ\x00\x00\x04", "g: cannot decompress: Compressed file ended before the end-of-stream marker was reached"),
    (b"\x28\xb5\x2f\xfd\x00", f"g:1: expected text, got a zstd-compressed file {COMPRESSED}"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "g:1: expected text, got a PNG image"),
    (b"\xff\xd8\xff\xe0\x00\x10JFIF", "g:1: expected text, got a JPEG image"),
    (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "g:1: expected text, got a PDF document"),
    (b"\x7fELF\x02\x01\x01\x00", "g:1: expected text, got an executable (ELF)"),
    (b"SQLite format 3\x00\x10\x00", "g:1: expected text, got an SQLite database"),
    # UTF-16 with its byte-order mark is read (transcoded): a record's own fault is found in it.
    ("{}\n".encode("utf-16-le").join([b"\xff\xfe", b""]), 'g:1:1: missing required field "answerable" (true or false)'),
    (b"\xfe\xff\xd8\x00", "g:1:1: expected UTF-16 text after its byte-order mark, got the end of the file in the middle "
                          "of a character"),
    (b"\xff\xfe\x00\x00{\x00\x00\x00",
     "g:1: expected UTF-8 text, got UTF-32 (it starts with the byte-order mark FF FE 00 00): save it as UTF-8"),
    (GOLD_LINE + b'{"qid": "b", "x": "\x00"}\n', "g:2:20: expected text, got a binary file (a NUL byte)"),
    (b"\xef\xbb\xbf\x00", "g:1:1: expected text, got a binary file (a NUL byte)"),  # after a UTF-8 BOM
    (b'{"qid": "\xc3\xa9\x93\x8a', "g:1:11: expected UTF-8 text, got byte 0x93"),  # é, then not UTF-8
])
def test_binary_input_is_refused_by_its_first_bytes(data, error, ragscore, isolated):
    write(isolated / "g", data)
    run = ragscore("--gold", "g", "--trace", TRACE)
    assert (run.status, run.err, run.out) == (2, f"ragscore: error: {error}\n", "")


def test_text_that_merely_starts_like_a_magic_number_is_text():
    check_text_head(b"BZh9,qid\nx,1\n", "s.csv")  # a CSV header, not bzip2 (no block magic)
    check_text_head(b"PK,qid\n", "s.csv")
    check_text_head('{"q": "é"}'.encode()[:9], "g")  # a character cut in two by the end of what was seen


def test_a_bad_byte_after_the_first_line_is_found_when_its_line_is_read(ragscore, isolated):
    # Errors keep file order: the first line's own fault comes first.
    write(isolated / "g.jsonl", b'{"qid": 1\n{"qid": "\xe9"}\n')
    assert ragscore("--gold", "g.jsonl", "--trace", TRACE).err == (
        "ragscore: error: g.jsonl:1:10: invalid JSON: Expecting ',' delimiter\n")


def test_binary_standard_input_is_refused(ragscore, isolated, monkeypatch):
    data = _zip(GOLD.read_bytes())
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(data))))
    run = ragscore("--gold", "-", "--trace", TRACE)
    assert run.err == f"ragscore: error: <stdin>:1: expected text, got a zip archive {COMPRESSED}\n"


@pytest.mark.parametrize("command", ["validate", "ner", "compare", "scores"])
def test_every_input_is_checked(command, ragscore, isolated):
    write(isolated / "x.gz", _zip(GOLD_LINE))
    args = {
        "validate": ("validate", "--gold", "x.gz"),
        "ner": ("ner", "--gold", "x.gz", "--pred", "x.gz"),
        "compare": ("compare", "--gold", PRODUCT / "gold.jsonl", "--trace", PRODUCT / "trace.jsonl",
                    "--baseline-report", "x.gz"),
        "scores": ("--gold", GOLD, "--trace", TRACE, "--scores", "x.gz"),
    }[command]
    run = ragscore(*args)
    message = f"x.gz:1: expected text, got a zip archive {COMPRESSED}"
    assert run.status == 2
    assert (run.out if command == "validate" else run.err) == (
        f"x.gz:1: error: {message.removeprefix('x.gz:1: ')}\n" if command == "validate" else f"ragscore: error: {message}\n")


# One line, bounded --------------------------------------------------------------------------


def test_a_line_past_the_limit_is_an_error_at_its_line(ragscore, isolated, monkeypatch):
    monkeypatch.setattr(input_file, "MAX_LINE_BYTES", 100)
    fits = b'{"qid": "a", "answerable": true, "x": "' + b"y" * 59 + b'"}'
    assert len(fits) == 100
    other = fits.replace(b'"a"', b'"b"')
    write(isolated / "fits.jsonl", fits + b"\n" + other)  # 100 bytes and its newline; 100 bytes at the end
    write(isolated / "t.jsonl", b'{"qid": "a", "answer": "x"}\n')
    assert ragscore("--gold", "fits.jsonl", "--trace", "t.jsonl", "--format", "none", "--no-fail", "-q").status == 0
    write(isolated / "long.jsonl", fits + b"\n" + other + b" \n")
    run = ragscore("--gold", "long.jsonl", "--trace", "t.jsonl")
    assert run.err == "ragscore: error: long.jsonl:2: line longer than 100 bytes (the longest line ragscore reads)\n"
    write(isolated / "t2.jsonl", b"\n" * 3 + b"x" * 101)
    run = ragscore("--gold", "fits.jsonl", "--trace", "t2.jsonl")
    assert run.err == "ragscore: error: t2.jsonl:4: line longer than 100 bytes (the longest line ragscore reads)\n"
    run = ragscore("validate", "--gold", "long.jsonl", "-q")  # the lines before it are checked
    assert run.out == "long.jsonl:2: error: line longer than 100 bytes (the longest line ragscore reads)\n"
    write(isolated / "s.csv", b"qid,f\n" + b"a," + b"1" * 200 + b"\n")
    run = ragscore("--gold", "fits.jsonl", "--trace", "t.jsonl", "--scores", "s.csv")
    assert run.err == "ragscore: error: s.csv:2: line longer than 100 bytes (the longest line ragscore reads)\n"


def test_the_default_limit():
    assert input_file.MAX_LINE_BYTES == 64 << 20 and input_file.MAX_DOCUMENT_BYTES == 1 << 30


def test_a_file_with_no_line_end_is_not_read_into_memory(isolated, monkeypatch):
    monkeypatch.setattr(input_file, "MAX_LINE_BYTES", 1 << 20)
    path = isolated / "g.jsonl"
    with path.open("wb") as out:
        out.write(b'{"qid": "' + b"a" * (1 << 20))
        for _ in range(40):  # 40 MB of text without a line end
            out.write(b"a" * (1 << 20))
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as caught:
            for _ in InputFile("g.jsonl").raw_lines():
                pass
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(caught.value) == "g.jsonl:1: line longer than 1,048,576 bytes (the longest line ragscore reads)"
    assert peak < 8 << 20


def test_a_json_array_is_read_in_chunks_and_bounded(ragscore, isolated, monkeypatch):
    items = [json.loads(line) for line in GOLD.read_text().splitlines()]
    document = json.dumps(items)  # one line
    write(isolated / "g.json", document)
    monkeypatch.setattr(input_file, "MAX_LINE_BYTES", 100)  # lines do not bound an array: its size does
    monkeypatch.setattr(input_file, "MAX_DOCUMENT_BYTES", len(document) + 3)
    write(isolated / "t.jsonl", b'{"qid": "A0001", "answer": "x"}\n')
    assert ragscore("--gold", "g.json", "--trace", "t.jsonl", "--no-fail", "-q").json()["counts"]["total"] == 3
    write(isolated / "g.json", "\n" * 3 + document)  # leading blank lines
    assert ragscore("--gold", "g.json", "--trace", "t.jsonl", "--no-fail", "-q").status == 0
    write(isolated / "g.json", document + "    ")
    run = ragscore("--gold", "g.json", "--trace", "t.jsonl")
    assert run.err == (f"ragscore: error: g.json: a JSON array longer than {len(document) + 3:,} bytes is not read (it is "
                       "held in memory whole): write JSON Lines, which are read line by line\n")


# Whole sentences from the JSON decoder ----------------------------------------------------------


@pytest.mark.parametrize(("line", "error"), [
    ('{"qid": "a\x1fb"}', "1:11: invalid JSON: invalid control character U+001F in a string (write it as \\u001f)"),
    ('{"qid": "a\tb"}', "1:11: invalid JSON: invalid control character U+0009 in a string (write it as \\u0009)"),
    ('{"qid": "ab', "1:9: invalid JSON: unterminated string (no closing quote)"),
    ('{"qid": "a\\', "1:9: invalid JSON: unterminated string (no closing quote)"),
    ('{"qid": "a\\x41"}', '1:11: invalid JSON: invalid escape \\x in a string (JSON allows \\" \\\\ \\/ \\b \\f \\n \\r '
                         "\\t and \\uXXXX)"),
    ('{"qid": "a\\é"}', '1:11: invalid JSON: invalid escape \\ followed by U+00E9 in a string (JSON allows \\" \\\\ \\/ '
                       "\\b \\f \\n \\r \\t and \\uXXXX)"),
    ('{"qid": "\\u12"}', "1:10: invalid JSON: invalid \\uXXXX escape in a string (\\u needs 4 hex digits)"),
    ('{"qid": }', "1:9: invalid JSON: Expecting value"),
    ('{"qid" "a"}', "1:8: invalid JSON: Expecting ':' delimiter"),
    ('{"qid": "a" "b": 1}', "1:13: invalid JSON: Expecting ',' delimiter"),
    ("{qid: 1}", "1:2: invalid JSON: Expecting property name enclosed in double quotes"),
])
def test_json_errors_are_whole_sentences(line, error, ragscore, isolated):
    write(isolated / "g.jsonl", line + "\n")
    assert ragscore("--gold", "g.jsonl", "--trace", TRACE).err == f"ragscore: error: g.jsonl:{error}\n"


@pytest.mark.parametrize(("msg", "doc", "pos", "message", "at"), [
    # The pure-Python scanner's forms, and messages of newer Pythons, read as well.
    ("Invalid control character '\\x01' at", '"a\x01"', 2,
     "invalid JSON: invalid control character U+0001 in a string (write it as \\u0001)", 2),
    ("Invalid \\escape: 'q'", '"a\\q"', 2,
     'invalid JSON: invalid escape \\q in a string (JSON allows \\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX)', 2),
    ("Invalid \\uXXXX escape", '"\\u1"', 1, "invalid JSON: invalid \\uXXXX escape in a string (\\u needs 4 hex digits)", 1),
    ("Extra data", "1 2", 2, "invalid JSON: extra data after the value", 2),
    ("Illegal trailing comma before end of array", "[1,]", 2, "invalid JSON: Illegal trailing comma before end of array", 2),
])
def test_every_decoder_message_is_completed(msg, doc, pos, message, at):
    assert json_error(json.JSONDecodeError(msg, doc, pos)) == (message, at)


def test_no_message_is_cut_mid_sentence():
    broken = ['"a\x01"', '"ab', '"a\\q"', '"\\u12"', "[1,]", '{"a":1,}', '{"a" 1}', "{1:2}", "[1 2]", "", "tru", "{"]
    for text in broken:
        with pytest.raises(json.JSONDecodeError) as caught:
            json.loads(text)
        message, _ = json_error(caught.value)
        assert not message.endswith((" at", "at:")), message


# A long string before an error: matched in constant memory -------------------------------------

# About 20 MB of text with an escape every few characters: a string pattern that keeps state per
# character (or per escape) takes gigabytes to skip it.
LONG = "ab\\n" * 5_000_000


def _peak(call):
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(("value", "error"), [
    ('"yes"', 'expected "answerable" to be true or false, got "yes"'),  # found by the last "answerable" key
    ("NaN", "invalid JSON: NaN is not a number JSON allows (use null)"),
])
def test_an_error_after_a_long_string_costs_no_memory_per_character(value, error, ragscore, isolated):
    line = '{"qid": "a", "question": "' + LONG + '", "answerable": ' + value + "}\n"
    write(isolated / "g.jsonl", line)
    write(isolated / "t.jsonl", '{"qid": "a", "answer": "x"}\n')
    run, peak = _peak(lambda: ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "-j", "1"))  # traced in this process
    column = line.index(value) + 1
    assert (run.status, run.err) == (2, f"ragscore: error: g.jsonl:1:{column}: {error}\n")
    assert peak < 300 << 20  # before: 3.7 GB for 30 MB


def test_too_deep_nesting_after_a_long_toml_string_costs_no_memory_per_character(ragscore, isolated):
    from ragscore.tables import _deep_line

    text = "a\\n" + "x" * (10 << 20)  # a settings file is at most 16 MiB
    for string in ('"' + text + '"', '"""' + text + '\n"""'):  # a basic string, a multi-line one
        toml = f"[gates]\nnote = {string}\nx = " + "[" * 5000 + "]" * 5000 + "\n"
        write(isolated / "g.toml", toml)
        run = ragscore("--gold", GOLD, "--trace", TRACE, "--gates-file", "g.toml")
        line = 3 + string.count("\n")
        assert run.err == f"ragscore: error: g.toml:{line}: invalid TOML: arrays or inline tables nested too deeply to read\n"
        # The line is found in bounded memory (measured apart: tomllib runs 15 times slower traced).
        found, peak = _peak(partial(_deep_line, toml))
        assert found == line and peak < 300 << 20


def test_the_string_patterns_match_as_the_alternations_did():
    """The unrolled string patterns find the same tokens as the plain ones they replace, on every kind of text."""
    import random
    import re

    from ragscore.loaders.jsonl import _CONSTANT_RE, _TOKEN_RE
    from ragscore.tables import _TOML_NESTING_RE

    plain = {
        _TOKEN_RE: re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:]'),
        _CONSTANT_RE: re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)'),
        _TOML_NESTING_RE: re.compile(r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}]',
                                     re.DOTALL),
    }
    rng = random.Random(13)
    pieces = ['"', '"', '"', "\\", "\\", "\n", "'", "#", "[", "]", "{", "}", ":", "x", "NaN", "-Infinity"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        for new, old in plain.items():
            assert [(m.span(), m.groups()) for m in new.finditer(text)] == [
                (m.span(), m.groups()) for m in old.finditer(text)], (text, new.pattern)


# A key given twice: the value JSON keeps ------------------------------------------------------


@pytest.mark.parametrize(("text", "key", "index"), [
    ('{"a": 1, "a": 22}', "a", 14),
    ('{"a": 1, "b": {"a": 2}}', "a", 6),  # a nested object's key does not count
    ('{"b": "\\"a\\": 2", "a": 3}', "a", 23),  # nor text inside a string
    ('{"a": 1, "\\u0061": [1, {"a": 4}]}', "a", 19),  # the same key, written with an escape
    ('{"a": 1, "b": [{"a": 2}, "a"], "a"  :\n  5}', "a", 40),
    ('{"b": 1}', "a", None),
    ('  {"a":1}', "a", 7),
])
def test_value_index_finds_the_last_top_level_key(text, key, index):
    assert value_index(text, key) == index
    if index is not None:
        assert json.JSONDecoder().raw_decode(text, index)[0] == json.loads(text)[key]


def test_a_duplicate_key_in_a_json_array_points_at_the_value_used(ragscore, isolated):
    write(isolated / "g.json", '[\n  {"qid": "a", "answerable": true},\n  {"qid": "b", "answerable": true,\n'
                               '   "answerable": "no"}\n]\n')
    assert ragscore("--gold", "g.json", "--trace", TRACE).err == (
        'ragscore: error: g.json:4:18: expected "answerable" to be true or false, got "no"\n')


# Inputs on pipes: each read once ------------------------------------------------------------


def _shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``command`` in bash (for process substitution), with this checkout's ragscore."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), RAGSCORE=f"{sys.executable} -m ragscore")
    env.pop("GITHUB_ACTIONS", None)
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_explain_with_the_gold_set_on_a_pipe(tmp_path):
    run = _shell(f'$RAGSCORE --gold <(cat "{GOLD}") --trace "{TRACE}" --explain A0002', tmp_path)
    assert (run.returncode, run.stdout.splitlines()[0]) == (0, "qid: A0002")
    # A typo is found after the run (the pipe cannot be read twice), without a suggestion.
    run = _shell(f'$RAGSCORE --gold <(cat "{GOLD}") --trace "{TRACE}" --explain A002', tmp_path)
    assert (run.returncode, run.stderr) == (2, 'ragscore: error: --explain: no gold question has qid "A002"\n')
    run = _shell(f'$RAGSCORE --gold "{GOLD}" --trace "{TRACE}" --explain A002', tmp_path)  # a file: before it
    assert run.stderr.startswith('ragscore: error: --explain: no gold question has qid "A002"; did you mean')


def test_every_command_reads_pipes_once(tmp_path):
    stages = EXAMPLES / "stages"
    subprocess.run([sys.executable, "-m", "ragscore", "--gold", str(PRODUCT / "gold.jsonl"), "--trace",
                    str(PRODUCT / "baseline.jsonl"), "--per-question", "--json", "base.json", "--format", "none",
                    "--no-fail", "-q"], cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")), check=True)
    (tmp_path / "s.csv").write_text("qid,judge\nA0001,0.5\n")
    commands = [
        f'$RAGSCORE --gold <(cat "{GOLD}") --trace <(cat "{TRACE}") --jobs 4 --per-question --format none -q',
        f'$RAGSCORE --gold <(cat "{GOLD}") --trace "{TRACE}" --scores <(cat s.csv) --format none -q',
        f'$RAGSCORE validate --gold <(cat "{GOLD}") --trace <(cat "{TRACE}") -q',
        f'$RAGSCORE compare --gold <(cat "{PRODUCT}/gold.jsonl") --baseline <(cat "{PRODUCT}/baseline.jsonl") '
        f'--trace <(cat "{PRODUCT}/trace.jsonl") --jobs 3 --format none --no-fail -q',
        f'$RAGSCORE compare --gold <(cat "{PRODUCT}/gold.jsonl") --baseline-report <(cat base.json) '
        f'--trace <(cat "{PRODUCT}/trace.jsonl") --format none --no-fail -q',
        *(f'$RAGSCORE {stage} --gold <(cat "{stages}/{stage}_gold.jsonl") --pred <(cat "{stages}/{stage}_pred.jsonl") '
          "--format none --no-fail -q" for stage in ("ner", "classify", "link")),
    ]
    for command in commands:
        run = _shell(command, tmp_path)
        assert (run.returncode, run.stderr) == (0, ""), command


def test_a_pipe_gets_one_process(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert choose_jobs(4, str(GOLD), str(fifo)) == 1 and choose_jobs(None, "-", str(GOLD)) == 1
    assert not InputFile(str(fifo)).rereadable and not InputFile("-").rereadable
    assert InputFile(str(GOLD)).rereadable and not InputFile(str(tmp_path / "missing")).rereadable


# A baseline report is an input --------------------------------------------------------------


@pytest.fixture
def baseline(ragscore, isolated) -> dict:
    ragscore("--gold", PRODUCT / "gold.jsonl", "--trace", PRODUCT / "baseline.jsonl", "--per-question",
             "--json", "base.json", "--format", "none", "--no-fail", "-q")
    return json.loads((isolated / "base.json").read_text())


def _edit(doc: dict, path: str, value: object) -> dict:
    doc = copy.deepcopy(doc)
    *parents, last = path.split(".")
    target = doc
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    index = int(last) if isinstance(target, list) else last
    if value is KeyError:
        del target[index]
    else:
        target[index] = value
    return doc


REPORT_CASES = [
    # The six that crashed.
    ("deep", "[" * 100_000 + "]" * 100_000, "base.json:1: invalid JSON: nested too deeply to read"),
    ("inputs as a list", ("inputs", []), "base.json: at inputs: expected an object, got an array"),
    ("metric a string", ("metrics.precision", "0.5"),
     'base.json: at metrics.precision: expected a number or null, got "0.5"'),
    ("per-question value a string", ("questions.0.metrics.chr", "1"),
     'base.json: at questions[0].metrics.chr: expected a number or null, got "1"'),
    ("NaN", None, "base.json:{line}:{column}: invalid JSON: NaN is not a number JSON allows (use null)"),
    ("1e308", ("questions.1.metrics.precision", 1e308),
     "base.json: at questions[1].metrics.precision: expected a number at most 1e+15 in magnitude, got 1e+308"),
    # More.
    ("a report of another kind", ("kind", "compare"), 'base.json: expected the JSON report of a score run, got a "compare" report'),
    ("not an object", [], "base.json: expected a JSON object (a ragscore report), got an array"),
    ("no inputs", ("inputs", KeyError), 'base.json: missing "inputs"'),
    ("no gold digest", ("inputs.gold.sha256", KeyError), 'base.json: at inputs.gold: missing "sha256"'),
    ("a digest that is not one", ("inputs.gold.sha256", 12),
     "base.json: at inputs.gold.sha256: expected a SHA-256 digest (64 lowercase hex digits), got 12"),
    ("a signature that is not one", ("signature", "k:5"),
     'base.json: at signature: expected the settings signature, a string that starts with "ragscore:", got "k:5"'),
    # A signature is compared, never printed as it is: a line break in it is escaped in the message.
    ("a signature on two lines", ("signature", "ragscore:1|k:5\n::error::owned"),
     # (It names no refusal patterns: a report from before issue 32 made with none.)
     "base.json: the baseline report was scored with other settings (k: 5\\n::error::owned vs 5, "
     "refusal_patterns: [] vs default)"),
    ("a count that is text", ("counts.total", "8"), 'base.json: at counts.total: expected an integer >= 0, got "8"'),
    ("a huge integer", ("metrics.precision", 10**400),
     "base.json: at metrics.precision: expected a number at most 1e+15 in magnitude, got 1000000000000000000000000000000000000..."),
    ("a boolean", ("metrics.chr", True), "base.json: at metrics.chr: expected a number or null, got true"),
    ("an odd metric name", ("metrics.a\nb", [1]), 'base.json: at metrics["a\\nb"]: expected a number or null, got an array'),
    ("questions an object", ("questions", {}), "base.json: at questions: expected an array, got an object"),
    ("a question not an object", ("questions.2", "A0003"), 'base.json: at questions[2]: expected an object, got "A0003"'),
    ("a qid that is a number", ("questions.2.qid", 3), "base.json: at questions[2].qid: expected a non-empty string, got 3"),
    ("an unknown label", ("questions.2.label", "GREAT"),
     "base.json: at questions[2].label: expected one of OK, REFUSAL_OK, OVER_REFUSAL, HALLUCINATION, NO_CITATION_HIT, "
     'CLAIM_MISMATCH, FORBIDDEN, MISSING_TRACE, got "GREAT"'),
    ("no per-question metrics", ("questions.0.metrics", KeyError), 'base.json: at questions[0]: missing "metrics"'),
    # Compare joins by qid and tests every metric question by question: a gap is not left untested.
    ("a repeated qid", ("questions.3.qid", "Q001"), 'base.json: at questions[3].qid: repeated qid "Q001" (first at questions[0])'),
    ("a qid not of the gold set", ("questions.4.qid", "Q999"), """base.json: at questions: the gold set's qid "Q005" is not listed"""),
    ("a question missing a metric", ("questions.2.metrics.chr", KeyError), 'base.json: at questions[2].metrics: missing "chr"'),
    ("empty per-question metrics", ("questions.0.metrics", {}), 'base.json: at questions[0].metrics: missing "precision"'),
    ("extra data", "{} {}", "base.json:1:4: invalid JSON: extra data after the value"),
    ("not UTF-8", b"{\"a\": \"\xff\"}", "base.json:1:8: expected UTF-8 text, got byte 0xff"),
]


@pytest.mark.parametrize(("case", "edit", "error"), REPORT_CASES, ids=[case[0] for case in REPORT_CASES])
def test_a_baseline_report_is_checked(case, edit, error, baseline, ragscore, isolated):
    if case == "NaN":
        text = json.dumps(_edit(baseline, "questions.3.metrics.precision", math.nan), indent=1)
        at = text.index("NaN")
        error = error.format(line=text.count("\n", 0, at) + 1, column=at - text.rfind("\n", 0, at))
        write(isolated / "base.json", text)
    elif isinstance(edit, tuple):
        write(isolated / "base.json", json.dumps(_edit(baseline, *edit)))
    elif isinstance(edit, (str, bytes)):
        write(isolated / "base.json", edit)
    else:
        write(isolated / "base.json", json.dumps(edit))
    run = ragscore("compare", "--gold", PRODUCT / "gold.jsonl", "--baseline-report", "base.json",
                   "--trace", PRODUCT / "trace.jsonl")
    assert (run.status, run.err, run.out) == (2, f"ragscore: error: {error}\n", "")


def test_a_sound_report_still_compares(baseline, ragscore, isolated):
    write(isolated / "base.json", "\ufeff" + json.dumps(baseline))  # a BOM, one line: still a report
    run = ragscore("compare", "--gold", PRODUCT / "gold.jsonl", "--baseline-report", "base.json",
                   "--trace", PRODUCT / "trace.jsonl", "--no-fail")
    assert run.status == 0 and json.loads(run.out)["kind"] == "compare"


def test_a_signature_with_any_text_compares(ragscore, isolated):
    # ragscore's own report: a refusal token with a right-to-left mark, a seed with a tab.
    write(isolated / "gates.toml", '[scoring]\nrefusal_tokens = ["\\u200f\u0644\u0627 \u0623\u0639\u0631\u0641"]\n')
    ragscore("--gold", PRODUCT / "gold.jsonl", "--trace", PRODUCT / "baseline.jsonl", "--per-question", "--seed", "a\tb",
             "--json", "base.json", "--format", "none", "--no-fail", "-q")
    assert "\u200f" in json.loads((isolated / "base.json").read_text())["signature"]
    run = ragscore("compare", "--gold", PRODUCT / "gold.jsonl", "--baseline-report", "base.json",
                   "--trace", PRODUCT / "trace.jsonl", "--seed", "a\tb", "--no-fail", "-q")
    doc = json.loads(run.out)
    assert (run.status, run.err, doc["kind"]) == (0, "", "compare")
    assert doc["metrics"]["precision"]["p_value"] is not None
    # Scored with another refusal token: the message escapes the mark.
    (isolated / "gates.toml").unlink()
    run = ragscore("compare", "--gold", PRODUCT / "gold.jsonl", "--baseline-report", "base.json",
                   "--trace", PRODUCT / "trace.jsonl")
    assert (run.status, run.err) == (2, "ragscore: error: base.json: the baseline report was scored with other settings "
                                        '(refusal: ["\\u200f\u0644\u0627 \u0623\u0639\u0631\u0641"] vs ["not in context"])\n')


def test_the_checked_parts_are_what_the_schema_says():
    from ragscore.schema import load_schema

    schema = load_schema()
    top = schema["properties"]
    assert top["inputs"]["type"] == top["inputs"]["properties"]["gold"]["type"] == "object"
    assert top["inputs"]["properties"]["gold"]["properties"]["sha256"]["pattern"] == "^[0-9a-f]{64}$"
    assert top["signature"]["pattern"] == "^ragscore:"
    assert top["counts"]["properties"]["total"] == {**top["counts"]["properties"]["total"], "type": "integer", "minimum": 0}
    assert top["metrics"]["additionalProperties"]["type"] == ["number", "null"]
    question = schema["$defs"]["question"]
    assert {"qid", "label", "metrics"} <= set(question["required"])
    assert question["properties"]["label"]["enum"] == ["OK", "REFUSAL_OK", "OVER_REFUSAL", "HALLUCINATION",
                                                       "NO_CITATION_HIT", "CLAIM_MISMATCH", "FORBIDDEN", "MISSING_TRACE"]
    assert question["properties"]["metrics"]["additionalProperties"]["type"] == ["number", "null"]


# Cosine at the edges of floating point ----------------------------------------------------------


def test_cosine_of_huge_and_tiny_vectors():
    # Before: 1e200 squared is inf (nan), 1e-200 squared is 0 (0.0): a vector unlike itself.
    assert cosine([1e200, 2e200, 3e200], [1e200, 2e200, 3e200]) == 1.0000000000000002
    assert cosine([1e-200, 2e-200, 3e-200], [1e-200, 2e-200, 3e-200]) == 0.9999999999999998
    assert cosine([1e200, 0.0], [1e200, 0.0]) == 1.0
    assert cosine([1e200, 0.0], [0.0, 1e-200]) == 0.0
    assert cosine([1.7e308, 1.7e308], [1.7e308, -1.7e308]) == 0.0
    assert cosine([5e-324, 5e-324], [5e-324, 5e-324]) == cosine([1.0, 1.0], [1.0, 1.0]) == 0.9999999999999998
    assert cosine([10**400, 0], [10**400, 0]) == 1.0  # an integer beyond a float's range
    # Scaled by powers of two, a vector has bit for bit the cosine of the vector itself.
    def scale(u: list[float], exponent: int) -> list[float]:
        return [math.ldexp(x, exponent) for x in u]

    for exponent in (600, 1000, -700, -1000):
        assert cosine(scale([3.0, 4.0], exponent), [0.0, 1.0]) == 0.8
        assert cosine(scale([0.1, 0.7, -0.3], exponent), [0.2, 0.5, 0.9]) == cosine([0.1, 0.7, -0.3], [0.2, 0.5, 0.9])


def test_ordinary_vectors_are_unchanged():
    # The values of the similarity family's tests, computed as before (no scaling at all).
    u, v = [0.1, 0.7, -0.3], [0.2, 0.5, 0.9]
    assert cosine(u, v) == math.fsum(a * b for a, b in zip(u, v, strict=True)) / (math.hypot(*u) * math.hypot(*v))


def test_a_huge_vector_retrieved_as_itself_is_similar(ragscore, isolated):
    vector = [1e200, -2e200, 3e200]
    assert similarity_values([vector], [vector], [1]) == (1.0, 1.0, 1.0, 1.0)
    write(isolated / "g.jsonl", [{"qid": "a", "answerable": True, "gold_citations": ["d"], "gold_embeddings": [vector]}])
    write(isolated / "t.jsonl", [{"qid": "a", "retrieved_ids": ["d"], "retrieved_embeddings": [[1e-200, -2e-200, 3e-200]],
                                  "answer": "x"}])
    metrics = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--metrics", "similarity", "--cutoffs", "1",
                       "--no-fail", "-q").json()["metrics"]
    assert (metrics["sim_precision@1"], metrics["sim_recall@1"]) == (1.0, 1.0)
