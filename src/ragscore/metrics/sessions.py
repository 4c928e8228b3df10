"""Conversations (issue 36): the questions that share a session are its turns, and a session is judged whole.

Pure functions over ``Turn``s: each question of a session with its place in the gold file, its ``turn`` number
(None: not given) and how many of its samples were correct (without ``--repeats samples`` one sample: 1 or 0).
A turn is correct when it is labelled OK or REFUSAL_OK and, when it has gold tool calls, its tool use is correct
(the trajectory its ``tool_match`` names). A session's turns come in the order of their ``turn`` numbers when
every turn has one (the file order among equal numbers), else in file order.

- ``session_pass_rate``: sessions whose every turn is correct, over sessions; with samples, each session's
  chance that one sample of every turn is correct (the product of its turns' shares), averaged over sessions.
- ``turns_to_first_error``: the number (from 1) of a failed session's first turn that is not correct (with
  samples: that has an incorrect sample), averaged over failed sessions.
- ``session_pass^k`` (with samples): each session's chance that k samples of every turn, drawn without
  replacement, are all correct, C(c, k) / C(n, k) for each turn and multiplied (turns are drawn independently),
  averaged over the sessions whose every turn has at least k samples.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from math import comb
from typing import Final, NamedTuple

from ragscore.metrics import METRICS
from ragscore.metrics.moments import exact_mean
from ragscore.settings import Settings

BAD_SESSION: Final = object()  # a value that names no session (a list, an object, true, a fraction, "")


def session_key(value: object) -> str | object | None:
    """The session a field's value names: text, or an integer written as text; None for no value (null, absent);
    ``BAD_SESSION`` for anything else, which names none."""
    if value is None:
        return None
    if type(value) is str and value:
        return value
    if type(value) is int:
        return str(value)
    return BAD_SESSION


def bootstrap_key(session: str | None, qid: str) -> str:
    """A question's key for its bootstrap weights with sessions: its session's, else its own (never the same)."""
    return f"session:{session}" if session is not None else f"qid:{qid}"


class Turn(NamedTuple):
    """One question of a session."""

    place: int           # the gold item's place in its file (file order)
    session: str
    turn: int | None     # the gold item's turn number, when given
    passed: int          # its correct samples
    total: int           # its samples (1 without repeated samples)


class Session(NamedTuple):
    """One session judged whole."""

    key: str
    turns: int
    share: float               # 1 or 0 (with samples: the chance that one sample of every turn is correct)
    first_error: int | None    # the number (from 1) of its first turn that is not correct; None: every turn is
    pass_k: tuple[float | None, ...]  # its pass^k for each k (None: a turn has fewer than k samples)


def sessions(turns: Iterable[Turn], pass_k: Sequence[int] = ()) -> list[Session]:
    """Each session of the turns, in the order of its first turn in the file, its turns in order."""
    grouped: dict[str, list[Turn]] = {}
    for turn in sorted(turns, key=lambda t: t.place):
        grouped.setdefault(turn.session, []).append(turn)
    out = []
    for key, group in grouped.items():
        if all(t.turn is not None for t in group):
            group.sort(key=lambda t: (t.turn, t.place))
        share = Fraction(1)
        for t in group:
            share *= Fraction(t.passed, t.total)
        first = next((n for n, t in enumerate(group, 1) if t.passed < t.total), None)
        ks = tuple(_pass_k(group, k) for k in pass_k)
        out.append(Session(key, len(group), float(share), first, ks))
    return out


def _pass_k(group: Sequence[Turn], k: int) -> float | None:
    """The chance that k samples of every turn, drawn without replacement, are all correct."""
    if any(t.total < k for t in group):
        return None
    out = Fraction(1)
    for t in group:
        out *= Fraction(comb(t.passed, k), comb(t.total, k))
    return float(out)


def session_metric_names(settings: Settings) -> tuple[str, ...]:
    """Name the session metrics of a run (none without ``--session``; ``session_pass^K`` only with samples)."""
    if settings.session is None:
        return ()
    names = METRICS.names("sessions", settings.pass_k)
    return names if settings.sampled else tuple(name for name in names if not name.startswith("session_pass^"))


def session_values(judged: Sequence[Session], settings: Settings) -> dict[str, float | None]:
    """Each session metric of the run (None where no session counts)."""
    names = session_metric_names(settings)
    failed = [s.first_error for s in judged if s.first_error is not None]
    out: dict[str, float | None] = {
        "session_pass_rate": exact_mean([s.share for s in judged]) if judged else None,
        "turns_to_first_error": exact_mean([float(n) for n in failed]) if failed else None,
    }
    for index, k in enumerate(settings.pass_k if settings.sampled else ()):
        values = [v for s in judged if (v := s.pass_k[index]) is not None]
        out[f"session_pass^{k}"] = exact_mean(values) if values else None
    return {name: out[name] for name in names}
