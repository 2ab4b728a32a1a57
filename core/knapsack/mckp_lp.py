"""The LP relaxation of an MCKP over reduced classes (:mod:`core.knapsack.mckp_core`).

Each class sorted by weight, its first item at weight and profit 0, profits
increasing: only the upper convex hull of a class matters to the LP; its
increments, sorted by slope, give the LP optimum greedily.  Also the
divisibility bound's hull of reduced profits (:func:`divisibility`) and the
greedy upgrade that spends a choice's residual capacity (:func:`improve`).
Notes: docs/notes/knapsack.md, "MCKP without a capacity-long row".
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["Increments", "divisibility", "improve", "lp_relaxation"]


@njit(cache=True, nogil=True)
def _hull_mask(profits, weights, class_start):
    """Items on the upper convex hull of their class (each class sorted by weight, first item at 0, 0)."""
    on_hull = np.zeros(len(weights), np.bool_)
    stack = np.empty(len(weights), np.int64)
    for k in range(len(class_start) - 1):
        top = 0
        for i in range(class_start[k], class_start[k + 1]):
            while top >= 2:
                a, b = stack[top - 2], stack[top - 1]
                # b under the chord a-i (or on it) is no vertex; in floats (int64 products overflow),
                # so a near-collinear b may stay: Increments keeps each class's increments in order
                left = np.float64(profits[b] - profits[a]) * np.float64(weights[i] - weights[a])
                right = np.float64(profits[i] - profits[a]) * np.float64(weights[b] - weights[a])
                if left <= right:
                    top -= 1
                else:
                    break
            stack[top] = i
            top += 1
        for t in range(top):
            on_hull[stack[t]] = True
    return on_hull


class Increments:
    """Hull increments of every class in LP order (slope descending, class order kept on ties)."""

    def __init__(self, profits, weights, class_start, rising_only=False):
        """``rising_only``: drop increments that do not raise the profit (profits that fall with the weight:
        the LP never takes them; on the hull they end each class)."""
        hull = np.flatnonzero(_hull_mask(profits, weights, class_start))
        cls = np.searchsorted(class_start, hull, side="right") - 1
        step = hull != class_start[cls]  # every hull item but a class's first ends an increment
        self.item, self.cls = hull[step], cls[step]
        prev = hull[np.flatnonzero(step) - 1]
        self.dw, self.dp = weights[self.item] - weights[prev], profits[self.item] - profits[prev]
        self.slope = self.dp / self.dw
        order = np.lexsort((self.item, -self.slope))
        # a class's increments must come in their own order (an integral completion takes a prefix of
        # each class); the hull makes their slopes decrease, and where rounding says otherwise the
        # positions the class holds are handed to its increments in order
        slots = np.lexsort((np.arange(len(order)), self.cls[order]))
        placed = np.empty_like(order)
        placed[slots] = np.lexsort((self.item, self.cls))
        self.item, self.cls, self.dw, self.dp = (x[placed] for x in (self.item, self.cls, self.dw, self.dp))
        if rising_only:
            rising = self.dp > 0
            self.item, self.cls, self.dw, self.dp = (x[rising] for x in (self.item, self.cls, self.dw, self.dp))
        self.slope = self.dp / self.dw

    def prefix(self, outside: np.ndarray):
        """Cumulative weights and profits (leading 0) and slopes of the increments of ``outside`` classes."""
        mask = outside[self.cls]
        cum_w = np.concatenate([[0], np.cumsum(self.dw[mask])])
        cum_p = np.concatenate([[0], np.cumsum(self.dp[mask])])
        return cum_w, cum_p, np.concatenate([self.slope[mask], [0.0]]), np.flatnonzero(mask)


def lp_relaxation(profits, weights, class_start, capacity):
    """LP optimum of a reduced MCKP: ``(lam, bound, choice)``.

    ``lam`` is the slope at the break (0 when every increment fits), ``bound``
    the LP value (float) and ``choice`` (k,) the class-local item of its
    integral part (every increment that fits whole, in slope order).
    """
    inc = Increments(profits, weights, class_start)
    cum_w, cum_p, slopes, _ = inc.prefix(np.ones(len(class_start) - 1, np.bool_))
    full = int(np.searchsorted(cum_w, capacity, side="right")) - 1
    choice = np.zeros(len(class_start) - 1, np.int64)
    taken = inc.item[:full]
    choice[inc.cls[:full]] = 0  # increments of a class come in order: the last one taken wins
    for k, item in zip(inc.cls[:full], taken):
        choice[k] = item - class_start[k]
    lam = float(slopes[full]) if full < len(inc.item) else 0.0
    bound = float(cum_p[full]) + (capacity - int(cum_w[full])) * lam
    return lam, bound, choice


def divisibility(profits, weights, class_start, lam):
    """``(mu, g, increments)`` of the divisibility bound (:mod:`core.knapsack.mckp_lists`): the integer ``mu``
    next to the LP slope ``lam`` for which the reduced profits ``p - mu w`` of every item share the largest
    divisor ``g``, and the hull increments of those reduced profits; ``(0, 1, None)`` when no ``g`` exceeds 1
    (the bound would be the LP's)."""
    best = (0, 1, None)
    for mu in sorted({int(np.floor(lam)), int(np.ceil(lam))}):
        if mu < 0 or not len(profits):
            continue
        reduced = profits - mu * weights
        g = int(np.gcd.reduce(np.abs(reduced)))
        if g > best[1]:
            best = (mu, g, reduced)
    mu, g, reduced = best
    return mu, g, None if reduced is None else Increments(reduced, weights, class_start, rising_only=True)



def improve(profits, weights, class_start, choice, capacity, rounds: int = 16):
    """``choice`` with the residual capacity spent: the single upgrade (one class to a heavier item) that
    gains most and fits, repeated while one gains (at most ``rounds`` times); a new array."""
    choice = choice.copy()
    cls = np.repeat(np.arange(len(class_start) - 1), np.diff(class_start))
    for _ in range(rounds):
        current = class_start[:-1] + choice
        residual = capacity - int(weights[current].sum())
        gain = np.where(weights - weights[current][cls] <= residual, profits - profits[current][cls], 0)
        j = int(np.argmax(gain)) if len(gain) else 0
        if not len(gain) or gain[j] <= 0:
            break
        choice[cls[j]] = j - class_start[cls[j]]
    return choice
