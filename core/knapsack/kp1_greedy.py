"""The greedy KP1 solution in efficiency order and its improvement by single exchanges (the incumbent that
:func:`core.knapsack.kp1_core.prepare` starts from)."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["greedy", "improve_by_exchanges"]


@njit(cache=True, nogil=True)
def greedy(weights, capacity, break_item):
    """Break solution plus every later item that still fits, in efficiency order."""
    taken = np.zeros(len(weights), np.bool_)
    room = capacity
    for j in range(len(weights)):
        if j < break_item or weights[j] <= room:
            taken[j] = True
            room -= weights[j]
    return taken


def improve_by_exchanges(p, w, capacity, taken, rounds: int = 8):
    """The best single swap (one item out, one in) that fits, repeated while it gains.

    For each item out, the item in to drop is the least profitable one heavy
    enough to make room: a suffix minimum over the chosen items sorted by weight
    (ties by position; the first of equal gains and of equal profits is taken).
    """
    inside, outside = np.flatnonzero(taken), np.flatnonzero(~taken)
    return _exchanges(p, w, np.int64(capacity), taken.copy(), _by_weight(w, inside), _by_weight(w, outside), rounds)


def _by_weight(w, items):
    """``items`` sorted by weight, ties by position: one sort of ``weight * n + position`` where that fits 63 bits
    (a quarter of the time of a stable argsort at n = 10000)."""
    n = len(w)
    if not len(items) or int(w[items].max()) >= 2**62 // max(n, 1):
        return items[np.argsort(w[items], kind="stable")]
    return np.sort(w[items] * n + items) % n


@njit(cache=True, nogil=True)
def _exchanges(p, w, capacity, taken, inside, outside, rounds):
    """:func:`improve_by_exchanges` compiled: the chosen (``inside``) and the other items (``outside``) each kept
    sorted by weight (ties by position), so a round is one sweep over the others with a pointer into the
    chosen, and a swap moves one item between the lists."""
    cheapest = np.empty(len(inside), np.int64)
    room = capacity - w[inside].sum()
    for _ in range(rounds):
        if len(inside) == 0 or len(outside) == 0:
            break
        low = np.iinfo(np.int64).max
        for k in range(len(inside) - 1, -1, -1):
            low = min(low, p[inside[k]])
            cheapest[k] = low
        best_gain, best_at, best_first = np.int64(0), -1, -1
        first = 0
        for q in range(len(outside)):  # rising weight: the first chosen item heavy enough only moves right
            j = outside[q]
            while first < len(inside) and w[inside[first]] < w[j] - room:
                first += 1
            if first == len(inside):
                break
            gain = p[j] - cheapest[first]
            if gain > best_gain or (gain == best_gain and gain > 0 and j < outside[best_at]):
                best_gain, best_at, best_first = gain, q, first
        if best_at < 0:
            break
        drop = best_first
        for k in range(best_first + 1, len(inside)):
            if p[inside[k]] < p[inside[drop]]:
                drop = k
        item, dropped = outside[best_at], inside[drop]
        taken[dropped], taken[item] = False, True
        room += w[dropped] - w[item]
        _swap_in(inside, drop, item, w)
        _swap_in(outside, best_at, dropped, w)
    return taken


@njit(cache=True, nogil=True)
def _swap_in(items, at, item, w):
    """Replace ``items[at]`` by ``item`` in a list sorted by weight, then position."""
    for k in range(at, len(items) - 1):
        items[k] = items[k + 1]
    k = len(items) - 1
    while k > 0 and (w[items[k - 1]] > w[item] or (w[items[k - 1]] == w[item] and items[k - 1] > item)):
        items[k] = items[k - 1]
        k -= 1
    items[k] = item
