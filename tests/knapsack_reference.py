"""Independent references for the knapsack tests: brute force, OR-Tools and HiGHS.

The brute forces enumerate every choice (tiny instances only); OR-Tools'
multidimensional branch and bound solves KP1 and KP2, and HiGHS (through
scipy.optimize.milp, with a zero MIP gap) solves every problem as an integer
program.  They return optimal values only: any optimal choice is acceptable.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np


def brute_kp(profits, weight_rows, capacities) -> int:
    """Best profit over all subsets; ``weight_rows`` one weight array per capacity."""
    n = len(profits)
    choices = np.array(list(itertools.product((0, 1), repeat=n)), dtype=np.int64).reshape(-1, n)
    fits = np.ones(len(choices), bool)
    for weights, capacity in zip(weight_rows, capacities):
        fits &= choices @ np.asarray(weights, np.int64) <= capacity
    return int((choices[fits] @ np.asarray(profits, np.int64)).max())


def brute_subset_sum(weights, capacity) -> int:
    """Largest subset sum not above the capacity."""
    return brute_kp(weights, [weights], [capacity])


def brute_mckp(classes, capacity) -> int | None:
    """Best profit with one item per class, None when nothing fits."""
    best = None
    for combo in itertools.product(*[range(len(p)) for p, _ in classes]):
        weight = sum(int(classes[k][1][j]) for k, j in enumerate(combo))
        profit = sum(int(classes[k][0][j]) for k, j in enumerate(combo))
        if weight <= capacity and (best is None or profit > best):
            best = profit
    return best


def best_mckp_from(classes, capacity, lam, floor) -> int | None:
    """Best MCKP value of at least ``floor`` (None when there is none), by enumerating every choice that
    could be worth that much: with ``U = lam C + sum_k max_j (p - lam w)``, a choice is worth
    ``U - sum of its reduced costs - lam (C - its weight)``, so only choices whose reduced costs total at most
    ``G = U - floor`` count.  Both halves of the classes list all such partial choices (no bound, no
    dominance), and each first-half choice is joined with the second-half ones whose weight leaves at most
    ``G / lam`` of the capacity unused.  Any ``lam >= 0`` is valid; one near the LP's keeps the lists short.
    """
    prepared = []
    for p, w in classes:
        p, w = np.asarray(p, np.int64), np.asarray(w, np.int64)
        value = p - lam * w
        prepared.append((p, w, value.max() - value))
    bound = lam * capacity + sum(float((p - lam * w).max()) for p, w, _ in prepared)
    gap = bound - floor + 1e-6 * (1.0 + abs(bound) * 1e-9)

    def half(part):
        hw, hp, hc = np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1)
        for p, w, cost in part:
            hw, hp, hc = ((x[:, None] + y[None]).ravel() for x, y in ((hw, w), (hp, p), (hc, cost)))
            keep = (hc <= gap) & (hw <= capacity)
            hw, hp, hc = hw[keep], hp[keep], hc[keep]
        return hw, hp

    (aw, ap), (bw, bp) = half(prepared[: len(prepared) // 2]), half(prepared[len(prepared) // 2 :])
    order = np.argsort(bw, kind="stable")
    bw, bp = bw[order], bp[order]
    lowest = np.searchsorted(bw, capacity - aw - gap / max(lam, 1e-300) - 1, side="left")
    highest = np.searchsorted(bw, capacity - aw, side="right")
    best = None
    for i in np.flatnonzero(highest > lowest):
        value = int(ap[i] + bp[lowest[i] : highest[i]].max())
        if value >= floor and (best is None or value > best):
            best = value
    return best


def lagrangian_mckp_bound(classes, capacity, lam) -> int:
    """``floor(U)`` for ``U = lam C + sum_k max_j (p - lam w)``, in exact rationals: no choice is worth more,
    whatever ``lam >= 0`` (each class gives at most its best ``p - lam w``, and ``lam`` times the weight at most
    ``lam C``)."""
    exact = Fraction(lam)
    total = exact * capacity
    for p, w in classes:
        p, w = np.asarray(p, np.int64), np.asarray(w, np.int64)
        value = p - lam * w
        near = np.flatnonzero(value >= value.max() - 1e-3 * (1.0 + abs(value.max())))  # the float max's rivals
        total += max(int(p[j]) - exact * int(w[j]) for j in near)
    return math.floor(total)


def ortools_kp(profits, weight_rows, capacities, solver: str = "branch-and-bound", time_limit_s: float = 30.0) -> int:
    """OR-Tools' knapsack solver: multidimensional branch and bound (KP1, KP2) or, for
    one dimension, its dynamic programming solver (branch and bound cannot prove the
    optimum of strongly correlated instances quickly).  AssertionError when the
    optimum is not proven within the time limit."""
    from ortools.algorithms.python import knapsack_solver

    kinds = {
        "branch-and-bound": knapsack_solver.SolverType.KNAPSACK_MULTIDIMENSION_BRANCH_AND_BOUND_SOLVER,
        "dynamic-programming": knapsack_solver.SolverType.KNAPSACK_DYNAMIC_PROGRAMMING_SOLVER,
    }
    ref = knapsack_solver.KnapsackSolver(kinds[solver], "reference")
    ref.init(
        [int(p) for p in profits],
        [[int(w) for w in weights] for weights in weight_rows],
        [int(c) for c in capacities],
    )
    ref.set_time_limit(time_limit_s)
    value = ref.solve()
    assert ref.is_solution_optimal(), "OR-Tools did not prove the optimum in time"
    return int(value)


def highs_milp(profits, weight_rows, capacities, equal_rows=None) -> int:
    """Maximise ``profits . x`` over binary x with ``weights . x <= capacity`` rows.

    ``equal_rows``: optional (rows, n) 0/1 matrix of ``== 1`` constraints (MCKP classes).
    """
    from scipy.optimize import Bounds, LinearConstraint, milp

    profits = np.asarray(profits, float)
    constraints = [LinearConstraint(np.asarray(weight_rows, float), -np.inf, np.asarray(capacities, float))]
    if equal_rows is not None:
        constraints.append(LinearConstraint(np.asarray(equal_rows, float), 1, 1))
    result = milp(
        -profits,
        constraints=constraints,
        integrality=np.ones(len(profits)),
        bounds=Bounds(0, 1),
        options={"mip_rel_gap": 0.0, "time_limit": 60.0},
    )
    assert result.status == 0, f"HiGHS did not solve the reference problem: {result.message}"
    return int(round(-result.fun))


def highs_subset_sum(weights, capacity) -> int:
    return highs_milp(weights, [weights], [capacity])


def highs_mckp(classes, capacity) -> int:
    sizes = [len(p) for p, _ in classes]
    profits = np.concatenate([p for p, _ in classes])
    weights = np.concatenate([w for _, w in classes])
    membership = np.zeros((len(classes), len(profits)))
    membership[np.repeat(np.arange(len(classes)), sizes), np.arange(len(profits))] = 1
    return highs_milp(profits, [weights], [capacity], membership)


def check_kp_choice(problem, solution) -> None:
    """The chosen items respect the capacities and add up to the reported value."""
    selected = solution.selected
    assert selected.dtype == np.int64 and np.all(np.diff(selected) > 0)
    if hasattr(problem, "weights1"):
        assert problem.weights1[selected].sum() <= problem.capacity1
        assert problem.weights2[selected].sum() <= problem.capacity2
        assert problem.profits[selected].sum() == solution.value
    elif hasattr(problem, "profits"):
        assert problem.weights[selected].sum() <= problem.capacity
        assert problem.profits[selected].sum() == solution.value
    else:
        assert problem.weights[selected].sum() == solution.value <= problem.capacity


def check_mckp_choice(problem, solution) -> None:
    selected = solution.selected
    assert selected.shape == (problem.n_classes,)
    assert sum(int(w[j]) for (_, w), j in zip(problem.classes, selected)) <= problem.capacity
    assert sum(int(p[j]) for (p, _), j in zip(problem.classes, selected)) == solution.value
