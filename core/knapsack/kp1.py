"""0-1 knapsack (KP1) on the CPU: DP over capacities with packed decision bits.

Exact reductions, capacity windows per row and a divide and conquer past the
memory budget: docs/notes/knapsack.md, "KP1".
"""

from __future__ import annotations

import numpy as np
from numba import njit

from core.knapsack import limits
from core.knapsack.bitpack import pack_flags, test_bit, words_for
from core.knapsack.grouping import group_identical
from core.knapsack.kp1_core import in_caller_order, prepare, solve_by_bounds
from core.knapsack.problems import KP1, MemoryBudgetError, SolverResult, weights_gcd
from core.knapsack.progress import report
from core.knapsack.states import STATE_BYTES
from core.memory import resolve_budget

__all__ = ["METHODS", "capacity_windows", "row_dtype", "solve_kp1", "solve_kp1_quick"]

INT32_LIMIT = 2**31 - 1
METHODS = ("auto", "dp", "states")
#: Time of one state of the state lists, in DP cells (measured: a DP cell ~1 ns, a state ~10 ns).
STATE_COST_CELLS = 10
#: States generated before the state lists also compute the (costlier) cardinality bound: the GPU's host stage
#: (:func:`solve_kp1_quick`) and subset sum.
QUICK_STATES = 1_000_000
#: The same for KP1's own solve, whose quick run also gives up once a step leaves more than KP1_QUICK_HELD
#: states: lists that grow that wide (strongly correlated items) are cut down sooner by the surrogate's bound
#: and its incumbent (docs/notes/knapsack.md, steps 13 and 18). 2^11 is combo's MINSET, the list size at which
#: it solves the surrogate; the lists pair once before they give up (states.PAIRING_ONCE_STATES). Against 2^13
#: on seed 2 of the combo benchmark's classes (alternating in one process, median per class): classes 2-6
#: 0.64-0.87 of the time, 1 and 11-16 0.91-1.01.
KP1_QUICK_STATES, KP1_QUICK_HELD = 2**18, 2**11
#: States the lists hold at the least (their first buffers).
STATE_MIN_STATES = 6 * 1024


def row_dtype(total_profit: int) -> type:
    """int32 rows when every DP value fits (they vectorise twice as wide), else int64."""
    return np.int32 if total_profit < INT32_LIMIT else np.int64


def capacity_windows(weights: np.ndarray, capacity: int, lower_bound: bool = True):
    """The capacities each DP row needs, ``lo[i] <= c <= hi[i]``, as two (n,) int64 arrays.

    ``weights`` (n,) are in DP order and ``capacity`` is the final row's (at most
    their sum).  Without ``lower_bound``, ``lo = 0`` and the last row is valid
    for every capacity.
    """
    prefix = np.cumsum(weights)
    hi = np.minimum(prefix, capacity)
    lo = np.maximum(capacity - (prefix[-1] - prefix), 0) if lower_bound else np.zeros_like(hi)
    return lo.astype(np.int64), hi.astype(np.int64)


@njit(cache=True, nogil=True)
def _relax_row(old, new, weight, profit, lo, hi):
    """``new[c] = max(old[c], old[c - weight] + profit)`` on ``lo <= c <= hi``."""
    # Unsigned indices: numba then emits no negative-index wrap-around, and the
    # loops vectorise.
    w = np.uint64(weight)
    start = np.uint64(lo)
    stop = np.uint64(hi) + np.uint64(1)
    split = min(max(start, w), stop)
    for c in range(start, split):
        new[c] = old[c]
    for c in range(split, stop):
        new[c] = max(old[c], old[c - w] + profit)


@njit(cache=True, nogil=True)
def _row_flags(old, new, lo, hi, flags):
    """``flags[c] = new[c] != old[c]`` (item taken) on ``lo..hi``, 0 in the rest of their words."""
    first = np.uint64(lo) & ~np.uint64(63)
    end = (np.uint64(hi) | np.uint64(63)) + np.uint64(1)
    for c in range(first, np.uint64(lo)):
        flags[c] = 0
    for c in range(np.uint64(lo), np.uint64(hi) + np.uint64(1)):
        flags[c] = new[c] != old[c]
    for c in range(np.uint64(hi) + np.uint64(1), end):
        flags[c] = 0


