"""Text normalisation and the claim-containment rule: how a claim and the gold set's text compare.

A neutral module: the gold loader chooses each item's rule with it, the answer metrics apply it,
and the reports word it; it imports nothing of ragscore. The grounding checks fold texts with
``fold_text`` (and ``fold``, which keeps where each folded character came from).
"""

from __future__ import annotations

import re
import unicodedata
from enum import StrEnum
from functools import lru_cache
from typing import Final, NamedTuple

MIN_NEEDLE: Final = 5

# [alnum][alnum, '-', white space]{4,}, with alnum in any script ([^\W_] is \w less '_').
_PHRASE_RE: Final = re.compile(r"[^\W_](?:[^\W_]|[-\s]){4,}")


def normalise(text: str) -> str:
    """Return ``text`` in the form every comparison uses: Unicode NFC, then case-folded."""
    return unicodedata.normalize("NFC", text).casefold()


# Typographic characters folded to ASCII before texts are compared as the grounding checks compare them
# (NFKC leaves them as they are).
FOLDED: Final = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "\u02bc": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
})


def fold_text(text: str) -> str:
    """Fold a text for comparison: NFKC, case folded, typographic quotes, apostrophes and dashes as ASCII,
    white space collapsed to one space and none at either end (``fold`` does the same one
    character at a time, keeping offsets)."""
    plain = fold_plain(text)
    if plain is not None:
        return plain
    if text.isascii():  # NFKC and the table leave ASCII as it is, and case folding it is lower-casing it
        return " ".join(text.lower().split())
    return " ".join(unicodedata.normalize("NFKC", text).casefold().translate(FOLDED).split())


def fold_plain(text: str) -> str | None:
    """``fold_text`` of a plain text, cheaply: ASCII whose words are spaced by single spaces (most texts), which
    folds to its lower case without spaces at its ends (one pass in C rules out other white space, cheaper
    than splitting into words and joining them); None for any other text."""
    if not text.isascii():
        return None
    low = text.lower()
    return low.strip(" ") if spaced_singly(low) else None


def spaced_singly(text: str) -> bool:
    """Whether an ASCII text's only white space is single spaces (then folding it only lower-cases it and
    trims its ends): a search in C for each other white space character, each a scan for one character."""
    return not ("  " in text or "\n" in text or "\t" in text or "\r" in text or "\x0b" in text or "\x0c" in text
                or "\x1c" in text or "\x1d" in text or "\x1e" in text or "\x1f" in text)


def claim_phrases(gold_claim: str) -> tuple[str, ...]:
    """Extract the phrases of a reference claim that a correct answer must contain one of."""
    phrases = (match.group().strip() for match in _PHRASE_RE.finditer(normalise(gold_claim)))
    return tuple(dict.fromkeys(p for p in phrases if len(p) >= MIN_NEEDLE))


class Rule(StrEnum):
    """Which containment rule a gold item is checked with."""

    SUBSTR = "gold_claim_substr"
    SUBSTR_EMPTY = "gold_claim_substr (empty: nothing to check)"
    SUBSTR_SHORT = "gold_claim_substr (every entry shorter than 5 characters)"
    PHRASES = "gold_claim phrases"
    NO_PHRASES = "gold_claim (no phrase of 5 or more characters)"
    NONE = "no gold claim (nothing to check)"


def containment_rule(substr: tuple[str, ...] | None, claim: str | None) -> tuple[Rule, tuple[str, ...]]:
    """Choose the containment rule for a gold item and the normalised needles it looks for."""
    if substr is not None:
        if not substr:
            return Rule.SUBSTR_EMPTY, ()
        needles = tuple(dict.fromkeys(n for n in map(normalise, substr) if len(n) >= MIN_NEEDLE))
        return (Rule.SUBSTR, needles) if needles else (Rule.SUBSTR_SHORT, ())
    if claim is not None:
        phrases = claim_phrases(claim)
        return (Rule.PHRASES, phrases) if phrases else (Rule.NO_PHRASES, ())
    return Rule.NONE, ()


class Folded(NamedTuple):
    """A text folded for comparison, with where in the original each of its characters came from."""

    text: str
    offsets: tuple[int, ...]  # offsets[i]: where the original character(s) folded character i came from start
    ends: tuple[int, ...]     # ends[i]: ... and end (a letter with its combining marks is folded as one)

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The original span of the folded span ``start:end`` (end exclusive)."""
        if start >= end:
            at = self.offsets[start] if start < len(self.offsets) else (self.ends[-1] if self.ends else 0)
            return at, at
        return self.offsets[start], self.ends[end - 1]


def fold(text: str) -> Folded:
    """Fold ``text`` for comparison, keeping where each folded character came from: the same text as
    ``ragscore.text.fold_text`` gives.

    Each character with the combining marks after it is normalised as one (NFKC, then case folded, then
    typographic quotes, apostrophes and dashes to ASCII), so every character of the result points back at
    the characters it came from; a run of white space becomes one space, and none is kept at either end.
    """
    out: list[str] = []
    offsets: list[int] = []
    ends: list[int] = []
    space = True  # at the start: leading white space is dropped
    i, size = 0, len(text)
    combining = unicodedata.combining
    while i < size:
        char = text[i]
        j = i + 1
        if char.isascii() and not (j < size and not text[j].isascii() and combining(text[j])):
            if char.isspace():
                if not space:
                    out.append(" ")
                    offsets.append(i)
                    ends.append(j)
                    space = True
            else:
                out.append(char.lower())
                offsets.append(i)
                ends.append(j)
                space = False
            i = j
            continue
        while j < size and combining(text[j]):
            j += 1
        piece = unicodedata.normalize("NFKC", text[i:j]).casefold().translate(FOLDED)
        for c in piece:
            if c.isspace():  # NFKC can make a space (a no-break space is white space already)
                if not space:
                    out.append(" ")
                    offsets.append(i)
                    ends.append(j)
                    space = True
                continue
            out.append(c)
            offsets.append(i)
            ends.append(j)
            space = False
        i = j
    if out and out[-1] == " ":
        out.pop()
        offsets.pop()
        ends.pop()
    return Folded("".join(out), tuple(offsets), tuple(ends))


@lru_cache(maxsize=4096)
def folded(text: str) -> str:
    """``fold(text).text`` without the offsets, in C: what a passage is compared as (once per distinct text:
    passages recur across traces)."""
    return fold_text(text)
