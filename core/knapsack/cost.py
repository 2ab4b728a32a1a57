"""What a knapsack solve will cost, checked by the dispatcher before any solver runs.

The capacity DPs cost cells (items x capacities) whatever the profits: a KP2
with 10^6 items and capacities 3000 x 3000 would fill ~10^13 cells.  The state
lists (``method="auto"`` on the CPU) cost what the instance's structure makes
them cost, independent of the capacities, so a solve is refused here only when
the DP is the method that will run and it would take longer than
:data:`MAX_ESTIMATED_S` (or past the solve's time limit) or need more than the memory budget:

- KP2 on the CPU with more than :data:`KP2_STATES_MAX_ITEMS` items (the KP2
  state lists pass over their list once per item and keep no core of items, so
  with 10^6 items they are no cheaper than the DP), and every KP2 of a batch
  that ``solve_many`` would run as a DP side by side.
- KP1, subset sum and MCKP on the CPU always have state lists (with a core of
  items or classes) to run first, so they are not refused here: their bounds,
  first-stage refusal and running guards (memory, ``time_limit_s``) are in
  :mod:`core.knapsack.limits`; the GPU twins check their own device memory
  and poll the time limit between launches.

The rate is measured (docs/notes/knapsack.md, "Cost model"): the KP2 DP filled
about 3e9 window cells per second on the shared 2-core development VM; the
estimate uses a third of it, so that it refuses only what is clearly too long.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.knapsack.problems import KP2, MemoryBudgetError, problem_kind, weights_gcd
from core.memory import resolve_budget, size_text

__all__ = ["KP2_DP_CELLS_PER_S", "KP2_STATES_MAX_ITEMS", "MAX_ESTIMATED_S", "DPCost", "check_solve_cost",
           "kp2_dp_cost"]

#: Solves estimated to run longer than this (s) are refused where the caller gives no time limit of its own
#: (a DP of hours); with a limit, those estimated past it.
MAX_ESTIMATED_S = 3600.0
#: KP2 DP cells (within the capacity windows) filled per second on the CPU.
KP2_DP_CELLS_PER_S = 1e9
#: Most items for which ``auto`` counts on the KP2 state lists instead of the DP.
KP2_STATES_MAX_ITEMS = 20_000


@dataclass(frozen=True)
class DPCost:
    """The size of a capacity DP: its cells, the fewest bytes it runs in and its running time (s)."""

    n_items: int
    capacities: tuple
    cells: float
    least_bytes: int
    estimated_s: float


def kp2_dp_cost(problem: KP2) -> DPCost:
    """The :class:`DPCost` of the KP2 DP after the solver's reductions (items that fit, gcd, capacities capped)."""
    p, w1, w2 = problem.profits, problem.weights1, problem.weights2
    c1, c2 = problem.capacity1, problem.capacity2
    items = (w1 <= c1) & (w2 <= c2) & (p > 0) & ((w1 > 0) | (w2 > 0))
    caps, windows = [], []
    size = w1[items] / max(c1, 1) + w2[items] / max(c2, 1)  # the solver's order: lightest first
    order = np.argsort(size, kind="stable")
    for w, c in ((w1[items][order], c1), (w2[items][order], c2)):
        g = weights_gcd(w)
        cap = min(c // g, int(w.sum(dtype=object)) // g)
        prefix = np.cumsum(w // g, dtype=np.float64)
        hi = np.minimum(prefix, cap)
        lo = np.maximum(cap - (prefix[-1] - prefix), 0) if len(prefix) else prefix
        caps.append(cap)
        windows.append(hi - lo + 1)
    cells = float(np.sum(windows[0] * windows[1])) + (caps[0] + 1) * (caps[1] + 1)
    table = (caps[0] + 1) * (caps[1] + 1) * 8
    least = min(int(cells) // 8 + table, 4 * table)  # the decision bits, or divide and conquer's tables
    return DPCost(int(items.sum()), tuple(caps), cells, least, cells / KP2_DP_CELLS_PER_S)


def check_solve_cost(problem, backend: str, budget_bytes: int | None,
                     time_limit_s: float | None = None) -> DPCost | None:
    """Refuse at once a solve whose only method is a DP past the time limit or the budget.

    Parameters
    ----------
    problem : KP1, KP2, SubsetSum or MCKP
    backend : {"cpu", "gpu"}
        The resolved backend.
    budget_bytes : int or None
        The solver's memory budget (None: :func:`core.memory.resolve_budget`'s default, read only where a DP is
        estimated: a small solve of another kind spent 3 us reading it).
    time_limit_s : float or None
        The solve's time limit: a DP estimated to run longer is refused (None, ``solve()``'s default: one
        estimated past :data:`MAX_ESTIMATED_S`, an hour).

    Returns
    -------
    DPCost or None
        The DP's cost where it was estimated (CPU KP2), else None.

    Raises
    ------
    ValueError
        For a DP that would run longer than ``time_limit_s`` (or :data:`MAX_ESTIMATED_S`);
        MemoryBudgetError for one that would need more than ``budget_bytes``.
    """
    if backend != "cpu" or problem_kind(problem) != "kp2":
        return None
    cost = kp2_dp_cost(problem)
    if cost.n_items <= KP2_STATES_MAX_ITEMS:  # (a batch's too: core.knapsack.kp2.solve_kp2_batch)
        return cost  # the state lists run first
    what = (f"KP2 with {cost.n_items:,} items and capacities {problem.capacity1:,} x {problem.capacity2:,} "
            f"(the capacity DP: {cost.cells:.1e} cells)")
    change = ("use fewer items (at most {:,} for the state lists, solved alone)".format(KP2_STATES_MAX_ITEMS)
              + " or smaller capacities")
    limit_s = MAX_ESTIMATED_S if time_limit_s is None else time_limit_s
    if cost.estimated_s > limit_s:
        beyond = "an hour" if time_limit_s is None else f"the time limit of {time_limit_s:g} s"
        raise ValueError(f"{what} would take about {_duration(cost.estimated_s)} (more than {beyond}) and need "
                         f"{size_text(cost.least_bytes)}; {change}" + ("" if time_limit_s is None else
                                                                        ", or raise the time limit"))
    budget_bytes = resolve_budget(budget_bytes)
    if cost.least_bytes > budget_bytes:
        raise MemoryBudgetError(what, cost.least_bytes, budget_bytes)
    return cost


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds / 3600:.0f} hours" if seconds < 1e7 else f"{seconds:.1e} s"
