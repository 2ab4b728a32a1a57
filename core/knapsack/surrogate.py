"""Combo's surrogate relaxation of KP1 with a cardinality constraint, solved exactly.

``card_max`` (the most items that fit: the lightest ones) bounds every
solution's item count from above, ``card_min`` (the fewest items whose largest
profits beat the incumbent ``z``) every improving solution's from below.  With
``b`` items in the break solution, every solution has ``<= b`` or ``>= b + 1``
items; the surrogate of ``w x <= c`` and ``sum x <= k`` (multiplier
``s >= 0``) or ``sum x >= k`` (``s <= 0``) is the KP1 ``(w + s) x <= c + s k``.
Its LP bound (:mod:`core.knapsack.lp_bound`) is quasi-convex in ``s``: a scan and a search on its slope
pick ``s``; the surrogate KP1 is then solved exactly by the state lists, and its optimum
bounds the original (Martello, Pisinger and Toth 1999).  On strongly and
inverse strongly correlated items (``p = w +/- K``) the surrogate with
``s = -/+ K`` is a subset sum whose optimum is the original's.
Notes: docs/notes/knapsack.md, "KP1 without a capacity-long row".
"""

from __future__ import annotations

import numpy as np
from numba import njit

from core.knapsack.cardinality import copies_per_item, limits_and_heaviest
from core.knapsack.lp_bound import lp_within, no_guess, surrogate_lp, workspace

__all__ = ["golden_section", "surrogate_bound"]

_GOLDEN = (np.sqrt(5.0) - 1) / 2


def golden_section(profits, weights, capacity: int, card: int, lo: float, hi: float, iterations: int,
                   counts=None, min_width: float = 0.0):
    """Golden-section search for the least :func:`surrogate_lp` over the multiplier on ``[lo, hi]``:
    ``(lo, hi, least)``, the last interval and the least bound probed (inf when none was); compiled
    (:func:`_golden`)."""
    units = copies_per_item(counts)
    lo, hi, least = _golden(profits, weights, units, float(capacity), float(card), float(lo), float(hi),
                            iterations, float(min_width), no_guess())
    return float(lo), float(hi), float(least)


@njit(cache=True, nogil=True)
def _golden(profits, weights, units, capacity, card, lo, hi, iterations, min_width, guess):
    """:func:`golden_section` compiled: each step keeps one probe (the golden ratio's point of the narrowed
    interval) and computes one; it stops after ``iterations`` steps or once the interval is narrower than
    ``min_width``."""
    if hi - lo < min_width:
        return lo, hi, np.inf
    positions, floats = workspace(len(profits))
    a, b = hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo)
    fa = lp_within(profits, weights, units, capacity, card, a, guess, positions, floats)[0]
    fb = lp_within(profits, weights, units, capacity, card, b, guess, positions, floats)[0]
    least = min(fa, fb)
    for _ in range(iterations):
        if hi - lo < min_width:
            break
        if fa <= fb:
            hi, b, fb = b, a, fa
            a = hi - _GOLDEN * (hi - lo)
            fa = lp_within(profits, weights, units, capacity, card, a, guess, positions, floats)[0]
        else:
            lo, a, fa = a, b, fb
            b = lo + _GOLDEN * (hi - lo)
            fb = lp_within(profits, weights, units, capacity, card, b, guess, positions, floats)[0]
        least = min(least, fa, fb)
    return lo, hi, least


#: Multipliers the search samples evenly before its golden section (see :func:`_search`). 33 before: over
#: 432 searches (Pisinger's classes 1-6 at n = 200 and 1000, R = 10^4 and 10^6, and 11-16 at n = 1000, both
#: cardinality sides) 9 and 17 found the same least bounds, with a third fewer bounds computed.
SCAN_POINTS = 9


def _best_multiplier(profits, weights, capacity, card, low, high, iterations=64, counts=None):
    """The integer multiplier in ``[low, high]`` with the least LP bound (:func:`_search`, compiled: the
    bounds it probes cost about a microsecond each, a Python call as much again)."""
    units = copies_per_item(counts)
    return int(_search(profits, weights, units, float(capacity), float(card), int(low), int(high), iterations,
                       SCAN_POINTS, no_guess()))


