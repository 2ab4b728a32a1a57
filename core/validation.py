"""Checks of scalar arguments shared by core's public entries.

Each returns its argument normalised (``int``, ``float``, ``str``, ``bool``)
or raises TypeError (wrong kind) or ValueError (out of range) with a message
that names it, e.g. ``nodes must be an integer >= 3; got 2``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["choice", "flag", "integer", "interval", "real"]


def interval(low=None, high=None, *, low_open: bool = False, high_open: bool = False) -> str:
    """The allowed range as text: ``">= 3"``, ``"> 0"``, ``"<= 9"``, ``"in (0, 180]"`` or ``""``."""
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"{'<' if high_open else '<='} {high:g}"
    return ""


def _message(name, kind, unit, allowed, optional, value) -> str:
    """``"{name} must be {kind} [of unit] {allowed} [(or None)]; got {value}"``.

    With a unit, a value of the right kind but out of range (``kind is None``)
    reads ``"{name} must be {allowed} {unit}"``.
    """
    if kind is None:
        expected = f"{allowed} {unit}" if allowed else f"a finite number of {unit}"
    else:
        expected = f"{kind} of {unit}" if unit else kind
        expected = f"{expected} {allowed}" if allowed else expected
    return f"{name} must be {expected}{' (or None)' if optional else ''}; got {value}"


def _scalar(value):
    """A 0-d array as its scalar; anything else as it is."""
    return value.item() if isinstance(value, np.ndarray) and value.ndim == 0 else value


def integer(value, name: str, low: int | None = None, high: int | None = None, *, unit: str = "",
            whole_floats: bool = False, optional: bool = False) -> int | None:
    """An integer in ``[low, high]`` (either bound may be None), as a Python int.

    Parameters
    ----------
    value
        The argument; booleans are refused.
    name : str
        The argument's name, for the message.
    low, high : int, optional
        Inclusive bounds.
    unit : str
        Plural unit for the message (``"pixels"``).
    whole_floats : bool
        Also accept floats with an integral value (``3.0``).
    optional : bool
        Accept None (returned as None).
    """
    if optional and value is None:
        return None
    value = _scalar(value)
    allowed = interval(low, high)
    whole = whole_floats and isinstance(value, numbers.Real) and float(value).is_integer()
    if isinstance(value, (bool, np.bool_)) or not (isinstance(value, numbers.Integral) or whole):
        kind = "an integer number" if unit else "an integer"
        raise TypeError(_message(name, kind, unit, allowed, optional, repr(value)))
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(_message(name, None if unit else "an integer", unit, allowed, optional, value))
    return value


def real(value, name: str, low: float | None = None, high: float | None = None, *, low_open: bool = False,
         high_open: bool = False, unit: str = "", optional: bool = False) -> float | None:
    """A finite real number in the given range (either bound may be None), as a Python float.

    Parameters as :func:`integer`; the bounds are inclusive unless ``low_open``
    or ``high_open``, and NaN and infinities raise ValueError.
    """
    if optional and value is None:
        return None
    value = _scalar(value)
    allowed = interval(low, high, low_open=low_open, high_open=high_open)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(_message(name, "a number", unit, allowed, optional, repr(value)))
    value = float(value)
    inside = math.isfinite(value)
    if low is not None:
        inside = inside and (value > low if low_open else value >= low)
    if high is not None:
        inside = inside and (value < high if high_open else value <= high)
    if not inside:
        raise ValueError(_message(name, None if unit else "a finite number", unit, allowed, optional, value))
    return value


def choice(value, name: str, allowed):
    """``value`` when it is one of ``allowed`` (strings); ValueError naming them otherwise."""
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    return value


def flag(value, name: str) -> bool:
    """A Python or numpy boolean as a bool; TypeError for anything else (1 and "yes" included)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {value!r}")
    return bool(value)
