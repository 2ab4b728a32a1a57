"""KP1 by the capacity DP: rows of capacities with packed decision bits, exact windows per row and a divide
and conquer past the memory budget (Hirschberg).  Cost n x C: :mod:`core.knapsack.kp1` chooses it where the
state lists would cost more.  Notes: docs/notes/knapsack.md, "KP1 by the capacity DP".
"""

from __future__ import annotations

import numpy as np
from numba import njit

from core.knapsack import limits
from core.knapsack.bitpack import pack_flags, test_bit, words_for
from core.knapsack.problems import MemoryBudgetError, weights_gcd

__all__ = ["capacity_windows", "dp_mask", "row_bytes", "row_dtype"]

INT32_LIMIT = 2**31 - 1


def row_dtype(total_profit: int) -> type:
    """int32 rows when every DP value fits (they vectorise twice as wide), else int64."""
    return np.int32 if total_profit < INT32_LIMIT else np.int64


def capacity_windows(weights: np.ndarray, capacity: int, lower_bound: bool = True):
    """The capacities each DP row needs, ``lo[i] <= c <= hi[i]``, as two (n,) int64 arrays.

    ``weights`` (n,) are in DP order and ``capacity`` is the final row's (at most
    their sum).  Without ``lower_bound``, ``lo = 0`` and the last row is valid
    for every capacity.
    """
    prefix = np.cumsum(weights)
    hi = np.minimum(prefix, capacity)
    lo = np.maximum(capacity - (prefix[-1] - prefix), 0) if lower_bound else np.zeros_like(hi)
    return lo.astype(np.int64), hi.astype(np.int64)


@njit(cache=True, nogil=True)
def _relax_row(old, new, weight, profit, lo, hi):
    """``new[c] = max(old[c], old[c - weight] + profit)`` on ``lo <= c <= hi``."""
    # Unsigned indices: numba then emits no negative-index wrap-around, and the
    # loops vectorise.
    w = np.uint64(weight)
    start = np.uint64(lo)
    stop = np.uint64(hi) + np.uint64(1)
    split = min(max(start, w), stop)
    for c in range(start, split):
        new[c] = old[c]
    for c in range(split, stop):
        new[c] = max(old[c], old[c - w] + profit)


@njit(cache=True, nogil=True)
def _row_flags(old, new, lo, hi, flags):
    """``flags[c] = new[c] != old[c]`` (item taken) on ``lo..hi``, 0 in the rest of their words."""
    first = np.uint64(lo) & ~np.uint64(63)
    end = (np.uint64(hi) | np.uint64(63)) + np.uint64(1)
    for c in range(first, np.uint64(lo)):
        flags[c] = 0
    for c in range(np.uint64(lo), np.uint64(hi) + np.uint64(1)):
        flags[c] = new[c] != old[c]
    for c in range(np.uint64(hi) + np.uint64(1), end):
        flags[c] = 0


@njit(cache=True, nogil=True)
def _sweep(profits, weights, capacity, lo, hi, bits, offsets):
    """Run the DP over all items; return the last row (valid on ``lo[-1]..capacity``).

    ``bits`` receives row ``i``'s decision words at ``offsets[i]:offsets[i + 1]``
    (words ``lo[i] >> 6`` to ``hi[i] >> 6``); pass empty ``offsets`` for values only.
    """
    old = np.zeros(capacity + 1, profits.dtype)
    new = np.zeros(capacity + 1, profits.dtype)
    flags = np.zeros(((capacity >> 6) + 1) << 6, np.uint8)
    store = len(offsets) > 0
    hi_prev = 0
    for i in range(len(profits)):
        # Past the weight of the items so far the row is constant: extend it.
        for c in range(hi_prev + 1, hi[i] + 1):
            old[c] = old[hi_prev]
        _relax_row(old, new, weights[i], profits[i], lo[i], hi[i])
        if store:
            _row_flags(old, new, lo[i], hi[i], flags)
            pack_flags(flags, lo[i] >> 6, bits[offsets[i] : offsets[i + 1]])
        old, new = new, old
        hi_prev = hi[i]
    for c in range(hi_prev + 1, capacity + 1):
        old[c] = old[hi_prev]
    return old


