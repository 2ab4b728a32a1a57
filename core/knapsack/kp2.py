"""Two-constraint 0-1 knapsack (KP2) on the CPU, one instance or many at once.

The DP over capacity pairs, its reductions and the batches:
docs/notes/knapsack.md, "KP2 and batches".
"""

from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit, prange

from core.knapsack import limits
from core.knapsack.bitpack import pack_flags, test_bit, words_for
from core.knapsack.kp1_dp import capacity_windows, row_dtype
from core.knapsack.kp2_states import DONE, STATE_BYTES, solve_kp2_by_states
from core.knapsack.problems import KP2, MemoryBudgetError, SolverResult, weights_gcd
from core.knapsack.progress import report
from core.memory import resolve_budget
from core.parallel import PARALLEL_LOCK

__all__ = ["METHODS", "solve_kp2", "solve_kp2_batch"]


@njit(cache=True, nogil=True)
def _relax_line(src, dst, w2, profit, lo2, hi2, flags):
    """``dst[b] = max(dst[b], src[b - w2] + profit)`` on ``lo2..hi2``; flags mark the takes."""
    w = np.uint64(w2)
    start = np.uint64(lo2)
    stop = np.uint64(hi2) + np.uint64(1)
    split = min(max(start, w), stop)
    for b in range(start & ~np.uint64(63), split):
        flags[b] = 0
    for b in range(split, stop):
        x = src[b - w] + profit
        y = dst[b]
        flags[b] = x > y
        dst[b] = max(x, y)
    for b in range(stop, (np.uint64(hi2) | np.uint64(63)) + np.uint64(1)):
        flags[b] = 0


@njit(cache=True, nogil=True)
def _grow(table, lo1, hi1_prev, hi1, lo2, hi2_prev, hi2):
    """Extend the valid box: beyond the weight of the items so far a row or column is constant."""
    for a in range(min(lo1, hi1_prev), hi1_prev + 1):
        for b in range(hi2_prev + 1, hi2 + 1):
            table[a, b] = table[a, hi2_prev]
    for a in range(max(hi1_prev + 1, lo1), hi1 + 1):
        table[a, lo2 : hi2 + 1] = table[hi1_prev, lo2 : hi2 + 1]


@njit(cache=True, nogil=True)
def _sweep(profits, w1, w2, cap1, cap2, win, bits, offsets, stop):
    """Run the DP in place; return the table (valid at ``(cap1, cap2)``, everywhere without bounds).

    ``win`` is (4, n): lo1, hi1, lo2, hi2.  Item ``i``'s bits fill
    ``bits[offsets[i]:offsets[i + 1]]``: one run of words per row of its box.
    Empty ``offsets`` computes values only.  ``stop`` (1,) uint8 is polled
    before each item: once nonzero the sweep returns unfinished (the caller
    raises, see :mod:`core.knapsack.limits`).
    """
    table = np.zeros((cap1 + 1, cap2 + 1), profits.dtype)
    line = np.zeros(cap2 + 1, profits.dtype)
    flags = np.zeros(((cap2 >> 6) + 1) << 6, np.uint8)
    hi1_prev = 0
    hi2_prev = 0
    for i in range(len(profits)):
        if stop[0]:
            return table
        lo1, hi1, lo2, hi2 = win[0, i], win[1, i], win[2, i], win[3, i]
        _grow(table, lo1, hi1_prev, hi1, lo2, hi2_prev, hi2)
        n_words = (hi2 >> 6) - (lo2 >> 6) + 1
        for a in range(hi1, max(lo1, w1[i]) - 1, -1):
            if w1[i] == 0:  # the item reads its own row: read a copy
                line[:] = table[a]
                src = line
            else:
                src = table[a - w1[i]]
            _relax_line(src, table[a], w2[i], profits[i], lo2, hi2, flags)
            if len(offsets) > 0:
                start = offsets[i] + (a - lo1) * n_words
                pack_flags(flags, lo2 >> 6, bits[start : start + n_words])
        hi1_prev, hi2_prev = hi1, hi2
    _grow(table, 0, hi1_prev, cap1, 0, hi2_prev, cap2)
    return table


@njit(cache=True, nogil=True)
def _backtrack(w1, w2, cap1, cap2, win, bits, offsets):
    taken = np.zeros(len(w1), np.bool_)
    a, b = cap1, cap2
    for i in range(len(w1) - 1, -1, -1):
        lo1, hi1, lo2, hi2 = win[0, i], win[1, i], win[2, i], win[3, i]
        a, b = min(a, hi1), min(b, hi2)
        n_words = (hi2 >> 6) - (lo2 >> 6) + 1
        start = offsets[i] + (a - lo1) * n_words
        if a >= w1[i] and test_bit(bits[start : start + n_words], lo2 >> 6, b):
            taken[i] = True
            a -= w1[i]
            b -= w2[i]
    return taken


