"""KP1's preparation compiled: the efficiency order, the break item, the greedy solution improved by single
exchanges (the incumbent that :func:`core.knapsack.kp1_core.prepare` starts from) and Dembo-Hammer's
reductions, in a few compiled calls and numpy's sorts (some 40 numpy calls and a stable sort of floats were
most of an easy instance's time)."""

from __future__ import annotations

import numpy as np
from numba import njit

from core.knapsack.sorting import sort_keys
from core.knapsack.state_steps import has_chance

__all__ = ["by_weight", "free_items", "free_summary", "in_caller_order", "greedy", "improve_by_exchanges", "ordered",
           "reduce_free", "reduce_items", "reduced_by"]


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


#: ``fixed`` for :func:`_weight_keys` where every item is a candidate.
_NOT_REDUCED = np.zeros(0, np.int8)


def improve_by_exchanges(p, w, capacity, taken, rounds: int = 8):
    """The best single swap (one item out, one in) that fits, repeated while it gains.

    For each item out, the item in to drop is the least profitable one heavy
    enough to make room: a suffix minimum over the chosen items sorted by weight
    (ties by position; the first of equal gains and of equal profits is taken).
    """
    inside, outside = by_weight(w, taken, *_weight_keys(w, taken, _NOT_REDUCED, False))
    return _exchanges(p, w, np.int64(capacity - int(w[taken].sum())), taken.copy(), inside, outside, rounds)


def ordered(profits, weights, capacity: int, known: int, rounds: int = 8):
    """Everything :func:`core.knapsack.kp1_core.prepare` computes but its upper bound, in a few calls.

    Returns ``(order, p, w, e, b, greedy, lower, gcd, break_profit, residual, fixed)``: the caller's index
    of each position of the efficiency order (``-p / w`` ascending, ties by index, as a stable sort), the
    profits, weights and efficiencies in that order, the break item (``len(p)`` when all fit: nothing else
    is then computed, and ``greedy`` and ``fixed`` are None), the greedy solution improved by
    :func:`improve_by_exchanges`, the better of its value and ``known``, the profits' gcd, the break
    solution's profit and the capacity it leaves, and the reductions against the next multiple of the gcd
    above ``lower`` (:func:`reduce_items`).  The sorts are numpy's, of 64-bit integers (vectorised: at
    n = 10000 an argsort of the efficiencies takes three times as long, a stable one twelve times), keyed by
    :func:`_efficiency_keys`.
    """
    profits, weights = np.asarray(profits, np.int64), np.asarray(weights, np.int64)
    efficiency, keys = _efficiency_keys(profits, weights)
    keys.sort()
    (order, p, w, e, b, gcd, break_profit, residual, taken, keys, chosen, lower,
     fixed) = _in_order(profits, weights, efficiency, keys, int(capacity), int(known))
    if b == len(p):
        return order, p, w, e, b, None, int(break_profit), int(gcd), int(break_profit), int(residual), None
    inside, outside = by_weight(w, taken, keys, chosen)
    taken, lower = _improved(p, w, e, b, int(capacity), taken, inside, outside, rounds, lower, fixed, gcd,
                             break_profit, residual)
    return order, p, w, e, b, taken, int(lower), int(gcd), int(break_profit), int(residual), fixed