@njit(cache=True, nogil=True)
def _backtrack(weights, capacity, lo, hi, bits, offsets):
    """Chosen items (bool mask) from the decision bits, from the last row back."""
    taken = np.zeros(len(weights), np.bool_)
    c = capacity
    for i in range(len(weights) - 1, -1, -1):
        c = min(c, hi[i])  # beyond hi[i] row i equals its value at hi[i]
        if test_bit(bits[offsets[i] : offsets[i + 1]], lo[i] >> 6, c):
            taken[i] = True
            c -= weights[i]
    return taken


def _decision_plan(weights, capacity):
    """Windows, word offsets and the bytes of a direct DP with decision bits."""
    lo, hi = capacity_windows(weights, capacity)
    offsets = np.zeros(len(weights) + 1, np.int64)
    np.cumsum(words_for(lo, hi), out=offsets[1:])
    return lo, hi, offsets


def row_bytes(capacity: int, itemsize: int) -> int:
    return 2 * (capacity + 1) * itemsize + (capacity + 64)


def _solve_items(profits, weights, capacity, budget, state):
    """Boolean mask of an optimal choice; items sorted, profits > 0, weights > 0."""
    fits = weights <= capacity
    if weights[fits].sum() <= capacity:
        return fits
    if not fits.all():
        mask = np.zeros(len(weights), np.bool_)
        mask[fits] = _solve_items(profits[fits], weights[fits], capacity, budget, state)
        return mask
    lo, hi, offsets = _decision_plan(weights, capacity)
    direct_bytes = 8 * int(offsets[-1]) + row_bytes(capacity, profits.itemsize)
    if direct_bytes <= budget:
        bits = np.empty(int(offsets[-1]), np.uint64)
        _sweep(profits, weights, capacity, lo, hi, bits, offsets)
        return _backtrack(weights, capacity, lo, hi, bits, offsets)
    light_bytes = 2 * row_bytes(capacity, 8)
    if light_bytes > budget:
        raise MemoryBudgetError(f"KP1 with capacity {capacity} (divide and conquer)", light_bytes, budget)
    state["method"] = "dp-divide-conquer"
    return _divide(profits, weights, capacity, budget, state)


def _divide(profits, weights, capacity, budget, state):
    """Hirschberg step: split the items, find the capacity split, solve both halves."""
    mid = len(profits) // 2
    empty = np.zeros(0, np.int64)
    first = _full_row(profits[:mid], weights[:mid], capacity, empty)
    second = _full_row(profits[mid:], weights[mid:], capacity, empty)
    split = int(np.argmax(first.astype(np.int64) + second[::-1]))
    del first, second
    left = _solve_items(profits[:mid], weights[:mid], split, budget, state)
    right = _solve_items(profits[mid:], weights[mid:], capacity - split, budget, state)
    return np.concatenate([left, right])


def _full_row(profits, weights, capacity, empty):
    """The last DP row over every capacity ``0..capacity`` (no decision bits)."""
    lo, hi = capacity_windows(weights, capacity, lower_bound=False)
    return _sweep(profits, weights, capacity, lo, hi, np.zeros(0, np.uint64), empty)


def dp_mask(profits, weights, capacity, budget, state):
    """Optimal choice (bool mask) by the capacity DP: items sorted by weight, gcd divided out."""
    mask = np.zeros(len(profits), np.bool_)
    usable = np.flatnonzero(weights <= capacity)
    if int(weights[usable].sum()) <= capacity:
        mask[usable] = True
        return mask
    order = usable[np.argsort(weights[usable], kind="stable")]
    gcd = weights_gcd(weights[order])
    limits.check_dp(len(order) * (capacity // gcd), f"KP1 by the capacity DP ({len(order):,} items, capacity "
                                                   f"{capacity // gcd:,})")
    dtype = row_dtype(int(profits[order].sum()))
    mask[order] = _solve_items(profits[order].astype(dtype), weights[order] // gcd, capacity // gcd, budget, state)
    return mask
