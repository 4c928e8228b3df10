"""The scoring settings (the ``[scoring]`` knobs) and the signature that records them."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from ragscore.backtracking import backtracking_problem
from ragscore.quoting import quote
from ragscore.text import normalise
from ragscore.version import __version__

DEFAULT_REFUSAL_TOKENS = ("not in context",)
# Common English refusals (``ragscore init`` writes them out; an empty list turns them off). Each is
# anchored at the claim's start, after an opening such as "Sorry," or "Based on the context,", so that
# an answer which hedges part of itself ("..., though I can't say whether sale items count") stays an
# answer. LangChain's stock RetrievalQA prompt asks for "I don't know." itself.
_OPENING: Final = (r"^\W*(?:(?:sorry|unfortunately|i'?m afraid|(?:based on|according to) the (?:provided )?"
                   r"(?:context|documents?))\W*(?:but )?)?")
DEFAULT_REFUSAL_PATTERNS: Final = (
    _OPENING + r"(?:i|we) (?:do not|don.?t|cannot|can.?t|could not|couldn.?t|am unable to) (?:know|say|tell|answer|"
               r"find|determine)\b",
    r"^\W*(?:(?:sorry|unfortunately|i'?m afraid)\W*(?:but )?)?[\w'’ ]{0,60}\bnot (?:mentioned|found|provided|"
    r"stated|given|specified|available) in the (?:provided |given )?(?:context|documents?|sources?|passages?|text)\b",
    _OPENING + r"(?:cannot|can.?t|unable to|could not|couldn.?t|i'?m unable to) (?:answer|find|determine)\b",
    _OPENING + r"(?:there is )?no (?:relevant )?information\b",
    _OPENING + r"the (?:provided |given )?(?:context|documents?|sources?|passages?|text) (?:does|do)(?: not|n.?t) "
               r"(?:contain|mention|say|provide|include)\b",
    _OPENING + r"(?:there is )?(?:not enough|insufficient) (?:information|context)\b",
    _OPENING + r"(?:i|we) (?:do not|don.?t) have (?:enough |any |the )?(?:information|context|data)\b",
)
# What reports call each default pattern (the pattern itself is long): the phrasing it finds.
DEFAULT_REFUSAL_NAMES: Final = dict(zip(DEFAULT_REFUSAL_PATTERNS, (
    "I don't know", "not mentioned in the context", "cannot answer", "no information",
    "the context does not contain", "not enough information", "I don't have the information"), strict=True))
# What a refusal token and a claim lose before they are compared: the white space (str.isspace)
# and quotes around them, straight and typographic, and a final full stop, exclamation mark or
# ellipsis ('"I don't know."' is the token "i don't know"). A final "?", ",", ";" or ":" stays: a
# question back or a sentence cut short is not the token's statement.
_SPACE: Final = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006" \
                "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
QUOTES: Final = "\"'`\u201c\u201d\u201e\u201f\u2018\u2019\u201a\u201b\u00ab\u00bb\u2039\u203a"
FINAL_STOPS: Final = ".!\u2026"
_LEADING: Final = _SPACE + QUOTES
_TRAILING: Final = _SPACE + QUOTES + FINAL_STOPS
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


def session_problem(value: object) -> str | None:
    """Say what is wrong with a ``session`` setting (None: nothing): a field path, keys joined by dots."""
    if not isinstance(value, str) or not value or not all(value.split(".")) or value != value.strip():
        return 'a field name (keys joined by dots, as --by takes them: "session_id", "meta.session")'
    return None


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


@lru_cache(maxsize=16)
def refusal_screen(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """Return one expression that matches where any of the refusal patterns does (their alternation),
    to search a claim once rather than once per pattern (7 searches of a 60-character claim: 5.4 us;
    the one: 2.1 us); None when they do not combine (two define one group name) or there are none."""
    if not patterns:
        return None
    compile_refusal_patterns(patterns)  # checked, each on its own
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        try:
            return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)
        except re.error:  # a group name twice, a global flag not at the start: each is searched on its own
            return None


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
    refusal_patterns: tuple[str, ...] = DEFAULT_REFUSAL_PATTERNS  # regular expressions: a claim matching one refuses
    # How trace records are read: a preset (``loaders.shapes.FORMATS``) and concept -> path
    # mappings (``loaders.fieldpath``). "auto" is resolved from the first record before reports.
    trace_format: str = "auto"
    trace_fields: tuple[tuple[str, str], ...] = ()
    gold_fields: tuple[tuple[str, str], ...] = ()
    # "last": a question's last trace line counts (earlier ones are duplicates); "samples": every
    # line is a sample of the question (metrics/repeats.py), with pass@k and pass^k for each of pass_k.
    repeats: str = LAST
    pass_k: tuple[int, ...] = (1, 3, 5)
    # --corpus ([inputs] corpus): passage texts by id. An input, not a setting of the score: the report
    # records it under inputs.corpus with its sha256, and neither as_dict nor the signature names it.
    corpus: str | None = None
    # --chunks ([inputs] chunks): one chunking of the documents, chunk id -> span. An input as corpus is.
    chunks: str | None = None
    # --session FIELD ([scoring] session): the gold field (else the trace's) naming each question's session, whose
    # questions are its turns (metrics/sessions.py); "session_id" when the gold file holds one.
    session: str | None = None
    # The LLM judge whose scores a --scores file holds (ragscore judge's header): its endpoint's host, its model and
    # its rubric's sha256, as (name, value) pairs. Set from the scores file, never by an option.
    judge: tuple[tuple[str, str], ...] | None = None

    @property
    def sampled(self) -> bool:
        """Tell whether every trace line of a question is one of its samples (``repeats = "samples"``)."""
        return self.repeats == SAMPLES

    def refusal_forms(self) -> frozenset[str]:
        """Return the refusal tokens as a claim's ``refusal_form`` must equal them; a token that is all
        quotes and stops ("...") as written, stripped, so that no claim trims to it."""
        return frozenset(refusal_form(n) or n.strip() for n in map(normalise, self.refusal_tokens)) - {""}

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
            **({"session": self.session} if self.session is not None else {}),
            **({"judge": dict(self.judge)} if self.judge is not None else {}),
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
        optional.append(patterns_signed(self.refusal_patterns))
        if self.trace_format not in ("native", "auto"):
            optional.append(f"trace:{self.trace_format}")
        if self.trace_fields:
            optional.append("trace_fields:" + signed(dict(self.trace_fields)))
        if self.gold_fields:
            optional.append("gold_fields:" + signed(dict(self.gold_fields)))
        if self.sampled:
            optional.append("repeats:samples,pass_k:" + ",".join(map(str, self.pass_k)))
        if self.session is not None:
            optional.append("session:" + signed(self.session))
        if self.judge is not None:
            optional.append("judge:" + signed(dict(self.judge)))
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


def refusal_form(claim: str) -> str:
    """Return a normalised claim (or token) as refusal tokens are compared: without the white space
    and quotes around it, nor a final ".", "!" or "…" (see ``_TRAILING``)."""
    return claim.lstrip(_LEADING).rstrip(_TRAILING)


def is_refusal_token(claim: str, refusals: frozenset[str]) -> bool:
    """Tell whether a normalised claim is one of ``refusals`` (``Settings.refusal_forms``), trimmed as
    they are, or as written (stripped) for a token that is all quotes and stops."""
    trimmed = claim.lstrip(_LEADING).rstrip(_TRAILING)  # refusal_form(claim.strip()): the white space is in both
    return trimmed in refusals if trimmed else claim.strip() in refusals  # only a token of stops trims to nothing


def patterns_signed(patterns: tuple[str, ...]) -> str:
    """Return the signature's part for the refusal patterns: "default", or the list ("[]": none)."""
    return "refusal_patterns:" + ("default" if patterns == DEFAULT_REFUSAL_PATTERNS else signed(list(patterns)))


def signed(value: object) -> str:
    """Write a value of the signature as JSON, its "|" escaped: "|" separates the signature's parts
    (a refusal pattern "a|b" must not read as two of them)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True).replace("|", "\\u007c")