@njit(cache=True, nogil=True)
def _sweep(profits, weights, capacity, lo, hi, bits, offsets):
    """Run the DP over all items; return the last row (valid on ``lo[-1]..capacity``).

    ``bits`` receives row ``i``'s decision words at ``offsets[i]:offsets[i + 1]``
    (words ``lo[i] >> 6`` to ``hi[i] >> 6``); pass empty ``offsets`` for values only.
    """
    old = np.zeros(capacity + 1, profits.dtype)
    new = np.zeros(capacity + 1, profits.dtype)
    flags = np.zeros(((capacity >> 6) + 1) << 6, np.uint8)
    store = len(offsets) > 0
    hi_prev = 0
    for i in range(len(profits)):
        # Past the weight of the items so far the row is constant: extend it.
        for c in range(hi_prev + 1, hi[i] + 1):
            old[c] = old[hi_prev]
        _relax_row(old, new, weights[i], profits[i], lo[i], hi[i])
        if store:
            _row_flags(old, new, lo[i], hi[i], flags)
            pack_flags(flags, lo[i] >> 6, bits[offsets[i] : offsets[i + 1]])
        old, new = new, old
        hi_prev = hi[i]
    for c in range(hi_prev + 1, capacity + 1):
        old[c] = old[hi_prev]
    return old


@njit(cache=True, nogil=True)
def _backtrack(weights, capacity, lo, hi, bits, offsets):
    """Chosen items (bool mask) from the decision bits, from the last row back."""
    taken = np.zeros(len(weights), np.bool_)
    c = capacity
    for i in range(len(weights) - 1, -1, -1):
        c = min(c, hi[i])  # beyond hi[i] row i equals its value at hi[i]
        if test_bit(bits[offsets[i] : offsets[i + 1]], lo[i] >> 6, c):
            taken[i] = True
            c -= weights[i]
    return taken


def _decision_plan(weights, capacity):
    """Windows, word offsets and the bytes of a direct DP with decision bits."""
    lo, hi = capacity_windows(weights, capacity)
    offsets = np.zeros(len(weights) + 1, np.int64)
    np.cumsum(words_for(lo, hi), out=offsets[1:])
    return lo, hi, offsets


def _row_bytes(capacity: int, itemsize: int) -> int:
    return 2 * (capacity + 1) * itemsize + (capacity + 64)


def _solve_items(profits, weights, capacity, budget, state):
    """Boolean mask of an optimal choice; items sorted, profits > 0, weights > 0."""
    fits = weights <= capacity
    if weights[fits].sum() <= capacity:
        return fits
    if not fits.all():
        mask = np.zeros(len(weights), np.bool_)
        mask[fits] = _solve_items(profits[fits], weights[fits], capacity, budget, state)
        return mask
    lo, hi, offsets = _decision_plan(weights, capacity)
    direct_bytes = 8 * int(offsets[-1]) + _row_bytes(capacity, profits.itemsize)
    if direct_bytes <= budget:
        bits = np.empty(int(offsets[-1]), np.uint64)
        _sweep(profits, weights, capacity, lo, hi, bits, offsets)
        return _backtrack(weights, capacity, lo, hi, bits, offsets)
    light_bytes = 2 * _row_bytes(capacity, 8)
    if light_bytes > budget:
        raise MemoryBudgetError(f"KP1 with capacity {capacity} (divide and conquer)", light_bytes, budget)
    state["method"] = "dp-divide-conquer"
    return _divide(profits, weights, capacity, budget, state)


def _divide(profits, weights, capacity, budget, state):
    """Hirschberg step: split the items, find the capacity split, solve both halves."""
    mid = len(profits) // 2
    empty = np.zeros(0, np.int64)
    first = _full_row(profits[:mid], weights[:mid], capacity, empty)
    second = _full_row(profits[mid:], weights[mid:], capacity, empty)
    split = int(np.argmax(first.astype(np.int64) + second[::-1]))
    del first, second
    left = _solve_items(profits[:mid], weights[:mid], split, budget, state)
    right = _solve_items(profits[mid:], weights[mid:], capacity - split, budget, state)
    return np.concatenate([left, right])


def _full_row(profits, weights, capacity, empty):
    """The last DP row over every capacity ``0..capacity`` (no decision bits)."""
    lo, hi = capacity_windows(weights, capacity, lower_bound=False)
    return _sweep(profits, weights, capacity, lo, hi, np.zeros(0, np.uint64), empty)


