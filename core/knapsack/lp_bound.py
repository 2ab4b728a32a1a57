"""The LP bound of combo's surrogate relaxation of KP1 (:mod:`core.knapsack.surrogate`), by partitions instead
of a sort, from the break item of the last call: the searches over the multiplier call it dozens of times.
Notes: docs/notes/knapsack.md, "KP1 without a capacity-long row" (steps 20 and 24).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from core.knapsack.cardinality import copies_per_item, xorshift

__all__ = ["GUESS_WIDTH", "lp_within", "no_guess", "surrogate_lp", "workspace"]


def surrogate_lp(profits, weights, capacity: int, card: int, multiplier: float, counts=None) -> float:
    """Dantzig's bound of ``max p x`` s.t. ``(w + s u) x <= c + s card``, ``0 <= x <= 1`` (``-inf``: infeasible),
    ``u`` the copies per item (``counts``; 1 without).

    Items of size ``w + s u <= 0`` are taken outright: they only make room.  In
    floats: products of profits and capacities overflow int64 at ``C ~ 10^10``.
    The break item is found by partitioning around pivot efficiencies
    (:func:`_fractional_bound`), in time linear in the items on average, where a
    sort took ``n log n``: the multiplier searches evaluate this bound dozens
    of times.
    """
    units = copies_per_item(counts)
    return float(_surrogate_lp(profits, weights, units, float(capacity), float(card), float(multiplier), no_guess()))


#: Relative half-width of the window of efficiencies around the last break item's where :func:`_surrogate_lp`
#: looks for the next one first, in units of 2^-40 (it widens on a miss, narrows where the window holds many
#: items): about 10^-3.
GUESS_WIDTH = 2**30


def no_guess() -> np.ndarray:
    """A guess for :func:`_surrogate_lp` that holds no break item yet."""
    return np.array([-1, GUESS_WIDTH], np.int64)


@njit(cache=True, nogil=True)
def _surrogate_lp(profits, weights, units, capacity, card, multiplier, guess):
    """:func:`surrogate_lp` compiled (:func:`_lp_and_count`'s bound)."""
    return _lp_and_count(profits, weights, units, capacity, card, multiplier, guess)[0]


@njit(cache=True, nogil=True)
def workspace(n):
    """The scratch rows of :func:`lp_within` for ``n`` items: three of positions, four of floats."""
    return np.empty(3 * n, np.int64), np.empty(4 * n, np.float64)


@njit(cache=True, nogil=True)
def _lp_and_count(profits, weights, units, capacity, card, multiplier, guess):
    """:func:`lp_within` with scratch rows of its own."""
    positions, floats = workspace(len(profits))
    value, count, _ = lp_within(profits, weights, units, capacity, card, multiplier, guess, positions, floats)
    return value, count


@njit(cache=True, nogil=True)
def lp_within(profits, weights, units, capacity, card, multiplier, guess, positions, floats):
    """:func:`surrogate_lp`, the copies its LP solution takes, ``sum u x`` (the break item's in part), and the
    break item's efficiency ``lambda`` (-inf, 0 and 0 where infeasible; ``lambda`` 0 where every item fits).
    ``guess``: (2,) int64, the break item of an earlier call (-1: none) and the window's relative half-width
    in units of 2^-40, updated in place.

    The bound's slope in the multiplier is ``lambda (card - sum u x)`` (Pisinger's ``surbin`` bisects on its
    sign; :func:`_search` also intersects the slopes' tangents).

    The searches call this dozens of times with multipliers that move little.  The order of the items'
    efficiencies changes with the multiplier, but the break item mostly stays near the earlier one.  So one
    pass over the items sums those more efficient than a window around that item's efficiency (at this
    multiplier) and those within it, and lists the items above, within and below it; only the group that
    holds the break item (the sizes before it fit, with it they do not) is partitioned
    (:func:`_fractional_bound`): mostly the window's few, where a miss used to partition every item (on the
    88 searches recorded from Pisinger's classes 3-5 and 11-16 the same multipliers in 5-8 % less time).
    The efficiencies are compared as products with the sizes.  The window narrows while it holds the break
    item among more than 64 items and widens when it does not.
    ``positions``, ``floats``: scratch rows (:func:`workspace`), so that a search's probes allocate nothing.
    """
    n = len(profits)
    room = capacity + multiplier * card
    base, count = 0.0, 0.0
    near, outer = positions[:n], positions[n : 2 * n]  # outer: those above from the front, below back
    j = guess[0]
    hint = -1.0
    if j >= 0:
        sz = weights[j] + multiplier * (units[j] if len(units) else 1)
        hint = profits[j] / sz if sz > 0 else -1.0
    width = guess[1] / 2.0**40
    top, low = hint * (1.0 + width), hint * (1.0 - width)
    above_p, above_size, above_count = 0.0, 0.0, 0.0
    near_p, near_size, near_count = 0.0, 0.0, 0.0
    a, k, b = 0, 0, n
    for j in range(n):  # (efficiencies compared as products: a division per item cost more than the rest)
        u = units[j] if len(units) else 1
        sz = weights[j] + multiplier * u
        if sz <= 0:
            room -= sz
            base += profits[j]
            count += u
        elif profits[j] > top * sz:
            outer[a] = j
            a += 1
            above_p += profits[j]
            above_size += sz
            above_count += u
        elif profits[j] >= low * sz:
            near[k] = j
            k += 1
            near_p += profits[j]
            near_size += sz
            near_count += u
        else:
            b -= 1
            outer[b] = j
    if room < 0:
        return -np.inf, 0.0, 0.0
    # the break item lies among the items above the window, within it, or below it: only those are partitioned
    hit = above_size <= room < above_size + near_size
    if room < above_size:
        which, left = outer[:a], room
    elif hit:
        which, left = near[:k], room - above_size
        base, count = base + above_p, count + above_count
    else:
        which, left = outer[b:], room - above_size - near_size
        base, count = base + above_p + near_p, count + above_count + near_count
    m = len(which)
    p, size, copies = floats[:m], floats[n : n + m], floats[2 * n : 2 * n + m]
    _items(profits, weights, units, multiplier, which, p, size, copies)
    value, at, taken = _fractional_bound(p, size, copies, left, floats[3 * n : 3 * n + m], positions[2 * n : 2 * n + m])
    guess[0] = which[at] if at >= 0 else -1
    efficiency = p[at] / size[at] if at >= 0 else 0.0
    if hint > 0 and not hit:  # the window widens on a miss, narrows where it held the break item among many
        guess[1] = min(4 * guess[1], 2**39)
    elif hit and k > 64:
        guess[1] = max(guess[1] // 2, 1)
    return base + value, count + taken, efficiency


@njit(cache=True, nogil=True)
def _items(profits, weights, units, multiplier, which, p, size, copies):
    """Profits, sizes ``w + s u`` and copies ``u`` of the items ``which``, as floats, into ``p``, ``size`` and
    ``copies``."""
    for i in range(len(which)):
        j = which[i]
        u = units[j] if len(units) else 1
        p[i], size[i], copies[i] = profits[j], weights[j] + multiplier * u, u


@njit(cache=True, nogil=True)
def _fractional_bound(p, size, copies, room, ratio, idx):
    """``max p x`` s.t. ``size x <= room``, ``0 <= x <= 1`` (every size > 0): the items by falling efficiency
    until the room is full, the last one in part; that one's position (-1 where every item fits); and
    ``sum copies x``.  ``ratio`` and ``idx``: scratch rows as long as ``p``.

    Three-way partitions around a pivot efficiency (the median of three
    candidates at pseudo-random places: the items come nearly in efficiency
    order, on which the first, middle and last items made pivots that cost a
    profit ceiling instance of 3228 items 107 us a bound against 25 us shuffled)
    narrow the candidates to those holding the break item: when the items above
    the pivot overfill the room it lies among them, otherwise they are all
    taken, then the pivot's ties, whole or in part.
    """
    n = len(p)
    for k in range(n):
        ratio[k] = p[k] / size[k]
        idx[k] = k
    lo, hi = 0, n
    value, left, count = 0.0, room, 0.0
    state = np.uint64(0x9E3779B97F4A7C15)  # xorshift64: the same places on every call
    while lo < hi:
        span = np.uint64(hi - lo)
        state = xorshift(state)
        a = ratio[idx[lo + np.int64(state % span)]]
        state = xorshift(state)
        b = ratio[idx[lo + np.int64(state % span)]]
        state = xorshift(state)
        c = ratio[idx[lo + np.int64(state % span)]]
        pivot = max(min(a, b), min(max(a, b), c))
        i, lt, gt = lo, lo, hi
        while i < gt:
            r = ratio[idx[i]]
            if r > pivot:
                idx[lt], idx[i] = idx[i], idx[lt]
                lt += 1
                i += 1
            elif r < pivot:
                gt -= 1
                idx[gt], idx[i] = idx[i], idx[gt]
            else:
                i += 1
        above = 0.0
        for k in range(lo, lt):
            above += size[idx[k]]
        if above > left:
            hi = lt
            continue
        for k in range(lo, lt):
            value += p[idx[k]]
            count += copies[idx[k]]
        left -= above
        tied = 0.0
        for k in range(lt, gt):
            tied += size[idx[k]]
        if tied >= left:
            return value + left * pivot, idx[lt], count + _tied_copies(size, copies, idx, lt, gt, left)
        for k in range(lt, gt):
            value += p[idx[k]]
            count += copies[idx[k]]
        left -= tied
        lo = gt
    return value, -1, count


@njit(cache=True, nogil=True)
def _tied_copies(size, copies, idx, lt, gt, left):
    """The copies taken of the tied items ``idx[lt:gt]`` that fill ``left``: whole ones in their order, then
    one in part (any split of ties is an LP solution; this one's count gives the slope on one side)."""
    count = 0.0
    for k in range(lt, gt):
        if size[idx[k]] > left:
            return count + left / size[idx[k]] * copies[idx[k]]
        left -= size[idx[k]]
        count += copies[idx[k]]
    return count
