"""The scoring settings (the ``[scoring]`` knobs) and the signature that records them."""

from __future__ import annotations

import importlib
import json
import re
import warnings
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from ragscore import __version__
from ragscore.metrics.text import normalise
from ragscore.quoting import quote

DEFAULT_REFUSAL_TOKENS = ("not in context",)
# Bounds on k and the cutoffs: every cutoff adds metrics to every question and every report, and
# no ranking is judged a million deep.
MAX_CUTOFF: Final = 1_000_000
MAX_CUTOFFS: Final = 64
LAST: Final = "last"        # repeats: a question's last trace line counts
SAMPLES: Final = "samples"  # repeats: every trace line of a question is a sample
REPEATS: Final = (LAST, SAMPLES)
# A claim with no refusal in it: a refusal pattern that matches it without matching any text (an
# empty pattern, "x*", "i don't know|") would make almost every claim a refusal.
_PLAIN_CLAIM: Final = "the answer is 42, as [doc-1] says."


def cutoff_problem(values: Collection[int]) -> str | None:
    """Say what is wrong with a set of cutoffs (positive integers), or return None."""
    if len(values) > MAX_CUTOFFS:
        return f"at most {MAX_CUTOFFS} cutoffs, got {len(values):,}"
    if max(values, default=0) > MAX_CUTOFF:
        return f"cutoffs of at most {MAX_CUTOFF:,}"
    return None


def refusal_pattern_problem(pattern: str) -> str | None:
    """Say why a refusal pattern cannot be used (re's own message, with its position), or return None."""
    with warnings.catch_warnings():  # re's FutureWarning ("Possible nested set"): no line of stderr of its own
        warnings.simplefilter("ignore", FutureWarning)
        return _pattern_problem(pattern)


def _pattern_problem(pattern: str) -> str | None:
    if not pattern.strip():
        return "expected a regular expression, got blank text"
    try:
        compiled = re.compile(pattern, re.IGNORECASE)
    except (re.error, OverflowError) as exc:  # OverflowError: a repeat count past re's, a{99999999999}
        return f"not a valid regular expression: {exc}"
    except RecursionError:
        return "not a valid regular expression: groups nested too deeply"
    # Before any search: the plain claim below is searched with the pattern too.
    slow = backtracking_problem(pattern)
    if slow is not None:
        return slow
    found = compiled.search(_PLAIN_CLAIM)
    if found is not None and found.start() == found.end():
        return "matches empty text, so almost every claim would be a refusal"
    return None


