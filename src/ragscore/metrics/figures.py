"""The numbers of a claim checked against the numbers of its evidence (issue 34: the grounding family).

``numbers`` reads every number of a text as a value, a unit class (plain, percent, or currency
with its symbol) and the precision it is written to (the place of its last written digit, its
magnitude applied: "3.5 million" is written to 100,000), and ``supports`` says whether an evidence
number supports a claimed one: the same unit class, and its value rounded (half up) to the
claim's precision equals the claim's value ("87%" by "87.3%", "3.5 million" by "3,456,789"; not
"87.3%" by "87%", not "$35M" by "35%"). ``unsupported`` lists a claim's numbers that no number of
its evidence supports, without reading the evidence number by number: it looks for the digits a
supporting number must start with.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Context, Decimal
from functools import lru_cache
from os.path import commonprefix
from typing import Final, NamedTuple


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
# match starts at a digit, written alone first: a search skips to the digits, not trying every character). Digits
# glued to letters on either side (a model name, "B2B", "3rd") are no number: the match fails at the end, or
# the character before is checked.
# The decimals are taken whole or the number is none ("2.5x" is no 2): the optional group is possessive. Words
# are read in any case of their ASCII letters ("3.5 Million"; not "mıllıon", which case folding would take),
# the one-letter magnitudes as written ("5 m" is five metres).
# (One white space character at most, then a look at the character that starts every unit and magnitude, before
# trying them each.)
_AFTER: Final = (r"(?:\.(?P<decimals>[0-9]+))?+(?:\s?+(?=[%pPtTmMbBkK])(?:(?P<percent>%|(?ai:percent|per cent)\b)|"
                 r"(?P<magnitude>(?ai:thousand|million|billion|trillion|bn)|[kKM])(?!\w)))?(?!\w)")
_NUMBER_RE: Final = re.compile(r"(?P<digits>[0-9][0-9]*+(?:,[0-9]{3})*+)(?![0-9])" + _AFTER)
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
    return _new_number(Number, (value, unit, Decimal(1).scaleb(places) if precision is None else precision,
                                first, stop))


_new_number: Final = tuple.__new__  # a Number without its __new__'s call in Python (numbers are many)


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
    passages = [_Digits(passage) for passage in evidence]
    out = []
    cache = _WRITTEN
    for n in claimed:
        # How a number is written says its value, precision and unit: hashing that costs less than hashing
        # its value.
        written = claim[n.start:n.end]
        try:
            searches = cache[written]
        except KeyError:
            if len(cache) >= _WRITTEN_KEPT:
                cache.clear()
            searches = cache[written] = _searches(n.value, n.precision, n.unit == "%")
        for passage in passages:
            if passage.supports(n, searches):
                break
        else:
            out.append(n)
    return out


_WRITTEN: Final[dict[str, _Searches | None]] = {}  # _searches by how a claimed number is written
_WRITTEN_KEPT: Final = 16384


class _Digits:
    """A passage as ``unsupported`` looks in it: its text (full-width digits read); its spans of digits,
    commas and points; those spans without their commas and points, each after a space (its runs); and,
    when a number is to be read, its digits (every other character a space, its commas and points left out,
    so that a number's digits stand together: one character for each character of the text but those)."""

    __slots__ = ("_ascii", "_digits", "runs", "spans", "text", "zeros")

    def __init__(self, passage: str) -> None:
        if passage.isascii():
            text, ascii = passage, passage.encode()
        else:  # one byte a character, as the text's offsets count
            text = passage.translate(_WIDE)
            ascii = text.encode("ascii", "replace")
        self.text = text
        self.spans = ascii.translate(_DIGITS_AND_SEPARATORS).split()
        self.runs = (b" " + b" ".join(self.spans)).translate(None, b",.")
        self.zeros = b" 0" in self.runs  # a run that starts with a zero: any number may start so
        self._ascii = ascii
        self._digits: bytes | None = None

    def _may_hold(self, searches: _Searches) -> bool:
        """Whether a run of digits starts as a supporting number's does (after zeros, or none), and its span's
        value may round to the claim's."""
        runs, spans = self.runs, self.spans
        for key in (*searches.runs, b" 0") if self.zeros else searches.runs:
            at, counted, index = runs.find(key), 0, 0
            while at >= 0:
                index += runs.count(b" ", counted, at)  # (counted on: each run's space is counted once)
                counted = at
                if searches.may_round(spans[index]):
                    return True
                at = runs.find(key, at + 1)
        return False

    @property
    def digits(self) -> bytes:
        if self._digits is None:
            self._digits = self._ascii.translate(_DIGITS_ONLY, b",.")
        return self._digits

    def supports(self, claimed: Number, searches: _Searches | None) -> bool:
        """Whether a number of the passage supports ``claimed``, looking only where ``searches``
        (``_searches``) find it may.

        A supporting number has the claim's unit (so a currency's symbol is in the text), and its digits,
        separators left out, are zeros or none and then one of the claim's leading digits, after a character
        that is no digit (a number's digits start after no letter, digit, comma or point): a run of digits
        that starts so, whose span's value (a magnitude aside) may round to the claim's, found at once among
        the runs; only then is it looked for in the text and read."""
        text, unit = self.text, claimed.unit
        if unit and unit != "%" and unit not in text:
            return False
        if searches is None:  # 0: numbers of any digits may round to it
            return _supported(claimed, [n.value for n in numbers(text) if n.unit == unit])
        if not self._may_hold(searches):
            return False
        digits = self.digits
        for lead, endings in searches.digits:
            at, known = digits.find(lead), (0, 0)
            while at >= 0:
                if not endings or digits.startswith(endings, at + len(lead)):
                    start = at
                    while start and digits[start - 1] == 48:  # a zero before it
                        start -= 1
                    if not start or digits[start - 1] == 32:  # no digit before it
                        where = _in_text(text, start, known)
                        known = (start, where)  # (the next one is counted on from here)
                        found = _number_at(text, where)
                        if found is not None and found.unit == unit and searches.rounds(found.value):
                            return True
                at = digits.find(lead, at + 1)
        return False


def _in_text(text: str, at: int, known: tuple[int, int] = (0, 0)) -> int:
    """Where in ``text`` the character at ``at`` of the text without its commas and points is, counting on from
    ``known``: a character before it, by where it is in each."""
    # The least index with as many separators before it as it is past ``at``: counted on from the last guess.
    counted, before = known[1], known[1] - known[0]
    where = at + before
    while True:
        before += text.count(",", counted, where) + text.count(".", counted, where)
        if at + before == where:
            break
        counted, where = where, at + before
    while text[where] in ",.":  # separators left out stand right before it
        where += 1
    return where


# Every byte a space but the digits (and commas and points).
_DIGITS_ONLY: Final = bytes(c if 0x30 <= c <= 0x39 else 0x20 for c in range(256))
_DIGITS_AND_SEPARATORS: Final = bytes(c if 0x30 <= c <= 0x39 or c in b",." else 0x20 for c in range(256))


class _Searches(NamedTuple):
    """How ``_Digits.supports`` finds the numbers that may support a claimed one (> 0), and tells one."""

    runs: tuple[bytes, ...]                        # a run of digits starts with one of these (after its space)
    digits: tuple[tuple[bytes, tuple[bytes, ...]], ...]  # (digits, what follows: one of these, or anything)
    low: Decimal                                   # the claimed value less half its precision
    high: Decimal                                  # ... and plus it
    negative: bool                                 # whether the claimed value is
    spans: dict[int, tuple[Decimal, Decimal]]      # what a span's value may be, for each magnitude it may have
    power: int                                     # the power of ten of the least value that rounds to it

    def rounds(self, value: Decimal) -> bool:
        """Whether ``value`` rounds half up (away from zero) to the claimed value: ``_supported``."""
        return self.low < value <= self.high if self.negative else self.low <= value < self.high

    def may_round(self, span: bytes) -> bool:
        """Whether a number written with the digits of ``span`` (digits, commas and points) may round to the
        claimed value, its sign and magnitude aside: False only when none can. A span with a comma, or
        with more than one point once a sentence's point or comma after it is left out, may be numbers of
        any value."""
        digits = span.rstrip(b".,")
        if b"," in digits or digits.count(b".") > 1:
            return True
        value = Decimal(digits.decode())
        if not value:
            return False
        # Shifted by a magnitude, its first digit stands where the least or the greatest value's does.
        shift = self.power - value.adjusted()
        for bounds in (self.spans.get(shift), self.spans.get(shift + 1)):
            if bounds is not None and bounds[0] <= value <= bounds[1]:
                return True
        return False


@lru_cache(maxsize=4096)
def _searches(value: Decimal, precision: Decimal, percent: bool) -> _Searches | None:
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
    exact = _EXACT
    half = exact.multiply(_HALF, precision)
    low, high = exact.subtract(value, half), exact.add(value, half)
    # The value a span of digits may have (its sign left out), for each magnitude a number with it may have.
    smallest, largest = (high.copy_negate(), low.copy_negate()) if value < 0 else (low, high)  # (exact)
    spans = {shift: (smallest.scaleb(-shift, context=exact), largest.scaleb(-shift, context=exact))
             for shift in ((0,) if percent else _SHIFTS)}
    # A number's digits after zeros, as the runs of digits hold them: its leading digits (or a zero, which
    # _Digits adds where a run starts with one).
    return _Searches(tuple(b" " + digits.encode() for digits in leading), tuple(searches), low, high,
                     value < 0, spans, smallest.adjusted())


_SHIFTS: Final = tuple(sorted(set(_MAGNITUDES.values()) | {0}))


_MOST_LEADING: Final = 12  # digit strings searched for at most per claimed number (fewer digits each when more)
_MOST_DIGITS: Final = 24  # digits in each at most


def _leading_digits(value: Decimal, precision: Decimal) -> tuple[str, ...] | None:
    """What the significant digits of every number that rounds to ``value`` (> 0) at ``precision`` start with:
    a few digit strings, none the start of another (None for 0, which numbers of any digits round to).

    The numbers that round to it lie in ``[value - precision/2, value + precision/2]``; for each power of ten
    that interval meets, the first L significant digits of its numbers run over a range of integers, and a
    number written with fewer digits than L has that integer's digits without its trailing zeros. L is the
    number of significant digits the claim was written with (two strings, or a few about a power of ten), at
    most ``_MOST_DIGITS``, fewer while that gives more than ``_MOST_LEADING``."""
    if not value:
        return None
    exact = _EXACT
    half = exact.multiply(_HALF, precision)
    low, high = exact.subtract(value, half), exact.add(value, half)
    written: set[str] = set()
    # as many significant digits as the claim was written with (a few strings: more find no more numbers), and
    # no more than _MOST_DIGITS (fewer find every number that more find)
    claimed = value.adjusted() - precision.adjusted() + 1
    for length in range(min(claimed, _MOST_DIGITS), 0, -1):
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
