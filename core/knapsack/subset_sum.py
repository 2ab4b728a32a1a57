"""Subset sum on the CPU: the Yanasse-Soma ``g`` vector of Curtis (2013).

``g[s]`` is the item with which the sum ``s`` first becomes reachable, so
following ``g`` down from the optimum recovers the subset.  Filled from a
bitset (``"bitset"``) or by Curtis's recursion (``"g-vector"``), with
Curtis's reductions: docs/notes/knapsack.md, "Subset sum".
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from core.knapsack import limits
from core.knapsack.kp1 import QUICK_STATES, first_stage_bytes
from core.knapsack.kp1_core import prepare, solve_by_bounds
from core.knapsack.kp1_dp import capacity_windows
from core.knapsack.problems import MemoryBudgetError, SolverResult, SubsetSum, TimeLimitError, weights_gcd
from core.knapsack.states import STATE_BYTES
from core.memory import resolve_budget

__all__ = ["METHODS", "solve_subset_sum"]

METHODS = ("auto", "bitset", "g-vector")
_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
#: Bitset word updates (items x capacity / 64) above which the state lists are tried first.
STATES_FIRST_WORDS = 100_000_000
#: Time of one state of the state lists, in bitset word updates (measured: a word ~1 ns, a state ~10 ns).
STATE_COST_WORDS = 10


@njit(cache=True, nogil=True)
def _shift_or(words, shifted, weight, lo, hi, g, item):
    """``words |= words << weight`` for the sums ``lo..hi``; ``shifted`` is scratch.

    With a non-empty ``g``, every sum newly set gets ``g[sum] = item``.
    """
    q = np.uint64(weight >> 6)
    r = np.uint64(weight & 63)
    first = max(np.uint64(lo >> 6), q)
    last = np.uint64(hi >> 6)
    if first > last:
        return
    # Two passes over separate arrays vectorise; ">> (63 - r) >> 1" is 0 for r = 0
    # (a shift by 64 would be undefined).
    shifted[first] = words[first - q] << r
    if first > q:
        shifted[first] |= (words[first - q - np.uint64(1)] >> (np.uint64(63) - r)) >> np.uint64(1)
    for j in range(first + np.uint64(1), last + np.uint64(1)):
        low = (words[j - q - np.uint64(1)] >> (np.uint64(63) - r)) >> np.uint64(1)
        shifted[j] = (words[j - q] << r) | low
    shifted[last] &= _ONES >> np.uint64(63 - (hi & 63))
    if len(g) == 0:
        for j in range(first, last + np.uint64(1)):
            words[j] |= shifted[j]
        return
    for j in range(first, last + np.uint64(1)):
        add = shifted[j] & ~words[j]
        if add != 0:
            words[j] |= add
            while add != 0:
                g[(j << np.uint64(6)) + np.uint64(trailing_zeros(add))] = item
                add &= add - np.uint64(1)


@njit(cache=True, nogil=True)
def _is_set(words, s):
    return (words[s >> 6] >> np.uint64(s & 63)) & np.uint64(1) != 0


@njit(cache=True, nogil=True)
def _bitset_sweep(weights, lo, hi, top, target, g):
    """Reachable sums ``0..top`` after the items (stops once ``target`` is reached, if >= 0)."""
    words = np.zeros((top >> 6) + 1, np.uint64)
    shifted = np.zeros_like(words)
    words[0] = 1
    for i in range(len(weights)):
        _shift_or(words, shifted, weights[i], lo[i], hi[i], g, i)
        if target >= 0 and _is_set(words, target):
            break
    return words


@njit(cache=True, nogil=True)
def _g_vector_sweep(weights, lo, hi, top, target, g):
    """Curtis's recursion on ``g`` (``none`` = unreached); returns the reachable sums as a bitset."""
    none = g[0]  # the caller fills g with its unreached marker and sets g[0] after
    g[0] = 0
    for i in range(len(weights)):
        w = np.uint64(weights[i])
        start = max(np.uint64(lo[i]), w)
        stop = np.uint64(hi[i]) + np.uint64(1)
        item = np.uint32(i)
        # Reached before item i: g < i (the marker is larger than every item; the
        # empty sum 0 always), which makes the sums independent of each other.
        for s in range(start, stop):
            reach = (g[s] == none) & ((g[s - w] < item) | (s == w))
            g[s] = item if reach else g[s]
        if g[target] != none:
            break
    words = np.zeros((top >> 6) + 1, np.uint64)
    for s in range(top + 1):
        if g[s] != none:
            words[s >> 6] |= np.uint64(1) << np.uint64(s & 63)
    return words


@njit(cache=True, nogil=True)
def _recover(weights, g, total):
    """Items of a subset with sum ``total``, following ``g`` down."""
    taken = np.zeros(len(weights), np.bool_)
    s = total
    while s > 0:
        i = g[s]
        taken[i] = True
        s -= weights[i]
    return taken


