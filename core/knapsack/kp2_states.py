"""KP2 without a capacity table: undominated ``(w1, w2, p)`` state lists bounded by a surrogate LP.

The two constraints are merged into one, ``s_j = t w1_j / c1 + (1 - t) w2_j / c2``
within ``1``, with ``t`` chosen by a golden-section search for the least
Dantzig bound of that surrogate KP1 (any ``t`` gives a valid bound).  Items
then enter the state lists in surrogate-efficiency order; a state is dropped
when another is no heavier in both weights and at least as profitable, or
when its profit plus the surrogate Dantzig bound of the items still to come
within its residual capacities cannot beat the incumbent (a greedy solution,
improved by every state).  Nothing depends on the capacities' size.
Notes: docs/notes/knapsack.md, "KP2 by bounds and dominance".
"""

from __future__ import annotations

import numpy as np
from numba import njit

from core.knapsack import limits
from core.knapsack.progress import report

__all__ = ["DONE", "OUT_OF_MEMORY", "OUT_OF_WORK", "STATE_BYTES", "solve_kp2_by_states", "surrogate_multiplier"]

DONE, OUT_OF_WORK, OUT_OF_MEMORY = 0, 1, 2
#: Bytes per state kept for backtracking (parent index and decision).
STATE_BYTES = 9
#: Seconds per state of one step (sorting and the dominance sweep), for the time limit's estimate: measured
#: 0.7-2.2 us per state at 10^5-4x10^6 states on the 2-core development VM, rounded up.
STEP_S_PER_STATE = 3e-6
_SLACK = 1e-9


def _dantzig(profits, sizes, room):
    """Dantzig's bound of a KP1 with float ``sizes`` within ``room`` (items in any order)."""
    order = np.argsort(-profits / np.maximum(sizes, 1e-300), kind="stable")
    cum_s = np.cumsum(sizes[order])
    k = int(np.searchsorted(cum_s, room, side="right"))
    whole = float(profits[order][:k].sum())
    if k == len(order):
        return whole
    used = cum_s[k - 1] if k else 0.0
    return whole + (room - used) * profits[order][k] / sizes[order][k]


def _sizes(w1, w2, cap1, cap2, t):
    """Surrogate sizes: the capacity 1 (a zero capacity counts as 1: its items all weigh 0 there)."""
    return t * w1 / max(cap1, 1) + (1.0 - t) * w2 / max(cap2, 1)


def surrogate_multiplier(profits, w1, w2, cap1, cap2, iterations: int = 40) -> float:
    """``t`` in (0, 1) with (nearly) the least surrogate Dantzig bound (golden-section search)."""
    lo, hi = 1e-6, 1.0 - 1e-6
    ratio = (np.sqrt(5.0) - 1.0) / 2.0
    for _ in range(iterations):
        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        if _dantzig(profits, _sizes(w1, w2, cap1, cap2, a), 1.0) <= _dantzig(
                profits, _sizes(w1, w2, cap1, cap2, b), 1.0):
            hi = b
        else:
            lo = a
    return (lo + hi) / 2.0


@njit(cache=True, nogil=True)
def _undominated(w1, w2, p, rank2, n_ranks):
    """Mask of states no other state dominates; states sorted by (w1, w2, -p), ``rank2`` dense ranks of w2.

    A Fenwick tree over the w2 ranks holds the best profit seen among lighter-or-equal w1.
    """
    tree = np.full(n_ranks + 1, np.int64(-(2**62)))
    keep = np.zeros(len(p), np.bool_)
    for k in range(len(p)):
        best = np.int64(-(2**62))
        i = rank2[k] + 1
        while i > 0:
            best = max(best, tree[i])
            i -= i & -i
        if p[k] > best:
            keep[k] = True
            i = rank2[k] + 1
            while i <= n_ranks:
                tree[i] = max(tree[i], p[k])
                i += i & -i
    return keep


@njit(cache=True, nogil=True)
def _greedy(order_p, order_w1, order_w2, room1, room2, start):
    """Profit and mask (over all positions) of the greedy fill of items ``start..`` in surrogate order."""
    taken = np.zeros(len(order_p), np.bool_)
    gain = 0
    for j in range(start, len(order_p)):
        if order_w1[j] <= room1 and order_w2[j] <= room2:
            room1 -= order_w1[j]
            room2 -= order_w2[j]
            gain += order_p[j]
            taken[j] = True
    return gain, taken


