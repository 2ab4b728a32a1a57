"""Subset sum with long capacities by KP1's state lists (p = w), against brute force and the bitset."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.knapsack import SubsetSum, solve
from core.knapsack import subset_sum as module
from core.knapsack.subset_sum import solve_subset_sum
from tests.knapsack_reference import brute_subset_sum

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                           HealthCheck.function_scoped_fixture])


@st.composite
def subset_sums(draw, low_n=1, high_n=14, top=10**6):
    n = draw(st.integers(low_n, high_n))
    rng = np.random.default_rng(draw(st.integers(0, 10**6)))
    weights = rng.integers(0, draw(st.sampled_from([10, 1000, top])) + 1, n)
    return SubsetSum(weights, int(rng.integers(0, weights.sum() + 2)))


@SETTINGS
@given(subset_sums())
def test_states_match_brute_force(monkeypatch, problem):
    monkeypatch.setattr(module, "STATES_FIRST_WORDS", -1)  # the state lists on every instance
    result = solve_subset_sum(problem, None)
    assert result.value == brute_subset_sum(problem.weights, problem.capacity)
    assert result.method in ("states", "trivial")
    assert int(problem.weights[result.selected].sum()) == result.value <= problem.capacity


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(subset_sums(low_n=30, high_n=200, top=10**4))
def test_states_match_the_bitset(monkeypatch, problem):
    bitset = solve_subset_sum(problem, None, "bitset").value
    monkeypatch.setattr(module, "STATES_FIRST_WORDS", -1)
    assert solve_subset_sum(problem, None).value == bitset


def test_long_capacity_is_solved_without_a_bitset():
    """C ~ 2.5e12: the bitset would need 300 GB; the state lists hit the capacity."""
    weights = np.random.default_rng(1).integers(1, 10**9, 5000)
    problem = SubsetSum(weights, int(weights.sum()) // 2 + 1)
    solution = solve(problem, backend="cpu", memory_budget_bytes=2**30)
    assert solution.method == "states" and solution.value == problem.capacity


def test_refusal_when_neither_the_bitset_nor_the_lists_fit():
    weights = np.random.default_rng(3).integers(1, 10**12, 200)
    with pytest.raises(ValueError, match="subset sum by state lists"):
        solve_subset_sum(SubsetSum(weights, int(weights.sum()) // 2 + 1), 2**24)