def _plan(w1, w2, cap1, cap2):
    """Windows (4, n) and the word offsets of the decision bits."""
    lo1, hi1 = capacity_windows(w1, cap1)
    lo2, hi2 = capacity_windows(w2, cap2)
    offsets = np.zeros(len(w1) + 1, np.int64)
    np.cumsum((hi1 - lo1 + 1) * words_for(lo2, hi2), out=offsets[1:])
    return np.stack([lo1, hi1, lo2, hi2]), offsets


def _window_cells(win) -> float:
    """Cells of the DP within the windows ``win`` (4, n) (float: no overflow)."""
    return float(np.sum((win[1] - win[0] + 1).astype(np.float64) * (win[3] - win[2] + 1)))


def _table_bytes(cap1, cap2, itemsize):
    return (cap1 + 1) * (cap2 + 1) * itemsize + (cap2 + 1) * (itemsize + 1) + 64


@njit(cache=True, nogil=True)
def _solve_direct(profits, w1, w2, cap1, cap2, win, offsets, stop):
    bits = np.zeros(offsets[-1], np.uint64)
    _sweep(profits, w1, w2, cap1, cap2, win, bits, offsets, stop)
    return _backtrack(w1, w2, cap1, cap2, win, bits, offsets)


def _reduce(problem: KP2):
    """Items worth solving for (sorted), the always-taken ones, scaled weights and capacities."""
    p, w1, w2 = problem.profits, problem.weights1, problem.weights2
    c1, c2 = problem.capacity1, problem.capacity2
    always = np.flatnonzero((w1 == 0) & (w2 == 0) & (p > 0))
    items = np.flatnonzero((w1 <= c1) & (w2 <= c2) & (p > 0) & ((w1 > 0) | (w2 > 0)))
    # Lightest first (relative to the capacities): short early rows, short late rows.
    size = w1[items] / max(c1, 1) + w2[items] / max(c2, 1)
    items = items[np.argsort(size, kind="stable")]
    scaled = []
    for w, c in ((w1[items], c1), (w2[items], c2)):
        g = weights_gcd(w)
        scaled.append((w // g, min(c // g, int(w.sum()) // g)))
    (sw1, sc1), (sw2, sc2) = scaled
    dtype = row_dtype(int(p[items].sum()))
    return always, items, p[items].astype(dtype), sw1, sw2, sc1, sc2


def _prepare(p, w1, w2, cap1, cap2):
    """Either a mask solving the instance outright, or the fitting items and capped capacities."""
    fits = (w1 <= cap1) & (w2 <= cap2)
    if w1[fits].sum() <= cap1 and w2[fits].sum() <= cap2:
        return fits, None
    return fits, (p[fits], w1[fits], w2[fits], min(cap1, int(w1[fits].sum())), min(cap2, int(w2[fits].sum())))


def _direct_bytes(p, w1, w2, cap1, cap2):
    win, offsets = _plan(w1, w2, cap1, cap2)
    return 8 * int(offsets[-1]) + _table_bytes(cap1, cap2, p.itemsize), win, offsets


def _solve_items(p, w1, w2, cap1, cap2, budget, state):
    """Boolean mask of an optimal choice among items with positive profit."""
    fits, reduced = _prepare(p, w1, w2, cap1, cap2)
    if reduced is None:
        return fits
    mask = np.zeros(len(p), np.bool_)
    mask[fits] = _solve_fitting(*reduced, budget, state)
    return mask


def _solve_fitting(p, w1, w2, cap1, cap2, budget, state):
    needed, win, offsets = _direct_bytes(p, w1, w2, cap1, cap2)
    what = f"KP2 by the capacity DP ({len(p):,} items, capacities {cap1:,} x {cap2:,})"
    limits.check_dp(_window_cells(win), what)
    if needed <= budget:
        taken = _solve_direct(p, w1, w2, cap1, cap2, win, offsets, limits.stop_flag())
        limits.check(what, "stopped within the DP")
        return taken
    light = 4 * _table_bytes(cap1, cap2, 8)  # both halves' tables and their int64 sum
    if light > budget:
        raise MemoryBudgetError(f"KP2 with capacities {cap1} x {cap2} (divide and conquer)", light, budget)
    state["method"] = "dp-divide-conquer"
    mid = len(p) // 2
    first = _full_table(p[:mid], w1[:mid], w2[:mid], cap1, cap2)
    second = _full_table(p[mid:], w1[mid:], w2[mid:], cap1, cap2)
    limits.check(what, "stopped within divide and conquer's tables")
    total = first.astype(np.int64) + second[::-1, ::-1]
    del first, second
    s1, s2 = np.unravel_index(int(np.argmax(total)), total.shape)
    del total
    left = _solve_items(p[:mid], w1[:mid], w2[:mid], int(s1), int(s2), budget, state)
    right = _solve_items(p[mid:], w1[mid:], w2[mid:], cap1 - int(s1), cap2 - int(s2), budget, state)
    return np.concatenate([left, right])


def _full_table(p, w1, w2, cap1, cap2):
    lo1, hi1 = capacity_windows(w1, cap1, lower_bound=False)
    lo2, hi2 = capacity_windows(w2, cap2, lower_bound=False)
    win = np.stack([lo1, hi1, lo2, hi2])
    return _sweep(p, w1, w2, cap1, cap2, win, np.zeros(0, np.uint64), np.zeros(0, np.int64), limits.stop_flag())


METHODS = ("auto", "dp", "states")
#: ``auto`` runs the DP outright below this many cells.
DP_OUTRIGHT_CELLS = 20_000_000


def solve_kp2(problem: KP2, memory_budget_bytes: int | None = None, method: str = "auto") -> SolverResult:
    """Solve a :class:`KP2` exactly.

    ``memory_budget_bytes`` bounds the DP table and decision bits or the state
    lists (default :func:`core.memory.resolve_budget`).  ``method``: ``"dp"`` the
    DP over capacity pairs, ``"states"`` the state lists of
    :mod:`core.knapsack.kp2_states` (cost independent of the capacities),
    ``"auto"`` the DP when it is small, else the lists, handing over to the DP
    when they have generated a tenth of its cells (none when it does not fit).
    The result's ``method`` is ``"dp"``, ``"dp-divide-conquer"`` (the bits did
    not fit the budget) or ``"states"``; MemoryBudgetError when no method fits.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    budget = resolve_budget(memory_budget_bytes)
    always, items, p, w1, w2, c1, c2 = _reduce(problem)
    state = {"method": "dp"}
    if not len(items):
        mask = np.zeros(0, np.bool_)
    elif method == "dp":
        mask = _solve_items(p, w1, w2, c1, c2, budget, state)
    else:
        mask = _solve_large(p, w1, w2, c1, c2, budget, method, state)
    return _result(problem, always, items[mask], state["method"])


def _dp_cells(w1, w2, cap1, cap2) -> int:
    """Cells of the DP over capacity pairs (its windows), a Python integer."""
    (lo1, hi1), (lo2, hi2) = capacity_windows(w1, cap1), capacity_windows(w2, cap2)
    return sum((int(b1) - int(a1) + 1) * (int(b2) - int(a2) + 1) for a1, b1, a2, b2 in zip(lo1, hi1, lo2, hi2))


def _dp_cost(reduced) -> tuple[int, int]:
    """``(cells, least bytes)`` of the capacity DP of a :func:`_prepare`'d instance, in Python integers: with
    capacities of 10^10 numpy's products overflow; the table is filled too."""
    cells = _dp_cells(*reduced[1:]) + (reduced[3] + 1) * (reduced[4] + 1)
    return cells, min(cells // 8 + _table_bytes(reduced[3], reduced[4], 8), 4 * _table_bytes(reduced[3], reduced[4], 8))


def _solve_large(p, w1, w2, cap1, cap2, budget, method, state):
    """Mask of an optimal choice: the state lists, or the DP where ``auto`` finds it cheaper."""
    fits, reduced = _prepare(p, w1, w2, cap1, cap2)
    if reduced is None:
        return fits
    cells, least = _dp_cost(reduced)
    if method == "auto" and _outright(cells, least, budget):
        report("dp")
        return _solve_items(p, w1, w2, cap1, cap2, budget, state)
    dp_fits = least <= budget
    rp, rw1, rw2, rc1, rc2 = reduced
    report("states")
    status, sub = solve_kp2_by_states(rp.astype(np.int64), rw1, rw2, rc1, rc2,
                                      cells // 10 if method == "auto" and dp_fits else 2**62, budget // STATE_BYTES)
    if status == DONE:
        state["method"] = "states"
        mask = np.zeros(len(p), np.bool_)
        mask[fits] = sub
        return mask
    if method == "auto" and dp_fits:
        report("dp")
        return _solve_items(p, w1, w2, cap1, cap2, budget, state)
    raise MemoryBudgetError(f"KP2 with capacities {rc1:,} x {rc2:,} (the state lists outgrew the budget; the "
                            f"capacity DP needs {least:,} bytes)", least if method == "auto" else budget + 1, budget)


def _result(problem, always, chosen, method) -> SolverResult:
    selected = np.sort(np.concatenate([always, chosen])).astype(np.int64)
    return SolverResult(int(problem.profits[selected].sum()), selected, method)


@njit(cache=True, nogil=True, parallel=True)
def _batch_kernel(p, w1, w2, item_start, caps, win, offsets, taken, stop):
    """Solve instance ``k`` (items ``item_start[k]:item_start[k + 1]``) on one thread each."""
    for k in prange(len(caps)):
        s, e = item_start[k], item_start[k + 1]
        taken[s:e] = _solve_direct(
            p[s:e], w1[s:e], w2[s:e], caps[k, 0], caps[k, 1], win[:, s:e], offsets[s + k : e + k + 1], stop
        )


def solve_kp2_batch(problems, memory_budget_bytes: int | None = None) -> list[SolverResult]:
    """Solve many :class:`KP2` instances: those whose capacity DP :func:`solve_kp2` would run outright by that
    DP, one instance per CPU thread, the others one at a time as :func:`solve_kp2` would (by the state lists,
    several times faster than the DP on larger capacities: 43 instances of class_a.txt 0.9 s against 6.4 s).

    Parameters
    ----------
    problems : sequence of KP2
    memory_budget_bytes : int, optional
        Most bytes in use at once (as many instances are in flight as numba has
        threads); default as for :func:`solve_kp2`.

    Returns
    -------
    list of SolverResult
        In the order of ``problems``; ``method`` ``"dp-batch"``, or as for
        :func:`solve_kp2` for instances solved one at a time (by the lists, or
        that side by side would exceed the budget).
    """
    budget = resolve_budget(memory_budget_bytes)
    problems = list(problems)
    reduced = [_reduce(problem) for problem in problems]
    dtype = np.result_type(np.int32, *[r[2].dtype for r in reduced])
    jobs, masks = [], [None] * len(problems)
    for k, (_, items, p, w1, w2, c1, c2) in enumerate(reduced):
        fits, rest = _prepare(p.astype(dtype), w1, w2, c1, c2) if len(items) else (np.zeros(0, bool), None)
        masks[k] = fits
        if rest is not None:
            jobs.append((k, rest, _direct_bytes(*rest)))
    methods = ["dp-batch"] * len(problems)
    outright = [_dp_outright(rest, budget) for _, rest, _ in jobs]
    for k, rest, _ in [job for job, dp in zip(jobs, outright) if not dp]:  # as solve_kp2 would: the lists
        state = {"method": "dp"}
        masks[k] = masks[k].copy()
        masks[k][masks[k]] = _solve_large(*rest, budget, "auto", state)
        methods[k] = state["method"]
    jobs = [job for job, dp in zip(jobs, outright) if dp]
    largest = max((needed for _, _, (needed, _, _) in jobs), default=0)
    if largest * min(get_num_threads(), len(jobs)) <= budget:
        _run_batch(jobs, masks)
    else:  # too big to run side by side: one at a time, each within the budget
        for k, rest, _ in jobs:
            state = {"method": "dp"}
            masks[k] = masks[k].copy()
            masks[k][masks[k]] = _solve_fitting(*rest, budget, state)
            methods[k] = state["method"]
    return [
        _result(problem, r[0], r[1][mask], method)
        for problem, r, mask, method in zip(problems, reduced, masks, methods)
    ]


def _dp_outright(reduced, budget) -> bool:
    """Whether :func:`solve_kp2`'s ``auto`` runs the capacity DP outright on a :func:`_prepare`'d instance."""
    return _outright(*_dp_cost(reduced), budget)


def _outright(cells: int, least: int, budget: int) -> bool:
    """``auto``'s rule: the DP outright where it has at most DP_OUTRIGHT_CELLS cells and fits the budget."""
    return cells <= DP_OUTRIGHT_CELLS and least <= budget


def _run_batch(jobs, masks):
    """Concatenate the jobs' items (prefix offsets) and solve them all in one parallel call."""
    if not jobs:
        return
    counts = np.array([len(rest[0]) for _, rest, _ in jobs])
    item_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    cat = [np.concatenate([rest[j] for _, rest, _ in jobs]) for j in range(3)]
    caps = np.array([[rest[3], rest[4]] for _, rest, _ in jobs], np.int64)
    win = np.concatenate([plan[1] for _, _, plan in jobs], axis=1)
    offsets = np.concatenate([plan[2] for _, _, plan in jobs])
    taken = np.zeros(len(cat[0]), np.bool_)
    what = f"{len(jobs):,} KP2 instances side by side"
    limits.check_dp(_window_cells(win) / min(get_num_threads(), len(jobs)), what)
    with PARALLEL_LOCK:
        _batch_kernel(cat[0], cat[1], cat[2], item_start, caps, win, offsets, taken, limits.stop_flag())
    limits.check(what, "stopped within the DP")
    for j, (k, _, _) in enumerate(jobs):
        masks[k] = masks[k].copy()
        masks[k][masks[k]] = taken[item_start[j] : item_start[j + 1]]
