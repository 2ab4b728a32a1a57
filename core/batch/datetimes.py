"""Date-and-time values with their UTC offsets, as GDAL keeps them: a wall-clock time and a time zone flag.

pyogrio reads a DateTime field as datetime64 without its offset (10:20:30+02:00
came back as 10:20:30, an hour or two off for whoever reads it as UTC), and
numpy parses ISO text with an offset into UTC with a warning.  GDAL keeps per
value a *time zone flag*: 0 unknown, 1 local time, 100 UTC, ``100 + k`` UTC
plus ``k`` quarter hours (``k`` may be negative).  Here a field is a
datetime64[ms] column of wall-clock times and an int16 column of those flags,
read from GDAL's ISO text (pyogrio's ``datetime_as_string``) and written back
through pyogrio's ``gdal_tz_offsets``.
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["TZ_UTC", "has_offsets", "iso_texts", "split_iso_datetimes"]

#: GDAL's time zone flag of UTC; each step of 1 is a quarter hour.
TZ_UTC = 100
_QUARTER_MIN = 15
#: An ISO date and time, then ``Z``, ``+hh:mm``, ``+hhmm`` or ``+hh`` (GDAL writes ``Z`` and ``+hh:mm``).
_OFFSET = re.compile(r"^(.*\d)(Z|[+-]\d\d(?::?\d\d)?)$")


def split_iso_datetimes(texts) -> tuple[np.ndarray, np.ndarray | None]:
    """ISO date-and-time texts as ``(wall-clock times, time zone flags)``.

    Parameters
    ----------
    texts : sequence of str or None
        ``2024-05-01T10:20:30.500+02:00``, ``...Z``, or without an offset;
        None (or ``NaT``) for a null.

    Returns
    -------
    values : (n,) datetime64[ms] ndarray
        The times as written (not moved to UTC); NaT for nulls.
    flags : (n,) int16 ndarray or None
        GDAL's time zone flag per value (0 where no offset is given); None when no value gives one.

    Raises
    ------
    ValueError
        A text that is not an ISO date and time, or an offset that is not a whole number of quarter hours.
    """
    local, flags = [], []
    for text in texts:
        if text is None or text == "NaT":
            local.append("NaT")
            flags.append(0)
            continue
        match = _OFFSET.match(str(text).strip())
        local.append(match.group(1) if match else str(text).strip())
        flags.append(_flag(match.group(2)) if match else 0)
    values = np.array(local, dtype="datetime64[ms]")
    flags = np.array(flags, dtype=np.int16)
    return values, (flags if has_offsets(flags) else None)


def _flag(offset: str) -> int:
    if offset == "Z":
        return TZ_UTC
    digits = offset[1:].replace(":", "")
    minutes = int(digits[:2]) * 60 + int(digits[2:] or 0)
    if minutes % _QUARTER_MIN:
        raise ValueError(f"UTC offset {offset} is not a whole number of quarter hours (GDAL keeps no other)")
    return TZ_UTC + (1 if offset[0] == "+" else -1) * minutes // _QUARTER_MIN


def has_offsets(flags) -> bool:
    """Whether any of GDAL's time zone ``flags`` gives a UTC offset (not unknown or local time)."""
    return flags is not None and bool((np.asarray(flags) > 1).any())


def iso_texts(values, flags=None) -> list:
    """datetime64 ``values`` as ISO text (None for NaT), each with its UTC offset where ``flags`` give one.

    Dates (datetime64[D]) as dates; times to the second, or to the millisecond where a value of the column has one.
    """
    values = np.asarray(values)
    if values.dtype == "datetime64[D]":
        return [None if np.isnat(v) else str(v) for v in values]
    values = values.astype("datetime64[ms]")
    missing = np.isnat(values)
    whole = (values[~missing] == values[~missing].astype("datetime64[s]")).all()
    texts = np.datetime_as_string(values, unit="s" if whole else "ms").tolist()
    flags = np.zeros(len(values), np.int16) if flags is None else np.asarray(flags)
    return [None if m else text + _offset_text(int(flag)) for m, text, flag in zip(missing.tolist(), texts, flags)]


def _offset_text(flag: int) -> str:
    if flag <= 1:
        return ""
    if flag == TZ_UTC:
        return "Z"
    minutes = abs(flag - TZ_UTC) * _QUARTER_MIN
    return f"{'+' if flag > TZ_UTC else '-'}{minutes // 60:02d}:{minutes % 60:02d}"
