"""Pisinger's combo run here, as a benchmark baseline (never used by LineSnap itself).

Combo (Martello, Pisinger and Toth 1999) is the reference KP1 solver of issue 15.
Its C code is not on PyPI by itself; the ``digneapy`` wheel (GPL) ships it compiled
as the extension module ``pisinger_cpp``, whose ``combo_cpp(n, p, w, x, c)`` takes
32-bit integers and returns ``(milliseconds, optimum)``, timed inside the call
with ``std::chrono`` (the copy of the items into combo's own arrays included);
the least of up to five calls counts (``children.least_of_repeats``).
Install it for the benchmarks only, without its many dependencies::

    pip install --no-deps digneapy

Instances whose profits, weights or capacity do not fit 32 bits are not given to
it (:func:`fits`).  Each solve runs in a child process killed past its limit.
"""

from __future__ import annotations

import numpy as np

from tests.benchmarks.children import in_forked_child, least_of_repeats

__all__ = ["INT32_MAX", "available", "fits", "solve"]

INT32_MAX = 2**31 - 1


def available() -> bool:
    """Whether combo (``pisinger_cpp``) can be imported here."""
    try:
        import pisinger_cpp  # noqa: F401
    except ImportError:
        return False
    return True


def _usable(problem) -> np.ndarray:
    """The items that can be in a solution: positive profit, weight within the capacity."""
    return np.flatnonzero((problem.profits > 0) & (problem.weights > 0) & (problem.weights <= problem.capacity))


def fits(problem) -> bool:
    """Whether combo's 32-bit interface can take the instance (its usable items and capacity)."""
    usable = _usable(problem)
    return (problem.capacity <= INT32_MAX and len(usable) > 0
            and int(problem.profits[usable].max()) <= INT32_MAX and int(problem.weights[usable].max()) <= INT32_MAX)




def _combo(profits, weights, capacity):
    """``(optimum, seconds)`` by combo's own timer, the least of repeated calls (:func:`least_of_repeats`)."""
    import pisinger_cpp

    def once():
        ms, value = pisinger_cpp.combo_cpp(len(profits), profits, weights, np.zeros(len(profits), np.int32), capacity)
        return int(round(value)), ms / 1e3

    return least_of_repeats(once)


def solve(problem, limit_s: float) -> tuple[int, float] | None:
    """``(optimum, seconds)`` by combo in a child process; None when it ran past ``limit_s`` or stopped without
    an answer (this build of combo exits with "multiply, no space" when its fixed state space runs out).

    Items that cannot be in a solution are left out (the optimum is the same); items of
    zero weight and positive profit are always taken, so their profits are added.
    Raises ValueError for an instance that does not :func:`fits`.
    """
    if not fits(problem):
        raise ValueError("combo's 32-bit interface cannot take this instance")
    usable = _usable(problem)
    free = int(problem.profits[(problem.weights == 0) & (problem.profits > 0)].sum())
    profits = np.ascontiguousarray(problem.profits[usable], np.int32)
    weights = np.ascontiguousarray(problem.weights[usable], np.int32)
    if int(weights.astype(np.int64).sum()) <= problem.capacity:
        return free + int(profits.astype(np.int64).sum()), 0.0
    out = in_forked_child(_combo, (profits, weights, int(problem.capacity)), limit_s)
    if out is None:
        return None
    return free + out[0], out[1]
