"""``solve`` and ``solve_many``: one knapsack-family problem or many, on the CPU or the GPU.

Both backends offer the same twins: ``solve_kp1``, ``solve_kp2``,
``solve_subset_sum``, ``solve_mckp`` as ``(problem, memory_budget_bytes)``
and ``solve_kp2_batch`` as ``(problems, memory_budget_bytes)``, returning
:class:`~core.knapsack.problems.SolverResult`; the GPU twins (``gpu.knapsack``)
are imported only when the GPU runs.  Every solution is checked before it is
returned.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
from numba import njit

from core import engine
from core.knapsack import limits
from core.knapsack.cost import check_solve_cost
from core.knapsack.kp1 import solve_kp1
from core.knapsack.kp2 import solve_kp2, solve_kp2_batch
from core.knapsack.mckp import solve_mckp
from core.knapsack.problems import KP2, KnapsackSolution, SolverResult, problem_kind
from core.knapsack.subset_sum import solve_subset_sum
from core.memory import keep_freed_memory, resolve_budget

__all__ = ["solve", "solve_many"]

#: The CPU twins, under the names the GPU package gives its own.
_CPU = SimpleNamespace(solve_kp1=solve_kp1, solve_kp2=solve_kp2, solve_kp2_batch=solve_kp2_batch,
                       solve_subset_sum=solve_subset_sum, solve_mckp=solve_mckp)
#: The twin that solves each problem kind.
_SOLVERS = {"kp1": "solve_kp1", "kp2": "solve_kp2", "subset-sum": "solve_subset_sum", "mckp": "solve_mckp"}


def _twins(backend: str):
    """The solvers of a resolved backend: this package's for "cpu", gpu.knapsack's for "gpu"."""
    return _CPU if backend == "cpu" else engine.gpu_package("knapsack")


def solve(problem, backend: str = "auto", memory_budget_bytes: int | None = None,
          time_limit_s: float | None = None) -> KnapsackSolution:
    """Solve one knapsack-family problem exactly.

    Parameters
    ----------
    problem : KP1, KP2, SubsetSum or MCKP
    backend : {"auto", "cpu", "gpu"}
        ``auto`` uses the GPU when numba.cuda finds one, else the CPU.
    memory_budget_bytes : int, optional
        Most bytes for the solver's tables; default a share of the free host
        (CPU) or device (GPU) memory.  Past it the solver switches to a
        memory-light method or raises MemoryBudgetError.
    time_limit_s : float, optional
        Seconds after which the solve stops with TimeLimitError.  Default None:
        no limit (a library call may run as long as the caller lets it; the
        command line defaults to 60 s, the panel has Cancel).  The CPU state
        lists poll it between steps (or estimate a step first), the capacity
        DPs are refused before they start when estimated to outlast what is
        left and poll it per item, and the GPU twins wait for the device every
        few dozen launches to check it.

    Returns
    -------
    KnapsackSolution

    Raises
    ------
    TypeError
        For an object that is not one of the problem classes.
    ValueError
        For an unknown backend or a bad budget; MemoryBudgetError (a ValueError)
        when the problem cannot be solved within the budget.  Raised at once,
        before any solver runs, where the capacity DP is the method that would
        run and would take hours (core.knapsack.cost), or where the budget cannot
        hold the state lists' first buffers (core.knapsack.limits).
    TimeLimitError
        (a ValueError) when the solve runs past ``time_limit_s``.
    core.engine.BackendUnavailableError
        For ``backend="gpu"`` without a usable GPU.

    Examples
    --------
    >>> from core.knapsack import KP1, SubsetSum, solve
    >>> solution = solve(KP1(profits=[60, 100, 120], weights=[10, 20, 30], capacity=50), backend="cpu")
    >>> solution.value, solution.selected.tolist(), solution.backend
    (220, [1, 2], 'cpu')
    >>> solve(SubsetSum(weights=[6, 10, 15], capacity=20), backend="cpu").value
    16
    """
    kind = problem_kind(problem)
    resolved = engine.resolve_backend(backend)
    budget = _checked_budget(memory_budget_bytes)
    limit_s = limits.resolve_time_limit(time_limit_s)
    check_solve_cost(problem, resolved, budget, limit_s)
    keep_freed_memory()
    solver = getattr(_twins(resolved), _SOLVERS[kind])
    start = time.perf_counter()
    if limit_s is None:  # (the enclosing limit, if any, holds without a context of its own)
        result = solver(problem, budget)
    else:
        with limits.time_limit(limit_s):
            result = solver(problem, budget)
    elapsed_ms = (time.perf_counter() - start) * 1e3
    return _checked(problem, kind, result, resolved, elapsed_ms)


def solve_many(problems, backend: str = "auto", memory_budget_bytes: int | None = None,
               time_limit_s: float | None = None) -> list:
    """Solve several problems; all KP2 instances among them are solved as one batch.

    ``backend`` and ``memory_budget_bytes`` as for :func:`solve` (the budget
    holds for the batch as a whole); ``time_limit_s`` for all of them together.
    Returns a list of KnapsackSolution in the order of ``problems``; a batched
    solution's ``time_ms`` is the batch's.
    """
    problems = list(problems)
    kinds = [problem_kind(problem) for problem in problems]
    resolved = engine.resolve_backend(backend)
    budget = _checked_budget(memory_budget_bytes)
    limit_s = limits.resolve_time_limit(time_limit_s)
    batch = [k for k, kind in enumerate(kinds) if kind == "kp2"]
    out = [None] * len(problems)
    keep_freed_memory()
    for k in batch:
        check_solve_cost(problems[k], resolved, budget, limit_s)
    with limits.time_limit(limit_s):
        if batch:
            for k, solution in zip(batch, _solve_kp2_batch([problems[k] for k in batch], resolved, budget)):
                out[k] = solution
        for k, problem in enumerate(problems):
            if out[k] is None:
                limits.check(f"solving {len(problems)} problems together", f"{k} of them")
                out[k] = solve(problem, resolved, memory_budget_bytes)
    return out


def _solve_kp2_batch(problems: list[KP2], resolved: str, budget) -> list[KnapsackSolution]:
    start = time.perf_counter()
    results = _twins(resolved).solve_kp2_batch(problems, budget)
    elapsed_ms = (time.perf_counter() - start) * 1e3
    return [_checked(problem, "kp2", result, resolved, elapsed_ms) for problem, result in zip(problems, results)]


def _checked_budget(memory_budget_bytes):
    """A malformed budget refused before any solver runs; None stays None (each backend's default)."""
    return None if memory_budget_bytes is None else resolve_budget(memory_budget_bytes)


def _checked(problem, kind: str, result: SolverResult, backend, elapsed_ms) -> KnapsackSolution:
    """Build the solution after checking that the choice is feasible and worth ``result.value`` (``kind``: the
    problem's, :func:`~core.knapsack.problems.problem_kind`)."""
    value, selected, method = result
    selected = np.asarray(selected, dtype=np.int64)
    worth, feasible = _evaluate(problem, kind, selected)
    if worth is _UNSORTED:  # (the solvers' own choices are sorted): sorted, once each (np.unique's hashing
        selected = np.sort(selected)  # costs several times this sort)
        selected = selected[np.concatenate(([True], selected[1:] != selected[:-1]))] if len(selected) else selected
        worth, feasible = _evaluate(problem, kind, selected)
    if not feasible or worth != int(value):
        raise RuntimeError(
            f"the {backend} {kind} solver returned an inconsistent solution "
            f"(reported value {value}, chosen items worth {worth}, feasible: {feasible})"
        )
    return KnapsackSolution(int(value), selected, backend, method, float(elapsed_ms))


#: What :func:`_evaluate` answers for item indices that do not rise strictly (to be sorted first).
_UNSORTED = object()
_NONE = np.zeros(0, np.int64)


def _evaluate(problem, kind, selected):
    """(value of the choice, whether it respects the capacities and index ranges); ``(_UNSORTED, False)``
    where the item indices of a KP1, KP2 or subset sum do not rise strictly."""
    if kind == "mckp":
        if selected.shape != (problem.n_classes,):
            return None, False
        if np.any(selected < 0) or any(j >= len(p) for (p, _), j in zip(problem.classes, selected)):
            return None, False
        profit = sum(int(p[j]) for (p, _), j in zip(problem.classes, selected))
        weight = sum(int(w[j]) for (_, w), j in zip(problem.classes, selected))
        return profit, weight <= problem.capacity
    if kind == "subset-sum":
        values, first, second = problem.weights, problem.weights, _NONE
    elif kind == "kp1":
        values, first, second = problem.profits, problem.weights, _NONE
    else:
        values, first, second = problem.profits, problem.weights1, problem.weights2
    rising, inside, worth, used, used2 = _tally(selected, values, first, second)
    if not rising:
        return _UNSORTED, False
    if not inside:
        return None, False
    if kind == "kp2":
        return int(worth), used <= problem.capacity1 and used2 <= problem.capacity2
    return int(worth), used <= problem.capacity


@njit(cache=True, nogil=True)
def _tally(selected, values, first, second):
    """Whether ``selected`` rises strictly and lies within the items, and the sums of ``values``, ``first`` and
    ``second`` (empty: 0) over it, in one pass (a solve of an easy KP1 took 5 us to check in numpy calls).
    The sums are those of a subset where it rises within the items: below 2^62 (core.knapsack.problems)."""
    rising, inside = True, True
    total, used, used2 = np.int64(0), np.int64(0), np.int64(0)
    for k in range(len(selected)):
        j = selected[k]
        if k and j <= selected[k - 1]:
            rising = False
        if j < 0 or j >= len(values):
            inside = False
        elif rising:
            total += values[j]
            used += first[j]
            if len(second):
                used2 += second[j]
    return rising, inside, total, used, used2
