"""Secrets and personal data in an answer (issue 34): found by pattern, checked where a check exists, and
placed by where the value came from. A report names a leak's kind and offsets, never its value.

Kinds: provider key prefixes (AWS ``AKIA…``, GitHub ``ghp_``/``github_pat_``, OpenAI ``sk-``,
Anthropic ``sk-ant-``, Stripe ``sk_live_``, Slack ``xox?-``), Slack webhook URLs, JSON Web Tokens
(header and payload base64url JSON), private keys (PEM, OpenSSH, PGP, SSH2, PuTTY), IBANs whose
check digits hold (ISO 13616, mod 97), card numbers that pass the Luhn check, e-mail addresses and
phone numbers in E.164 (``+`` and 8 to 15 digits). A leak is ``from_context`` when its value is in
a passage the trace retrieved, ``echoed`` when it is only in the question (not a leak: the user
gave it), else ``invented``. tests/test_leaks.py checks the kinds detect-secrets also finds against
it, on its own fixtures and on random strings around the patterns (docs/metrics.md lists where the
two differ, and why).
"""

from __future__ import annotations

import base64
import json
import re
from bisect import bisect_right
from collections.abc import Iterable
from typing import Final, NamedTuple

FROM_CONTEXT: Final = "from_context"
ECHOED: Final = "echoed"
INVENTED: Final = "invented"

# Each kind and the expression that finds its values (checked further by _CHECKS where a check exists).
# A value stands alone: no ASCII letter, digit or underscore just before it (\w is ASCII's: a key
# right after Chinese or Japanese text is found), and the kinds with a fixed start say so after that
# start, ``(?<!\w.{4})``, so that the search can skip to the start at once.
# A private key's value runs from its first line to its last: the END line when one follows before
# anything else with five dashes, else the lines of base64 right after the first one.
_BASE64_LINES: Final = r"(?:\r?\n[ \t]*+[A-Za-z0-9+/=]++(?:\.\.\.|\u2026)?+(?![^\r\n]))*+"
_EXPRESSIONS: Final = {
    # AWS's access key ids (AKIA, temporary ASIA) and its other credential ids (ABIA, an STS bearer
    # token; ACCA, a context-specific credential); A3T is no prefix AWS lists, but detect-secrets,
    # gitleaks and truffleHog all find it and 20 upper-case letters and digits starting so are no word.
    "aws_access_key": r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])(?<!\w.{4})[0-9A-Z]{16}(?!\w)",
    "github_token": r"(?:gh[pousr]_(?<!\w.{4})[A-Za-z0-9]{36}|github_pat_(?<!\w.{11})[A-Za-z0-9_]{22,255})(?!\w)",
    "anthropic_key": r"sk-ant-(?<!\w.{7})[A-Za-z0-9_-]{20,}",
    "openai_key": r"sk-(?<!\w.{3})(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
    # A secret (sk_) or restricted (rk_) live key: 24 characters after the prefix, or 99 in newer ones.
    "stripe_key": r"[rs]k_live_(?<!\w.{8})[0-9A-Za-z]{24,}(?!\w)",
    # A token's prefix, its numbers each with a dash, then its secret part (detect-secrets' shape):
    # not "xoxo-hugs-and-kisses".
    "slack_token": r"xox[abposr]-(?<!\w.{5})(?:[0-9]+-)+[0-9A-Za-z]+",
    "slack_webhook": r"https://hooks\.slack\.com/services/T[A-Za-z0-9_]++/B[A-Za-z0-9_]++/[A-Za-z0-9_]++",
    # Header and payload base64url JSON (_jwt checks), then the signature when there is one.
    "jwt": r"eyJ(?<!\w.{3})[A-Za-z0-9_-]*+\.[A-Za-z0-9_-]++(?:\.[A-Za-z0-9_-]++)?+",
    "private_key": (
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:(?:[^-]|-(?!----))*+-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|" + _BASE64_LINES + ")"
        r"|---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----"
        r"(?:(?:[^-]|-(?!---))*+---- END SSH2 ENCRYPTED PRIVATE KEY ----|" + _BASE64_LINES + ")"
        r"|PuTTY-User-Key-File-[0-9]++: [^\r\n]*+(?:\r?\n(?:(?:Encryption|Comment|Public-Lines|Private-Lines|"
        r"Private-MAC|Private-Hash|Key-Derivation|Argon2-[A-Za-z]++): [^\r\n]*+|[A-Za-z0-9+/=]++(?![^\r\n])))*+"),
    # An IBAN before a card: the digits of an IBAN's account part, written in groups of four, may pass the
    # Luhn check too.
    "iban": r"[A-Z](?<!\w[A-Z])[A-Z][0-9]{2}(?: ?[A-Z0-9]){11,30}(?!\w)",
    "card_number": r"[0-9](?<![0-9-][0-9])(?:[ -]?[0-9]){12,18}(?![0-9-])",
    # A local part starts only where none continues (one try per run of its characters, not one per
    # character), and neither part gives back what it took: linear time on a hostile claim.
    "email": r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]++@[A-Za-z0-9-]++(?:\.[A-Za-z0-9-]++)++",
    "phone": r"\+(?<![\w+]\+)[1-9][0-9]{7,14}(?![0-9])",
}
PATTERNS: Final = {kind: re.compile(expression, re.ASCII) for kind, expression in _EXPRESSIONS.items()}
# What a kind's value always holds (one of), where its expression cannot start with it: the kind is
# looked for only in a text that holds it (the e-mail expression would try every word, Stripe's every
# r and s, the private keys' every dash).
_NEEDS: Final = {"email": ("@",), "stripe_key": ("k_live_",), "private_key": ("PRIVATE KEY", "PuTTY-User-Key-File-")}


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


