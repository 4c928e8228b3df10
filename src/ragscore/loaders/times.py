"""Times in trace records: epoch seconds or ISO 8601 (UTC when it has no offset), read exactly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Final


def _moment(value: object) -> datetime | None:
    """An ISO 8601 time, placed in UTC when it has no offset; None for anything else."""
    if type(value) is not str:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def instant(value: object) -> float | None:
    """Epoch seconds, or an ISO 8601 time (with its offset; without one, read as UTC), as seconds."""
    if type(value) is int or type(value) is float:
        return float(value) if abs(value) <= 1e11 else None  # within some three thousand years of 1970
    moment = _moment(value)
    return None if moment is None else moment.timestamp()


_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


_MICROSECOND: Final = timedelta(microseconds=1)


def nanoseconds(value: object) -> int | None:
    """An ISO 8601 time (UTC without an offset) as integer nanoseconds since 1970, exactly; None otherwise."""
    moment = _moment(value)
    return None if moment is None else (moment - _EPOCH) // _MICROSECOND * 1000


def between_ms(start_at: object, end_at: object, start: float, end: float) -> float:
    """The milliseconds from one time to another: exact for two ISO 8601 times (to the microsecond,
    not through epoch seconds as floats), else from the seconds read."""
    first, last = nanoseconds(start_at), nanoseconds(end_at)
    if first is not None and last is not None:
        return (last - first) / 1_000_000
    return (end - start) * 1000.0


def zoned(value: object) -> bool:
    """Whether a time is placed in UTC: epoch seconds are, an ISO 8601 time is when it has an offset."""
    if type(value) is not str:
        return True
    try:
        return datetime.fromisoformat(value).tzinfo is not None
    except ValueError:
        return False  # unreadable: _instant says so
