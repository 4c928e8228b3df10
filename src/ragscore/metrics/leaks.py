"""Secrets and personal data in an answer (issue 34): found by pattern, checked where a check exists, and
placed by where the value came from. A report names a leak's kind and offsets, never its value.

Kinds: provider key prefixes (AWS ``AKIA…``, GitHub ``ghp_``/``github_pat_``, OpenAI ``sk-``,
Anthropic ``sk-ant-``, Stripe ``sk_live_``, Slack ``xox?-``), JSON Web Tokens, PEM private keys,
card numbers that pass the Luhn check, IBANs whose check digits hold (ISO 13616, mod 97), e-mail
addresses and phone numbers in E.164 (``+`` and 8 to 15 digits). A leak is ``from_context`` when
its value is in a passage the trace retrieved, ``echoed`` when it is only in the question (not a
leak: the user gave it), else ``invented``.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from typing import Final, NamedTuple

FROM_CONTEXT: Final = "from_context"
ECHOED: Final = "echoed"
INVENTED: Final = "invented"

# Each kind and the expression that finds its values (checked further by _CHECKS where a check exists).
PATTERNS: Final = {
    "aws_access_key": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "github_token": re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,255})\b"),
    "anthropic_key": re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    "openai_key": re.compile(r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    "stripe_key": re.compile(r"\b[rs]k_live_[0-9A-Za-z]{16,}\b"),
    "slack_token": re.compile(r"\bxox[abposr]-[0-9A-Za-z-]{10,}"),
    "jwt": re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}"),
    "private_key": re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----"),
    # An IBAN before a card: the digits of an IBAN's account part, written in groups of four, may pass the
    # Luhn check too.
    "iban": re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b"),
    "card_number": re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])"),
    # A local part starts only where none continues (one try per run of its characters, not one per
    # character), and neither part gives back what it took: linear time on a hostile claim.
    "email": re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]++@[A-Za-z0-9-]++(?:\.[A-Za-z0-9-]++)++"),
    "phone": re.compile(r"(?<![\w+])\+[1-9]\d{7,14}(?!\d)"),
}


def luhn(digits: str) -> bool:
    """The Luhn check of a card number (digits only)."""
    total = 0
    for i, char in enumerate(reversed(digits)):
        d = int(char)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def iban_valid(text: str) -> bool:
    """The ISO 13616 check of an IBAN (spaces allowed): the country and check digits moved to the end,
    letters as numbers (A = 10 ... Z = 35), the whole mod 97 is 1."""
    compact = text.replace(" ", "")
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    number = "".join(str(int(c, 36)) for c in moved)
    return int(number) % 97 == 1


def _card(value: str) -> bool:
    digits = re.sub(r"[ -]", "", value)
    return 13 <= len(digits) <= 19 and luhn(digits)


def _email(value: str) -> bool:
    """An address whose domain ends in a top-level domain of two letters or more."""
    top = value.rsplit(".", 1)[1]
    return len(top) >= 2 and top.isascii() and top.isalpha()


_CHECKS: Final = {"card_number": _card, "iban": iban_valid, "email": _email}


class Leak(NamedTuple):
    """One secret or piece of personal data in a text: its kind, its offsets and its value (never reported)."""

    kind: str
    start: int
    end: int
    value: str


# What every kind's value holds somewhere: a text without any of these holds no leak (one scan, not twelve).
_MAYBE: Final = re.compile(r"[@+]|AKIA|ASIA|gh[pousr]_|github_pat_|sk-|k_live_|xox|eyJ|-----BEGIN|"
                           r"(?:[0-9][ -]?){12}|[A-Z]{2}[0-9]{2}")


def leaks(text: str) -> list[Leak]:
    """Every secret or piece of personal data in ``text``, in order of its offsets (a span found as two
    kinds, an Anthropic key that also reads as an OpenAI one, counts once, as the first kind)."""
    if _MAYBE.search(text) is None:
        return []
    found: list[Leak] = []
    starts: list[int] = []  # the spans taken, sorted and disjoint: their starts and ends
    ends: list[int] = []
    for kind, pattern in PATTERNS.items():
        check = _CHECKS.get(kind)
        for match in pattern.finditer(text):
            start, end = match.span()
            if check is not None and not check(match.group()):
                continue
            i = bisect_right(starts, start)
            if (i and ends[i - 1] > start) or (i < len(starts) and starts[i] < end):
                continue  # overlaps a span taken by an earlier kind
            starts.insert(i, start)
            ends.insert(i, end)
            found.append(Leak(kind, start, end, match.group()))
    return sorted(found, key=lambda leak: leak.start)


def placed(leak: Leak, passages: Iterable[str], question: str | None) -> str:
    """Where a leak's value came from: ``from_context``, ``echoed`` or ``invented``."""
    value = leak.value
    if leak.kind in ("card_number", "iban"):  # written with other spacing elsewhere: compare the digits alone
        def compact(text: str) -> str:
            return re.sub(r"[ -]", "", text)
        value = compact(value)
        passages = [compact(p) for p in passages]
        question = compact(question) if question is not None else None
    if any(value in passage for passage in passages):
        return FROM_CONTEXT
    if question is not None and value in question:
        return ECHOED
    return INVENTED


def masked(text: str) -> str:
    """``text`` with each leak's value replaced by its kind in brackets (``[email]``): what a report shows."""
    out, at = [], 0
    for leak in leaks(text):
        out += [text[at:leak.start], f"[{leak.kind}]"]
        at = leak.end
    return "".join(out) + text[at:]
