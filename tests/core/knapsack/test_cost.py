"""The knapsack cost check: hours of capacity DP refused at once, with what to change; small solves untouched."""

from __future__ import annotations

import time

import numpy as np
import pytest

from core.knapsack import KP2, solve, solve_many
from core.knapsack.cost import KP2_STATES_MAX_ITEMS, check_solve_cost, kp2_dp_cost
from core.knapsack.io import read_ins2d
from core.knapsack.kp1_dp import capacity_windows
from core.knapsack.problems import weights_gcd


def _ins2d(tmp_path, capacity, demand):
    path = tmp_path / "many.ins2D"
    path.write_text(f"2\n{capacity} {capacity}\n1 7 11 {demand} 0 77\n2 13 5 {demand} 0 65\n")
    (instance,) = read_ins2d(path)
    return instance.problem


@pytest.mark.parametrize("capacity", [3000, 100_000])
def test_an_ins2d_with_a_million_items_is_refused_at_once(tmp_path, capacity):
    problem = _ins2d(tmp_path, capacity, 499_999)
    begin = time.perf_counter()
    with pytest.raises(ValueError, match=rf"KP2 with 999,998 items and capacities {capacity:,} x {capacity:,} "
                                         r".* would take about \d+ hours .* use fewer items"):
        solve(problem, backend="cpu")
    assert time.perf_counter() - begin < 10.0


def test_cells_are_the_solver_windows():
    rng = np.random.default_rng(3)
    w1, w2, p = rng.integers(1, 40, 30), rng.integers(1, 40, 30), rng.integers(1, 50, 30)
    problem = KP2(p, w1, w2, 200, 150)
    cost = kp2_dp_cost(problem)
    order = np.argsort(w1 / 200 + w2 / 150, kind="stable")  # independent count: windows of the sorted weights
    windows = []
    for w, c in ((w1[order], 200), (w2[order], 150)):
        g = weights_gcd(w)
        lo, hi = capacity_windows(w // g, min(c // g, int(w.sum()) // g))
        windows.append(hi - lo + 1)
    assert cost.cells == int((windows[0] * windows[1]).sum()) + (cost.capacities[0] + 1) * (cost.capacities[1] + 1)
    assert cost.n_items == 30


def test_few_items_leave_the_capacities_to_the_state_lists():
    problem = KP2([5, 4, 3], [10**9, 2, 3], [4, 10**9, 5], 10**9, 10**9)
    assert check_solve_cost(problem, "cpu", 2**30).n_items <= KP2_STATES_MAX_ITEMS
    assert solve(problem, backend="cpu").value == 5  # solved, not refused: no two items fit together
    # a batch too (it ran the capacity DP, refused as taking hours)
    assert [s.value for s in solve_many([problem, problem], backend="cpu")] == [5, 5]


def test_a_batch_solves_what_its_dp_would_not_run_outright_as_solve_does():
    # (a batch once ran the capacity DP for every KP2: this one it refused past a 10 kB budget, and 43
    # instances of class_a.txt took 6.4 s against 0.9 s one at a time)
    rng = np.random.default_rng(0)
    problem = KP2(rng.integers(1, 9, 50), rng.integers(1, 400, 50), rng.integers(1, 400, 50), 3000, 3000)
    small = KP2([6, 10, 7], [5, 6, 4], [2, 7, 6], 9, 8)
    alone = solve(problem, backend="cpu", memory_budget_bytes=10_000)
    together = solve_many([problem, small, problem], backend="cpu", memory_budget_bytes=10_000)
    assert [s.method for s in together] == [alone.method, "dp-batch", alone.method] and alone.method == "states"
    assert together[0].value == together[2].value == alone.value


def test_a_dp_of_minutes_is_refused_only_past_the_time_limit_given():
    # solve() refused a DP estimated at 2 minutes whatever the limit (60 s fixed), even with no limit at all
    from core.knapsack.cost import MAX_ESTIMATED_S

    rng = np.random.default_rng(0)
    n = KP2_STATES_MAX_ITEMS + 1000
    problem = KP2(rng.integers(1, 101, n), rng.integers(1, 101, n), rng.integers(1, 101, n), 2000, 2000)
    estimated = kp2_dp_cost(problem).estimated_s
    assert 60 < estimated < MAX_ESTIMATED_S
    assert check_solve_cost(problem, "cpu", 2**30, None).estimated_s == estimated  # no limit: it would run
    assert check_solve_cost(problem, "cpu", 2**30, 2 * estimated) is not None
    with pytest.raises(ValueError, match=r"would take about \d+ s \(more than the time limit of 60 s\).*"
                                         r"or raise the time limit"):
        solve(problem, backend="cpu", time_limit_s=60)
    small = KP2(problem.profits, problem.weights1, problem.weights2, 120, 120)  # under a second: solved
    assert solve(small, backend="cpu", time_limit_s=60).value > 0
