"""Subset sum and multiple-choice knapsack on the CPU against brute force and HiGHS."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.knapsack import MCKP, MemoryBudgetError, SubsetSum, solve
from core.knapsack.generators import CURTIS_KINDS, curtis, suri
from core.knapsack.mckp import dominance_filter, solve_mckp
from core.knapsack.problems import KnapsackSolution
from core.knapsack.subset_sum import METHODS, solve_subset_sum
from tests.knapsack_reference import (
    brute_mckp,
    brute_subset_sum,
    check_kp_choice,
    check_mckp_choice,
    highs_mckp,
    highs_subset_sum,
)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def subset_sum_instances(draw, max_n=10):
    n = draw(st.integers(1, max_n))
    scale = draw(st.sampled_from([1, 2, 10]))  # common factors exercise the gcd reduction
    weights = [scale * w for w in draw(st.lists(st.integers(0, 40), min_size=n, max_size=n))]
    return SubsetSum(weights, draw(st.integers(0, sum(weights) + 5)))


@st.composite
def mckp_instances(draw, max_classes=4, max_items=4):
    m = draw(st.integers(1, max_classes))
    classes = []
    for _ in range(m):
        k = draw(st.integers(1, max_items))
        classes.append((draw(st.lists(st.integers(0, 25), min_size=k, max_size=k)),
                        draw(st.lists(st.integers(0, 15), min_size=k, max_size=k))))
    lightest = sum(min(w) for _, w in classes)
    return MCKP(classes, lightest + draw(st.integers(0, 30)))


def _solve_subset_sum(problem, method, budget=10**9):
    value, selected, used = solve_subset_sum(problem, budget, method)
    return KnapsackSolution(value, selected, "cpu", used, 0.0)


# --- subset sum -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "weights, capacity, value",
    [
        ([3, 5, 7], 11, 10),  # no subset hits 11
        ([3, 5, 7], 12, 12),
        ([10, 20, 30], 55, 50),  # gcd 10, capacity not a multiple
        ([4, 6], 3, 0),  # everything heavier than the capacity
        ([0, 0, 2], 1, 0),  # zero weights change nothing
        ([1, 2, 3], 100, 6),  # everything fits
        ([9, 9, 9, 9, 2], 35, 29),  # complement: 36 + 2 - 35 = 3, smallest reachable sum >= 3 is 9
    ],
)
@pytest.mark.parametrize("method", METHODS)
def test_subset_sum_hand_made(weights, capacity, value, method):
    sol = _solve_subset_sum(SubsetSum(weights, capacity), method)
    assert sol.value == value
    check_kp_choice(SubsetSum(weights, capacity), sol)


@SETTINGS
@given(subset_sum_instances(), st.sampled_from(METHODS))
def test_subset_sum_matches_brute_force(problem, method):
    sol = _solve_subset_sum(problem, method)
    assert sol.value == brute_subset_sum(problem.weights, problem.capacity)
    check_kp_choice(problem, sol)


@SETTINGS
@given(subset_sum_instances(), st.integers(32, 400))
def test_subset_sum_divide_and_conquer_matches_brute_force(problem, budget):
    try:
        sol = _solve_subset_sum(problem, "bitset", budget)
    except MemoryBudgetError:
        return  # the budget is below even the four bitsets of divide and conquer
    assert sol.value == brute_subset_sum(problem.weights, problem.capacity)
    check_kp_choice(problem, sol)


@settings(max_examples=8, deadline=None)
@given(st.sampled_from(CURTIS_KINDS), st.integers(5, 14), st.integers(0, 10**6))
def test_subset_sum_matches_highs_on_curtis_classes(kind, n, seed):
    # HiGHS needs seconds per instance beyond n ~ 20 on these (no exact hits).
    problem = curtis(kind, n, seed)
    sol = solve(problem, backend="cpu")
    assert sol.value == highs_subset_sum(problem.weights, problem.capacity)
    check_kp_choice(problem, sol)


@settings(max_examples=6, deadline=None)
@given(st.sampled_from(CURTIS_KINDS), st.integers(50, 300), st.integers(0, 10**6))
def test_bitset_and_g_vector_agree_on_larger_curtis_instances(kind, n, seed):
    problem = curtis(kind, n, seed)
    auto, bitset, g_vector = (_solve_subset_sum(problem, method) for method in METHODS)
    assert auto.value == bitset.value == g_vector.value
    assert (bitset.method, g_vector.method) == ("bitset", "g-vector")  # the DP asked for, never the state lists
    for sol in (auto, bitset, g_vector):
        check_kp_choice(problem, sol)


def test_subset_sum_budget_paths():
    problem = curtis("half", 200, seed=4)
    full = solve(problem, backend="cpu")
    light = solve(problem, backend="cpu", memory_budget_bytes=4_000_000)  # g alone ~ 10 MB
    assert (full.method, light.method) == ("bitset", "bitset-divide-conquer")
    assert light.value == full.value
    check_kp_choice(problem, light)
    with pytest.raises(MemoryBudgetError, match="subset sum up to"):
        solve(problem, backend="cpu", memory_budget_bytes=10_000)


def test_subset_sum_rejects_unknown_method():
    with pytest.raises(ValueError, match="method must be one of"):
        solve_subset_sum(SubsetSum([1], 1), 10**6, "dp")


# --- multiple-choice knapsack -----------------------------------------------------------------


def test_dominance_filter():
    profits, weights = np.array([5, 3, 8, 8, 1, 9]), np.array([4, 4, 6, 7, 1, 9])
    assert dominance_filter(profits, weights).tolist() == [4, 0, 2, 5]


@pytest.mark.parametrize(
    "classes, capacity, value, selected",
    [
        ([([1, 5], [1, 3]), ([2, 4], [2, 5])], 6, 7, [1, 0]),
        ([([1, 5], [1, 3]), ([2, 4], [2, 5])], 3, 3, [0, 0]),  # only the lightest items fit
        ([([7], [4])], 4, 7, [0]),  # one class, one item
        ([([3, 3], [2, 2]), ([0, 9], [0, 0])], 2, 12, [0, 1]),  # ties and zero weights
        ([([1, 10, 100], [0, 5, 50])], 20, 10, [1]),
    ],
)
def test_mckp_hand_made(classes, capacity, value, selected):
    sol = solve(MCKP(classes, capacity), backend="cpu")
    assert sol.value == value
    assert sol.selected.tolist() == selected


@SETTINGS
@given(mckp_instances())
def test_mckp_matches_brute_force(problem):
    sol = solve(problem, backend="cpu")
    assert sol.value == brute_mckp(problem.classes, problem.capacity)
    check_mckp_choice(problem, sol)


@SETTINGS
@given(mckp_instances(), st.sampled_from([3, 10**6, 10**12]), st.integers(0, 2))
def test_mckp_weights_with_a_common_factor(problem, factor, slack):
    # the gcd divides out: weights of 10**12 solve as fast as weights of 1 (once a budget refusal)
    scaled = MCKP([(p, w * factor) for p, w in problem.classes], problem.capacity * factor + slack)
    sol = solve(scaled, backend="cpu")
    assert sol.value == brute_mckp(problem.classes, problem.capacity)
    check_mckp_choice(scaled, sol)


@settings(max_examples=6, deadline=None)
@given(st.integers(1, 3), st.integers(0, 10**6))
def test_mckp_matches_highs_on_suri_sets(set_number, seed):
    problem = suri(set_number, seed, items_per_class=30)
    sol = solve(problem, backend="cpu")
    assert sol.value == highs_mckp(problem.classes, problem.capacity)
    check_mckp_choice(problem, sol)


def test_mckp_budget_paths():
    rng = np.random.default_rng(11)
    classes = [(rng.integers(1, 100, 6), rng.integers(1, 40, 6)) for _ in range(200)]
    problem = MCKP(classes, 3000)  # decisions ~ 88 kB and rows ~ 14 kB; four int64 rows ~ 58 kB
    full = solve(problem, backend="cpu")
    light = solve(problem, backend="cpu", memory_budget_bytes=70_000)
    assert (full.method, light.method) == ("dp", "dp-divide-conquer")
    assert light.value == full.value == highs_mckp(classes, 3000)
    check_mckp_choice(problem, light)
    with pytest.raises(MemoryBudgetError, match="MCKP with capacity"):
        solve_mckp(problem, 5_000, method="dp")
    tiny = solve(problem, backend="cpu", memory_budget_bytes=5_000)  # no DP fits: the state lists do
    assert (tiny.method, tiny.value) == ("states", full.value)
