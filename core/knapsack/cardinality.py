"""Cardinality limits of KP1: the most items that fit and the fewest that can beat an incumbent.

Combo's surrogate relaxation (core.knapsack.surrogate) and the cardinality
bounds of the state lists (core.knapsack.kp1_core) use them.  Items may stand
for several identical copies (core.knapsack.grouping): the limits then count
copies.  Notes: docs/notes/knapsack.md, "KP1 without a capacity-long row".
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["ONE_EACH", "cardinality_limits", "copies_per_item", "limits_and_heaviest", "most_that_fit", "per_copy",
           "xorshift"]


def cardinality_limits(profits: np.ndarray, weights: np.ndarray, capacity: int, incumbent: int,
                       counts: np.ndarray | None = None) -> tuple[int, int]:
    """``(card_max, card_min)``: most items that fit, fewest items that can be worth more than ``incumbent``.

    ``counts``: where an item stands for that many identical copies (core.knapsack.grouping), the limits
    count copies, each of a ``count``-th of its item's weight and profit.
    """
    card_max, card_min, _ = limits_and_heaviest(profits, weights, copies_per_item(counts), capacity, incumbent)
    return int(card_max), int(card_min)


@njit(cache=True, nogil=True)
def limits_and_heaviest(profits, weights, copies, capacity, incumbent):
    """:func:`cardinality_limits` in one compiled call (``copies``: :func:`copies_per_item`), and the
    heaviest copy's weight (0 without items)."""
    if len(copies):
        profits, weights = profits // copies, weights // copies
    card_max = _copies_within(weights, copies, capacity, False)
    heaviest = np.int64(0)
    for weight in weights:
        heaviest = max(heaviest, weight)
    return card_max, _copies_within(profits, copies, incumbent, True) + 1, heaviest


def most_that_fit(weights: np.ndarray, capacity: int, counts: np.ndarray | None = None) -> int:
    """The most items (copies, with ``counts``) that fit: the lightest ones."""
    copies = copies_per_item(counts)
    return int(_copies_within(per_copy(weights, counts), copies, capacity, False))


@njit(cache=True, nogil=True)
def _copies_within(values, copies, room, largest_first):
    """How many of the copies (``copies[j]`` of ``values[j] > 0`` each; empty: one each) fit ``room`` taken
    whole in rising order of their values (``largest_first``: falling), the ones of equal value as many as fit.

    Three-way partitions around pivot values narrow the items to those where the room runs out (linear on
    average): the two sorts and cumulative sums this replaces took 49 us at 561 items, most of the
    cardinality limits' time in a surrogate relaxation of an instance solved in a millisecond.
    """
    n = len(values)
    v, c = np.empty(n, np.int64), np.empty(n, np.int64)
    for j in range(n):
        v[j] = -values[j] if largest_first else values[j]  # rising v: the order of taking
        c[j] = copies[j] if len(copies) else 1
    lo, hi = 0, n
    taken, left = np.int64(0), np.int64(room)
    state = np.uint64(0x9E3779B97F4A7C15)  # xorshift64: the same places on every call
    while lo < hi:
        span = np.uint64(hi - lo)
        state = xorshift(state)
        a = v[lo + np.int64(state % span)]
        state = xorshift(state)
        b = v[lo + np.int64(state % span)]
        state = xorshift(state)
        pivot = max(min(a, b), min(max(a, b), v[lo + np.int64(state % span)]))
        i, lt, gt = lo, lo, hi
        while i < gt:
            if v[i] < pivot:
                v[lt], v[i], c[lt], c[i] = v[i], v[lt], c[i], c[lt]
                lt += 1
                i += 1
            elif v[i] > pivot:
                gt -= 1
                v[gt], v[i], c[gt], c[i] = v[i], v[gt], c[i], c[gt]
            else:
                i += 1
        below, below_copies = np.int64(0), np.int64(0)
        for k in range(lo, lt):
            below += abs(v[k]) * c[k]
            below_copies += c[k]
        if below > left:
            hi = lt
            continue
        taken += below_copies
        left -= below
        tied = np.int64(0)
        for k in range(lt, gt):
            tied += c[k]
        value = abs(pivot)
        if tied * value > left:
            return taken + left // value
        taken += tied
        left -= tied * value
        lo = gt
    return taken


def per_copy(values: np.ndarray, counts: np.ndarray | None) -> np.ndarray:
    """One copy's value of each item: ``values`` itself, or its ``count``-th share."""
    return values if counts is None else values // counts


#: The empty ``copies`` (here) or ``units`` (core.knapsack.surrogate): one copy of each item (the surrogate's
#: searches call its LP bound dozens of times, and an array of ones per call cost a tenth of a small solve).
ONE_EACH = np.zeros(0, np.int64)


def copies_per_item(counts: np.ndarray | None) -> np.ndarray:
    """The copies each item stands for as the compiled functions take them: :data:`ONE_EACH` without
    ``counts``, else ``counts`` as int64."""
    return ONE_EACH if counts is None else np.asarray(counts, np.int64)


@njit(cache=True, nogil=True, inline="always")
def xorshift(state):
    """The next state of Marsaglia's 64-bit xorshift."""
    state ^= state << np.uint64(13)
    state ^= state >> np.uint64(7)
    return state ^ (state << np.uint64(17))