@lru_cache(maxsize=16)
def compile_refusal_patterns(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """Compile refusal patterns, case-insensitive, once per process (checked first: ``refusal_pattern_problem``)."""
    for pattern in patterns:  # checked where each was read; again here, so that no way round the check is left
        problem = refusal_pattern_problem(pattern)
        if problem is not None:
            from ragscore.errors import UsageError

            raise UsageError(f"refusal pattern {quote(pattern)}: {problem}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return tuple(re.compile(p, re.IGNORECASE) for p in patterns)


# --- patterns that take exponential time --------------------------------------------------------
#
# re backtracks: a pattern that can match the same text in many ways tries every way before it
# gives up, and "^(a+)+$" on a claim of 33 "a"s and a "!" runs for minutes. A pattern comes from a
# settings file that a pull request can change, so such a pattern is refused when it is read. The
# rule (the README's "Refusals" states it) is read off re's own parse of the pattern:
#   1. no back-reference (\1, (?P=name));
#   2. a repeat that can match more than once (*, +, {m,n} with n > 1) holds no repeat of varying
#      count (?, *, +, {m,n} with m < n);
#   3. nor an alternation two of whose branches can start with the same character (., \w, \d, \s,
#      a negated class: any character) or one of which can match empty text.
# Inside an atomic group, a possessive repeat or a lookaround nothing is tried again once it has
# matched: rules 2 and 3 apply there afresh. What is left is at worst polynomial in the claim's
# length (as ".*.*" is).

_RE_PARSER: Final[Any] = importlib.import_module("re._parser")  # re's parser: no public module gives its tree
_CASES: Final[Any] = importlib.import_module("re._casefix")._EXTRA_CASES  # "s" and "ſ", "i" and "ı" (IGNORECASE)
_REPEATS: Final = frozenset({"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"})
_LARGE_CLASS: Final = 4096  # a character class larger than this counts as any character
_POSITIONS_UP_TO: Final = 1000  # longest pattern whose fault is placed (each place tried is one parse)
_EXPONENTIAL: Final = "matching it can take time exponential in the claim's length"

_Chars = frozenset[int] | None  # the characters a piece can start with (None: any character)


def backtracking_problem(pattern: str) -> str | None:
    """Say why a pattern (one that compiles) can take exponential time to search, with its position, or return None."""
    try:
        fault = _fault(_parsed(pattern), False)
    except RecursionError:
        return "not a valid regular expression: groups nested too deeply"
    if fault is None:
        return None
    at = _position(pattern, fault) if len(pattern) <= _POSITIONS_UP_TO else None
    where = "" if at is None else f" at position {at}"
    if fault == "GROUPREF":
        return f"a back-reference (\\1 or (?P=name)){where}: {_EXPONENTIAL}"
    if fault == "REPEAT":
        return f"a repeated group{where} holds a repeat of varying count (?, *, +, {{m,n}}): {_EXPONENTIAL}"
    return f"a repeated group{where} holds alternatives that can start alike or match nothing: {_EXPONENTIAL}"


def _fault(items: Sequence[tuple[Any, Any]], repeated: bool) -> str | None:
    """Name the first construct (GROUPREF, REPEAT, BRANCH) that breaks the rule in parsed ``items``;
    ``repeated``: they are inside a repeat that can match more than once."""
    for op, av in items:
        name: str = op.name
        if name == "GROUPREF":
            return name
        if name in _REPEATS:
            low, high, body = av
            if repeated and low != high and name != "POSSESSIVE_REPEAT":
                return "REPEAT"
            # A possessive repeat is an atomic group: the rule starts again inside it.
            fault = _fault(body, (repeated and name != "POSSESSIVE_REPEAT") or high > 1)
        elif name == "BRANCH":
            if repeated and _overlap(av[1]):
                return name
            fault = next((f for f in (_fault(branch, repeated) for branch in av[1]) if f is not None), None)
        elif name == "SUBPATTERN":
            fault = _fault(av[3], repeated)
        elif name == "GROUPREF_EXISTS":  # (?(1)yes|no): the group decides, not the text
            fault = _fault(av[1], repeated) or (_fault(av[2], repeated) if av[2] is not None else None)
        elif name == "ATOMIC_GROUP":
            fault = _fault(av, False)
        elif name in ("ASSERT", "ASSERT_NOT"):
            fault = _fault(av[1], False)
        else:
            fault = None
        if fault is not None:
            return fault
    return None


def _overlap(branches: Sequence[Sequence[tuple[Any, Any]]]) -> bool:
    """Tell whether two branches can start with the same character, or one can match empty text."""
    seen: set[int] = set()
    for branch in branches:
        chars, empty = _first(branch)
        if empty or chars is None or not seen.isdisjoint(chars):
            return True
        seen |= chars
    return False


def _first(items: Sequence[tuple[Any, Any]]) -> tuple[_Chars, bool]:
    """The characters ``items`` can start with (as IGNORECASE compares them), and whether they can match empty text."""
    chars: set[int] = set()
    for op, av in items:
        name = op.name
        if name == "LITERAL":
            return frozenset(chars | _folded(av)), False
        if name == "IN":
            found = _class(av)
            return (None if found is None else frozenset(chars | found)), False
        if name in ("AT", "ASSERT", "ASSERT_NOT"):  # zero width: the next piece starts the text
            continue
        parts = _parts(name, av)
        if parts is None:
            return None, False  # any character (., [^a], a category), or a piece not read here: any, to be safe
        empty = name in _REPEATS and av[0] == 0
        for part in parts:
            found, part_empty = _first(part)
            if found is None:
                return None, False
            chars |= found
            empty = empty or part_empty
        if not empty:
            return frozenset(chars), False
    return frozenset(chars), True


def _parts(name: str, av: Any) -> list[Sequence[tuple[Any, Any]]] | None:
    """The sequences a group, a repeat or an alternation is made of (None for any other piece)."""
    if name == "SUBPATTERN":
        return [av[3]]
    if name == "ATOMIC_GROUP":
        return [av]
    if name == "BRANCH":
        return list(av[1])
    if name == "GROUPREF_EXISTS":
        return [av[1], av[2] or []]
    if name in _REPEATS:
        return [av[2]]
    return None


def _folded(code: int) -> set[int]:
    """A character as IGNORECASE compares it: its lower case and the characters re takes for the same."""
    lower = ord(chr(code).lower()) if len(chr(code).lower()) == 1 else code
    return {lower, *_CASES.get(lower, ())}


def _class(items: Sequence[tuple[Any, Any]]) -> frozenset[int] | None:
    """The characters of a class ([a-c], [xy]) as IGNORECASE compares them; None for any (negated, \\w, wide)."""
    chars: set[int] = set()
    for op, av in items:
        if op.name == "LITERAL":
            chars |= _folded(av)
        elif op.name == "RANGE" and len(chars) + av[1] - av[0] < _LARGE_CLASS:  # the class's size bounds the work
            for code in range(av[0], av[1] + 1):
                chars |= _folded(code)
        else:
            return None
    return frozenset(chars)


def _position(pattern: str, fault: str) -> int | None:
    """Where the fault is: the start of the group (or of the back-reference) that the shortest faulty
    start of the pattern ends with; None when no start of it parses alone."""
    # The shortest faulty start ends with what completes the fault: a repeat's sign or a group's end,
    # or a reference.
    ends = "0123456789)" if fault == "GROUPREF" else "*+?})"
    end = next((i for i in range(1, len(pattern) + 1) if pattern[i - 1] in ends and _faulty(pattern[:i])), None)
    if end is None:
        return None
    if fault == "GROUPREF":
        return max(pattern.rfind("\\", 0, end), pattern.rfind("(?P=", 0, end))
    return next((j for j in range(end - 1, -1, -1) if pattern[j] == "(" and _faulty(pattern[j:end])), None)


def _parsed(pattern: str) -> Sequence[tuple[Any, Any]]:
    """re's parse of a pattern: (opcode, argument) pairs, each opcode named by its ``name``."""
    data: Sequence[tuple[Any, Any]] = _RE_PARSER.parse(pattern, re.IGNORECASE).data
    return data


def _faulty(piece: str) -> bool:
    try:
        return _fault(_parsed(piece), False) is not None
    except (re.error, OverflowError, RecursionError):
        return False


@dataclass(frozen=True, slots=True)
class Settings:
    """Every setting that changes a score; reports carry them as a signature."""

    refusal_tokens: tuple[str, ...] = DEFAULT_REFUSAL_TOKENS
    k: int = 5
    cutoffs: tuple[int, ...] = (1, 3, 5, 10)
    require_claim: bool = True
    scope_citations: bool = True
    strict: bool = False
    families: tuple[str, ...] = ()  # optional metric families on top of the answer metrics
    hybrid_alpha: float = 0.5
    hybrid_gamma: float = 1.0
    similarity_threshold: float = 0.8
    stemmer: bool = False                   # Porter stemming for ROUGE
    text_tokenizer: str = "reference"       # or "unicode" (letters and digits of every script)
    confidence: float = 0.95                # of every interval
    bootstrap: int = 1000                   # resamples of the percentile bootstrap
    seed: str = "0"                         # of the bootstrap, so that reports are reproducible
    refusal_patterns: tuple[str, ...] = ()  # regular expressions: a claim matching one is a refusal
    # How trace records are read: a preset (``loaders.shapes.FORMATS``) and concept -> path
    # mappings (``loaders.fieldpath``). "auto" is resolved from the first record before reports.
    trace_format: str = "auto"
    trace_fields: tuple[tuple[str, str], ...] = ()
    gold_fields: tuple[tuple[str, str], ...] = ()
    # "last": a question's last trace line counts (earlier ones are duplicates); "samples": every
    # line is a sample of the question (metrics/repeats.py), with pass@k and pass^k for each of pass_k.
    repeats: str = LAST
    pass_k: tuple[int, ...] = (1, 3, 5)

    @property
    def sampled(self) -> bool:
        """Tell whether every trace line of a question is one of its samples (``repeats = "samples"``)."""
        return self.repeats == SAMPLES

    def refusal_forms(self) -> frozenset[str]:
        """Return the refusal tokens as a normalised, stripped claim must equal them."""
        return frozenset(normalise(t).strip() for t in self.refusal_tokens)

    def refusal_regexes(self) -> tuple[re.Pattern[str], ...]:
        """Return the refusal patterns compiled (case-insensitive), searched in the normalised, stripped claim."""
        return compile_refusal_patterns(self.refusal_patterns)

    def as_dict(self) -> dict[str, object]:
        """Return the settings as plain JSON data, in a fixed order."""
        return {
            "k": self.k,
            "cutoffs": list(self.cutoffs),
            "refusal_tokens": list(self.refusal_tokens),
            "require_claim": self.require_claim,
            "scope_citations": self.scope_citations,
            "strict": self.strict,
            "metrics": ["answer", *self.families],
            "hybrid_alpha": self.hybrid_alpha,
            "hybrid_gamma": self.hybrid_gamma,
            "similarity_threshold": self.similarity_threshold,
            "stemmer": self.stemmer,
            "text_tokenizer": self.text_tokenizer,
            "confidence": self.confidence,
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "refusal_patterns": list(self.refusal_patterns),
            "trace_format": self.trace_format,
            "trace_fields": dict(self.trace_fields),
            "gold_fields": dict(self.gold_fields),
            # Only when not as in 0.1, whose reports stay byte for byte as they were.
            **({"repeats": self.repeats, "pass_k": list(self.pass_k)} if self.sampled else {}),
        }

    def signature(self) -> str:
        """Return one line naming the version and every setting, for reproducing a score."""
        yes = {True: "yes", False: "no"}
        optional = []
        if {"retrieval", "similarity"} & set(self.families):
            optional.append(f"hybrid:{self.hybrid_alpha:g},{self.hybrid_gamma:g}")
        if "similarity" in self.families:
            optional.append(f"similarity:{self.similarity_threshold:g}")
        if "text" in self.families:
            optional.append(f"text:{self.text_tokenizer},stem:{yes[self.stemmer]}")
        # How the inputs were read, when not as the native contract: a run read another way never
        # compares silently with one read natively.
        if self.refusal_patterns:
            optional.append("refusal_patterns:" + signed(list(self.refusal_patterns)))
        if self.trace_format not in ("native", "auto"):
            optional.append(f"trace:{self.trace_format}")
        if self.trace_fields:
            optional.append("trace_fields:" + signed(dict(self.trace_fields)))
        if self.gold_fields:
            optional.append("gold_fields:" + signed(dict(self.gold_fields)))
        if self.sampled:
            optional.append("repeats:samples,pass_k:" + ",".join(map(str, self.pass_k)))
        return "|".join(
            [
                f"ragscore:{__version__}",
                f"k:{self.k}",
                "cutoffs:" + ",".join(map(str, self.cutoffs)),
                "refusal:" + signed(list(self.refusal_tokens)),
                f"require_claim:{yes[self.require_claim]}",
                f"scope_citations:{yes[self.scope_citations]}",
                f"strict:{yes[self.strict]}",
                "metrics:" + ",".join(["answer", *self.families]),
                *optional,
                f"ci:{self.confidence:g},bootstrap:{self.bootstrap},seed:{self.seed}",
            ]
        )


def signed(value: object) -> str:
    """Write a value of the signature as JSON, its "|" escaped: "|" separates the signature's parts
    (a refusal pattern "a|b" must not read as two of them)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True).replace("|", "\\u007c")
