"""Read a committed JSON report (the baseline of ``ragscore compare``) as the input it is.

A report can be edited by hand, cut short or made by something else, so it is read strictly (as
the other inputs are: NaN, numbers beyond a double's range and too deep nesting are errors) and
the parts compare reads are checked against what the report's schema (``report.schema.json``)
says of them, with one more bound: every value is a number no larger in magnitude than a
score from another evaluator may be, which keeps every sum and square compare takes finite.
A fault is an error at its key (``base.json: at inputs: expected an object, got an array``);
keys compare does not read are not looked at. Each qid is listed once: compare joins the
questions to the gold set by qid. The settings signature may hold any text (a refusal token
with a right-to-left mark, a seed with a tab): it is compared, never printed as it is.
"""

from __future__ import annotations

import re
from typing import Any, Final, NoReturn

from ragscore.errors import InputError
from ragscore.labels import LABEL_ORDER
from ragscore.loaders.jsonl import InputFile, decode_document, describe, json_type
from ragscore.loaders.scores import MAX_SCORE
from ragscore.quoting import quote

_SHA256_RE: Final = re.compile(r"[0-9a-f]{64}")
_PLAIN_KEY_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_@]*")
_LABELS: Final = tuple(label.value for label in LABEL_ORDER)


def load_report(spec: str) -> tuple[InputFile, dict[str, Any]]:
    """Read a JSON report and check the parts compare reads; return the file (hashed) and the report."""
    file = InputFile(spec)
    doc = decode_document(file.read_document("a JSON report"), file.name)
    return file, check_report(doc, file.name)


def check_report(doc: object, source: str) -> dict[str, Any]:
    """Raise InputError at the first part of ``doc`` that compare reads and cannot use; return the report."""
    at = _Checker(source)
    top = at.an_object(doc, "", "a JSON object (a ragscore report)")
    if "kind" in top:  # a compare report (a score report has no kind)
        raise InputError(source, f"expected the JSON report of a score run, got a {_shown(top['kind'])} report")
    gold = at.an_object(at.key(at.an_object(at.key(top, "inputs", ""), "inputs"), "gold", "inputs"), "inputs.gold")
    sha256 = at.key(gold, "sha256", "inputs.gold")
    if type(sha256) is not str or not _SHA256_RE.fullmatch(sha256):
        at.fail("inputs.gold.sha256", "a SHA-256 digest (64 lowercase hex digits)", sha256)
    signature = at.key(top, "signature", "")
    if type(signature) is not str or not signature.startswith("ragscore:"):
        at.fail("signature", 'the settings signature, a string that starts with "ragscore:"', signature)
    total = at.key(at.an_object(at.key(top, "counts", ""), "counts"), "total", "counts")
    if type(total) is not int or total < 0:
        at.fail("counts.total", "an integer >= 0", total)
    at.numbers(at.an_object(at.key(top, "metrics", ""), "metrics"), "metrics")
    questions = top.get("questions")
    if questions is None:
        return top  # not made with --per-question: compare says so
    if type(questions) is not list:
        at.fail("questions", "an array", questions)
    first: dict[str, int] = {}
    for n, entry in enumerate(questions):
        path = f"questions[{n}]"
        entry = at.an_object(entry, path)
        qid = at.key(entry, "qid", path)
        if type(qid) is not str or not qid:
            at.fail(f"{path}.qid", "a non-empty string", qid)
        seen = first.setdefault(qid, n)
        if seen != n:
            raise InputError(source, f"at {path}.qid: repeated qid {quote(qid)} (first at questions[{seen}])")
        label = at.key(entry, "label", path)
        if type(label) is not str or label not in _LABELS:
            at.fail(f"{path}.label", f"one of {', '.join(_LABELS)}", label)
        at.numbers(at.an_object(at.key(entry, "metrics", path), f"{path}.metrics"), f"{path}.metrics")
    return top


class _Checker:
    """The checks, each raising InputError with the path of the key (``questions[3].metrics.chr``)."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, expected: str, value: object) -> NoReturn:
        where = f"at {path}: " if path else ""
        raise InputError(self.source, f"{where}expected {expected}, got {_shown(value)}")

    def an_object(self, value: object, path: str, expected: str = "an object") -> dict[str, Any]:
        if type(value) is not dict:
            self.fail(path, expected, value)
        return value

    def key(self, obj: dict[str, Any], key: str, path: str) -> object:
        if key not in obj:
            raise InputError(self.source, (f"at {path}: " if path else "") + f'missing "{key}"')
        return obj[key]

    def numbers(self, obj: dict[str, Any], path: str) -> None:
        """Check that every value of ``obj`` is null or a number of a magnitude compare can add up."""
        for name, value in obj.items():
            number = type(value) is float or type(value) is int
            if value is None or (number and -MAX_SCORE <= value <= MAX_SCORE):
                continue
            where = f"{path}.{name}" if _PLAIN_KEY_RE.fullmatch(name) else f"{path}[{quote(name)}]"
            self.fail(where, f"a number at most {MAX_SCORE:g} in magnitude" if number else "a number or null", value)


def _shown(value: object) -> str:
    """Show a value from the report: text quoted (escaped, bounded), the rest briefly."""
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, (list, dict)):
        return f"an {json_type(value)}"
    return describe(value)
