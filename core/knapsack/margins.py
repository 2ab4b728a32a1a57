"""An upper bound of KP1 for profits that are the weight plus one of two margins (``p = w + k``).

Every solution's profit is its weight plus its items' margins ``k = p - w``,
and its weight is at most the capacity ``c``, so

    ``sum p x  <=  c + max { sum k x : sum w x <= c }``

for every instance (the Lagrangian split of the profits at multiplier 1).  The
inner problem is a knapsack too, but where the positive margins take at most
two values it is solved exactly in one pass: of the items of one margin the
lightest are best, so a solution is two counts ``(a, b)``, and for each ``a``
the largest ``b`` that still fits is found by a pointer that only moves back.
Pisinger's multiple strongly correlated class (``mstr``, hard class 14: ``p = w
+ 3R/10`` where 6 divides ``w``, else ``w + 2R/10``), his strongly correlated
class (one margin) and the profit ceiling class (``p = 3 ceil(w / 3)``: margins
1 and 2) are of this form; on class 14 the bound equals the optimum of every
instance tried, where Dantzig's bound (and the surrogate relaxation's) left a
gap of hundreds that the state lists took seconds to close (the greedy
incumbent was optimal from the start).  Notes: docs/notes/knapsack.md, "Margin
bound".
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["NOT_APPLICABLE", "margin_bound"]

#: What :func:`margin_bound` returns where the positive margins take more than two values.
NOT_APPLICABLE = -1


@njit(cache=True, nogil=True)
def margin_bound(profits, weights, capacity, copies):
    """``capacity + max { sum k x : sum w x <= capacity }`` (``k = p - w``), or :data:`NOT_APPLICABLE`.

    Parameters
    ----------
    profits, weights : (n,) int64
        Items (``weights > 0``); in any order (those of one margin are put in rising weight here where they
        are not already, as they are in efficiency order).
    capacity : int64
    copies : (n,) int64 or empty
        Identical copies each item stands for (core.knapsack.grouping; empty: one each): a copy weighs and
        earns a ``copies``-th of its item, and the bound counts copies.

    Returns
    -------
    int64
        The bound, or :data:`NOT_APPLICABLE` (-1) where the positive margins per copy take more than two
        values.
    """
    n = len(profits)
    high, low = np.int64(0), np.int64(0)  # the positive margins seen (0: none yet)
    for j in range(n):
        c = copies[j] if len(copies) else 1
        k = (profits[j] - weights[j]) // c
        if k <= 0 or k == high or k == low:
            continue
        if high == 0:
            high = k
        elif low == 0:
            high, low = max(high, k), min(high, k)
        else:
            return NOT_APPLICABLE
    if high == 0:  # (no item earns more than it weighs: a solution's profit is at most its weight)
        return np.int64(capacity)
    wa, ca = _lightest_first(profits, weights, copies, high)
    wb, cb = _lightest_first(profits, weights, copies, low)
    return capacity + _best_counts(wa, ca, high, wb, cb, low, capacity)


@njit(cache=True, nogil=True)
def _lightest_first(profits, weights, copies, margin):
    """The weights per copy of the items of this margin per copy, rising, and their copies."""
    n = len(profits)
    w, c = np.empty(n, np.int64), np.empty(n, np.int64)
    m, rising = 0, True
    for j in range(n):
        count = copies[j] if len(copies) else 1
        if margin > 0 and (profits[j] - weights[j]) // count == margin:
            w[m], c[m] = weights[j] // count, count
            rising = rising and (m == 0 or w[m - 1] <= w[m])
            m += 1
    w, c = w[:m], c[:m]
    if not rising:
        order = np.argsort(w, kind="mergesort")
        w, c = w[order], c[order]
    return w, c


@njit(cache=True, nogil=True)
def _best_counts(wa, ca, high, wb, cb, low, capacity):
    """``max high a + low b`` over the lightest ``a`` copies of ``wa`` and the lightest ``b`` of ``wb`` that fit
    ``capacity`` together (copies ``ca``, ``cb``; weights rising)."""
    # The lightest copies of b that fit the whole capacity: items [0, ib) whole and ``used`` copies of item ib.
    ib, used, weight_b, count_b = 0, np.int64(0), np.int64(0), np.int64(0)
    while ib < len(wb):
        take = min(cb[ib], (capacity - weight_b) // wb[ib])
        weight_b += take * wb[ib]
        count_b += take
        if take < cb[ib]:
            used = take
            break
        ib += 1
    best = low * count_b
    weight_a, count_a = np.int64(0), np.int64(0)
    for i in range(len(wa)):
        for _ in range(ca[i]):
            weight_a += wa[i]
            if weight_a > capacity:
                return best
            count_a += 1
            while weight_a + weight_b > capacity:  # drop the heaviest copy of b taken
                if used == 0:
                    ib -= 1
                    used = cb[ib]
                used -= 1
                weight_b -= wb[ib]
                count_b -= 1
            best = max(best, high * count_a + low * count_b)
    return best
