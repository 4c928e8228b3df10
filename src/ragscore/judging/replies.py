"""A judge's reply read as a score on its criterion's scale.

With ``json_field`` the reply is a JSON object (a Markdown code fence around it is allowed) and the score
is that field; without, the score is the reply's last number (on the pass/fail scale, its last word
"pass" or "fail", else its last number). A denominator is not a number of its own (the 5 of "4/5",
"4 / 5" or "4 out of 5"), nor is a part of one ("1e-3", the decimal comma of "4,5"); a last number that
ends a range ("1-5", "1 to 5": the scale named after the score) is no score. The scales: ``0-1`` a
number from 0 to 1; ``1-5`` a whole number from 1 to 5; ``pass/fail`` pass (1) or fail (0), written as
true/false, "pass"/"fail" or 1/0. Anything else is no score, and the reason says why: a reply is never
guessed at.
"""

from __future__ import annotations

import json
import math
import re
from typing import Final

from ragscore.quoting import quote

# A number that stands alone: not part of a word (v2) or of another number (1.5, 1e-3, the decimal comma of 4,5), nor a
# denominator (the 5 of 4/5, 4 / 5, 4 out of 5).
_NUMBER_RE: Final = re.compile(r"(?<![\w./])(?<!\d,)(?<!/ )(?<![Oo]ut of )"
                               r"[-+]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"
                               r"(?!\w)(?!\.\d)(?!,\d)")
_VERDICT_RE: Final = re.compile(r"(?<!\w)(?:pass|fail)(?!\w)", re.IGNORECASE)
_RANGE_START_RE: Final = re.compile(r"\d\s*(?:-|\u2013|\u2014|\bto)\s*\Z", re.IGNORECASE)  # before a range's end
_FENCE_RE: Final = re.compile(r"\A\s*```[A-Za-z]*\s*\n?(.*?)\n?\s*```\s*\Z", re.DOTALL)


def read_score(reply: str, scale: str, json_field: str | None) -> tuple[float | None, str | None]:
    """The score a reply gives on ``scale``, or None and why not."""
    if json_field is not None:
        text = reply.strip()
        fenced = _FENCE_RE.match(text)
        if fenced:
            text = fenced.group(1).strip()
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            return None, "the reply is not a JSON object"
        if not isinstance(parsed, dict):
            return None, "the reply is not a JSON object"
        if json_field not in parsed:
            return None, f"the reply's JSON object has no field {quote(json_field)}"
        return on_scale(parsed[json_field], scale)
    if scale == "pass/fail":
        verdicts = _VERDICT_RE.findall(reply)
        if verdicts:
            return on_scale(verdicts[-1], scale)
    found = list(_NUMBER_RE.finditer(reply))
    if not found:
        return None, "the reply holds no " + ("pass, fail or number" if scale == "pass/fail" else "number")
    last = found[-1]
    if _RANGE_START_RE.search(reply, 0, last.start()):
        return None, (f"the reply's last number, {last.group()}, ends a range (such as 1-5 or 1 to 5): no score is "
                      "read from it")
    return on_scale(float(last.group()), scale)


def on_scale(value: object, scale: str) -> tuple[float | None, str | None]:
    """A value read from a reply as a score on ``scale``, or None and why not."""
    if scale == "pass/fail":
        if value is True or (isinstance(value, str) and value.strip().lower() == "pass"):
            return 1.0, None
        if value is False or (isinstance(value, str) and value.strip().lower() == "fail"):
            return 0.0, None
        if type(value) in (int, float) and value in (0, 1):
            return float(value) + 0.0, None  # -0 is 0
        return None, f"{_shown(value)} is not pass or fail"
    if type(value) not in (int, float):
        return None, f"{_shown(value)} is not a number"
    try:
        number = float(value) + 0.0  # type: ignore[arg-type]  # + 0.0: -0 is 0
    except OverflowError:  # an integer too large for a float
        return None, f"{_shown(value)} is outside the scale {scale}"
    if not math.isfinite(number):
        return None, f"{_shown(value)} is not a number"
    if scale == "1-5":
        if number not in (1.0, 2.0, 3.0, 4.0, 5.0):
            return None, f"{_shown(value)} is outside the scale 1-5 (a whole number from 1 to 5)"
        return number, None
    if not 0.0 <= number <= 1.0:
        return None, f"{_shown(value)} is outside the scale 0-1"
    return number, None


def _shown(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if type(value) is int and value.bit_length() > 192:
        return "a number of more than 57 digits"
    return json.dumps(value, ensure_ascii=False)[:60] if not isinstance(value, str) else quote(value, 60)
