"""KP1's first pass in one compiled call: the break item found by partitioning instead of a sort of every
item, the greedy solution and its exchanges, Dembo-Hammer's reductions and the quick run of the state lists.

Combo (Martello, Pisinger and Toth 1999) never sorts the items it fixes: it partitions them around the
break item and sorts only what its core needs.  Here likewise only the items that can matter are put in
efficiency order: those the greedy solution may still take after the break item (lighter than the room the
break solution leaves) and those the reductions leave free, which are moved into that order within the
positions they hold on their side of the break item.  Many small instances are settled by the quick run
(uncorrelated and weakly correlated items: the whole solve), and one compiled call then does what took a
dozen calls and their Python glue, each returning arrays (about 1 us an array on the benchmark VM); on
thousands of items numpy's vectorised sort and gathers prepare faster, so :mod:`core.knapsack.kp1` runs
this pass up to ``kp1.FIRST_PASS_ITEMS`` items only.  Where
the quick run does not settle it, the caller goes on from its outcome with that arrangement as its
:class:`core.knapsack.kp1_core.CoreSetup` (whose later stages read the order of the free items only), as
:func:`core.knapsack.kp1_core.solve_by_bounds` would.  Notes: docs/notes/knapsack.md, "KP1 without a
capacity-long row", step 23.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from core.knapsack.grouping import MAX_SPLIT_SHARE, _more_types_than
from core.knapsack.kp1_break import break_item, in_efficiency_order
from core.knapsack.kp1_greedy import (
    _improved,
    _weight_keys,
    by_weight,
    free_summary,
    reduce_items,
)
from core.knapsack.states import DONE, _backtrack, expand_core

__all__ = ["BROKEN", "FIRST_PASS_ITEMS", "FITS", "GROUPED", "HANDOVER", "OVERFLOW", "REDUCED", "REFUSED", "SOLVED",
           "first_pass"]

#: Instances of at most this many items start with this pass (:mod:`core.knapsack.kp1`, and the surrogate's
#: exact solve): it saves the calls around a small solve, where those are most of it (uncorrelated n = 1000:
#: 0.58 of the time), but partitions, gathers and sorts in numba more slowly than numpy's vectorised sort and
#: gathers prepare thousands of items, and where its quick run does not settle the instance it cost the solve
#: 1.04-1.17 at n = 2000-10000 (classes 2-5; the benchmark VM, docs/notes/knapsack.md step 23).
FIRST_PASS_ITEMS = 2000
#: Outcomes of :func:`first_pass`.  FITS: every item fits; SOLVED: by the lists; REDUCED: the reductions fixed
#: every item; GROUPED: identical items that grouping would cut by a quarter (the caller groups them);
#: OVERFLOW: Dantzig's bound would pass 64 bits in the compiled code (the caller's Python integers take it);
#: REFUSED: no capacity DP to hand over to and the lists' first buffers do not fit the budget; HANDOVER: the
#: quick run did not settle it; BROKEN: backtracking lost the best state.
FITS, SOLVED, REDUCED, GROUPED, OVERFLOW, REFUSED, HANDOVER, BROKEN = range(8)
_MAX_INT = np.int64(2**62)


@njit(cache=True, nogil=True)
def first_pass(profits, weights, capacity, budget, auto, quick_states, quick_held, state_bytes, first_bytes,
               state_cost, break_skip, stop, known=0, grouping=True):
    """Usable items, grouping's test, the preparation and the quick run (see the module's docstring).

    ``budget``: bytes; ``auto``: a capacity DP may take over (``kp1.solve_kp1``'s method ``auto``), once the
    lists have generated a ``state_cost``-th of its cells in states; ``quick_states``, ``quick_held``: the
    quick run's limits (kp1.KP1_QUICK_STATES, KP1_QUICK_HELD); ``state_bytes``: bytes a state holds;
    ``first_bytes``: the lists' first buffers; ``break_skip``: skip hopeless items (kp1_core.SKIP_HOPELESS);
    ``stop``: the time limit's flag; ``known``: a value to beat where it exceeds the greedy one (the
    reductions then fix more, and every item stays a candidate of the exchanges: as ``prepare``'s);
    ``grouping``: test for identical items (GROUPED; a caller that would not group them passes False).

    Returns ``(outcome, numbers, selected, handover)``: ``numbers`` ``(value, b, lower, upper, gcd,
    break_profit, residual, n_free, room, status, work, steps, held, max_work)`` as far as computed (``value``
    the chosen items' where FITS, SOLVED or REDUCED, else the quick run's best); ``selected`` the chosen items
    (caller's indices, rising) where FITS, SOLVED or REDUCED; ``handover`` rows ``order, fixed, greedy, run's
    best, profits, weights`` over the usable items where HANDOVER: the caller's
    index of each position (the items before the break item first, the free ones in efficiency order among
    themselves), the reductions, the incumbent, the quick run's best choice and the items' profits and
    weights, over those positions.
    """
    n = len(profits)
    items = np.empty(n, np.int64)
    m, total = 0, np.int64(0)
    for j in range(n):
        if profits[j] > 0 and 0 < weights[j] <= capacity:
            items[m] = j
            m += 1
            total += weights[j]
    items = items[:m]
    none, nothing = np.zeros((0, 0), np.int64), np.zeros(0, np.int64)
    if total <= capacity:
        value, selected = _chosen(profits, weights, items, np.arange(m), np.ones(m, np.bool_))
        return FITS, _numbers(value, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), selected, none
    P, W = profits[items], weights[items]
    if grouping and m >= 4 and not _more_types_than(P, W, int(MAX_SPLIT_SHARE * m)):
        return GROUPED, _numbers(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), nothing, none
    eff = P / W
    order = np.arange(m)
    b, used = break_item(order, eff, np.arange(m), W, capacity)
    p, w, e = P[order], W[order], eff[order]
    residual = capacity - used
    break_profit, gcd = np.int64(0), np.int64(0)
    for j in range(b):
        break_profit += p[j]
    for j in range(m):
        gcd = _gcd(gcd, p[j])
        if gcd == 1:
            break
    value, taken = _greedy(p, w, e, order, b, residual, break_profit)
    lower = max(value, known)
    fixed = reduce_items(p, w, e[b], b, break_profit, residual, (lower // gcd + 1) * gcd)
    keys, chosen = _weight_keys(w, taken, fixed, value >= known)
    inside, outside = by_weight(w, taken, keys, chosen)
    taken, lower = _improved(p, w, e, b, capacity, taken, inside, outside, 8, lower, fixed, gcd, break_profit,
                             residual)
    if residual > 0 and p[b] > (2**63 - 1) // residual:
        return OVERFLOW, _numbers(0, b, lower, 0, gcd, break_profit, residual, 0, 0, 0, 0, 0, 0, 0), nothing, none
    upper = (break_profit + residual * p[b] // w[b]) // gcd * gcd
    n_free, room, free_gcd = free_summary(w, fixed, capacity)
    if n_free == 0:
        value, selected = _chosen(profits, weights, items, order, taken)
        return REDUCED, _numbers(value, b, lower, upper, gcd, break_profit, residual, 0, room, 0, 0, 0, 0, 0), \
            selected, none
    dp_possible = auto and room < 2**40 and 2 * (2 * (room + 1) * 8 + room + 64) <= budget
    max_work = n_free * room // free_gcd // state_cost if dp_possible else _MAX_INT
    if not dp_possible and first_bytes > budget:
        return REFUSED, _numbers(0, b, lower, upper, gcd, break_profit, residual, n_free, room, 0, 0, 0, 0,
                                 max_work), nothing, none
    removable, addable = _free_in_order(fixed, b, e, order, p, w, taken)
    held = quick_held if max_work > quick_states else _MAX_INT
    (status, best, best_step, best_w, best_p, best_v, best_extra, step_items, snap_w, snap_p, snap_v, snap_off,
     work, held_now) = expand_core(p, w, capacity, e, removable, addable, capacity - residual, break_profit,
                                   e[b] if break_skip else -1.0, lower, upper, min(max_work, quick_states), held,
                                   budget // state_bytes, False, stop, 0, np.array([lower]))
    found, run_taken = True, taken
    if best_step >= 0:
        found, run_taken = _backtrack(p, w, b, best_step, best_w, best_p, best_v, best_extra, step_items, snap_w,
                                      snap_p, snap_v, snap_off)
    numbers = _numbers(best, b, lower, upper, gcd, break_profit, residual, n_free, room, status, work,
                       len(step_items) - 1, held_now, max_work)
    if not found:
        return BROKEN, numbers, nothing, none
    if status == DONE:
        value, selected = _chosen(profits, weights, items, order, run_taken)
        return SOLVED, (value,) + numbers[1:], selected, none
    return HANDOVER, numbers, nothing, _handover(order, fixed, taken, run_taken, p, w)


@njit(cache=True, nogil=True)
def _handover(order, fixed, greedy, run_taken, p, w):
    """The rows of a HANDOVER outcome (see :func:`first_pass`), with the profits and weights in
    that order (gathering them again by ``order`` took numpy 30 us a row at n = 10000)."""
    handover = np.empty((6, len(order)), np.int64)
    for j in range(len(order)):
        handover[0, j], handover[1, j], handover[2, j] = order[j], fixed[j], greedy[j]
        handover[3, j], handover[4, j], handover[5, j] = run_taken[j], p[j], w[j]
    return handover


@njit(cache=True, nogil=True)
def _numbers(value, b, lower, upper, gcd, break_profit, residual, n_free, room, status, work, steps, held, max_work):
    return (np.int64(value), np.int64(b), np.int64(lower), np.int64(upper), np.int64(gcd), np.int64(break_profit),
            np.int64(residual), np.int64(n_free), np.int64(room), np.int64(status), np.int64(work), np.int64(steps),
            np.int64(held), np.int64(max_work))


@njit(cache=True, nogil=True)
def _greedy(p, w, e, order, b, residual, break_profit):
    """The break solution and then, in efficiency order, every later item that still fits: ``(value, taken)``.

    Only items lighter than ``residual`` can, and of those the next one taken is the first in efficiency
    order that fits the room left (any before it did not fit a larger room), so the first
    :data:`_GREEDY_PICKS` are picked by a pass each over the candidates that still fit, and only where
    more remain are those sorted (inverse strongly correlated items at n = 10000 leave 7,880 candidates,
    of which the greedy solution takes a handful)."""
    candidates = np.empty(len(w) - b, np.int64)
    count = 0
    for j in range(b + 1, len(w)):
        if w[j] <= residual:
            candidates[count] = j
            count += 1
    taken = np.zeros(len(w), np.bool_)
    taken[:b] = True
    value, room = break_profit, residual
    for _ in range(_GREEDY_PICKS):
        if count == 0:
            return value, taken
        best = candidates[0]
        for k in range(1, count):
            x = candidates[k]
            if e[x] > e[best] or (e[x] == e[best] and order[x] < order[best]):
                best = x
        taken[best] = True
        room -= w[best]
        value += p[best]
        kept = 0
        for k in range(count):
            x = candidates[k]
            if x != best and w[x] <= room:
                candidates[kept] = x
                kept += 1
        count = kept
    for j in in_efficiency_order(candidates, count, e, order, False):
        if w[j] <= room:
            taken[j] = True
            room -= w[j]
            value += p[j]
    return value, taken


#: :func:`_greedy` picks this many items by passes before it sorts the candidates left.
_GREEDY_PICKS = 16


@njit(cache=True, nogil=True)
def _free_in_order(fixed, b, e, order, p, w, taken):
    """The free items moved, within the positions they hold on each side of the break item, into efficiency
    order (``order``, ``e``, ``p``, ``w`` and ``taken`` permuted in place; the fixed items keep theirs), and
    expand_core's ``removable`` (the free positions before the break item, nearest first) and ``addable``
    (those from it on)."""
    before, after = np.empty(b, np.int64), np.empty(len(fixed) - b, np.int64)
    nb, na = 0, 0
    for j in range(len(fixed)):
        if fixed[j] < 0:
            if j < b:
                before[nb] = j
                nb += 1
            else:
                after[na] = j
                na += 1
    before, after = before[:nb], after[:na]
    moved = np.concatenate((in_efficiency_order(before, nb, e, order, False),
                            in_efficiency_order(after, na, e, order, False)))
    slots = np.concatenate((before, after))
    o, pp, ww, ee, tt = order[moved], p[moved], w[moved], e[moved], taken[moved]
    for k in range(len(slots)):
        j = slots[k]
        order[j], p[j], w[j], e[j], taken[j] = o[k], pp[k], ww[k], ee[k], tt[k]
    return before[::-1].copy(), after


@njit(cache=True, nogil=True)
def _chosen(profits, weights, items, order, taken):
    """The items of positive profit and weight 0 and those ``taken`` (over the positions, ``order`` their
    index in ``items``): ``(their profit, caller's indices rising)``.

    Without a branch on the choice: in the caller's order it is random, and branches on it, mispredicted
    about every other item, cost a thousand items 10 us over three passes on the benchmark VM."""
    n = len(profits)
    chosen = np.zeros(n, np.bool_)
    for k in range(len(order)):
        chosen[items[order[k]]] = taken[k]
    selected = np.empty(n, np.int64)
    count, value = 0, np.int64(0)
    for j in range(n):
        selected[count] = j
        c = chosen[j] | ((profits[j] > 0) & (weights[j] == 0))
        count += c
        value += profits[j] * c
    return value, selected[:count].copy()


@njit(cache=True, nogil=True)
def _gcd(a, b):
    while b:
        a, b = b, a % b
    return a