class _Lists:
    """Items in surrogate order with the prefix sums of the suffix bound."""

    def __init__(self, p, w1, w2, cap1, cap2):
        self.t = surrogate_multiplier(p.astype(np.float64), w1, w2, cap1, cap2)
        sizes = _sizes(w1, w2, cap1, cap2, self.t)
        self.order = np.argsort(-p / np.maximum(sizes, 1e-300), kind="stable")
        self.p, self.w1, self.w2 = p[self.order], w1[self.order], w2[self.order]
        self.s = sizes[self.order]
        self.cum_s = np.concatenate([[0.0], np.cumsum(self.s)])
        self.cum_p = np.concatenate([[0], np.cumsum(self.p)])
        self.cap1, self.cap2 = cap1, cap2

    def bounds(self, sw1, sw2, sp, start):
        """Per state: its profit plus the surrogate Dantzig bound of the items ``start..`` in its room."""
        room = _sizes(self.cap1 - sw1, self.cap2 - sw2, self.cap1, self.cap2, self.t)
        k = np.searchsorted(self.cum_s, self.cum_s[start] + room, side="right") - 1
        k = np.maximum(k, start)
        whole = (self.cum_p[k] - self.cum_p[start]).astype(np.float64)
        rest = room - (self.cum_s[k] - self.cum_s[start])
        nxt = np.minimum(k, len(self.p) - 1)
        frac = np.where(k < len(self.p), rest * self.p[nxt] / np.maximum(self.s[nxt], 1e-300), 0.0)
        return sp + whole + np.maximum(frac, 0.0)


def solve_kp2_by_states(p, w1, w2, cap1, cap2, max_work, max_states):
    """Exact KP2 by state lists: ``(status, mask)`` with the mask over the given items.

    ``p, w1, w2`` (n,) int64 (profits > 0, every item fits alone), capacities > 0;
    the mask is the best solution found (optimal when status is DONE).
    """
    lists = _Lists(p, w1, w2, cap1, cap2)
    best, taken = _greedy(lists.p, lists.w1, lists.w2, cap1, cap2, 0)
    best_mask = _mask(lists, [], (-1, 0, taken))
    sw1, sw2, sp = np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64)
    steps, work, stored = [], 0, 0
    what = f"KP2 by state lists ({len(p):,} items)"
    for i in range(len(lists.p)):
        limits.check_stage(STEP_S_PER_STATE * len(sp), what, f"{i:,} items decided, {len(sp):,} states")
        work += 2 * len(sp)
        if work > max_work or stored + 8 * len(sp) > max_states:
            return (OUT_OF_WORK if work > max_work else OUT_OF_MEMORY), best_mask
        sw1, sw2, sp, parent, took = _step(sw1, sw2, sp, lists, i)
        steps.append((parent, took))
        k = int(np.argmax(sp))
        gain, extra = _greedy(lists.p, lists.w1, lists.w2, cap1 - sw1[k], cap2 - sw2[k], i + 1)
        if int(sp[k]) + int(gain) > best:
            best, best_mask = int(sp[k]) + int(gain), _mask(lists, steps, (i, k, extra))
        bounds = lists.bounds(sw1, sw2, sp, i + 1)
        alive = np.flatnonzero(bounds >= best + 1 - _SLACK * (best + 1.0))
        report("states", float(bounds[alive].max(initial=best)) - best, best)
        sw1, sw2, sp = sw1[alive], sw2[alive], sp[alive]
        steps[-1] = (parent[alive], took[alive])
        stored += len(alive)
        if not len(alive):
            break
    return DONE, best_mask


def _step(sw1, sw2, sp, lists, i):
    """States after deciding item ``i``: undominated, within both capacities, sorted by (w1, w2)."""
    a1, a2, ap = sw1 + lists.w1[i], sw2 + lists.w2[i], sp + lists.p[i]
    fits = np.flatnonzero((a1 <= lists.cap1) & (a2 <= lists.cap2))
    w1 = np.concatenate([sw1, a1[fits]])
    w2 = np.concatenate([sw2, a2[fits]])
    p = np.concatenate([sp, ap[fits]])
    parent = np.concatenate([np.arange(len(sp)), fits])
    took = np.concatenate([np.zeros(len(sp), np.bool_), np.ones(len(fits), np.bool_)])
    order = np.lexsort((-p, w2, w1))
    ranks, rank2 = np.unique(w2[order], return_inverse=True)
    keep = order[_undominated(w1[order], w2[order], p[order], rank2.astype(np.int64), len(ranks))]
    return w1[keep], w2[keep], p[keep], parent[keep], took[keep]


def _mask(lists, steps, best_state):
    """Items (mask over the caller's order) of the incumbent: its state's decisions, then its greedy fill."""
    step, k, extra = best_state
    chosen = extra.copy()
    for i in range(step, -1, -1):
        parent, took = steps[i]
        chosen[i] = took[k]
        k = int(parent[k])
    mask = np.zeros(len(lists.p), np.bool_)
    mask[lists.order[chosen]] = True
    return mask
