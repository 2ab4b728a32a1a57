"""KP1, KP2 and batched KP2 on the CPU against brute force, OR-Tools and hand-made cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.knapsack import KP1, KP2, MemoryBudgetError, solve, solve_many
from core.knapsack.generators import PISINGER_KINDS, pisinger
from core.knapsack.kp1 import solve_kp1
from core.knapsack.kp2 import solve_kp2
from tests.knapsack_reference import brute_kp, check_kp_choice, highs_milp, ortools_kp

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _arrays(n, high):
    return st.lists(st.integers(0, high), min_size=n, max_size=n)


@st.composite
def kp1_instances(draw, max_n=9):
    """Raw random items (zeros included) or one of Pisinger's classes, tiny."""
    if draw(st.booleans()):
        n = draw(st.integers(1, max_n))
        profits, weights = draw(_arrays(n, 30)), draw(_arrays(n, 20))
        return KP1(profits, weights, draw(st.integers(0, 70)))
    kind = draw(st.sampled_from(PISINGER_KINDS))
    return pisinger(kind, draw(st.integers(1, max_n)), draw(st.integers(10, 60)), draw(st.integers(1, 9)), 10,
                    draw(st.integers(0, 999)))


@st.composite
def kp2_instances(draw, max_n=8):
    n = draw(st.integers(1, max_n))
    profits, w1, w2 = draw(_arrays(n, 30)), draw(_arrays(n, 15)), draw(_arrays(n, 15))
    return KP2(profits, w1, w2, draw(st.integers(0, 45)), draw(st.integers(0, 45)))


# --- hand-made cases with exact answers ---------------------------------------------------


@pytest.mark.parametrize(
    "profits, weights, capacity, value, selected",
    [
        ([60, 100, 120], [10, 20, 30], 50, 220, [1, 2]),
        ([10, 20], [5, 6], 0, 0, []),  # zero capacity
        ([7, 3, 5], [0, 4, 0], 0, 12, [0, 2]),  # zero-weight items are free
        ([0, 5], [0, 5], 5, 5, [1]),  # a zero-profit item is never needed
        ([9, 4, 4], [11, 2, 2], 10, 8, [1, 2]),  # an item heavier than the capacity
        ([1, 2, 3], [1, 1, 1], 10, 6, [0, 1, 2]),  # everything fits
        ([6, 6, 9], [4, 4, 6], 8, 12, [0, 1]),  # gcd 2 of the weights
    ],
)
def test_kp1_hand_made(profits, weights, capacity, value, selected):
    sol = solve(KP1(profits, weights, capacity), backend="cpu")
    assert sol.value == value
    assert sol.selected.tolist() == selected


@pytest.mark.parametrize(
    "problem, value, selected",
    [
        (KP2([5, 4, 3], [2, 3, 1], [3, 1, 2], 4, 4), 7, [1, 2]),
        (KP2([5, 4], [1, 1], [0, 0], 1, 0), 5, [0]),  # second dimension unused
        (KP2([3, 3, 3], [0, 0, 5], [2, 2, 0], 5, 3), 6, [0, 2]),  # zero weights per dimension
        (KP2([1, 1], [9, 0], [0, 9], 0, 0), 0, []),
    ],
)
def test_kp2_hand_made(problem, value, selected):
    sol = solve(problem, backend="cpu")
    assert sol.value == value
    assert sol.selected.tolist() == selected


# --- random instances against independent references --------------------------------------


@SETTINGS
@given(kp1_instances())
def test_kp1_matches_brute_force(problem):
    sol = solve(problem, backend="cpu")
    assert sol.value == brute_kp(problem.profits, [problem.weights], [problem.capacity])
    check_kp_choice(problem, sol)


@SETTINGS
@given(kp2_instances())
def test_kp2_matches_brute_force(problem):
    sol = solve(problem, backend="cpu")
    expected = brute_kp(problem.profits, [problem.weights1, problem.weights2], [problem.capacity1, problem.capacity2])
    assert sol.value == expected
    check_kp_choice(problem, sol)


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(PISINGER_KINDS), st.integers(20, 120), st.integers(0, 10**6))
def test_kp1_matches_ortools_dp_on_pisinger_classes(kind, n, seed):
    problem = pisinger(kind, n, 1000, instance=(seed % 99) + 1, series=100, seed=seed)
    sol = solve(problem, backend="cpu")
    expected = ortools_kp(problem.profits, [problem.weights], [problem.capacity], "dynamic-programming")
    assert sol.value == expected
    check_kp_choice(problem, sol)


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(["uncorrelated", "weakly"]), st.integers(20, 200), st.integers(0, 10**6))
def test_kp1_matches_ortools_branch_and_bound(kind, n, seed):
    problem = pisinger(kind, n, 1000, instance=(seed % 99) + 1, series=100, seed=seed)
    sol = solve(problem, backend="cpu")
    assert sol.value == ortools_kp(problem.profits, [problem.weights], [problem.capacity], time_limit_s=10.0)