@njit(cache=True, nogil=True)
def _improved(p, w, e, b, capacity, taken, inside, outside, rounds, lower, fixed, gcd, break_profit, residual):
    """The greedy solution improved by :func:`_exchanges`, and the free items of ``fixed`` (the reductions
    against ``lower``) tested again where that beat ``lower``: ``(taken, lower)``, ``fixed`` updated in
    place (a higher target only fixes more, the same way)."""
    taken = _exchanges(p, w, capacity - w[taken].sum(), taken, inside, outside, rounds)
    value = p[taken].sum()
    if value > lower:
        lower = value
        reduce_free(p, w, e[b], b, break_profit, residual, (lower // gcd + 1) * gcd, fixed)
    return taken, lower


@njit(cache=True, nogil=True)
def _efficiency_keys(profits, weights):
    """The efficiencies ``p / w`` and, per item, a key whose ascending order is theirs descending, ties by index:
    the efficiency's leading bits (a positive float's bits order as its value) above the item's index.

    The bits the index takes are cut from the efficiency, so efficiencies that differ only there share a
    key's leading part: :func:`_in_order` puts each such run in exact order.
    """
    n = len(profits)
    efficiency = np.empty(n, np.float64)
    for j in range(n):
        efficiency[j] = profits[j] / weights[j]
    shift = _index_bits(n)
    bits = efficiency.view(np.int64)
    top = (np.int64(1) << (63 - shift)) - 1
    keys = np.empty(n, np.int64)
    for j in range(n):
        keys[j] = ((top - (bits[j] >> shift)) << shift) | j
    return efficiency, keys


@njit(cache=True, nogil=True)
def _index_bits(n):
    """Bits that hold every index below ``n`` (at least one)."""
    bits = 1
    while (np.int64(1) << bits) < n:
        bits += 1
    return bits


@njit(cache=True, nogil=True)
def _in_order(profits, weights, efficiency, keys, capacity, known):
    """The efficiency order from the sorted :func:`_efficiency_keys` (each run of keys with the same
    efficiency bits put in exact order: falling efficiency, ties by index); then the items in that order, the
    break item, the profits' gcd, the break solution's profit and the capacity it leaves, and (where not all
    fit) the greedy solution, the incumbent's value (the greedy one or ``known``), the reductions against it
    and the exchanges' candidates as :func:`_weight_keys` (restricted where the greedy value is the
    incumbent's): one call where five were (their dispatch cost an easy instance's solve a twentieth of its
    time)."""
    n = len(keys)
    order = _order_of_keys(keys, efficiency)
    p, w, e = profits[order], weights[order], efficiency[order]
    b, used, break_profit = 0, np.int64(0), np.int64(0)
    while b < n and used + w[b] <= capacity:
        used += w[b]
        break_profit += p[b]
        b += 1
    gcd = np.int64(0)
    for j in range(n):
        gcd = _gcd(gcd, p[j])
        if gcd == 1:
            break
    if b == n:
        return (order, p, w, e, b, gcd, break_profit, capacity - used, np.zeros(0, np.bool_), np.zeros(0, np.int64),
                0, break_profit, np.zeros(0, np.int8))
    taken = greedy(w, capacity, b)
    value = p[taken].sum()
    lower = max(value, known)
    fixed = reduce_items(p, w, e[b], b, break_profit, capacity - used, (lower // gcd + 1) * gcd)
    keys, chosen = _weight_keys(w, taken, fixed, value >= known)
    return order, p, w, e, b, gcd, break_profit, capacity - used, taken, keys, chosen, lower, fixed


@njit(cache=True, nogil=True)
def _order_of_keys(keys, efficiency):
    """The order of the sorted :func:`_efficiency_keys`, each run of keys with the same efficiency bits put in
    exact order."""
    n = len(keys)
    shift = _index_bits(n)
    order = keys & ((np.int64(1) << shift) - 1)
    start = 0
    for j in range(1, n + 1):
        if j == n or keys[j] >> shift != keys[start] >> shift:
            if j - start > 1:  # (a call per item, with its reference counts, cost 27 ns an item)
                _exact_run(order, start, j, efficiency)
            start = j
    return order


@njit(cache=True, nogil=True)
def _exact_run(order, start, end, efficiency):
    """Put ``order[start:end]`` (items in index order) in falling efficiency, ties by index, in place.

    Mostly the run is already so (equal efficiencies): one pass checks it.  Otherwise an insertion sort up
    to 16 items, else a stable sort on the efficiencies (index order kept among equal ones).
    """
    exact = True
    for k in range(start + 1, end):
        if efficiency[order[k]] > efficiency[order[k - 1]]:
            exact = False
            break
    if exact:
        return
    if end - start > 16:
        run = order[start:end].copy()
        order[start:end] = run[np.argsort(-efficiency[run], kind="mergesort")]
        return
    for k in range(start + 1, end):
        item, q = order[k], k
        while q > start and efficiency[order[q - 1]] < efficiency[item]:
            order[q] = order[q - 1]
            q -= 1
        order[q] = item


@njit(cache=True, nogil=True)
def reduce_items(p, w, break_efficiency, b, break_profit, residual, target):
    """Dembo-Hammer: fix an item when the bound with its decision flipped cannot reach ``target``.

    (n,) int8: -1 free, 0 fixed out, 1 fixed in; items in efficiency order with break item ``b``.
    """
    fixed = np.full(len(p), -1, np.int8)
    reduce_free(p, w, break_efficiency, b, break_profit, residual, target, fixed)
    return fixed


@njit(cache=True, nogil=True)
def reduce_free(p, w, break_efficiency, b, break_profit, residual, target, fixed):
    """:func:`reduce_items` for the items ``fixed`` leaves free (-1), in place: a higher target only fixes
    more items, the same way, so the fixed ones keep their values."""
    for j in range(len(p)):
        if fixed[j] < 0:
            fixed[j] = _reduced(p[j], w[j], j < b, break_efficiency, break_profit, residual, target)


@njit(cache=True, nogil=True)
def reduced_by(p, w, break_efficiency, b, break_profit, residual, gcd, fixed, taken, lower):
    """The value of a choice ``taken`` and, where it beats ``lower``, a copy of ``fixed`` with the free items
    reduced against it (:func:`reduce_free`, the next multiple of the profits' ``gcd`` its target); else
    ``fixed`` itself (``kp1_core.with_incumbent``'s steps in one compiled call)."""
    value = np.int64(0)
    for j in range(len(p)):
        value += p[j] * taken[j]
    if value <= lower:
        return value, fixed
    raised = fixed.copy()
    reduce_free(p, w, break_efficiency, b, break_profit, residual, (value // gcd + 1) * gcd, raised)
    return value, raised


@njit(cache=True, nogil=True, inline="always")
def _reduced(profit, weight, before, break_efficiency, break_profit, residual, target):
    """:func:`reduce_items`'s answer for one item (``before``: it lies before the break item)."""
    sign = -1 if before else 1  # flipping removes items before b, adds the others
    if has_chance(sign * profit, sign * weight, residual, break_profit, break_efficiency, target - 1):
        return np.int8(-1)
    return np.int8(1) if before else np.int8(0)


@njit(cache=True, nogil=True)
def _gcd(a, b):
    while b:
        a, b = b, a % b
    return a


@njit(cache=True, nogil=True)
def by_weight(w, taken, keys, chosen):
    """The exchanges' candidates chosen and the others, each sorted by weight, ties by position: one sort of
    :func:`_weight_keys` (core.knapsack.sorting's, as fast as numpy's on thousands of keys), or two stable
    argsorts where the keys would not fit 63 bits (``chosen`` < 0, ``keys`` the candidates)."""
    if chosen < 0:
        inside, outside = keys[taken[keys]], keys[~taken[keys]]
        return inside[np.argsort(w[inside], kind="mergesort")], outside[np.argsort(w[outside], kind="mergesort")]
    positions = sort_keys(keys) & ((np.int64(1) << _index_bits(len(w))) - 1)
    return positions[:chosen], positions[chosen:]


@njit(cache=True, nogil=True)
def in_caller_order(order, taken):
    """A choice over the efficiency order (bool) as a mask over the caller's items (``order``: the caller's
    index of each position), in one pass (two numpy calls cost an easy instance's solve 3 us more)."""
    mask = np.zeros(len(taken), np.bool_)
    for j in range(len(taken)):
        if taken[j]:
            mask[order[j]] = True
    return mask


@njit(cache=True, nogil=True)
def free_items(fixed, profits, weights, copies, b, capacity, break_weight, gather):
    """The free items' positions, profits and weights (where ``gather``), the profit of the items fixed in
    and the capacity they leave, and the free items the break solution holds (copies: ``copies`` each, the
    break item's that still fit included; :func:`core.knapsack.kp1_core.break_copies`)."""
    n = len(fixed)
    free, p, w = np.empty(n, np.int64), np.empty(n if gather else 0, np.int64), np.empty(n if gather else 0, np.int64)
    m, base, room, in_break = 0, np.int64(0), np.int64(capacity), np.int64(0)
    for j in range(n):
        if fixed[j] < 0:
            free[m] = j
            if gather:
                p[m], w[m] = profits[j], weights[j]
            m += 1
            if j < b:
                in_break += copies[j] if len(copies) else 1
        elif fixed[j] == 1:
            base += profits[j]
            room -= weights[j]
    if len(copies) and fixed[b] < 0:
        in_break += (capacity - break_weight) // (weights[b] // copies[b])
    return free[:m], p[:m], w[:m], base, room, in_break


@njit(cache=True, nogil=True)
def free_summary(weights, fixed, capacity):
    """How many items are free, the capacity the items fixed in leave them, and their weights' gcd."""
    n_free, room, gcd = 0, capacity, np.int64(0)
    for j in range(len(weights)):
        if fixed[j] < 0:
            n_free += 1
            if gcd != 1:  # (Euclid's steps per item cost a solve with a thousand free items 8 us)
                gcd = np.gcd(gcd, weights[j])
        elif fixed[j] == 1:
            room -= weights[j]
    return n_free, room, max(gcd, np.int64(1))


@njit(cache=True, nogil=True)
def _weight_keys(w, taken, fixed, restricted):
    """The exchanges' candidates as keys, the weight above the position (``w[j] << bits | j``), the items not
    taken past all the taken ones; and how many are taken.  ``chosen`` -1 and the candidates' positions
    instead of keys where the keys would not fit 63 bits.

    Every item is a candidate, or with ``restricted`` only the taken items not fixed in and the free items
    not taken (``fixed``: the reductions against the taken items' value).  The others take part in no swap
    that gains: a solution worth more than that value sets every fixed item as the reductions do, so a
    swap that takes out an item fixed in, or takes in one fixed out, gains nothing, and of the swaps
    :func:`_exchanges` weighs for an item taken in, the best one that gains (its item taken out the first
    of the least profit heavy enough) is one between candidates.  The exchanges make the same swaps from
    far fewer items to sort (uncorrelated items, n = 1000: about 150 of them).
    """
    n = len(w)
    shift = _index_bits(n)
    candidates = np.empty(n, np.int64)
    m, chosen, top = 0, 0, np.int64(1)
    for j in range(n):
        if not restricted or (fixed[j] != 1 if taken[j] else fixed[j] < 0):
            candidates[m] = j
            m += 1
            chosen += taken[j]
            top = max(top, w[j] + 1)
    if top >= np.int64(1) << (62 - shift):
        return candidates[:m], -1
    keys = np.empty(m, np.int64)
    for k in range(m):
        j = candidates[k]
        keys[k] = ((w[j] if taken[j] else w[j] + top) << shift) | j
    return keys, chosen


@njit(cache=True, nogil=True)
def _exchanges(p, w, room, taken, inside, outside, rounds):
    """:func:`improve_by_exchanges` compiled: the chosen (``inside``) and the other items (``outside``), or the
    candidates among them (:func:`_weight_keys`), each kept sorted by weight (ties by position), so a round is
    one sweep over the others with a pointer into the chosen, and a swap moves one item between the lists.
    ``room``: the capacity that ``taken`` leaves."""
    cheapest = np.empty(len(inside), np.int64)
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