@njit(cache=True, nogil=True)
def _find_split(first, second, target):
    """A sum ``a`` reachable in ``first`` with ``target - a`` reachable in ``second``."""
    for a in range(target + 1):
        if _is_set(first, a) and _is_set(second, target - a):
            return a
    return -1


def _g_dtype(n_items: int):
    return np.uint16 if n_items < 2**16 - 1 else np.uint32


def _windows(weights, floor, top):
    """Per-item sums worth keeping: ``floor - later weights .. min(top, weight so far)``."""
    lo, hi = capacity_windows(weights, floor)
    return lo, np.minimum(np.cumsum(weights), top)


def _greedy(weights, capacity):
    """Greedy fill in the given order: (mask, sum)."""
    taken = np.zeros(len(weights), np.bool_)
    room = capacity
    for i, w in enumerate(weights.tolist()):
        if w <= room:
            taken[i] = True
            room -= w
    return taken, capacity - room


def _sweep_with_g(weights, floor, top, target, method):
    """The reachable-sums bitset and the ``g`` vector over ``0..top``."""
    lo, hi = _windows(weights, floor, top)
    dtype = _g_dtype(len(weights))
    if method == "bitset":
        g = np.zeros(top + 1, dtype)
        return _bitset_sweep(weights, lo, hi, top, target, g), g
    g = np.full(top + 1, np.iinfo(dtype).max, dtype)
    return _g_vector_sweep(weights, lo, hi, top, target, g), g


def _g_bytes(top, n_items, method):
    """Bytes of the ``g`` vector plus the bitsets (the bitset fill also needs a scratch one)."""
    bitset = 8 * ((top >> 6) + 1)
    return (2 if method == "bitset" else 1) * bitset + (top + 1) * np.dtype(_g_dtype(n_items)).itemsize


def _light_bytes(top):
    """Peak bytes of the divide and conquer: two halves' bitsets while a sweep runs with its scratch."""
    return 4 * 8 * ((top >> 6) + 1)


def _subset_with_sum(weights, total, budget, state):
    """Mask of a subset of ``weights`` whose sum is exactly ``total`` (known reachable)."""
    if total == 0:
        return np.zeros(len(weights), np.bool_)
    if len(weights) == 1:  # total is reachable, so it is this item's weight
        return np.ones(1, np.bool_)
    if _g_bytes(total, len(weights), "bitset") <= budget:
        lo, hi = _windows(weights, total, total)
        g = np.zeros(total + 1, _g_dtype(len(weights)))
        _bitset_sweep(weights, lo, hi, total, total, g)
        return _recover(weights, g, total)
    needed = _light_bytes(total)
    if needed > budget:
        raise MemoryBudgetError(f"subset sum up to {total} (divide and conquer)", needed, budget)
    state["method"] = "bitset-divide-conquer"
    mid = len(weights) // 2
    halves = (weights[:mid], weights[mid:])
    sets = [_bitset_sweep(w, *_windows(w, 0, total), total, -1, np.zeros(0, np.uint16)) for w in halves]
    split = _find_split(sets[0], sets[1], total)
    del sets
    return np.concatenate([
        _subset_with_sum(halves[0], split, budget, state),
        _subset_with_sum(halves[1], total - split, budget, state),
    ])


@njit(cache=True, nogil=True)
def _highest_set(words, top):
    """The largest set sum ``<= top`` (-1 if none)."""
    for s in range(top, -1, -1):
        if _is_set(words, s):
            return s
    return -1


@njit(cache=True, nogil=True)
def _lowest_set(words, start, top):
    """The smallest set sum in ``start..top`` (-1 if none)."""
    for s in range(start, top + 1):
        if _is_set(words, s):
            return s
    return -1


def _optimal_mask(weights, capacity, greedy_sum, budget, method, state):
    """Mask of an optimal subset of the (reduced, sorted) weights."""
    total, heaviest = int(weights.sum()), int(weights.max())
    complement = total - capacity + heaviest - 1 < capacity
    if complement:  # the smallest reachable sum >= total - capacity lies below its top
        floor, top = total - capacity, total - capacity + heaviest - 1
    else:
        floor, top = greedy_sum, capacity
    target = floor if complement else capacity
    # a bitset word is about a DP cell's time (docs/notes/knapsack.md, "Subset sum"); the g-vector fills every sum
    cells = len(weights) * (top - floor + 1) / (64 if method == "bitset" else 1)
    limits.check_dp(cells, f"subset sum by the {method} ({len(weights):,} items, sums {floor:,}..{top:,})")
    if _g_bytes(top, len(weights), method) <= budget:
        words, g = _sweep_with_g(weights, floor, top, target, method)
        best = _lowest_set(words, floor, top) if complement else _highest_set(words, top)
        mask = _recover(weights, g, best)
    else:
        needed = _light_bytes(top)
        if needed > budget:
            raise MemoryBudgetError(f"subset sum up to {top} (divide and conquer)", needed, budget)
        state["method"] = "bitset-divide-conquer"
        lo, hi = _windows(weights, floor, top)
        words = _bitset_sweep(weights, lo, hi, top, target, np.zeros(0, np.uint16))
        best = _lowest_set(words, floor, top) if complement else _highest_set(words, top)
        del words
        mask = _subset_with_sum(weights, best, budget, state)
    return ~mask if complement else mask


