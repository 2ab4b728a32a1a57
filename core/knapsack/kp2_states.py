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
#: What a step over a list of n states holds at its peak, in STATE_BYTES units per state: the lists kept
#: (three int64 columns), the doubled list, its sort order, uniques, bounds and links (about 24 x 9 bytes
#: per state measured; 8 counted before, and a 200 MB budget peaked at 660 MB).
STEP_STATES = 24
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
    the mask is the best solution found (optimal when status is DONE).  A beam
    of the :data:`BEAM` best states by bound first finds a good incumbent;
    items whose reversal of the surrogate LP's choice cannot beat it are fixed
    (:func:`_fixed_items`), and the exact lists run over the items left.
    """
    lists = _Lists(p, w1, w2, cap1, cap2)
    best, taken = _greedy(lists.p, lists.w1, lists.w2, cap1, cap2, 0)
    status, best, best_mask = _search(lists, best, _mask(lists, [], (-1, 0, taken)), min(max_work, EASY_WORK),
                                      max_states, None)
    if status == DONE or max_work <= EASY_WORK:
        return status, best_mask
    best, best_mask = _search(lists, best, best_mask, 2**62, max_states, BEAM)[1:]
    fixed_in, free = _fixed_items(lists, best)
    room1, room2 = cap1 - int(lists.w1[fixed_in].sum()), cap2 - int(lists.w2[fixed_in].sum())
    if room1 < 0 or room2 < 0:  # the fixed items do not fit together: nothing beats the incumbent
        return DONE, best_mask
    mask = np.zeros(len(p), np.bool_)
    mask[lists.order[fixed_in]] = True
    gain = int(lists.p[fixed_in].sum())
    free = free[(lists.w1[free] <= room1) & (lists.w2[free] <= room2)]
    if not len(free):
        return DONE, mask if gain > best else best_mask
    sub = _Lists(lists.p[free], lists.w1[free], lists.w2[free], room1, room2)
    status, _, sub_mask = _search(sub, best - gain, None, max_work, max_states, None)
    if sub_mask is None:
        return status, best_mask
    mask[lists.order[free]] = sub_mask
    return status, mask


#: Work (states generated) of the plain lists before the beam and the fixing run: easy instances end first.
EASY_WORK = 200_000
#: States kept per step by the beam that finds the first incumbent.
BEAM = 2000


def _search(lists, best, best_mask, max_work, max_states, beam):
    """``(status, best value, its mask)``: state lists over ``lists``' items from the incumbent ``best``.

    ``best_mask`` None: only solutions better than ``best`` are recorded (the
    mask stays None until one is found).  ``beam``: keep only that many states
    per step, the best by bound (a heuristic: status DONE means nothing then).
    """
    sw1, sw2, sp = np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64)
    steps, work, stored = [], 0, 0
    what = f"KP2 by state lists ({len(lists.p):,} items{', first incumbent' if beam else ''})"
    for i in range(len(lists.p)):
        limits.check_stage(STEP_S_PER_STATE * len(sp), what, f"{i:,} items decided, {len(sp):,} states")
        work += 2 * len(sp)
        if work > max_work or stored + STEP_STATES * len(sp) > max_states:
            return (OUT_OF_WORK if work > max_work else OUT_OF_MEMORY), best, best_mask
        sw1, sw2, sp, parent, took = _step(sw1, sw2, sp, lists, i)
        steps.append((parent, took))
        bounds = lists.bounds(sw1, sw2, sp, i + 1)
        for k in np.argsort(-bounds)[:4] if beam else (int(np.argmax(sp)),):
            gain, extra = _greedy(lists.p, lists.w1, lists.w2, lists.cap1 - sw1[k], lists.cap2 - sw2[k], i + 1)
            if int(sp[k]) + int(gain) > best:
                best, best_mask = int(sp[k]) + int(gain), _mask(lists, steps, (i, k, extra))
        alive = np.flatnonzero(bounds >= best + 1 - _SLACK * (best + 1.0))
        if beam and len(alive) > beam:
            alive = alive[np.argsort(-bounds[alive], kind="stable")[:beam]]
        report("states", float(bounds[alive].max(initial=best)) - best, best)
        sw1, sw2, sp = sw1[alive], sw2[alive], sp[alive]
        steps[-1] = (parent[alive], took[alive])
        stored += len(alive)
        if not len(alive):
            break
    return DONE, best, best_mask


@njit(cache=True, nogil=True)
def _dantzig_without(p, s, cum_s, cum_p, j, room):
    """Dantzig's bound of items ``!= j`` (sorted by efficiency, prefix sums ``cum_*``) within ``room``."""
    if room < 0:
        return -1.0
    lo, hi = 0, len(p)  # the most items i of the order whose sizes (item j left out) fit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if cum_s[mid] - (s[j] if mid > j else 0.0) <= room:
            lo = mid
        else:
            hi = mid - 1
    whole = cum_p[lo] - (p[j] if lo > j else 0)
    used = cum_s[lo] - (s[j] if lo > j else 0.0)
    nxt = lo + 1 if lo == j else lo
    if nxt >= len(p):
        return np.float64(whole)
    return whole + (room - used) * p[nxt] / max(s[nxt], 1e-300)


@njit(cache=True, nogil=True)
def _reversal_bounds(p, s, cum_s, cum_p, in_lp):
    """Per item: the surrogate bound with the item's LP choice reversed (out if in the LP, in if not)."""
    out = np.empty(len(p))
    for j in range(len(p)):
        if in_lp[j]:
            out[j] = _dantzig_without(p, s, cum_s, cum_p, j, 1.0)
        else:
            out[j] = p[j] + _dantzig_without(p, s, cum_s, cum_p, j, 1.0 - s[j]) if s[j] <= 1.0 else -1.0
    return out


def _fixed_items(lists, best):
    """Positions (in ``lists``' order) fixed in, and those left free: reversing a fixed one cannot beat ``best``."""
    in_lp = lists.cum_s[1:] <= 1.0
    bounds = _reversal_bounds(lists.p, lists.s, lists.cum_s, lists.cum_p, in_lp)
    fixed = bounds < best + 1 - _SLACK * (best + 1.0)
    return np.flatnonzero(fixed & in_lp), np.flatnonzero(~fixed)


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
