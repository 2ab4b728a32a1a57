"""0-1 knapsack (KP1) on the CPU: DP over capacities with packed decision bits.

Exact reductions, capacity windows per row and a divide and conquer past the
memory budget: docs/notes/knapsack.md, "KP1".
"""

from __future__ import annotations

import numpy as np
from numba import njit

from core.knapsack.bitpack import pack_flags, test_bit, words_for
from core.knapsack.problems import KP1, MemoryBudgetError, SolverResult, weights_gcd
from core.memory import resolve_budget

__all__ = ["capacity_windows", "row_dtype", "solve_kp1"]

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


def _row_bytes(capacity: int, itemsize: int) -> int:
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
    direct_bytes = 8 * int(offsets[-1]) + _row_bytes(capacity, profits.itemsize)
    if direct_bytes <= budget:
        bits = np.empty(int(offsets[-1]), np.uint64)
        _sweep(profits, weights, capacity, lo, hi, bits, offsets)
        return _backtrack(weights, capacity, lo, hi, bits, offsets)
    light_bytes = 2 * _row_bytes(capacity, 8)
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


def solve_kp1(problem: KP1, memory_budget_bytes: int | None = None) -> SolverResult:
    """Solve a :class:`KP1` exactly.

    Parameters
    ----------
    problem : KP1
    memory_budget_bytes : int, optional
        Most bytes for the DP rows and decision bits; default
        :func:`core.memory.resolve_budget`.

    Returns
    -------
    SolverResult
        ``method`` ``"dp"``, or ``"dp-divide-conquer"`` when the bits did not fit the budget.

    Raises
    ------
    MemoryBudgetError
        When even the divide-and-conquer rows exceed the budget.
    """
    budget = resolve_budget(memory_budget_bytes)
    profits, weights = problem.profits, problem.weights
    always = np.flatnonzero((weights == 0) & (profits > 0))
    items = np.flatnonzero((weights > 0) & (weights <= problem.capacity) & (profits > 0))
    items = items[np.argsort(weights[items], kind="stable")]
    state = {"method": "dp"}
    chosen = items
    if int(weights[items].sum()) > problem.capacity:
        gcd = weights_gcd(weights[items])
        dtype = row_dtype(int(profits[items].sum()))
        capacity = problem.capacity // gcd
        mask = _solve_items(profits[items].astype(dtype), weights[items] // gcd, capacity, budget, state)
        chosen = items[mask]
    selected = np.sort(np.concatenate([always, chosen])).astype(np.int64)
    return SolverResult(int(profits[selected].sum()), selected, state["method"])
