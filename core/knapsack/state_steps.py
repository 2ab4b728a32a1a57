"""The pieces of one step of the KP1 state lists (:func:`core.knapsack.states.expand_core`).

The merge of the list with its shifted copy, the bound tests (Dantzig's, the
completion bound's table), pairing with the items outside the core, and a
beam's narrowing.  Lists are sorted by weight with strictly rising profits.
Notes: docs/notes/knapsack.md, "KP1 without a capacity-long row".
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["completion_list", "grow", "has_chance", "merge_pairs", "merge_prune", "narrow", "pair", "room_for"]

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


@njit(cache=True, nogil=True)
def room_for(arr, need):
    """``arr``, or a new array at least twice as long (its contents not kept) when it is shorter than ``need``:
    for a buffer that is written before it is read, such as a merge's output (copying the old contents as
    :func:`grow` does took a quick run of almost strongly correlated items, whose lists reach 2,000 states
    in 14 steps, about 7 % of its time)."""
    if len(arr) >= need:
        return arr
    return np.empty(max(need, 2 * len(arr)), arr.dtype)


@njit(cache=True, nogil=True, inline="always")
def _keeps(weight, profit, capacity, best, eff_add, eff_remove):
    """Whether the state's upper bound (Dantzig's, at the efficiency of the next item on its side of the
    capacity: one to add below it, one to remove above it) can still beat ``best``; an efficiency < 0:
    that side has no item left, and no state on it can."""
    efficiency = eff_add if weight <= capacity else eff_remove
    room = (capacity - weight) * efficiency
    return efficiency >= 0 and np.float64(profit - best - 1) + room >= -_SLACK * (abs(room) + 1.0)


@njit(cache=True, nogil=True)
def _complete(ow, op, ov, kept, capacity, best, cells, values, grid, removable_w, removable_p):
    """The states of ``*[:kept]`` whose completion bound (:func:`merge_prune`) can beat ``best``, moved to
    the front: their number.  Unsigned indices (numba then emits no negative-index wrap-around), and the
    table's cell by a shift (its grid is a power of two)."""
    one = np.uint64(1)
    shift, cell = np.int64(0), np.uint64(len(cells) - 1)
    while (np.int64(1) << shift) < grid:
        shift += 1
    q, out = np.uint64(0), np.uint64(0)
    while q < np.uint64(kept):
        w, p = ow[q], op[q]
        q += one
        room = capacity - w + removable_w
        if room < 0:
            continue
        while cells[cell] > (room >> shift):
            cell -= one
        if p - removable_p + values[cell] <= best:
            continue
        ow[out], op[out], ov[out] = w, p, ov[q - one]
        out += one
    return np.int64(out)


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
    states = ow[:m]  # (one view: a slice per item cost a reference count's increment and decrement each)
    for q in range(a, len(addable)):
        item = addable[q]
        k = np.searchsorted(states, capacity - weights[item], side="right") - 1
        if k >= 0 and op[k] + profits[item] > best:
            best, best_k, best_item = op[k] + profits[item], k, item
    for q in range(r, len(removable)):
        item = removable[q]
        k = np.searchsorted(states, capacity + weights[item], side="right") - 1
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
def merge_prune(source, out, n, dw, dp, bit, stop, capacity, best, eff_add, eff_remove, cells, values, grid,
                removable_w, removable_p):
    """One core step: the merge, the best state within the capacity, and the bounds.

    The best state after the step is known before it: the heavier of the
    list's states within the capacity, shifted by ``(dw, dp)`` or not (profits
    rise with weight), two binary searches.  Then one pass merges (combo's
    ``multiply``): the list and its copy shifted by ``(dw, dp)`` by weight, a
    state undominated when its profit beats the last undominated one's, and
    written when its Dantzig bound can beat that best too (replacing the last
    written one at an equal weight).  With a completion table
    (:func:`completion_list`) a second pass keeps a state when also ``profit -
    removable_p + V(capacity - weight + removable_w)`` can beat it: a
    completion adds items and removes some of those not yet removable
    (``removable_w``, ``removable_p`` their sums); counting the kept ones
    instead, it is a set of items outside the core within that weight.  The
    states come by rising weight, so the rooms fall and one pointer walks the
    table down (``cells[0]`` is 0: it stops there at the latest).  A state
    dropped by its bound still dominates the heavier ones with less profit
    (their bounds are no higher).  Unsigned indices and a sentinel weight
    past the list (``source[0, n]`` is written) leave the merge one comparison per
    state.  Testing the bound in the merge saves the pass that read and
    rewrote every undominated state (step 21 of docs/notes/knapsack.md).

    Each list is one (3, room) int64 array, its rows the weights, profits and decision words (the words'
    bits as int64; ``bit`` one of them): ``source`` the input, ``out`` the output.  Six arrays passed to
    every step, and swapped after it, had cost each step dozens of atomic reference count updates, a sixth
    of an uncorrelated n = 1000 solve; the rows are indexed in place (views of them cost six more, and the
    merge runs as fast on the 2-D arrays at constant rows).

    Returns ``(kept, merged, best, best_k)``: the states kept (-1 when ``stop[0]``
    was raised, polled every 65536 states), the undominated states of the union,
    the best value, and where a copy of the best state lies in the output
    (``kept``, just past the kept states; -1 when nothing beat ``best``).  The
    input needs room for ``n + 1`` states, the output for ``2 n + 1``.
    """
    one = np.uint64(1)
    end = np.uint64(n)
    lo = _count_within(source, n, capacity)  # the heaviest state within the capacity, as it is
    up = _count_within(source, n, capacity - dw)  # ... and shifted
    found = False
    bw, bp, bv = np.int64(0), np.int64(0), np.int64(0)
    if lo > 0 and source[1, lo - 1] > best:
        found, bw, bp, bv = True, source[0, lo - 1], source[1, lo - 1], source[2, lo - 1]
    # shifted: only a higher profit, or the same one lighter (the merge keeps the lighter of equal profits)
    uw, upr = (source[0, up - 1] + dw, source[1, up - 1] + dp) if up > 0 else (np.int64(0), np.int64(0))
    if up > 0 and (upr > (bp if found else best) or (found and upr == bp and uw < bw)):
        found, bw, bp, bv = True, uw, upr, source[2, up - 1] | bit
    if found:
        best = bp
    top = source[0, n - 1]
    source[0, n] = max(top, top + dw) + abs(dw) + 1  # heavier than every state of both, shifted by dw or not
    i = np.uint64(0)
    j = np.uint64(0)
    k = np.uint64(0)  # the last state written is at k - 1
    merged = 0
    last_w, last_u, last_p = np.int64(-(2**62)), np.int64(-(2**62)), np.int64(-(2**62))  # the last written and
    # the last undominated state's weights, the last profit
    while i < end or j < end:
        if stop[0]:
            return -1, 0, best, -1
        limit = min(i + j + np.uint64(65536), end + end)
        while i + j < limit:
            wi, wj = source[0, i], source[0, j] + dw
            if wi <= wj:
                p = source[1, i]
                if p > last_p:
                    last_p = p
                    merged += wi > last_u
                    last_u = wi
                    if _keeps(wi, p, capacity, best, eff_add, eff_remove):
                        if wi > last_w:
                            k += one
                        out[0, k - one], out[1, k - one], out[2, k - one] = wi, p, source[2, i]
                        last_w = wi
                i += one
            else:
                p = source[1, j] + dp
                if p > last_p:
                    last_p = p
                    merged += wj > last_u
                    last_u = wj
                    if _keeps(wj, p, capacity, best, eff_add, eff_remove):
                        if wj > last_w:
                            k += one
                        out[0, k - one], out[1, k - one], out[2, k - one] = wj, p, source[2, j] | bit
                        last_w = wj
                j += one
    kept = np.int64(k)
    if len(values):
        kept = _complete(out[0], out[1], out[2], kept, capacity, best, cells, values, grid, removable_w, removable_p)
    if not found:
        return kept, merged, best, -1
    out[0, kept], out[1, kept], out[2, kept] = bw, bp, bv
    return kept, merged, best, kept


@njit(cache=True, nogil=True, inline="always")
def _count_within(source, n, limit):
    """How many of the first ``n`` weights ``source[0]`` (rising) are at most ``limit`` (a binary search:
    ``np.searchsorted`` over a slice made a view, and two reference count updates, every step)."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) >> 1
        if source[0, mid] <= limit:
            lo = mid + 1
        else:
            hi = mid
    return lo


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