@njit(cache=True, nogil=True)
def _search(profits, weights, units, capacity, card, low, high, iterations, scan_points, guess):
    """An even scan of ``scan_points`` multipliers, then a search on the bound's slope between the best
    one's neighbours, down to two neighbouring integers.

    The bound is quasi-convex in ``s`` at best: where ``s`` makes every item's
    size ``<= 0`` it is flat at the sum of the profits, and a search whose
    probes land on that plateau walks into it (Pisinger's inverse strongly
    correlated items, n = 10000, R = 10^6, v = 75: a golden section returned
    ``s = 0``, a bound 76,028 above the incumbent, where ``s = -R/10`` gives
    240); and on strongly correlated items it dips sharply at ``s = K``, where
    the surrogate becomes a subset sum.  So the scan brackets the least value
    first (the first on ties).  Within the bracket the slope's sign,
    ``card - sum u x`` of the LP solution (:func:`core.knapsack.lp_bound.lp_within`), says on
    which side the least bound lies, as in Pisinger's ``surbin``, and the
    next probe is where the break items at the bracket's two ends have equal
    efficiency, where the LP solution changes (on strongly and inverse
    strongly correlated items exactly ``s = +-K``, the least bound: 2 probes
    after the scan where halving took 17-18), else where the tangents at the
    two ends meet (the bound is piecewise smooth); a probe that does not
    halve the bracket is followed by a halving, so that it never takes more
    than twice the halvings (over 57 searches of Pisinger's classes 3-5 and
    12, 14, 16: 836 bounds instead of 1201, the same multipliers).  The least
    bound probed wins (the first on ties), so an infeasible side (``-inf``)
    ends it.
    """
    grid = np.unique(np.round(np.linspace(float(low), float(high), scan_points)))
    positions, floats = workspace(len(profits))
    values, slopes, breaks = np.empty(len(grid)), np.empty(len(grid)), np.empty(len(grid), np.int64)
    best, best_value = 0, np.inf
    for k in range(len(grid)):
        value, count, efficiency = lp_within(profits, weights, units, capacity, card, grid[k], guess, positions,
                                              floats)
        values[k], slopes[k], breaks[k] = value, efficiency * (card - count), guess[0]
        if value < best_value:
            best, best_value = k, value
    chosen = np.int64(grid[best])
    a, b = max(best - 1, 0), min(best + 1, len(grid) - 1)
    lo, f_lo, d_lo, i = np.int64(grid[a]), values[a], slopes[a], breaks[a]
    hi, f_hi, d_hi, j = np.int64(grid[b]), values[b], slopes[b], breaks[b]
    guided = True
    for _ in range(iterations):  # (64: every bracket of int64 multipliers halves down to neighbours)
        width = hi - lo
        if width <= 1 or best_value == -np.inf:
            break
        mid = lo + width // 2
        if guided:
            mid = _guided_probe(profits, weights, units, lo, hi, f_lo, f_hi, d_lo, d_hi, i, j, mid)
        value, count, efficiency = lp_within(profits, weights, units, capacity, card, float(mid), guess, positions,
                                              floats)
        if value < best_value:
            chosen, best_value = mid, value
        if count > card:  # the bound falls towards larger multipliers
            lo, f_lo, d_lo, i = mid, value, efficiency * (card - count), guess[0]
        elif count < card:
            hi, f_hi, d_hi, j = mid, value, efficiency * (card - count), guess[0]
        else:
            break
        guided = 2 * (hi - lo) <= width
    return chosen  # (lo and hi were probed: each is a scanned multiplier or a probe of the search)


@njit(cache=True, nogil=True)
def _guided_probe(profits, weights, units, lo, hi, f_lo, f_hi, d_lo, d_hi, i, j, halving):
    """:func:`_search`'s next multiplier strictly inside ``(lo, hi)``: where the break items ``i`` and ``j`` at
    the ends (-1: none) have equal efficiency, else where the tangents of slopes ``d_lo < 0 < d_hi`` at the
    ends meet, else ``halving``."""
    if i >= 0 and j >= 0 and i != j:
        u_i = units[i] if len(units) else 1
        u_j = units[j] if len(units) else 1
        across = float(profits[i]) * u_j - float(profits[j]) * u_i  # p_i (w_j + s u_j) = p_j (w_i + s u_i)
        if across != 0.0:
            at = (float(profits[j]) * weights[i] - float(profits[i]) * weights[j]) / across
            if lo < at < hi:
                return min(max(np.int64(np.round(at)), lo + 1), hi - 1)
    if d_lo < 0.0 < d_hi and np.isfinite(f_lo) and np.isfinite(f_hi):
        at = (f_hi - f_lo + d_lo * lo - d_hi * hi) / (d_lo - d_hi)
        if np.isfinite(at):  # (outside: the bound bends the other way, its least value next to that end)
            return min(max(np.int64(np.round(min(max(at, float(lo)), float(hi)))), lo + 1), hi - 1)
    return halving


def _floor_bound(value: float) -> int:
    """An integer bound from a float one, with room for its rounding error."""
    return int(np.floor(value + 1e-9 * abs(value) + 1e-6))


