"""Multiple-choice knapsack (MCKP) on the CPU: DP over capacity, one class at a time.

``f_k[c] = max_j f_{k-1}[c - w_j] + p_j`` with a decision row per class;
dominance and other exact reductions first: docs/notes/knapsack.md, "MCKP".
"""

from __future__ import annotations

import numpy as np
from numba import njit

from core.knapsack import limits
from core.knapsack.kp1_dp import capacity_windows, row_dtype
from core.knapsack.mckp_core import DONE, STATE_BYTES, solve_classes_by_states
from core.knapsack.problems import MCKP, MemoryBudgetError, SolverResult, weights_gcd
from core.knapsack.progress import report
from core.memory import resolve_budget

__all__ = ["METHODS", "QUICK_WORK", "dominance_filter", "solve_mckp", "solve_mckp_quick"]


def dominance_filter(profits: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Indices of the undominated items of a class, lightest first (profits then strictly increase).

    An item is dominated when another is no heavier and at least as profitable
    (ties keep the first index).
    """
    order = np.lexsort((np.arange(len(weights)), -profits, weights))
    best = np.maximum.accumulate(profits[order])
    keep = np.ones(len(order), bool)
    keep[1:] = profits[order][1:] > best[:-1]
    return order[keep]


@njit(cache=True, nogil=True)
def _relax_class(old, new, choice, profits, weights, lo, hi):
    """``new[c] = max_j old[c - weights[j]] + profits[j]`` on ``lo..hi``; ``choice`` gets the argmax j.

    ``weights[0] == profits[0] == 0``; ``choice`` is indexed from ``lo`` (may be empty).
    """
    start, stop = np.uint64(lo), np.uint64(hi) + np.uint64(1)
    store = len(choice) > 0
    for c in range(start, stop):
        new[c] = old[c]
    if store:
        choice[:] = 0
    for j in range(1, len(weights)):
        w = np.uint64(weights[j])
        p = profits[j]
        for c in range(max(start, w), stop):
            x = old[c - w] + p
            better = x > new[c]
            new[c] = max(x, new[c])
            if store:
                choice[c - start] = j if better else choice[c - start]


@njit(cache=True, nogil=True)
def _sweep(profits, weights, class_start, capacity, lo, hi, choices, offsets):
    """Run the DP over the classes; return the last row (valid on ``lo[-1]..capacity``)."""
    old = np.zeros(capacity + 1, profits.dtype)
    new = np.zeros(capacity + 1, profits.dtype)
    store = len(offsets) > 0
    hi_prev = 0
    for k in range(len(class_start) - 1):
        for c in range(hi_prev + 1, hi[k] + 1):  # the row is constant past the heaviest items so far
            old[c] = old[hi_prev]
        s, e = class_start[k], class_start[k + 1]
        choice = choices[offsets[k] : offsets[k + 1]] if store else choices[:0]
        _relax_class(old, new, choice, profits[s:e], weights[s:e], lo[k], hi[k])
        old, new = new, old
        hi_prev = hi[k]
    for c in range(hi_prev + 1, capacity + 1):
        old[c] = old[hi_prev]
    return old


@njit(cache=True, nogil=True)
def _backtrack(weights, class_start, capacity, lo, hi, choices, offsets):
    chosen = np.zeros(len(class_start) - 1, np.int64)
    c = capacity
    for k in range(len(class_start) - 2, -1, -1):
        c = min(c, hi[k])
        j = choices[offsets[k] + c - lo[k]]
        chosen[k] = j
        c -= weights[class_start[k] + j]
    return chosen


class _Reduced:
    """Flattened DP classes (lightest item first, at weight and profit 0) and the way back."""

    def __init__(self, problem: MCKP):
        self.base_weight = problem.min_weight
        capacity = problem.capacity - self.base_weight
        self.kept, self.fixed = [], np.zeros(problem.n_classes, np.int64)
        self.dp_classes, prof, wts = [], [], []
        for k, (p, w) in enumerate(problem.classes):
            keep = dominance_filter(p, w)
            keep = keep[w[keep] - w[keep[0]] <= capacity]
            self.fixed[k] = keep[0]
            if len(keep) > 1:
                self.dp_classes.append(k)
                self.kept.append(keep)
                prof.append(p[keep] - p[keep[0]])
                wts.append(w[keep] - w[keep[0]])
        sizes = [len(x) for x in wts]
        self.class_start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        weights = np.concatenate(wts) if wts else np.zeros(0, np.int64)
        # as for KP1, KP2 and subset sum: the weights' gcd divides out of the weights and the capacity
        gcd = weights_gcd(weights)
        self.weights = weights // gcd
        heaviest = np.array([x[-1] for x in wts], np.int64) // gcd
        self.capacity = min(capacity // gcd, int(heaviest.sum()))
        self.profits = (np.concatenate(prof) if prof else np.zeros(0, np.int64)).astype(
            row_dtype(int(sum(int(x[-1]) for x in prof)))
        )
        self.choice_dtype = (np.uint8 if max(sizes, default=1) <= 256
                             else np.uint16 if max(sizes) <= 65536 else np.uint32)

    def subset(self, first, stop):
        """Profits, weights, class starts of the DP classes ``first..stop-1``."""
        s, e = self.class_start[first], self.class_start[stop]
        return self.profits[s:e], self.weights[s:e], self.class_start[first : stop + 1] - s


def _heaviest(weights, class_start):
    return np.maximum.reduceat(weights, class_start[:-1]) if len(class_start) > 1 else np.zeros(0, np.int64)


def _solve_classes(red, first, stop, capacity, budget, state):
    """Chosen DP item of the DP classes ``first..stop-1`` within ``capacity``."""
    p, w, starts = red.subset(first, stop)
    lo, hi = capacity_windows(_heaviest(w, starts), capacity)
    itemsize = np.dtype(red.choice_dtype).itemsize
    # sizes in Python integers: near int64's range (capacities of 2**60) numpy's sums overflow
    cells = sum(int(b) - int(a) + 1 for a, b in zip(lo, hi))
    rows = 2 * (int(capacity) + 1) * p.itemsize
    if cells * itemsize + rows <= budget:
        offsets = np.zeros(stop - first + 1, np.int64)
        np.cumsum(hi - lo + 1, out=offsets[1:])
        choices = np.zeros(int(offsets[-1]), red.choice_dtype)
        _sweep(p, w, starts, capacity, lo, hi, choices, offsets)
        return _backtrack(w, starts, capacity, lo, hi, choices, offsets)
    if stop - first == 1 or 4 * (capacity + 1) * 8 > budget:
        needed = max(4 * (int(capacity) + 1) * 8, (int(hi[0]) - int(lo[0]) + 1) * itemsize + rows)
        raise MemoryBudgetError(f"MCKP with capacity {capacity} (divide and conquer)", needed, budget)
    state["method"] = "dp-divide-conquer"
    mid = (first + stop) // 2
    rows = [_full_row(red, a, b, capacity) for a, b in ((first, mid), (mid, stop))]
    split = int(np.argmax(rows[0].astype(np.int64) + rows[1][::-1]))
    del rows
    return np.concatenate([
        _solve_classes(red, first, mid, split, budget, state),
        _solve_classes(red, mid, stop, capacity - split, budget, state),
    ])


def _full_row(red, first, stop, capacity):
    """The last DP row of classes ``first..stop-1`` over every capacity (no decisions)."""
    p, w, starts = red.subset(first, stop)
    lo, hi = capacity_windows(_heaviest(w, starts), capacity, lower_bound=False)
    return _sweep(p, w, starts, capacity, lo, hi, np.zeros(0, np.uint8), np.zeros(0, np.int64))


METHODS = ("auto", "dp", "states")
#: ``auto`` runs the DP outright below this many cells (after the reductions).
DP_OUTRIGHT_CELLS = 2_000_000


def solve_mckp(problem: MCKP, memory_budget_bytes: int | None = None, method: str = "auto",
               time_limit_s: float | None = None) -> SolverResult:
    """Solve an :class:`MCKP` exactly (one item from every class).

    Parameters
    ----------
    problem : MCKP
    memory_budget_bytes : int, optional
        Most bytes for the DP and decision rows or the state lists (default
        :func:`core.memory.resolve_budget`).
    method : {"auto", "dp", "states"}
        ``dp``: the DP over capacity (cost classes x C).  ``states``: LP bound,
        reduced-cost fixing and state lists over a core of classes
        (:mod:`core.knapsack.mckp_core`, cost independent of C).  ``auto``: the DP
        when it is small, else the state lists, handing over to the DP when they
        have generated a tenth of its cells (none when the DP does not fit).
    time_limit_s : float, optional
        As for :func:`core.knapsack.kp1.solve_kp1`: TimeLimitError past it
        (default None, no limit of its own).

    Returns
    -------
    SolverResult
        ``selected`` (m,): the chosen item's index within each class; ``method``
        ``"dp"``, ``"dp-divide-conquer"`` (the decisions did not fit the budget) or
        ``"states"``.

    Raises
    ------
    ValueError
        For an unknown ``method``.
    MemoryBudgetError
        When no method fits the budget (at once when the budget cannot hold the
        state lists' preparation and first class).
    TimeLimitError
        When the solve runs past ``time_limit_s``.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    budget = resolve_budget(memory_budget_bytes)
    with limits.time_limit(time_limit_s):
        return _solve(problem, budget, method)


#: Candidate states of :func:`solve_mckp_quick`'s lists.
QUICK_WORK = 1_000_000


def solve_mckp_quick(problem: MCKP, memory_budget_bytes: int | None = None) -> SolverResult | None:
    """The reductions and at most :data:`QUICK_WORK` candidate states of the lists: the optimum where they settle it.

    None where they do not (no DP runs): for a caller with a faster DP of its
    own, the GPU twin.
    """
    return _solve(problem, resolve_budget(memory_budget_bytes), "quick")


def _solve(problem: MCKP, budget: int, method: str) -> SolverResult | None:
    red = _Reduced(problem)
    state = {"method": "reduction" if method == "quick" else "dp"}
    selected = red.fixed.copy()
    n_dp = len(red.dp_classes)
    if n_dp:
        chosen = _chosen(red, n_dp, budget, method, state)
        if chosen is None:  # "quick": the lists did not settle it
            return None
        for k, keep, j in zip(red.dp_classes, red.kept, chosen):
            selected[k] = keep[j]
    value = sum(int(p[j]) for (p, _), j in zip(problem.classes, selected))
    return SolverResult(value, selected, state["method"])


def _chosen(red, n_dp, budget, method, state):
    """Chosen DP item of every DP class, by the method asked for (or chosen by ``auto``)."""
    if method == "quick":
        if first_stage_bytes(red) > budget:
            return None
        status, choice, _ = solve_classes_by_states(red.profits.astype(np.int64), red.weights, red.class_start,
                                                    red.capacity, QUICK_WORK, budget // STATE_BYTES)
        state["method"] = "states"
        return choice if status == DONE else None
    cells, dp_bytes = _dp_cost(red, n_dp)
    what = f"MCKP by the capacity DP ({n_dp:,} classes, capacity {red.capacity:,})"
    if method == "dp" or (method == "auto" and cells <= DP_OUTRIGHT_CELLS and dp_bytes <= budget):
        report("dp")
        limits.check_dp(cells, what)
        return _solve_classes(red, 0, n_dp, red.capacity, budget, state)
    report("states")
    dp_fits = dp_bytes <= budget
    if not (method == "auto" and dp_fits):  # no DP to hand over to: refuse now what the first class would
        limits.check_first_stages(first_stage_bytes(red), budget, f"MCKP by state lists ({n_dp:,} classes)")
    max_work = cells // 10 if method == "auto" and dp_fits else 2**62
    status, choice, _ = solve_classes_by_states(
        red.profits.astype(np.int64), red.weights, red.class_start, red.capacity, max_work, budget // STATE_BYTES)
    if status == DONE:
        state["method"] = "states"
        return choice
    if method == "auto" and dp_fits:
        report("dp")
        limits.check_dp(cells, what)
        return _solve_classes(red, 0, n_dp, red.capacity, budget, state)
    # of the lists only "more than the budget" is known; the DP's need is exact
    needed = dp_bytes if method == "auto" else budget + 1
    raise MemoryBudgetError(f"MCKP with capacity {red.capacity} and {n_dp} classes (the state lists outgrew "
                            f"the budget; the capacity DP needs {dp_bytes:,} bytes)", needed, budget)


def first_stage_bytes(red) -> int:
    """Bytes of the state lists' first class as the running guard counts them (three states per candidate)."""
    largest = int(np.diff(red.class_start).max(initial=1))
    return STATE_BYTES * 3 * largest


def _dp_cost(red, n_dp):
    """Cells of the DP over capacity and the fewest bytes it runs in (divide and conquer's rows)."""
    p, w, starts = red.subset(0, n_dp)
    lo, hi = capacity_windows(_heaviest(w, starts), red.capacity)
    cells = sum(int(b) - int(a) + 1 for a, b in zip(lo, hi))
    return cells + int(red.capacity) + 1, 4 * (int(red.capacity) + 1) * 8  # the rows are filled too