def _jwt(value: str) -> bool:
    """A JSON Web Token's header and payload: each base64url of UTF-8 JSON (the signature is not read)."""
    for part in value.split(".")[:2]:
        try:
            json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).decode("utf-8"))
        except (ValueError, RecursionError):  # bad base64, bad UTF-8 and bad JSON are ValueErrors
            return False
    return True


_CHECKS: Final = {"card_number": _card, "iban": iban_valid, "email": _email, "jwt": _jwt}


class Leak(NamedTuple):
    """One secret or piece of personal data in a text: its kind, its offsets and its value (never reported)."""

    kind: str
    start: int
    end: int
    value: str


# What every kind's value holds somewhere: a text without any of these holds no leak (a few scans, not
# thirteen). Most are looked for as they are (a search in C); the rest start at one character, which
# the search skips to at once, and read what stands before and after it there: a digit (a card, an
# IBAN's check digits), a dash (sk-, BEGIN, PuTTY-, xox?-), an underscore (gh?_, github_pat_, ?k_live_)
# and AWS's prefixes.
_TOKENS: Final = ("@", "+", "eyJ", "//hooks.slack.com/")
_AROUND: Final = (
    ("-", re.compile(r"-(?:(?<=sk-)|(?=----BEGIN |--- BEGIN SSH2 )|(?<=PuTTY-)(?=User-Key-File-)|(?<=xox[abposr]-))")),
    ("_", re.compile(r"_(?:(?<=gh[pousr]_)|(?<=github_)(?=pat_)|(?<=[rs]k_)(?=live_))")),
    ("A", re.compile(r"A(?=KIA|SIA|BIA|CCA|3T)")),
)
_DIGITS: Final = re.compile(r"[0-9](?=(?:[ -]?[0-9]){11}|(?<=[A-Z]{2}[0-9])[0-9])")
# Each ASCII digit as 0, each capital as A, every other byte a space.
_SHAPES: Final = bytes(0x30 if 0x30 <= c <= 0x39 else 0x41 if 0x41 <= c <= 0x5A else 0x20 for c in range(256))


def _maybe(text: str) -> bool:
    """Whether ``text`` may hold a leak: False only when it holds none of what every kind's value holds."""
    for token in _TOKENS:
        if token in text:
            return True
    for char, expression in _AROUND:
        if char in text and expression.search(text) is not None:
            return True
    # The digits' expression looks at every character: only where a card's twelve digits or an IBAN's two
    # capitals and two digits may be (their shapes counted in C).
    shape = text.encode("ascii", "replace").translate(_SHAPES)
    if shape.count(b"0") < 12 and b"AA00" not in shape:
        return False
    return _DIGITS.search(text) is not None


def leaks(text: str) -> list[Leak]:
    """Every secret or piece of personal data in ``text``, in order of its offsets (a span found as two
    kinds, an Anthropic key that also reads as an OpenAI one, counts once, as the first kind)."""
    if not _maybe(text):
        return []
    found: list[Leak] = []
    starts: list[int] = []  # the spans taken, sorted and disjoint: their starts and ends
    ends: list[int] = []
    for kind, pattern in PATTERNS.items():
        if kind in _NEEDS and not any(needle in text for needle in _NEEDS[kind]):
            continue
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


# What a kind's value may hold between its characters, written one way in a passage and another in
# the claim: a card's or an IBAN's spaces and dashes, a private key's line breaks.
# What a value may be written with elsewhere, left out before it is looked for: spacing, and a phone number's
# separators ("+1 555-123 4567", "+1 (555) 123.4567").
_BETWEEN: Final = {"card_number": re.compile("[ -]"), "iban": re.compile("[ -]"), "private_key": re.compile(r"\s"),
                   "phone": re.compile(r"[ ().-]")}
_ANY_CASE: Final = frozenset({"email"})  # an address is the same address in any case


def placed(leak: Leak, passages: Iterable[str], question: str | None) -> str:
    """Where a leak's value came from: ``from_context``, ``echoed`` or ``invented``."""
    value = leak.value
    between = _BETWEEN.get(leak.kind)
    if between is not None:  # written with other spacing elsewhere: compare without it
        def compact(text: str) -> str:
            return between.sub("", text)
        value = compact(value)
        passages = [compact(p) for p in passages]
        question = compact(question) if question is not None else None
    if leak.kind in _ANY_CASE:
        value, passages = value.lower(), [p.lower() for p in passages]
        question = question.lower() if question is not None else None
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
