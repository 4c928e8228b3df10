"""Compressed inputs (gzip, bzip2, xz), told by their first bytes and read decompressed (issue 16)."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import sys

import pytest

from conftest import EXAMPLES

PRODUCT = EXAMPLES / "product"
COMPRESS = {"gzip": lambda data: gzip.compress(data, mtime=0), "bzip2": bz2.compress, "xz": lzma.compress}


def _without_paths(text):
    doc = json.loads(text)
    for entry in doc["inputs"].values():
        entry["path"] = ""
    return doc


@pytest.mark.parametrize("kind", sorted(COMPRESS))
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_compressed_input_gives_the_same_report(ragscore, isolated, kind, jobs):
    compress = COMPRESS[kind]
    (isolated / "g.data").write_bytes(compress((PRODUCT / "gold.jsonl").read_bytes()))  # the name says nothing
    (isolated / "t.data").write_bytes(compress((PRODUCT / "trace.jsonl").read_bytes()))
    plain = ragscore("--gold", PRODUCT / "gold.jsonl", "--trace", PRODUCT / "trace.jsonl", "--no-fail", "-q",
                     "--per-question")
    packed = ragscore("--gold", "g.data", "--trace", "t.data", "--no-fail", "-q", "--per-question", "--jobs", jobs)
    assert packed.status == 0, packed.err
    # The digests are of the content, decompressed: the same records, the same sha256.
    assert _without_paths(packed.out) == _without_paths(plain.out)


def test_compressed_standard_input(ragscore, isolated, monkeypatch):
    data = gzip.compress((PRODUCT / "trace.jsonl").read_bytes(), mtime=0)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(data))))
    run = ragscore("--gold", PRODUCT / "gold.jsonl", "--trace", "-", "--no-fail", "-q")
    assert run.status == 0 and json.loads(run.out)["counts"]["trace_lines"] == 41


def test_a_truncated_file_is_an_input_error(ragscore, isolated):
    data = gzip.compress((PRODUCT / "trace.jsonl").read_bytes(), mtime=0)
    (isolated / "t.gz").write_bytes(data[: len(data) // 2])
    run = ragscore("--gold", PRODUCT / "gold.jsonl", "--trace", "t.gz")
    assert (run.status, run.out) == (2, "")
    assert run.err == ("ragscore: error: t.gz: cannot decompress: Compressed file ended before the end-of-stream "
                       "marker was reached\n")


def test_the_stage_commands_and_trec_read_compressed_files(ragscore, isolated):
    stages = EXAMPLES / "stages"
    (isolated / "g.gz").write_bytes(gzip.compress((stages / "classify_gold.jsonl").read_bytes(), mtime=0))
    (isolated / "p.xz").write_bytes(lzma.compress((stages / "classify_pred.jsonl").read_bytes()))
    plain = ragscore("classify", "--gold", stages / "classify_gold.jsonl", "--pred", stages / "classify_pred.jsonl",
                     "--no-fail", "-q")
    packed = ragscore("classify", "--gold", "g.gz", "--pred", "p.xz", "--no-fail", "-q")
    assert json.loads(packed.out)["metrics"] == json.loads(plain.out)["metrics"]


def test_a_compressed_json_array_gold_set_in_a_parallel_run(ragscore, isolated):
    # The worst questions a diagnosis quotes are read again from the files: decompressed too.
    items = [json.loads(line) for line in (PRODUCT / "gold.jsonl").read_text(encoding="utf-8").splitlines()]
    (isolated / "g.json").write_bytes(gzip.compress(json.dumps(items).encode(), mtime=0))
    (isolated / "plain.json").write_text(json.dumps(items), encoding="utf-8")
    one = ragscore("--gold", "plain.json", "--trace", PRODUCT / "trace.jsonl", "--no-fail", "-q")
    two = ragscore("--gold", "g.json", "--trace", PRODUCT / "trace.jsonl", "--no-fail", "-q", "--jobs", "2")
    assert two.status == 0, two.err
    assert _without_paths(two.out) == _without_paths(one.out)
    assert json.loads(two.out)["diagnoses"][0]["low_samples"][0]["question"]


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be"])
def test_utf16_with_its_byte_order_mark_is_read(ragscore, isolated, codec):
    text = (PRODUCT / "trace.jsonl").read_text(encoding="utf-8")
    data = (b"\xfe\xff" if codec == "utf-16-be" else b"") + text.encode(codec)
    (isolated / "t.jsonl").write_bytes(data)
    (isolated / "t.jsonl.gz").write_bytes(gzip.compress(data, mtime=0))
    plain = ragscore("--gold", PRODUCT / "gold.jsonl", "--trace", PRODUCT / "trace.jsonl", "--no-fail", "-q")
    for name in ("t.jsonl", "t.jsonl.gz"):
        run = ragscore("--gold", PRODUCT / "gold.jsonl", "--trace", name, "--no-fail", "-q")
        assert run.status == 0, run.err
        assert _without_paths(run.out) == _without_paths(plain.out)  # the sha256 of the text as UTF-8


@pytest.mark.parametrize(("text", "codec", "hint"), [
    ("{\"qid\": \"café\"}\n", "cp1252", "this line looks like Windows-1252 or Latin-1 text: if the file is, save "
                                        "it as UTF-8, e.g. iconv -f WINDOWS-1252 -t UTF-8"),
    ("{\"qid\": \"“smart” – quotes\"}\n", "cp1252", "this line looks like Windows-1252 or Latin-1 text"),
    ("{\"qid\": \"naïve Größe ± 5\"}\n", "latin-1", "this line looks like Windows-1252 or Latin-1 text"),
    ("{\"qid\": \"日本語のテキスト\"}\n", "shift_jis", "this line looks like text in an East Asian encoding such as "
                                                   "Shift_JIS, GBK, EUC-KR or Big5, or another legacy encoding: if "
                                                   "the file is, save it as UTF-8"),
    ("{\"qid\": \"中文文本\"}\n", "gbk", "this line looks like text in an East Asian encoding"),
    ("{\"qid\": \"한국어 텍스트\"}\n", "euc_kr", "this line looks like text in an East Asian encoding"),
    ("{\"qid\": \"Привет мир\"}\n", "cp1251", "this line looks like text in a single-byte encoding of another "
                                              "script, such as Windows-1251 (Cyrillic), Windows-1253 (Greek), "
                                              "Windows-1256 (Arabic) or KOI8-R: if the file is, save it as UTF-8"),
    ("{\"qid\": \"Καλημέρα κόσμε\"}\n", "cp1253", "this line looks like text in a single-byte encoding of another"),
])
@pytest.mark.parametrize("line", [1, 2])
def test_bytes_that_are_not_utf8_name_the_likely_encoding(ragscore, isolated, text, codec, hint, line):
    # On the first line the first bytes tell; on a later one, the line as it is read.
    first = b'{"qid": "ok", "answerable": false}\n' if line == 2 else b""
    (isolated / "g.jsonl").write_bytes(first + text.encode(codec))
    run = ragscore("--gold", "g.jsonl", "--trace", EXAMPLES / "trace.jsonl")
    column = len(text[: next(i for i, c in enumerate(text) if not c.isascii())]) + 1
    bad = text.encode(codec)[column - 1]
    assert run.status == 2 and run.err.startswith(f"ragscore: error: g.jsonl:{line}:{column}: expected UTF-8 text, "
                                                  f"got byte 0x{bad:02x} ({hint}"), run.err
    assert run.err.count("\n") == 1


@pytest.mark.parametrize(("raw", "where"), [
    (b"\xff", "1:10: expected UTF-8 text, got byte 0xff"),
    (b"caf\xc3", "1:13: expected UTF-8 text, got byte 0xc3"),  # UTF-8 cut short, not Windows-1252's Ã
    (b"\xde\xad\xbe\xef", "1:11: expected UTF-8 text, got byte 0xbe"),  # de ad is valid UTF-8
    ("é".encode() + b"\x93\x8a", "1:11: expected UTF-8 text, got byte 0x93"),
])
def test_bytes_of_no_likely_encoding_get_no_guess(ragscore, isolated, raw, where):
    # A lone byte, random bytes, and UTF-8 mixed with other bytes: nothing is likely, nothing is said.
    (isolated / "g.jsonl").write_bytes(b'{"qid": "' + raw + b'"}\n')
    run = ragscore("--gold", "g.jsonl", "--trace", EXAMPLES / "trace.jsonl")
    assert (run.status, run.err) == (2, f"ragscore: error: g.jsonl:{where}\n")


def test_utf16_without_its_byte_order_mark_is_named(ragscore, isolated):
    (isolated / "g.jsonl").write_bytes('{"qid": "a", "answerable": false}\n'.encode("utf-16-le"))
    run = ragscore("--gold", "g.jsonl", "--trace", EXAMPLES / "trace.jsonl")
    assert run.err == ("ragscore: error: g.jsonl:1:2: expected text, got a binary file (UTF-16 text without its "
                       "byte-order mark, it seems: save it as UTF-8)\n")
