"""The pieces of one step of the KP1 state lists (:func:`core.knapsack.states.expand_core`).

The merge of the list with its shifted copy, the bound tests (Dantzig's, the
completion bound's table), pairing with the items outside the core, and a
beam's narrowing.  Lists are sorted by weight with strictly rising profits.
Notes: docs/notes/knapsack.md, "KP1 without a capacity-long row".
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["completion_list", "grow", "has_chance", "merge_pairs", "merge_prune", "narrow", "pair"]

#: Relative slack of the float bound test: a state is only dropped when its bound
#: is clearly below the incumbent + 1, so rounding never loses an optimum.
_SLACK = 1e-9


@njit(cache=True, nogil=True)
def grow(arr, need):
    """``arr`` or a copy at least twice as long when it is shorter than ``need``."""
    if len(arr) >= need:
        return arr
    out = np.empty(max(need, 2 * len(arr)), arr.dtype)
    out[: len(arr)] = arr
    return out


@njit(cache=True, nogil=True, inline="always")
def _keeps(weight, profit, capacity, best, efficiency):
    """Whether the state's upper bound (Dantzig's at ``efficiency``, the next item's on its side of the
    capacity: one to add below it, one to remove above it) can still beat ``best``."""
    room = (capacity - weight) * efficiency
    gain = np.float64(profit - best - 1)
    return gain + room >= -_SLACK * (abs(room) + 1.0)


@njit(cache=True, nogil=True)
def _prune(ow, op, ov, start, end, kept, capacity, best, efficiency, cells, values, grid, at, removable_w,
           removable_p):
    """The states ``start..end-1`` of the merged list (all on one side of the capacity, so one efficiency:
    negative where that side has no item left, and then none is kept) whose bounds can beat ``best``, moved
    down to ``kept`` on: ``(kept, at)``, ``at`` the completion table's pointer (see :func:`merge_prune`).
    A loop of its own per side and per bound, with the test inlined (it was a call per state) and unsigned
    indices (numba then emits no negative-index wrap-around): a third of the time."""
    if efficiency < 0:
        return kept, at
    one = np.uint64(1)
    q, stop, out = np.uint64(start), np.uint64(end), np.uint64(kept)
    if len(values) == 0:
        while q < stop:
            w, p = ow[q], op[q]
            if _keeps(w, p, capacity, best, efficiency):
                ow[out], op[out], ov[out] = w, p, ov[q]
                out += one
            q += one
        return np.int64(out), at
    shift, cell = np.int64(0), np.uint64(at)  # grid is a power of two: room // grid is a shift
    while (np.int64(1) << shift) < grid:
        shift += 1
    while q < stop:
        w, p = ow[q], op[q]
        q += one
        if not _keeps(w, p, capacity, best, efficiency):
            continue
        room = capacity - w + removable_w
        if room < 0:
            continue
        while cells[cell] > (room >> shift):
            cell -= one
        if p - removable_p + values[cell] <= best:
            continue
        ow[out], op[out], ov[out] = w, p, ov[q - one]
        out += one
    return np.int64(out), np.int64(cell)


@njit(cache=True, nogil=True)
def has_chance(dp, dw, residual, break_profit, break_efficiency, best):
    """Whether the break solution with one item added (``dw, dp > 0``) or removed (``< 0``) can still beat
    ``best`` by Dantzig's bound at the break item's efficiency (the reductions' test, against ``best``)."""
    room = (residual - dw) * break_efficiency
    return np.float64(break_profit + dp - best - 1) + room >= -_SLACK * (abs(room) + 1.0)


@njit(cache=True, nogil=True)
def pair(ow, op, m, capacity, profits, weights, addable, a, removable, r, best):
    """Best state plus one item outside the core (combo's pairing): ``(value, state, item)``.

    An item not yet added joins the heaviest state that leaves it room; an item
    not yet removed leaves the heaviest state it brings within the capacity.  The
    list is sorted by weight with increasing profits, so the heaviest is the best.
    """
    best_k, best_item = -1, -1
    for q in range(a, len(addable)):
        item = addable[q]
        k = np.searchsorted(ow[:m], capacity - weights[item], side="right") - 1
        if k >= 0 and op[k] + profits[item] > best:
            best, best_k, best_item = op[k] + profits[item], k, item
    for q in range(r, len(removable)):
        item = removable[q]
        k = np.searchsorted(ow[:m], capacity + weights[item], side="right") - 1
        if k >= 0 and op[k] - profits[item] > best:
            best, best_k, best_item = op[k] - profits[item], k, item
    return best, best_k, best_item


@njit(cache=True, nogil=True, inline="always")
def _take(ow, op, m, w, p, last_w, last_p):
    """Append ``(w, p)`` to the undominated output ``o*[:m]`` (``last_*`` its last state): ``(m, last_w, last_p)``;
    at an equal weight the more profitable state replaces the last one."""
    if p > last_p:
        if w > last_w:
            m += np.uint64(1)
        ow[m - np.uint64(1)], op[m - np.uint64(1)] = w, p
        return m, w, p
    return m, last_w, last_p


@njit(cache=True, nogil=True)
def merge_pairs(cw, cp, n, dw, dp, ow, op, stop, top):
    """The undominated union of a list of ``(weight, profit)`` pairs (weights rising, profits strictly
    rising) and its copy shifted by ``(dw, dp)`` (``dw >= 0``), shifted pairs heavier than ``top`` left out,
    into ``ow``, ``op``: its length, or -1 when ``stop[0]`` was raised (polled every 65536 pairs).  The
    completion table's DP step; as :func:`merge_prune`'s merge, with unsigned indices."""
    one = np.uint64(1)
    end = np.uint64(n)
    shifted = end
    while shifted > 0 and cw[shifted - one] + dw > top:
        shifted -= one
    i = np.uint64(0)
    j = np.uint64(0)
    m = np.uint64(0)
    last_w, last_p = np.int64(-(2**62)), np.int64(-(2**62))
    while i < end and j < shifted:
        if ((i + j) & np.uint64(65535)) == 0 and stop[0]:
            return -1
        wi, wj = cw[i], cw[j] + dw
        if wi <= wj:
            m, last_w, last_p = _take(ow, op, m, wi, cp[i], last_w, last_p)
            i += one
        else:
            m, last_w, last_p = _take(ow, op, m, wj, cp[j] + dp, last_w, last_p)
            j += one
    while i < end:
        m, last_w, last_p = _take(ow, op, m, cw[i], cp[i], last_w, last_p)
        i += one
    while j < shifted:
        m, last_w, last_p = _take(ow, op, m, cw[j] + dw, cp[j] + dp, last_w, last_p)
        j += one
    return np.int64(m)


@njit(cache=True, nogil=True)
def completion_list(profits, weights, outside_a, outside_r, capacity, limit, stop):
    """The completion bound's table: ``(cells, values, grid, effort)``, at most ``limit`` entries.

    A 0-1 knapsack DP over the items of ``outside_a`` and ``outside_r`` kept sparse:
    the undominated ``(cell, value)`` pairs, cells ascending and values rising,
    where a set of items has cell ``sum(w // grid)`` (``grid`` a power of two,
    doubled, and every cell halved, whenever the table passes ``limit``).
    Flooring only makes sets lighter: ``cell * grid <= sum(w)``.  So the last
    value whose cell is ``<= x // grid`` bounds the profit of any of those items
    within weight ``x``, and it is exact while ``grid`` is 1.  Sparse, the grid
    stays small where the sums crowd into few clusters (large items of a few
    sizes), where a grid over the whole capacity would be coarse.  ``effort``:
    the entries its merges read, in the units of the state lists' work.  A
    nonzero ``stop[0]`` (polled per item and within the merges) gives an empty
    table: no bound.
    """
    cw, cp = np.zeros(2 * limit + 2, np.int64), np.zeros(2 * limit + 2, np.int64)
    ow, op = np.empty(2 * limit + 2, np.int64), np.empty(2 * limit + 2, np.int64)
    n, grid, effort = 1, np.int64(1), 0
    for items in (outside_a, outside_r):
        for item in items:
            dw, top = weights[item] // grid, capacity // grid
            m = -1 if stop[0] else merge_pairs(cw, cp, n, dw, profits[item], ow, op, stop, top)
            if m < 0:
                return cw[:0].copy(), cp[:0].copy(), grid, effort
            effort += n + np.searchsorted(cw[:n], top - dw, "right")
            cw, cp, ow, op = ow, op, cw, cp
            n = m
            while n > limit:
                grid *= 2
                m = 0
                for k in range(n):
                    if m > 0 and cw[m - 1] == cw[k] // 2:
                        cp[m - 1] = cp[k]
                    else:
                        cw[m], cp[m] = cw[k] // 2, cp[k]
                        m += 1
                n = m
    return cw[:n].copy(), cp[:n].copy(), grid, effort


@njit(cache=True, nogil=True)
def merge_prune(sw, sp, sv, n, dw, dp, bit, ow, op, ov, stop, capacity, best, eff_add, eff_remove,
                 cells, values, grid, removable_w, removable_p):
    """One core step: the merge, the best state within the capacity, and the bounds, in two passes.

    The merge first (combo's ``multiply``): the list and its copy shifted by
    ``(dw, dp)`` by weight, a state kept when its profit beats the last kept
    one's, replacing it at an equal weight.  The heaviest state within the
    capacity is then the best (profits rise with weight).  A second pass keeps
    a state when its bound can beat that best: Dantzig's bound always; with a
    completion table (:func:`completion_list`) also ``profit - removable_p +
    V(capacity - weight + removable_w)``: a completion adds items and removes
    some of those not yet removable (``removable_w``, ``removable_p`` their
    sums); counting the kept ones instead, it is a set of items outside the
    core within that weight.  The states come by rising weight, so the rooms
    fall and one pointer walks the table down (``cells[0]`` is 0: it stops
    there at the latest).  A state dropped by its bound still dominated the
    heavier ones with less profit (their bounds are no higher).  Unsigned
    indices and a sentinel weight past the list (``sw[n]`` is written) leave
    the merge one comparison per state: on a list of 127,000 states the step
    takes about half the time of one pass that merged and tested together.

    Returns ``(kept, merged, best, best_k)``: the states kept (-1 when ``stop[0]``
    was raised, polled every 65536 states), the undominated states of the union,
    the best value, and where a copy of the best state lies in the output
    (``kept``, just past the kept states; -1 when nothing beat ``best``).  The
    input needs room for ``n + 1`` states, the output for ``2 n + 1``.
    """
    top = sw[n - 1]
    sw[n] = max(top, top + dw) + abs(dw) + 1  # heavier than every state of both, shifted by dw or not
    one = np.uint64(1)
    end = np.uint64(n)
    i = np.uint64(0)
    j = np.uint64(0)
    k = np.uint64(0)  # the last state written is at k - 1
    last_w, last_p = np.int64(-(2**62)), np.int64(-(2**62))
    while i < end or j < end:
        if ((i + j) & np.uint64(65535)) == 0 and stop[0]:
            return -1, 0, best, -1
        wi, wj = sw[i], sw[j] + dw
        if wi <= wj:
            p = sp[i]
            if p > last_p:
                if wi > last_w:
                    k += one
                ow[k - one], op[k - one], ov[k - one] = wi, p, sv[i]
                last_w, last_p = wi, p
            i += one
        else:
            p = sp[j] + dp
            if p > last_p:
                if wj > last_w:
                    k += one
                ow[k - one], op[k - one], ov[k - one] = wj, p, sv[j] | bit
                last_w, last_p = wj, p
            j += one
    merged = np.int64(k)
    lo, hi = np.uint64(0), k  # the heaviest state within the capacity
    while lo < hi:
        mid = (lo + hi) >> one
        if ow[mid] <= capacity:
            lo = mid + one
        else:
            hi = mid
    found = lo > 0 and op[lo - one] > best
    bw, bp, bv = np.int64(0), np.int64(0), np.uint64(0)
    if found:
        bw, bp, bv = ow[lo - one], op[lo - one], ov[lo - one]
        best = bp
    kept, at = _prune(ow, op, ov, 0, np.int64(lo), 0, capacity, best, eff_add, cells, values, grid,
                      len(cells) - 1, removable_w, removable_p)
    kept, at = _prune(ow, op, ov, np.int64(lo), merged, kept, capacity, best, eff_remove, cells, values, grid,
                      at, removable_w, removable_p)
    if not found:
        return np.int64(kept), merged, best, -1
    ow[kept], op[kept], ov[kept] = bw, bp, bv
    return np.int64(kept), merged, best, np.int64(kept)


@njit(cache=True, nogil=True)
def narrow(ow, op, ov, kept, width, capacity, eff_add, eff_remove, keys):
    """Keep the ``width`` states of ``*[:kept]`` with the highest Dantzig bounds, in their order; the new length.

    Ties at the threshold keep the lightest.  Leaves the list a subset of
    itself, so still sorted by weight with rising profits.
    """
    for q in range(kept):
        over = ow[q] > capacity
        eff = eff_remove if over else eff_add
        if eff < 0:
            keys[q] = np.float64(op[q]) if not over else -np.inf
        else:
            keys[q] = op[q] + (capacity - ow[q]) * eff
    threshold = np.partition(keys[:kept], kept - width)[kept - width]
    above = 0
    for q in range(kept):
        if keys[q] > threshold:
            above += 1
    ties = width - above
    m = 0
    for q in range(kept):
        if keys[q] > threshold or (keys[q] == threshold and ties > 0):
            if keys[q] == threshold:
                ties -= 1
            ow[m], op[m], ov[m] = ow[q], op[q], ov[q]
            m += 1
    return m