@settings(max_examples=10, deadline=None)
@given(st.integers(5, 40), st.integers(0, 10**6))
def test_kp2_matches_ortools(n, seed):
    rng = np.random.default_rng(seed)
    w1, w2 = rng.integers(1, 200, n), rng.integers(1, 200, n)
    problem = KP2(rng.integers(1, 500, n), w1, w2, int(w1.sum() // 3), int(w2.sum() // 2))
    sol = solve(problem, backend="cpu")
    assert sol.value == ortools_kp(problem.profits, [w1, w2], [problem.capacity1, problem.capacity2])
    check_kp_choice(problem, sol)


@settings(max_examples=8, deadline=None)
@given(st.lists(kp2_instances(max_n=7), min_size=1, max_size=12))
def test_kp2_batch_matches_brute_force(problems):
    sols = solve_many(problems, backend="cpu")
    assert {sol.method for sol in sols} == {"dp-batch"}
    for problem, sol in zip(problems, sols):
        weights = [problem.weights1, problem.weights2]
        assert sol.value == brute_kp(problem.profits, weights, [problem.capacity1, problem.capacity2])
        check_kp_choice(problem, sol)


def test_solve_many_mixes_kinds_in_order():
    problems = [KP1([3], [1], 1), KP2([5, 4], [1, 1], [1, 1], 1, 1), KP2([2, 2], [1, 1], [1, 1], 2, 2)]
    assert [s.value for s in solve_many(problems, backend="cpu")] == [3, 5, 4]
    assert solve_many([], backend="cpu") == []


# --- memory budget: divide and conquer, or a clear refusal --------------------------------


def _uncorrelated_kp1(n, seed):
    rng = np.random.default_rng(seed)
    weights = rng.integers(1, 21, n)
    return KP1(rng.integers(1, 100, n), weights, int(weights.sum() // 2))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kp1_divide_and_conquer_within_a_small_budget(seed):
    problem = _uncorrelated_kp1(1500, seed)  # decision bits ~ 0.7 MB, four rows ~ 0.3 MB
    full = solve_kp1(problem, None, method="dp")
    light = solve_kp1(problem, 350_000, method="dp")
    assert (full.method, light.method) == ("dp", "dp-divide-conquer")
    assert light.value == full.value == ortools_kp(problem.profits, [problem.weights], [problem.capacity])
    check_kp_choice(problem, light)


@pytest.mark.parametrize("method", ["auto", "dp", "states"])
def test_kp1_refuses_a_budget_too_small_for_any_method(method):
    with pytest.raises(MemoryBudgetError, match=r"needs [\d,]+ bytes but the memory budget is 1,000 bytes"):
        solve_kp1(pisinger("strongly", 1500, 10**6, 50, 100, seed=0), 1000, method=method)


def test_kp2_divide_and_conquer_within_a_small_budget():
    rng = np.random.default_rng(7)
    w1, w2 = rng.integers(1, 12, 400), rng.integers(1, 12, 400)
    problem = KP2(rng.integers(1, 60, 400), w1, w2, 150, 150)  # bits ~ 1.4 MB, four tables ~ 0.73 MB
    full = solve(problem, backend="cpu")
    light = solve(problem, backend="cpu", memory_budget_bytes=800_000)
    assert (full.method, light.method) == ("dp", "dp-divide-conquer")
    assert light.value == full.value == highs_milp(problem.profits, [w1, w2], [150, 150])
    check_kp_choice(problem, light)
    with pytest.raises(MemoryBudgetError, match="KP2 with capacities"):
        solve_kp2(problem, 10_000, method="dp")
    # no DP fits: the state lists do (at 10 kB they are refused since a step's temporaries count, 24 states'
    # worth per state of the list: they peaked at 3x their budget)
    tiny = solve(problem, backend="cpu", memory_budget_bytes=30_000)
    assert (tiny.method, tiny.value) == ("states", full.value)


def test_kp2_batch_falls_back_to_one_at_a_time_past_the_budget():
    rng = np.random.default_rng(3)
    problems = []
    for _ in range(3):
        w1, w2 = rng.integers(1, 12, 400), rng.integers(1, 12, 400)
        problems.append(KP2(rng.integers(1, 60, 400), w1, w2, 150, 150))
    batched = solve_many(problems, backend="cpu")
    light = solve_many(problems, backend="cpu", memory_budget_bytes=800_000)
    assert [s.value for s in light] == [s.value for s in batched]
    assert {s.method for s in light} == {"dp-divide-conquer"}
    for problem, sol in zip(problems, light):
        check_kp_choice(problem, sol)


def test_inputs_are_not_modified():
    profits, weights = np.array([4, 5, 6]), np.array([3, 4, 5])
    problem = KP1(profits, weights, 7)
    solve(problem, backend="cpu")
    assert profits.tolist() == [4, 5, 6] and problem.weights.tolist() == [3, 4, 5]
