"""0-1 knapsack (KP1) on the CPU: the method chosen per instance, the state lists (:mod:`core.knapsack.kp1_first`,
:mod:`core.knapsack.kp1_core`) or the capacity DP (:mod:`core.knapsack.kp1_dp`).

Notes: docs/notes/knapsack.md, "KP1 without a capacity-long row" (step 23: the first pass).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from core.knapsack import limits
from core.knapsack.grouping import group_identical
from core.knapsack.kp1_core import (
    SKIP_HOPELESS,
    after_quick_run,
    in_caller_order,
    prepare,
    setup_from_handover,
    solve_by_bounds,
)
from core.knapsack.kp1_dp import capacity_windows, dp_mask, row_bytes, row_dtype
from core.knapsack.kp1_first import (
    BROKEN,
    FIRST_PASS_ITEMS,
    FITS,
    GROUPED,
    HANDOVER,
    REDUCED,
    REFUSED,
    SOLVED,
    first_pass,
)
from core.knapsack.kp1_greedy import free_summary
from core.knapsack.problems import KP1, KP2, MemoryBudgetError, SolverResult
from core.knapsack.progress import report
from core.knapsack.states import OUT_OF_WORK, STATE_BYTES
from core.memory import resolve_budget

__all__ = ["METHODS", "capacity_windows", "row_dtype", "solve_kp1", "solve_kp1_quick"]

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
#: Seconds within which a first pass (at most ``FIRST_PASS_ITEMS`` items, ``KP1_QUICK_STATES`` states generated)
#: ends: under a time limit with more left, it polls no flag (:func:`core.knapsack.limits.stop_flag_within`).
#: The slowest of 384 (Pisinger's classes 1-6 and 11-16, n = 1000 and 2000, R = 100-10^6) took 1.3 ms on the
#: benchmark VM, with 215,798 of the 262,144 states it may generate.
FIRST_PASS_S = 1.0
#: States the lists hold at the least (their first buffers).
STATE_MIN_STATES = 6 * 1024


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
    solver = _solve_exactly_ordered if method != "dp" and getattr(problem, "huge", True) and \
        efficiencies_ambiguous(problem.profits, problem.weights) else _solve
    if time_limit_s is None:  # the enclosing limit, if any (the context would cost a small solve 3 us)
        return solver(problem, budget, method)
    with limits.time_limit(time_limit_s):
        return solver(problem, budget, method)


def efficiencies_ambiguous(profits, weights) -> bool:
    """Whether two items' efficiencies p / w differ but lie within float64's rounding of each other.

    The lists' break item, Dantzig's bound and the reductions order items by
    float64 efficiencies; items of values near 2^57 (p = 2^57 + 1, 2^57 + 10, w =
    2^57 + 7, ...) round alike, the bound fell below the optimum and a worse
    choice came back.  Adjacent items of the float order are compared exactly.
    """
    usable = (profits > 0) & (weights > 0)
    p, w = profits[usable], weights[usable]
    eff = p / w
    order = np.argsort(eff, kind="stable")
    e = eff[order]
    near = np.flatnonzero(np.diff(e) <= 2.0**-50 * e[1:])  # (within 4 units of the last place)
    p, w = p[order].tolist(), w[order].tolist()
    return any(p[k] * w[k + 1] != p[k + 1] * w[k] for k in near.tolist())


def _solve_exactly_ordered(problem: KP1, budget: int, method: str) -> SolverResult:
    """A KP1 whose efficiencies float64 cannot order (:func:`efficiencies_ambiguous`), solved exactly as a KP2
    of no second weight: its state lists compare profits and weights as integers (slower, never wrong)."""
    from core.knapsack.kp2 import solve_kp2

    n = len(problem.profits)
    result = solve_kp2(KP2(problem.profits, problem.weights, np.zeros(n, np.int64), problem.capacity, 0), budget)
    return SolverResult(result.value, result.selected, f"{result.method} (exact efficiencies)")


def solve_kp1_quick(problem: KP1, memory_budget_bytes: int | None = None) -> SolverResult | None:
    """The reductions and the first :data:`QUICK_STATES` states of the lists: the optimum where they settle it.

    None where they do not (no DP runs): for a caller with a faster DP of its
    own, the GPU twin, which thus leaves to the host the many instances the
    lists solve in milliseconds.
    """
    return _solve(problem, resolve_budget(memory_budget_bytes), "quick")


def _solve(problem: KP1, budget: int, method: str) -> SolverResult | None:
    profits, weights = problem.profits, problem.weights
    outcome = None
    if method in ("auto", "states") and len(profits) <= FIRST_PASS_ITEMS:  # (core.knapsack.kp1_first)
        outcome, numbers, selected, handover = first_pass(
            profits, weights, problem.capacity, budget, method == "auto", KP1_QUICK_STATES, KP1_QUICK_HELD,
            STATE_BYTES, first_stage_bytes(), STATE_COST_CELLS, SKIP_HOPELESS, limits.stop_flag_within(FIRST_PASS_S))
        if outcome in _SETTLED:
            return SolverResult(int(numbers[0]), selected, _SETTLED[outcome])
    always, items, items_weight = _usable(profits, weights, problem.capacity)
    state = {"method": "reduction" if method == "quick" else "dp"}
    chosen = items
    if outcome in (HANDOVER, REFUSED, BROKEN):  # (the first pass's items are these usable ones)
        chosen = items[_handed_over(problem.capacity, budget, state, outcome, numbers, handover)]
    elif items_weight > problem.capacity:
        every = len(items) == len(profits)  # (writable copies, as the compiled code's signatures have them;
        p, w = (profits.copy(), weights.copy()) if every else (profits[items], weights[items])  # half the time)
        if method == "dp":
            mask = dp_mask(p, w, problem.capacity, budget, state)
        else:
            mask = _grouped_core_mask(p, w, problem.capacity, budget, method, state, outcome == GROUPED)
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


def _grouped_core_mask(profits, weights, capacity, budget, method, state, counted=False):
    """:func:`_core_mask` over the items with identical ones grouped (core.knapsack.grouping), the cardinality
    bounds counting copies; the explicit ``dp`` method never groups (it is the tests' reference)."""
    grouping = group_identical(profits, weights, counted)
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


#: States the lists' first buffers count against the budget (two lists of 1024 and their merge targets).
FIRST_STAGE_STATES = 4 * 1024


def first_stage_bytes() -> int:
    """Bytes of the state lists' first buffers as the running guard counts them (``max_states``)."""
    return STATE_BYTES * FIRST_STAGE_STATES


def _core_mask(profits, weights, capacity, budget, method, state, counts=None):
    """Optimal choice by reductions then the DP or the state lists (see :func:`solve_kp1`); ``counts``: the
    identical copies each item stands for (core.knapsack.grouping)."""
    setup = prepare(profits, weights, capacity, counts=counts)
    n_free, room, gcd = free_summary(setup.weights, setup.fixed, setup.capacity)
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
    dp_possible = method == "auto" and 2 * row_bytes(room, 8) <= budget
    if not dp_possible:  # no DP to hand over to: refuse now what the lists' first step would refuse
        limits.check_first_stages(first_stage_bytes(), budget, f"KP1 by state lists ({n_free:,} free items)")
    max_work = dp_cells // STATE_COST_CELLS if dp_possible else 2**62
    mask, run = solve_by_bounds(setup, KP1_QUICK_STATES, max_work, budget // STATE_BYTES, KP1_QUICK_HELD)
    return _finish(setup, mask, None if mask is not None else run.work, dp_possible, n_free, room, budget, state)


def _finish(setup, mask, work, dp_possible, n_free, room, budget, state):
    """The lists' mask where they settled it; else the DP over the free items, or MemoryBudgetError where no
    DP fits (``work``: the states the lists generated)."""
    if mask is not None:
        state["method"] = "states"
        return mask
    if not dp_possible:
        needed = STATE_BYTES * max(int(work), STATE_MIN_STATES)
        raise MemoryBudgetError(f"KP1 by state lists ({n_free} free items)", needed, budget)
    report("dp")
    return _reduced_dp(setup, room, budget, state)


#: The solver's method where the first pass settles a solve.
_SETTLED = {FITS: "dp", SOLVED: "states", REDUCED: "reduction"}


def _handed_over(capacity, budget, state, outcome, numbers, handover):
    """:func:`_core_mask` from where the first pass stopped: a mask over the usable items."""
    n_free, room, status, work, max_work = (int(numbers[k]) for k in (7, 8, 9, 10, 13))
    if outcome == REFUSED:
        limits.check_first_stages(first_stage_bytes(), budget, f"KP1 by state lists ({n_free:,} free items)")
    if outcome == BROKEN:
        raise RuntimeError("state-list backtracking did not reach the break solution or lost the chosen state")
    setup, run_taken = setup_from_handover(capacity, numbers, handover)
    report("states", setup.upper_bound - setup.lower_bound, setup.lower_bound)
    mask = None
    if status == OUT_OF_WORK and max_work > KP1_QUICK_STATES:
        mask, run = after_quick_run(setup, run_taken, max_work, budget // STATE_BYTES)
        work = run.work if mask is None else 0
    return _finish(setup, mask, work, max_work < 2**62, n_free, room, budget, state)


def _reduced_dp(setup, room, budget, state):
    """The capacity DP over the free items (the others fixed), or the greedy solution when it is better."""
    free = np.flatnonzero(setup.fixed < 0)
    fixed_in = setup.fixed == 1
    taken = fixed_in.copy()
    taken[free] = dp_mask(setup.profits[free], setup.weights[free], room, budget, state)
    if int(setup.profits[taken].sum()) < setup.lower_bound:
        taken = setup.greedy
    return in_caller_order(setup.order, taken)
