"""The margin bound of KP1 (core.knapsack.margins): profits that are the weight plus one of two margins."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.knapsack import KP1, solve
from core.knapsack.cardinality import ONE_EACH
from core.knapsack.generators import pisinger, pisinger_hard
from core.knapsack.kp1 import solve_kp1
from core.knapsack.kp1_core import after_quick_run, improving_margin_bound, prepare
from core.knapsack.margins import NOT_APPLICABLE, margin_bound
from tests.knapsack_reference import brute_kp

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _inner_by_brute_force(profits, weights, capacity, copies):
    """``max sum (p - w)+ x`` over the copies within ``capacity``, every subset of copies tried."""
    unit_w = [w // c for w, c in zip(weights, copies) for _ in range(c)]
    unit_k = [max(0, (p - w) // c) for p, w, c in zip(profits, weights, copies) for _ in range(c)]
    best = 0
    for bits in itertools.product((0, 1), repeat=len(unit_w)):
        if sum(w for w, x in zip(unit_w, bits) if x) <= capacity:
            best = max(best, sum(k for k, x in zip(unit_k, bits) if x))
    return best


@st.composite
def two_margin_items(draw, most=10):
    """Items ``p = w + k`` per copy, ``k`` one of two positive margins or a non-positive one, with copies."""
    n = draw(st.integers(1, most))
    margins = draw(st.lists(st.integers(-5, 40), min_size=2, max_size=2))
    unit_w = np.array(draw(st.lists(st.integers(1, 30), min_size=n, max_size=n)), np.int64)
    k = np.array(draw(st.lists(st.sampled_from(margins + [0, -3]), min_size=n, max_size=n)), np.int64)
    copies = np.array(draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)), np.int64)
    while copies.sum() > 12:  # (the brute force tries every subset of copies)
        copies[np.argmax(copies)] -= 1
    unit_p = np.maximum(unit_w + k, 1)
    capacity = draw(st.integers(0, int((unit_w * copies).sum())))
    return unit_p * copies, unit_w * copies, capacity, copies


@SETTINGS
@given(two_margin_items(), st.booleans())
@example((np.array([13, 12, 5]), np.array([3, 2, 5]), 5, np.array([1, 1, 1])), False)  # margins 10 and 10, 0
@example((np.array([40, 26, 14]), np.array([20, 6, 4]), 10, np.array([2, 1, 1])), True)  # a copy of 10 w, 10 k
def test_the_bound_is_the_capacity_plus_the_best_margins_within_it(items, with_copies):
    profits, weights, capacity, copies = items
    if not with_copies:
        profits, weights, copies = profits // copies, weights // copies, np.ones(len(copies), np.int64)
    order = np.random.default_rng(len(profits)).permutation(len(profits))  # (any order: sorted inside)
    profits, weights, copies = profits[order], weights[order], copies[order]
    bound = margin_bound(profits, weights, capacity, copies if with_copies else ONE_EACH)
    assert bound == capacity + _inner_by_brute_force(profits, weights, capacity, copies)
    unit_p = np.repeat(profits // copies, copies)
    unit_w = np.repeat(weights // copies, copies)
    assert bound >= brute_kp(unit_p, [unit_w], [capacity])


def test_three_positive_margins_are_not_taken():
    weights = np.array([5, 6, 7, 8], np.int64)
    assert margin_bound(weights + np.array([1, 2, 3, 1]), weights, 10, ONE_EACH) == NOT_APPLICABLE
    assert margin_bound(weights + np.array([1, 2, -3, 0]), weights, 10, ONE_EACH) >= 10
    assert margin_bound(weights - 1, weights, 10, ONE_EACH) == 10  # no positive margin: the capacity


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(20, 120), st.sampled_from([100, 1000]), st.integers(1, 99), st.integers(0, 10**6),
       st.sampled_from([3, 14, 15]))
@example(60, 1000, 50, 1, 14)
def test_the_improving_bound_never_cuts_a_better_solution(n, r, v, seed, klass):
    """Over the free items with the reductions of the greedy incumbent: never below an optimum that beats it."""
    problem = pisinger("strongly", n, r, v, 100, seed=seed) if klass == 3 else pisinger_hard(klass, n, r, v, 100,
                                                                                               seed=seed)
    keep = (problem.weights <= problem.capacity) & (problem.profits > 0)
    p, w = problem.profits[keep], problem.weights[keep]
    if int(w.sum()) <= problem.capacity:
        return
    setup = prepare(p, w, problem.capacity)
    optimum = solve_kp1(KP1(p, w, problem.capacity), method="dp").value
    bound = improving_margin_bound(setup)
    assert bound >= setup.lower_bound
    if optimum > setup.lower_bound:
        assert bound >= optimum


def test_a_multiple_strongly_correlated_instance_ends_at_the_bound_without_a_long_run():
    """Hard class 14: the greedy incumbent is optimal and the margin bound says so (Dantzig's bound and the
    surrogate's left a gap the long run had to close)."""
    problem = pisinger_hard(14, 300, 1000, 50, 100, seed=1)
    setup = prepare(problem.profits, problem.weights, problem.capacity)
    optimum = solve_kp1(problem, method="dp").value
    assert setup.upper_bound > optimum  # (Dantzig's bound alone does not prove it)
    mask, run = after_quick_run(setup, setup.greedy, 10**9, 10**8, beams=False)
    assert run is None
    assert int(problem.profits[mask].sum()) == optimum
    assert solve(problem, backend="cpu").value == optimum