def _solve_surrogate(profits, weights, units, capacity, card, multiplier, incumbent, solve_exactly, counts=None):
    """``(bound, choice)`` of one side: the surrogate optimum (or its LP bound) and a feasible choice or None."""
    if multiplier == 0:  # the original problem itself: its LP bound
        return _floor_bound(surrogate_lp(profits, weights, capacity, card, 0, counts)), None
    room, base, rest, rest_profits, rest_sizes = _surrogate_items(profits, weights, units, capacity, card,
                                                                  multiplier)
    if room < 0:
        return -1, None  # no solution on this side
    value, chosen = solve_exactly(rest_profits, rest_sizes, room, incumbent - base)
    if value is None:  # gave up: the LP bound
        return _floor_bound(surrogate_lp(profits, weights, capacity, card, multiplier, counts)), None
    if chosen is None:
        return base + value, None
    mask, feasible, worth = _surrogate_choice(profits, weights, capacity, rest, chosen)
    return base + value, mask if feasible and worth == base + value else None


@njit(cache=True, nogil=True)
def _surrogate_items(profits, weights, units, capacity, card, multiplier):
    """The surrogate KP1 of one side (sizes ``w + s u``, capacity ``c + s card``) without the items of size
    <= 0, which every optimum takes: ``(room, base, rest, rest's profits, rest's sizes)``, ``room`` the
    capacity the taken ones leave (< 0: no solution), ``base`` their profit, ``rest`` the others' indices."""
    n = len(profits)
    rest, rest_profits, rest_sizes = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
    room, base, m = capacity + multiplier * card, np.int64(0), 0
    for j in range(n):
        size = weights[j] + multiplier * (units[j] if len(units) else 1)
        if size <= 0:
            room -= size
            base += profits[j]
        else:
            rest[m], rest_profits[m], rest_sizes[m] = j, profits[j], size
            m += 1
    return room, base, rest[:m], rest_profits[:m], rest_sizes[:m]


@njit(cache=True, nogil=True)
def _surrogate_choice(profits, weights, capacity, rest, chosen):
    """The items outside ``rest`` (those of size <= 0) and ``rest[chosen]`` as a mask, whether they fit the
    original capacity, and their profit."""
    mask = np.ones(len(weights), np.bool_)
    for k in range(len(rest)):
        mask[rest[k]] = chosen[k]
    used, worth = np.int64(0), np.int64(0)
    for j in range(len(weights)):
        if mask[j]:
            used += weights[j]
            worth += profits[j]
    return mask, used <= capacity, worth


def surrogate_bound(profits, weights, capacity: int, break_count: int, incumbent: int, solve_exactly, counts=None):
    """An upper bound on the improving solutions, and a choice worth it when one was found.

    Parameters
    ----------
    profits, weights : (n,) int64
        Items with ``0 < weights <= capacity``, ``profits > 0``, not all fitting.
    break_count : int
        Items in the break solution (copies, with ``counts``).
    incumbent : int
        Value of a known solution; the bound returned is at least it.
    solve_exactly : callable
        ``(profits, weights, capacity, incumbent) -> (value, mask)``: the optimum of a
        KP1 when it beats ``incumbent`` (with its choice), ``(incumbent, None)`` when
        nothing does, ``(None, None)`` when it gave up.
    counts : (n,) int64, optional
        Copies each item stands for (core.knapsack.grouping): the cardinality
        sides count copies, ``sum counts x``.

    Returns
    -------
    bound : int
    choice : (n,) bool or None
        A feasible choice worth ``bound`` (then optimal), or None.
    """
    units = copies_per_item(counts)
    sides = _sides(profits, weights, units, capacity, break_count, incumbent)
    if sides is None:
        return None, None  # combo's choice: no tight cardinality side
    bound, choice = incumbent, None  # (no side: no solution can beat the incumbent)
    for card, low, high in sides:
        multiplier = _best_multiplier(profits, weights, capacity, card, low, high, counts=counts)
        value, mask = _solve_surrogate(profits, weights, units, capacity, int(card), multiplier, incumbent,
                                       solve_exactly, counts)
        if value > bound:
            bound, choice = value, mask
    return bound, choice  # (a choice is worth its side's value: _solve_surrogate checks it)


def _sides(profits, weights, units, capacity, break_count, incumbent):
    """The cardinality sides of :func:`surrogate_bound`, rows ``(card, low, high)`` (the multipliers'
    range), none where no solution can beat the incumbent; None where no side is tight (combo's choice)."""
    card_max, card_min, top = limits_and_heaviest(profits, weights, units, capacity, incumbent)
    b = break_count
    if card_min > card_max:
        return ()
    if card_max <= b:
        return ((card_max, 0, top),)  # every solution: sum x <= card_max
    if card_min >= b + 1:
        return ((card_min, -top, 0),)  # every improving solution: sum x >= card_min
    if card_max == b + 1 or card_min == b:
        return ((b, 0, top), (b + 1, -top, 0))  # sum x <= b or sum x >= b + 1
    return None
