"""Grounding: what an answer's text says checked against the passages it was given (issue 34).

Pure functions, no gold set needed:

- ``fold`` normalises a text for comparison (NFKC, case folding, typographic quotes, apostrophes
  and dashes folded to ASCII, white space collapsed) and keeps, for each character of the result,
  the offset of the original character it came from, so that findings are reported in the
  original text;
- ``quotes`` finds the spans of a claim inside double quotes (``"..."`` or ``“...”``) and
  ``judge_quote`` says whether one is ``verified`` (in its evidence), ``misattributed`` (not in its
  evidence but in another retrieved passage) or ``unverified``; a quote shorter than
  ``MIN_QUOTE`` characters once folded is ``short`` and not judged;
- ``numbers`` reads every number of a text as a value, a unit class (plain, percent, or currency
  with its symbol) and the precision it is written to (the place of its last written digit,
  its magnitude applied: "3.5 million" is written to 100,000), and ``supports`` says whether an
  evidence number supports a claimed one: the same unit class, and its value rounded (half up)
  to the claim's precision equals the claim's value ("87%" by "87.3%", "3.5 million" by
  "3,456,789"; not "87.3%" by "87%", not "$35M" by "35%").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Context, Decimal
from functools import lru_cache
from os.path import commonprefix
from typing import Final, NamedTuple

from ragscore.text import FOLDED, fold_text, spaced_singly

MIN_QUOTE: Final = 12  # characters, once folded: a shorter quote is a phrase, not a quotation to check

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


# --- quotes ---------------------------------------------------------------------------------------

class Quote(NamedTuple):
    """A quoted span of a claim: its text and its offsets in the claim (the quotation marks excluded)."""

    text: str
    start: int
    end: int


_QUOTE_RE: Final = re.compile(r'"([^"\n]+)"|\u201c([^\u201c\u201d\n]+)\u201d')
VERIFIED: Final = "verified"
MISATTRIBUTED: Final = "misattributed"
UNVERIFIED: Final = "unverified"
SHORT: Final = "short"


def quotes(claim: str) -> list[Quote]:
    """Every span of the claim inside straight or typographic double quotes, in order."""
    if '"' not in claim and "\u201c" not in claim:  # most claims quote nothing: two searches in C
        return []
    out = []
    for match in _QUOTE_RE.finditer(claim):
        group = 1 if match.group(1) is not None else 2
        out.append(Quote(match.group(group), match.start(group), match.end(group)))
    return out


@lru_cache(maxsize=4096)
def folded(text: str) -> str:
    """``fold(text).text`` without the offsets, in C: what a passage is compared as (once per distinct text:
    passages recur across traces)."""
    return fold_text(text)


def judge_quote(quote: str, evidence: Iterable[str], others: Iterable[str] = ()) -> str:
    """``verified`` when the folded quote is in a folded evidence passage, ``misattributed`` when it is
    only in one of ``others`` (passages retrieved but not its evidence), else ``unverified``; ``short``
    when it is shorter than ``MIN_QUOTE`` characters once folded."""
    needle = fold_text(quote).strip(" .,;:!?'\"-")  # quotes are seldom repeated: not kept
    if len(needle) < MIN_QUOTE:
        return SHORT
    if _any_holds(evidence, needle):
        return VERIFIED
    if _any_holds(others, needle):
        return MISATTRIBUTED
    return UNVERIFIED


def _any_holds(passages: Iterable[str], needle: str) -> bool:
    """Whether any of the passages folded holds a folded needle (which has no white space but single spaces
    inside it).

    An ASCII passage is first looked in as it is, lower-cased: the needle's single spaces, between characters
    that are no white space, are kept by folding, so where it is found it is found folded. Only where it is
    in none are the passages folded, but for an ASCII one whose only white space is single spaces: folding
    it changes nothing more."""
    unsure = []
    for passage in passages:
        if passage.isascii():
            low = passage.lower()
            if needle in low:
                return True
            unsure.append((passage, low))
        else:
            unsure.append((passage, ""))
    return any(not (low and spaced_singly(low)) and needle in _folded_passage(passage) for passage, low in unsure)


@lru_cache(maxsize=4096)
def _folded_passage(passage: str) -> str:
    """A passage folded, kept once per distinct text: passages recur across traces, and normalising one costs
    many times what looking it up does (an ASCII one spaced singly is not folded at all)."""
    return fold_text(passage)


def evidence_of(ids: Sequence[str], cited: Iterable[str], passages: Sequence[str]
                ) -> tuple[list[str], list[str], bool]:
    """An answer's evidence, the other passages it retrieved, and whether the evidence is its citations: the
    passages it cites, when they are one text per retrieved id and it cites one of them; else all of them."""
    wanted = set(cited)
    if wanted and len(ids) == len(passages):
        evidence = [t for i, t in zip(ids, passages, strict=True) if i in wanted]
        if evidence:
            return evidence, [t for i, t in zip(ids, passages, strict=True) if i not in wanted], True
    return list(passages), [], False


def grounding_counts(claim: str, evidence: Sequence[str], others: Sequence[str],
                     leaked: Sequence[tuple[int, int]] = ()) -> tuple[float, ...]:
    """A claim's counts against its evidence: judged, verified, misattributed and unverified quotes, short
    quotes, numbers, unsupported numbers (a number inside a leak's span, ``leaked``, is the leak's, not one)."""
    judged = [judge_quote(q.text, evidence, others) for q in quotes(claim)]
    short = judged.count(SHORT)
    claimed = claim_numbers(claim, leaked)
    return (float(len(judged) - short), float(judged.count(VERIFIED)), float(judged.count(MISATTRIBUTED)),
            float(judged.count(UNVERIFIED)), float(short), float(len(claimed)),
            float(len(unsupported(claim, evidence, claimed)) if claimed else 0))


class Finding(NamedTuple):
    """One thing --metrics grounding found in a claim, at its characters: a quote (its verdict), an unsupported
    number, or a leak (its kind in ``detail``, and where its value came from as its verdict)."""

    kind: str     # "quote", "number" or "leak"
    start: int
    end: int
    verdict: str  # a quote's verdict; "unsupported"; a leak's from_context, echoed or invented
    detail: str = ""


class Findings(NamedTuple):
    """What --metrics grounding found in one answered claim, and which evidence it was judged against."""

    evidence: str            # "cited" (the passages it cites), "retrieved" (every one) or "none" (no texts)
    passages: int            # how many passages that evidence is
    numbers: int             # the claim's numbers (those supported are not listed)
    items: tuple[Finding, ...]


def claim_numbers(claim: str, leaked: Sequence[tuple[int, int]] = ()) -> list[Number]:
    """A claim's numbers, but those inside a leak's span (a card's digits, a phone number): they are the leak."""
    found = numbers(claim)
    if leaked:
        found = [n for n in found if not any(start < n.end and n.start < end for start, end in leaked)]
    return found


def grounding_findings(claim: str, ids: Sequence[str], cited: Iterable[str], passages: Sequence[str],
                       question: str | None) -> Findings:
    """Each quote, each unsupported number and each leak of a claim, in order of their characters: what
    ``--explain`` and the per-question rows list (``grounding_counts`` counts the same)."""
    from ragscore.metrics.leaks import leaks, placed

    items: list[Finding] = []
    claimed: list[Number] = []
    evidence: list[str] = []
    kind = "none"
    found = leaks(claim)
    if passages:
        evidence, others, from_citations = evidence_of(ids, cited, passages)
        kind = "cited" if from_citations else "retrieved"
        items += [Finding("quote", q.start, q.end, judge_quote(q.text, evidence, others)) for q in quotes(claim)]
        claimed = claim_numbers(claim, [(leak.start, leak.end) for leak in found])
        items += [Finding("number", n.start, n.end, "unsupported") for n in unsupported(claim, evidence, claimed)]
    items += [Finding("leak", leak.start, leak.end, placed(leak, passages, question), leak.kind) for leak in found]
    return Findings(kind, len(evidence), len(claimed), tuple(sorted(items, key=lambda f: (f.start, f.end))))


# --- numbers --------------------------------------------------------------------------------------

class Number(NamedTuple):
    """A number as written: its value, unit class, precision and offsets in its text."""

    value: Decimal
    unit: str          # "", "%" or a currency symbol ($ € £ ¥)
    precision: Decimal  # the place of its last written digit, its magnitude applied
    start: int
    end: int


# Written after a number (a single letter only as these: "5 m" is five metres, not five million).
_MAGNITUDES: Final = {"thousand": 3, "k": 3, "K": 3, "million": 6, "M": 6, "billion": 9, "bn": 9, "trillion": 12}
# Digits with thousands separators or none, decimals, then a percent sign or "percent", or a magnitude (a
# match starts at a digit: numbers are found by one scan for digits, not a try at every character). Digits
# glued to letters on either side (a model name, "B2B", "3rd") are no number: the match fails at the end, or
# the character before is checked.
# The decimals are taken whole or the number is none ("2.5x" is no 2): the optional group is possessive. Words
# are read in any case ("3.5 Million"), the one-letter magnitudes as written ("5 m" is five metres).
_AFTER: Final = (r"(?:\.(?P<decimals>[0-9]+))?+(?:\s?(?P<percent>%|(?i:percent|per cent)\b)|"
                 r"\s?(?P<magnitude>(?i:thousand|million|billion|trillion|bn)|[kKM])(?!\w))?(?!\w)")
_NUMBER_RE: Final = re.compile(r"(?P<digits>[0-9]+(?:,[0-9]{3})*+)(?![0-9])" + _AFTER)
_AFTER_RE: Final = re.compile(_AFTER)
_CURRENCIES: Final = frozenset("$\u20ac\u00a3\u00a5")
_OPENING: Final = frozenset("([{=:\"'\u201c\u2018")  # what a sign may stand right after
_SIGNS: Final = frozenset("-+\u2212")
_LEADS: Final = _SIGNS | _CURRENCIES | {" "}  # what may stand before a number's digits and be its own
_PRECISIONS: Final = {places: Decimal(1).scaleb(places) for places in range(-40, 41)}


# Full-width digits and signs as NFKC reads them, one character for one (so offsets stay the text's own).
_WIDE: Final = str.maketrans({**{chr(0xFF10 + i): str(i) for i in range(10)}, "\uff05": "%", "\uff04": "$",
                              "\uffe5": "\u00a5", "\uffe1": "\u00a3", "\uff0c": ",", "\uff0e": ".", "\uff0b": "+",
                              "\uff0d": "-"})


def numbers(text: str) -> list[Number]:
    """Every number of ``text``, in order (see the module's docstring for what counts as one)."""
    if not text.isascii():
        text = text.translate(_WIDE)
    if len(text) < _CACHED_BELOW:
        return _numbers(text)
    return list(_cached_numbers(text))


def _numbers(text: str) -> list[Number]:
    out = []
    for match in _NUMBER_RE.finditer(text):
        # Every number starts a match: a digit inside a match follows a digit, a comma or a point, so none
        # is passed over. _read drops the matches glued to what stands before them.
        number = _read(text, match)
        if number is not None:
            out.append(number)
    return out


def _number_at(text: str, start: int) -> Number | None:
    """The number whose digits start at ``start`` of ``text`` (its full-width digits read), if one does."""
    match = _NUMBER_RE.match(text, start)
    return None if match is None else _read(text, match)


def _read(text: str, match: re.Match[str]) -> Number | None:
    """The number of a match of ``_NUMBER_RE``: None when its digits are glued to a word or a number before."""
    start = match.start()
    before = text[start - 1] if start else ""
    if before and (before.isalnum() or before in "_.,"):  # what \w, a comma or a point is
        return None  # glued to a word, or a part of a longer number
    digits, decimals, percent, magnitude = match.groups()
    stop = match.end()
    if "," in digits:
        if digits.index(",") > 3:  # "1234,567": no thousands separator, the number ends at the comma
            digits = digits[:digits.index(",")]
            after = _AFTER_RE.match(text, start + len(digits))
            if after is None:
                return None
            decimals, magnitude, percent, stop = after["decimals"], after["magnitude"], after["percent"], after.end()
        digits = digits.replace(",", "")
    # What may stand before: a sign, a currency symbol (either order), a space between symbol and digits.
    first, unit, sign = start, "", ""
    while first > 0 and before in _LEADS:
        char = text[first - 1]
        # a sign stands at the start, after white space or an opening mark; after a word, a number or a
        # symbol it is a hyphen or a dash ("GPT-4" is 4, "10%-20%" is 10% and 20%): the digits are read alone
        if char in _SIGNS and not sign and (first == 1 or text[first - 2].isspace() or text[first - 2] in _OPENING):
            sign, first = char, first - 1
        elif char in _CURRENCIES and not unit:
            unit, first = char, first - 1
        elif char == " " and first > 1 and text[first - 2] in _CURRENCIES and not unit:
            first -= 1
        else:
            break
        before = text[first - 1] if first else ""
    value = Decimal(f"{digits}.{decimals}" if decimals else digits)
    places = -len(decimals) if decimals else 0
    if magnitude is not None:
        shift = _MAGNITUDES[magnitude if len(magnitude) == 1 else magnitude.lower()]
        value = value.scaleb(shift, context=_EXACT)
        places += shift
    if sign and sign != "+":
        value = value.copy_negate()
    if percent:
        unit = "%"
    precision = _PRECISIONS.get(places)
    return Number(value, unit, Decimal(1).scaleb(places) if precision is None else precision, first, stop)


_CACHED_BELOW: Final = 200  # a passage longer than this is read once per distinct text (passages recur)


@lru_cache(maxsize=4096)
def _cached_numbers(text: str) -> tuple[Number, ...]:
    return tuple(_numbers(text))


def supports(evidence: Number, claimed: Number) -> bool:
    """Whether an evidence number supports a claimed one: the same unit class, and the evidence value
    rounded half up to the claim's precision equals the claim's value."""
    if evidence.unit != claimed.unit:
        return False
    exact = _EXACT
    ratio = exact.divide(evidence.value, claimed.precision)
    rounded = exact.multiply(ratio.quantize(Decimal(1), rounding=ROUND_HALF_UP, context=exact), claimed.precision)
    return rounded == claimed.value


def unsupported(claim: str, evidence: Sequence[str], claimed: Sequence[Number] | None = None) -> list[Number]:
    """The numbers of the claim (``claimed``, when read already) that no number of its evidence supports.

    A passage is not read number by number (a regular expression costs many times what a pass of C over the
    text does): a number that supports a claimed one starts with one of a few strings of digits
    (``_leading_digits``), so those are looked for in the passage's digits, and only a number found starting
    so is read."""
    claimed = numbers(claim) if claimed is None else claimed
    if not claimed:
        return []
    passages = [_Digits.of(passage) for passage in evidence]
    out = []
    for n in claimed:
        searches = _searches(n.value, n.precision)
        if not any(passage.supports(n, searches) for passage in passages):
            out.append(n)
    return out


class _Digits(NamedTuple):
    """A passage as ``unsupported`` looks in it: its text (full-width digits read), its digits (every other
    character a space, its commas and points left out, so that a number's digits stand together, one
    character for each character of the text but those), and its runs of digits, each after a space."""

    text: str
    digits: bytes
    runs: bytes

    @classmethod
    def of(cls, passage: str) -> _Digits:
        if passage.isascii():
            text, ascii = passage, passage.encode()
        else:  # one byte a character, as the text's offsets count
            text = passage.translate(_WIDE)
            ascii = text.encode("ascii", "replace")
        digits = ascii.translate(_DIGITS_ONLY, b",.")
        return cls(text, digits, b" " + b" ".join(digits.split()))

    def supports(self, claimed: Number, searches: _Searches | None) -> bool:
        """Whether a number of the passage supports ``claimed``, looking only where ``searches``
        (``_searches``) find it may.

        A supporting number has the claim's unit (so a currency's symbol is in the text), and its digits,
        separators left out, are zeros or none and then one of the claim's leading digits, after a character
        that is no digit (a number's digits start after no letter, digit, comma or point): a run of digits
        that starts so, found at once among the runs, then where in the text it is."""
        text, unit = self.text, claimed.unit
        if unit and unit != "%" and unit not in text:
            return False
        if searches is None:  # 0: numbers of any digits may round to it
            return _supported(claimed, [n.value for n in numbers(text) if n.unit == unit])
        runs = self.runs
        if b" 0" not in runs and not any(start in runs for start in searches.runs):
            return False
        digits = self.digits
        for lead, endings in searches.digits:
            at = digits.find(lead)
            while at >= 0:
                if not endings or digits.startswith(endings, at + len(lead)):
                    start = at
                    while start and digits[start - 1] == 48:  # a zero before it
                        start -= 1
                    if not start or digits[start - 1] == 32:  # no digit before it
                        found = _number_at(text, _in_text(text, start))
                        if found is not None and found.unit == unit and _supported(claimed, (found.value,)):
                            return True
                at = digits.find(lead, at + 1)
        return False


def _in_text(text: str, at: int) -> int:
    """Where in ``text`` the character at ``at`` of the text without its commas and points is."""
    where = at
    while True:  # the least index with as many separators before it as it is past ``at``
        moved = at + text.count(",", 0, where) + text.count(".", 0, where)
        if moved == where:
            break
        where = moved
    while text[where] in ",.":  # separators left out stand right before it
        where += 1
    return where


# Every byte a space but the digits.
_DIGITS_ONLY: Final = bytes(c if 0x30 <= c <= 0x39 else 0x20 for c in range(256))


class _Searches(NamedTuple):
    """How ``_Digits.supports`` finds the numbers that may support a claimed one."""

    runs: tuple[bytes, ...]                        # a run of digits starts with one of these (after its space)
    digits: tuple[tuple[bytes, tuple[bytes, ...]], ...]  # (digits, what follows: one of these, or anything)


@lru_cache(maxsize=4096)
def _searches(value: Decimal, precision: Decimal) -> _Searches | None:
    """How to find the numbers that may round to ``value`` at ``precision``: the digits they start with
    (``_leading_digits``) after a space among a passage's runs of digits, and to find where they are, those
    sharing two or more first digits searched for once ("2020" and "2021": "202", then "0" or "1"); None for
    0."""
    leading = _leading_digits(value.copy_abs(), precision)
    if leading is None:
        return None
    groups: list[list[str]] = []
    for digits in leading:  # in order: those sharing a start stand together
        if groups and len(commonprefix([groups[-1][0], digits])) >= 2:
            groups[-1].append(digits)
        else:
            groups.append([digits])
    searches = []
    for group in groups:
        shared = commonprefix(group)
        endings = tuple(digits[len(shared):].encode() for digits in group)
        searches.append((shared.encode(), () if b"" in endings else endings))
    return _Searches(tuple(b" " + digits.encode() for digits in leading), tuple(searches))


_MOST_LEADING: Final = 12  # digit strings searched for at most per claimed number (fewer digits each when more)


def _leading_digits(value: Decimal, precision: Decimal) -> tuple[str, ...] | None:
    """What the significant digits of every number that rounds to ``value`` (> 0) at ``precision`` start with:
    a few digit strings, none the start of another (None for 0, which numbers of any digits round to).

    The numbers that round to it lie in ``[value - precision/2, value + precision/2]``; for each power of ten
    that interval meets, the first L significant digits of its numbers run over a range of integers, and a
    number written with fewer digits than L has that integer's digits without its trailing zeros. L is the
    number of significant digits the claim was written with (two strings, or a few about a power of ten),
    fewer while that gives more than ``_MOST_LEADING``."""
    if not value:
        return None
    exact = _EXACT
    half = exact.multiply(_HALF, precision)
    low, high = exact.subtract(value, half), exact.add(value, half)
    written: set[str] = set()
    # as many significant digits as the claim was written with: a few strings (more find no more numbers)
    for length in range(len(str(int(value.scaleb(-precision.adjusted(), context=exact)))), 0, -1):
        written.clear()
        for power in range(low.adjusted(), high.adjusted() + 1):
            floor = max(low, Decimal(1).scaleb(power, context=exact))
            ceiling = min(high, Decimal(1).scaleb(power + 1, context=exact))
            first = int(floor.scaleb(length - 1 - power, context=exact).to_integral_value(ROUND_FLOOR, exact))
            last = min(int(ceiling.scaleb(length - 1 - power, context=exact).to_integral_value(ROUND_FLOOR, exact)),
                       10**length - 1)
            if last - first >= _MOST_LEADING:  # (the interval meets at most two powers: at most 18 at length 1)
                break
            for start in range(first, last + 1):
                # written with fewer digits only when it is that number exactly: every start but the first is
                # inside the interval, and the first is when the interval starts there
                whole = start > first or Decimal(start).scaleb(power + 1 - length, context=exact) >= low
                written.add(str(start).rstrip("0") if whole else str(start))
        else:
            if len(written) <= _MOST_LEADING:
                break
    kept: list[str] = []
    for digits in sorted(written):
        if not (kept and digits.startswith(kept[-1])):  # found wherever the shorter one is found
            kept.append(digits)
    return tuple(kept)


_HALF: Final = Decimal("0.5")
# Numbers are written with any number of digits: their arithmetic is exact (the default context keeps 28).
_EXACT: Final = Context(prec=100_000)


def _supported(claimed: Number, values: Iterable[Decimal]) -> bool:
    """``supports`` for every value of one unit class at once: the values that round half up (away from zero)
    to the claimed value at its precision lie in one interval around it, closed where a tie rounds to it."""
    value, precision = claimed.value, claimed.precision
    exact = _EXACT
    half = exact.multiply(_HALF, precision)
    low, high = exact.subtract(value, half), exact.add(value, half)
    if value > 0:
        return any(low <= v < high for v in values)
    if value < 0:
        return any(low < v <= high for v in values)
    return any(low < v < high for v in values)