def _states_mask(weights, capacity, budget, state):
    """An optimal subset by KP1's state lists (profits = weights) when the bitset would be long, else None.

    Their cost does not depend on the capacity; they give up (None) past the
    bitset's cost, or past the budget when the bitset fits it.
    """
    words = len(weights) * (capacity // 64 + 1)
    if words <= STATES_FIRST_WORDS:
        return None
    bitset_fits = _light_bytes(min(capacity, int(weights.sum()) - capacity + int(weights.max()))) <= budget
    max_work = max(words // STATE_COST_WORDS, QUICK_STATES) if bitset_fits else 2**62
    if not bitset_fits:
        limits.check_first_stages(first_stage_bytes(), budget, f"subset sum by state lists ({len(weights):,} items)")
    setup = prepare(weights, weights, capacity)
    try:
        mask, run = solve_by_bounds(setup, QUICK_STATES, max_work, budget // STATE_BYTES, beams=False)
    except TimeLimitError as exc:  # KP1's lists with p = w: say which problem ran past the limit
        raise TimeLimitError(exc.what.replace("KP1", "subset sum", 1), exc.limit_s, exc.reached) from None
    if mask is None and not bitset_fits:
        raise MemoryBudgetError(f"subset sum by state lists ({setup.n_free} free items)",
                                max(STATE_BYTES * int(run.work), budget + 1), budget)
    if mask is not None:
        state["method"] = "states"
    return mask


def solve_subset_sum(problem: SubsetSum, memory_budget_bytes: int | None = None,
                     method: str = "auto", time_limit_s: float | None = None) -> SolverResult:
    """Solve a :class:`SubsetSum` exactly: the largest subset sum not above the capacity.

    Parameters
    ----------
    problem : SubsetSum
    memory_budget_bytes : int, optional
        Most bytes for the bitset and the ``g`` vector; default
        :func:`core.memory.resolve_budget`.
    method : {"auto", "bitset", "g-vector"}
        ``"auto"``: KP1's state lists first when the bitset would be long, else
        the bitset; ``"bitset"`` and ``"g-vector"``: that fill of the ``g``
        vector, always.  A CPU-only option (the GPU reads
        ``gpu.config.SUBSET_SUM_METHOD``).
    time_limit_s : float, optional
        As for :func:`core.knapsack.kp1.solve_kp1`: TimeLimitError past it
        (default None, no limit of its own).

    Returns
    -------
    SolverResult
        ``method`` the DP that ran, ``"bitset-divide-conquer"`` when the ``g``
        vector did not fit the budget, ``"states"`` when KP1's state lists
        (``p = w``, cost independent of the capacity) solved a long-capacity
        instance first, or ``"trivial"`` when no search was needed.

    Raises
    ------
    MemoryBudgetError
        When no method fits the budget.
    TimeLimitError
        When the solve runs past ``time_limit_s``.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    budget = resolve_budget(memory_budget_bytes)
    with limits.time_limit(time_limit_s):
        return _solve(problem, budget, method)


def _solve(problem: SubsetSum, budget: int, method: str) -> SolverResult:
    weights, capacity = problem.weights, problem.capacity
    items = np.flatnonzero((weights > 0) & (weights <= capacity))
    items = items[np.argsort(-weights[items], kind="stable")]  # heaviest first: the capacity is hit sooner
    state = {"method": "trivial"}
    chosen = items
    if int(weights[items].sum()) > capacity:
        gcd = weights_gcd(weights[items])
        scaled, cap = weights[items] // gcd, capacity // gcd
        mask, greedy_sum = _greedy(scaled, cap)
        if greedy_sum < cap:
            dp = "bitset" if method == "auto" else method
            state["method"] = dp
            found = _states_mask(scaled, cap, budget, state) if method == "auto" else None
            mask = _optimal_mask(scaled, cap, greedy_sum, budget, dp, state) if found is None else found
        chosen = items[mask]
    selected = np.sort(chosen).astype(np.int64)
    return SolverResult(int(weights[selected].sum()), selected, state["method"])