def solve_kp1(problem: KP1, memory_budget_bytes: int | None = None, method: str = "auto",
              time_limit_s: float | None = None) -> SolverResult:
    """Solve a :class:`KP1` exactly.

    Parameters
    ----------
    problem : KP1
    memory_budget_bytes : int, optional
        Most bytes for the DP rows and decision bits or the state lists; default
        :func:`core.memory.resolve_budget`.
    method : {"auto", "dp", "states"}
        ``dp``: the capacity DP (cost n x C).  ``states``: the expanding core of
        :mod:`core.knapsack.kp1_core` (cost independent of C).  ``auto``: the
        reductions of ``states`` first, then the state lists, handing over to the
        DP over the items left when they grow past what it would cost (a tenth of
        its cells in states generated).  ``auto`` and ``states`` first group identical
        items into bounded types split in powers of two where that removes a
        quarter of them or more (:mod:`core.knapsack.grouping`); ``dp`` never does.
    time_limit_s : float, optional
        Seconds after which the solve stops with TimeLimitError (default None:
        no limit of its own, the enclosing :func:`core.knapsack.limits.time_limit`
        if any).  The state lists poll it between steps; a capacity DP estimated
        to outlast it is refused before it starts.

    Returns
    -------
    SolverResult
        ``method``: ``"dp"``, ``"dp-divide-conquer"`` (the bits did not fit the
        budget), ``"states"`` or ``"reduction"`` (the bounds fixed every item).

    Raises
    ------
    ValueError
        For an unknown ``method``.
    MemoryBudgetError
        When no method fits the budget (at once when the budget cannot hold the
        state lists' preparation and first buffers).
    TimeLimitError
        When the solve runs past ``time_limit_s``.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    budget = resolve_budget(memory_budget_bytes)
    if time_limit_s is None:  # the enclosing limit, if any (the context would cost a small solve 3 us)
        return _solve(problem, budget, method)
    with limits.time_limit(time_limit_s):
        return _solve(problem, budget, method)


def solve_kp1_quick(problem: KP1, memory_budget_bytes: int | None = None) -> SolverResult | None:
    """The reductions and the first :data:`QUICK_STATES` states of the lists: the optimum where they settle it.

    None where they do not (no DP runs): for a caller with a faster DP of its
    own, the GPU twin, which thus leaves to the host the many instances the
    lists solve in milliseconds.
    """
    return _solve(problem, resolve_budget(memory_budget_bytes), "quick")


def _solve(problem: KP1, budget: int, method: str) -> SolverResult | None:
    profits, weights = problem.profits, problem.weights
    always, items, items_weight = _usable(profits, weights, problem.capacity)
    state = {"method": "reduction" if method == "quick" else "dp"}
    chosen = items
    if items_weight > problem.capacity:
        every = len(items) == len(profits)  # (writable copies, as the compiled code's signatures have them;
        p, w = (profits.copy(), weights.copy()) if every else (profits[items], weights[items])  # half the time)
        if method == "dp":
            mask = _dp_mask(p, w, problem.capacity, budget, state)
        else:
            mask = _grouped_core_mask(p, w, problem.capacity, budget, method, state)
            if mask is None:  # "quick": the lists did not settle it
                return None
        chosen = np.flatnonzero(mask) if every else items[mask]
    selected = np.sort(np.concatenate([always, chosen])) if len(always) else chosen
    return SolverResult(int(profits[selected].sum()), selected, state["method"])


@njit(cache=True, nogil=True)
def _usable(profits, weights, capacity):
    """The items of weight 0 and positive profit (always taken), those that fit alone with positive profit
    (the problem), and the latter's weight (sums stay below 2^62: core.knapsack.problems), in one pass."""
    always, items = np.empty(len(profits), np.int64), np.empty(len(profits), np.int64)
    n_always, n_items, total = 0, 0, 0
    for j in range(len(profits)):
        if profits[j] > 0 and weights[j] == 0:
            always[n_always] = j
            n_always += 1
        elif profits[j] > 0 and 0 < weights[j] <= capacity:
            items[n_items] = j
            n_items += 1
            total += weights[j]
    return always[:n_always], items[:n_items], total


