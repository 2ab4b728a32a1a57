"""Few-swap search of the MCKP (:mod:`core.knapsack.mckp_core`): solutions that leave the LP's integral
choice in at most six classes.

A solution worth ``V`` loses, against the LP bound ``U``, the reduced costs
``c = lam dw - dp >= 0`` of its swaps (each class moved from the LP's
integral item to another: weight ``dw``, profit ``dp``) plus ``lam`` times the
room it leaves, so every swap it makes costs at most ``U - V``.  Near the
bound that admits few swaps, and a solution of few swaps is a sum of two sets
of at most three: the sets of the admitted swaps are listed (cheapest first,
in distinct classes), sorted by weight, and each set is joined with those of
the weights that fill the room it leaves (meet in the middle over swaps
instead of classes).  Each value from the bound's floor down is tried in
turn, while the sets stay few; at the first value whose sets of three are too
many (1,400 swaps admitted over 1000 classes), those of at most two are
joined instead (solutions of at most four swaps), and that value is the last.

On near-degenerate classes (Pisinger's weakly correlated ``p = w + U[-10,
10]`` at ``R = 10^9``) the optimum is an exact fill of the capacity among
swaps of reduced cost near 0, which the class lists (bounded by the LP, which
fills any room fractionally) reach only after exponentially many states; a
few swaps reach it at once, and the incumbent fixes every class whose swaps
all cost more than ``U`` less the incumbent.

Notes: docs/notes/knapsack.md, "MCKP without a capacity-long row".
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["SWAP_LEVELS", "SWAP_SETS", "few_swaps"]

#: Values tried below the LP bound's floor (each a separate search, cheapest first).
SWAP_LEVELS = 8
#: Most sets of up to three swaps listed over all values tried (``SWAP_SETS`` x 28 bytes; sorting and joining
#: them takes about 0.2 s on the shared 2-core VM).
SWAP_SETS = 1 << 21
#: Most partners scanned per set in a join (the weights that fill the room within the value's slack).
_SCAN = 64
#: Relative slack of the float test that ends a join's scan (a partner is still checked in integers).
_SLACK = 1e-9


def few_swaps(profits, weights, class_start, capacity, lam, bound, top, choice, incumbent, stop, max_sets=SWAP_SETS):
    """Best value found above ``incumbent`` by at most six (or four) swaps from ``choice`` (the LP's integral choice,
    every swap's reduced cost ``lam dw - dp`` at least 0): ``(value, choice)`` or None.

    Tries ``V = top`` (no solution is worth more: the LP ``bound``'s floor), then one less, down to
    ``incumbent + 1`` (at most :data:`SWAP_LEVELS` values), and returns the first solution worth ``V``
    found; stops when the sets of the values tried pass ``max_sets`` (28 bytes each) or ``stop[0]`` is
    raised.  A heuristic: finding none proves nothing.
    """
    cls = np.repeat(np.arange(len(class_start) - 1), np.diff(class_start))
    current = class_start[:-1] + choice
    dw = weights - weights[current][cls]
    dp = profits - profits[current][cls]
    cost = lam * dw - dp
    moved = np.flatnonzero(dw != 0)
    order = moved[np.argsort(cost[moved], kind="stable")]
    dw, dp, cost, cls = dw[order], dp[order], cost[order], cls[order]
    room = capacity - int(weights[current].sum())
    base = int(profits[current].sum())
    left = max(0, min(max_sets, SWAP_SETS))
    sets_w, sets_p = np.empty(left, np.int64), np.empty(left, np.int64)
    sets_ids = np.empty((left, 3), np.int32)
    last = False  # whether sets of two were listed: then the value tried is the last
    for value in range(top, max(incumbent, top - SWAP_LEVELS), -1):
        slack = bound - value
        admitted = int(np.searchsorted(cost, slack * (1 + _SLACK) + _SLACK, side="right"))
        listing = (cls[:admitted], dw[:admitted], dp[:admitted], cost[:admitted], slack, sets_w[:left],
                   sets_p[:left], sets_ids[:left], stop)
        count = _sets(*listing, 3)
        if count < 0 and not stop[0]:  # too many sets of three: those of two, and this value is the last
            count, last = _sets(*listing, 2), True  # (lower values admit more swaps still)
        if count < 0:
            return None  # past the sets left (or stopped): lower values admit more swaps still
        left -= count
        by_weight = np.argsort(sets_w[:count])
        pair = _join(sets_w[by_weight], sets_p[by_weight], by_weight, sets_ids, cls[:admitted], room,
                     value - base, lam, stop)
        if pair[0] >= 0:
            found = choice.copy()
            for s in pair:
                for m in sets_ids[s]:
                    if m >= 0:
                        k = cls[m]
                        found[k] = order[m] - class_start[k]
            return int(profits[class_start[:-1] + found].sum()), found
        if stop[0] or last:
            return None
    return None


@njit(cache=True, nogil=True)
def _sets(cls, dw, dp, cost, slack, sw, sp, ids, stop, depth):
    """Every set of at most ``depth`` (2 or 3) swaps (sorted by cost) in distinct classes whose costs total at
    most ``slack``, the empty set first: ``(weight, profit, swap ids (-1: none))`` written to ``sw``, ``sp``,
    ``ids``; returns how many, or -1 when they pass the arrays' length or ``stop[0]`` is raised."""
    cap = len(sw)
    if cap == 0:
        return -1
    sw[0], sp[0] = 0, 0
    ids[0, 0], ids[0, 1], ids[0, 2] = -1, -1, -1
    t = 1
    n = len(cost)
    for i in range(n):
        if cost[i] > slack:
            break
        if stop[0] or t >= cap:
            return -1
        sw[t], sp[t] = dw[i], dp[i]
        ids[t, 0], ids[t, 1], ids[t, 2] = i, -1, -1
        t += 1
        for j in range(i + 1, n):
            if cost[i] + cost[j] > slack:
                break
            if cls[j] == cls[i]:
                continue
            if t >= cap:
                return -1
            sw[t], sp[t] = dw[i] + dw[j], dp[i] + dp[j]
            ids[t, 0], ids[t, 1], ids[t, 2] = i, j, -1
            t += 1
            for k in range(j + 1, n if depth > 2 else j + 1):
                if cost[i] + cost[j] + cost[k] > slack:
                    break
                if cls[k] == cls[i] or cls[k] == cls[j]:
                    continue
                if t >= cap:
                    return -1
                sw[t], sp[t] = dw[i] + dw[j] + dw[k], dp[i] + dp[j] + dp[k]
                ids[t, 0], ids[t, 1], ids[t, 2] = i, j, k
                t += 1
    return t


@njit(cache=True, nogil=True)
def _join(sw, sp, order, ids, cls, room, need, lam, stop):
    """Two sets in distinct classes whose weights total at most ``room`` and profits at least ``need``:
    their indices in ``ids`` (``(-1, -1)`` when none is found).  ``sw``, ``sp``: the sets' weights and
    profits sorted by weight, ``order`` their indices in ``ids``.

    Every swap's profit is at most ``lam`` times its weight change, so for set ``a`` only the partners
    from the heaviest that fits down to the lightest with ``lam (sw[a] + sw[b]) >= need`` can qualify
    (at most :data:`_SCAN` of them are checked).
    """
    n = len(sw)
    heaviest = n - 1  # the heaviest partner that fits: only falls as ``a`` grows heavier
    for a in range(n):
        if (a & 65535) == 0 and stop[0]:
            break
        while heaviest >= 0 and sw[heaviest] > room - sw[a]:
            heaviest -= 1
        if heaviest < 0:
            break
        b, seen = heaviest, 0
        while b >= 0 and seen < _SCAN:
            total = sw[a] + sw[b]
            if lam * total < need - _SLACK * (abs(need) + 1.0) - 1.0:
                break
            if sp[a] + sp[b] >= need and _disjoint(ids, cls, order[a], order[b]):
                return order[a], order[b]
            b -= 1
            seen += 1
    return -1, -1


@njit(cache=True, nogil=True)
def _disjoint(ids, cls, a, b):
    """Whether sets ``a`` and ``b`` move distinct classes."""
    for x in range(3):
        if ids[a, x] < 0:
            continue
        for y in range(3):
            if ids[b, y] >= 0 and cls[ids[a, x]] == cls[ids[b, y]]:
                return False
    return True