def _grouped_core_mask(profits, weights, capacity, budget, method, state):
    """:func:`_core_mask` over the items with identical ones grouped (core.knapsack.grouping), the cardinality
    bounds counting copies; the explicit ``dp`` method never groups (it is the tests' reference)."""
    grouping = group_identical(profits, weights)
    if grouping is None:
        return _core_mask(profits, weights, capacity, budget, method, state)
    # A piece heavier than the capacity never fits; the lighter pieces of its type still reach every count
    # that fits (the powers of two below a piece add up to at least its size less one).
    usable = np.flatnonzero(grouping.weights <= capacity)
    chosen = np.zeros(len(grouping.profits), np.bool_)
    if int(grouping.weights[usable].sum()) <= capacity:
        chosen[usable] = True
    else:
        found = _core_mask(grouping.profits[usable], grouping.weights[usable], capacity, budget, method, state,
                           grouping.counts[usable])
        if found is None:
            return None
        chosen[usable[found]] = True
    return grouping.expand(chosen)


def _dp_mask(profits, weights, capacity, budget, state):
    """Optimal choice (bool mask) by the capacity DP: items sorted by weight, gcd divided out."""
    mask = np.zeros(len(profits), np.bool_)
    usable = np.flatnonzero(weights <= capacity)
    if int(weights[usable].sum()) <= capacity:
        mask[usable] = True
        return mask
    order = usable[np.argsort(weights[usable], kind="stable")]
    gcd = weights_gcd(weights[order])
    limits.check_dp(len(order) * (capacity // gcd), f"KP1 by the capacity DP ({len(order):,} items, capacity "
                                                   f"{capacity // gcd:,})")
    dtype = row_dtype(int(profits[order].sum()))
    mask[order] = _solve_items(profits[order].astype(dtype), weights[order] // gcd, capacity // gcd, budget, state)
    return mask


#: States the lists' first buffers count against the budget (two lists of 1024 and their merge targets).
FIRST_STAGE_STATES = 4 * 1024


def first_stage_bytes() -> int:
    """Bytes of the state lists' first buffers as the running guard counts them (``max_states``)."""
    return STATE_BYTES * FIRST_STAGE_STATES


def _core_mask(profits, weights, capacity, budget, method, state, counts=None):
    """Optimal choice by reductions then the DP or the state lists (see :func:`solve_kp1`); ``counts``: the
    identical copies each item stands for (core.knapsack.grouping)."""
    setup = prepare(profits, weights, capacity, counts=counts)
    n_free, room, gcd = _free_summary(setup.weights, setup.fixed, setup.capacity)
    if not n_free:
        state["method"] = "reduction"
        return in_caller_order(setup.order, setup.greedy)
    dp_cells = n_free * room // gcd
    report("states", setup.upper_bound - setup.lower_bound, setup.lower_bound)
    if method == "quick":
        if first_stage_bytes() > budget:
            return None
        mask, _ = solve_by_bounds(setup, QUICK_STATES, QUICK_STATES, budget // STATE_BYTES)
        state["method"] = "states"
        return mask
    dp_possible = method == "auto" and 2 * _row_bytes(room, 8) <= budget
    if not dp_possible:  # no DP to hand over to: refuse now what the lists' first step would refuse
        limits.check_first_stages(first_stage_bytes(), budget, f"KP1 by state lists ({n_free:,} free items)")
    max_work = dp_cells // STATE_COST_CELLS if dp_possible else 2**62
    mask, run = solve_by_bounds(setup, KP1_QUICK_STATES, max_work, budget // STATE_BYTES, KP1_QUICK_HELD)
    if mask is not None:
        state["method"] = "states"
        return mask
    if not dp_possible:
        needed = STATE_BYTES * max(int(run.work), STATE_MIN_STATES)
        raise MemoryBudgetError(f"KP1 by state lists ({n_free} free items)", needed, budget)
    report("dp")
    return _reduced_dp(setup, room, budget, state)


@njit(cache=True, nogil=True)
def _free_summary(weights, fixed, capacity):
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


def _reduced_dp(setup, room, budget, state):
    """The capacity DP over the free items (the others fixed), or the greedy solution when it is better."""
    free = np.flatnonzero(setup.fixed < 0)
    fixed_in = setup.fixed == 1
    taken = fixed_in.copy()
    taken[free] = _dp_mask(setup.profits[free], setup.weights[free], room, budget, state)
    if int(setup.profits[taken].sum()) < setup.lower_bound:
        taken = setup.greedy
    return in_caller_order(setup.order, taken)
