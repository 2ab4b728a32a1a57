"""KP1's first pass in one compiled call (core.knapsack.kp1_first): the break item by partitioning, the
efficiency order of the items it sorts, the pass's answers and its handover to the usual path."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.knapsack import KP1, kp1_break, kp1_first, limits
from core.knapsack import kp1 as kp1_module
from core.knapsack.generators import pisinger
from core.knapsack.kp1 import solve_kp1
from core.knapsack.kp1_break import break_item, sort_positions
from core.knapsack.kp1_first import (
    FITS,
    GROUPED,
    HANDOVER,
    OVERFLOW,
    REDUCED,
    SOLVED,
    first_pass,
)
from core.knapsack.kp1_greedy import ordered
from core.knapsack.states import OUT_OF_TIME
from tests.core.knapsack.test_kp1_core import kp1_of_every_class
from tests.knapsack_reference import brute_kp, check_kp_choice

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _reference_order(e, tie):
    """Falling efficiency, ties by ``tie`` rising."""
    return np.lexsort((tie, -e))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3000), st.integers(0, 10**6), st.sampled_from([3, 50, 10**6]))
def test_sort_positions_is_the_efficiency_order(n, seed, distinct):
    """Many ties (few distinct efficiencies) and none; ranges past the insertion sort's."""
    rng = np.random.default_rng(seed)
    e = rng.integers(1, distinct + 1, n) / 7.0
    tie = rng.permutation(n)
    ids = rng.permutation(n)
    sort_positions(ids, e, tie)
    assert np.array_equal(ids, _reference_order(e, tie))


def _first_b(e, w, capacity):
    """The break item's rank in the efficiency order (ties by index), and the items before it."""
    order = _reference_order(e, np.arange(len(e)))
    prefix = np.cumsum(w[order])
    b = int(np.searchsorted(prefix, capacity, side="right"))
    return b, order


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 4000), st.integers(0, 10**6), st.sampled_from([5, 1000, 10**6]), st.floats(0.0, 1.2))
def test_break_item_splits_the_items_as_the_efficiency_order_does(n, seed, r, share):
    """Sizes on both sides of the sampled estimate (n > 1024), capacities from nothing to more than all
    (an estimate that misses its band on either side), many tied efficiencies (small r)."""
    rng = np.random.default_rng(seed)
    p, w = rng.integers(1, r + 1, n), rng.integers(1, r + 1, n)
    capacity = int(share * w.sum())
    e = p / w
    ids = np.arange(n)
    b, used = break_item(ids, e, np.arange(n), w, capacity)
    expected_b, order = _first_b(e, w, capacity)
    assert b == expected_b
    assert sorted(ids) == list(range(n))
    assert set(ids[:b].tolist()) == set(order[:b].tolist())
    assert used == int(w[order[:b]].sum())
    if b < n:
        assert ids[b] == order[b]


@SETTINGS
@given(kp1_of_every_class(low_n=1, high_n=14), st.sampled_from([True, False]))
def test_an_answer_of_the_first_pass_is_optimal(problem, auto):
    """Where the pass settles an instance (every item fits, the reductions or the quick run), its choice is
    optimal, feasible and worth what it says."""
    outcome, numbers, selected, _ = first_pass(problem.profits, problem.weights, problem.capacity, 10**9, auto,
                                               2**18, 2**11, 24, 4096 * 24, 10, True, limits.stop_flag())
    if outcome not in (FITS, SOLVED, REDUCED):
        return
    assert np.all(np.diff(selected) > 0)
    assert int(problem.weights[selected].sum()) <= problem.capacity
    assert int(problem.profits[selected].sum()) == int(numbers[0])
    assert int(numbers[0]) == brute_kp(problem.profits, [problem.weights], [problem.capacity])


def test_instances_it_leaves_to_the_usual_path():
    """Identical items (grouping) and a bound past 64 bits go the usual way, and still come out right."""
    many_copies = KP1([5, 5, 5, 5, 5, 5, 4, 4], [3, 3, 3, 3, 3, 3, 2, 2], 10)
    out = first_pass(many_copies.profits, many_copies.weights, 10, 10**9, True, 2**18, 2**11, 24, 4096 * 24, 10,
                     True, limits.stop_flag())
    assert out[0] == GROUPED
    assert solve_kp1(many_copies).value == brute_kp(many_copies.profits, [many_copies.weights], [10])
    huge = KP1([2**50, 2**55, 3, 2**54 + 7], [2**20, 2**31, 1, 2**30 + 5], 2**20 + 2**30)  # residual * p_b > 2^63
    out = first_pass(huge.profits, huge.weights, huge.capacity, 10**9, True, 2**18, 2**11, 24, 4096 * 24, 10,
                     True, limits.stop_flag())
    assert out[0] == OVERFLOW
    result = solve_kp1(huge)
    assert result.value == brute_kp(huge.profits, [huge.weights], [huge.capacity])
    check_kp_choice(huge, result)


@pytest.mark.parametrize("kind", ["strongly", "inverse-strongly", "almost-strongly"])
def test_the_handover_and_the_solve_that_goes_on(monkeypatch, kind):
    """A quick run of 16 states hands over: the items before the break item are those of the efficiency
    order, the free items (hundreds of them: the radix sort's path) lie in that order among themselves, the
    incumbent is the greedy choice's value, and the solve that goes on from there finds the optimum."""
    problem = pisinger(kind, 600, 10**4, 5, 10, seed=3)
    p, w = problem.profits.copy(), problem.weights.copy()
    out = first_pass(p, w, problem.capacity, 10**9, False, 16, 2**11, 24, 4096 * 24, 10, True, limits.stop_flag())
    assert out[0] == HANDOVER
    order, fixed, greedy = out[3][0], out[3][1], out[3][2] == 1
    b, n_free = int(out[1][1]), int(out[1][7])
    usual = ordered(p, w, problem.capacity, 0)
    assert set(order[:b].tolist()) == set(usual[0][:b].tolist()) and order[b] == usual[0][b]
    free = order[fixed < 0]
    assert len(free) == n_free > 2 * kp1_break._FEW
    assert np.array_equal(free, [j for j in usual[0] if j in set(free.tolist())])
    assert int(p[order][greedy].sum()) == int(out[1][2])
    monkeypatch.setattr(kp1_module, "KP1_QUICK_STATES", 16)
    result = solve_kp1(problem, method="states")
    assert result.value == solve_kp1(problem, method="dp").value
    check_kp_choice(problem, result)


@SETTINGS
@given(kp1_of_every_class(low_n=2, high_n=14))
def test_a_handed_over_solve_keeps_the_optimum(problem):
    """The first pass gives up after one state on every instance it does not settle at once: the usual path
    from its handover (surrogate, long run, or the DP over the free items) still finds the optimum."""
    original = kp1_module.KP1_QUICK_STATES
    kp1_module.KP1_QUICK_STATES = 1
    try:
        for method in ("auto", "states"):
            result = solve_kp1(problem, None, method)
            assert result.value == brute_kp(problem.profits, [problem.weights], [problem.capacity])
            check_kp_choice(problem, result)
    finally:
        kp1_module.KP1_QUICK_STATES = original


def test_a_raised_stop_flag_hands_over_out_of_time():
    problem = pisinger("strongly", 300, 1000, 5, 10, seed=1)
    out = first_pass(problem.profits, problem.weights, problem.capacity, 10**9, False, 2**18, 2**11, 24, 4096 * 24,
                     10, True, np.ones(1, np.uint8))
    assert out[0] == HANDOVER and out[1][9] == OUT_OF_TIME


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kp1_of_every_class(low_n=100, high_n=400))
def test_the_first_pass_matches_the_capacity_dp(problem):
    """Instances with a core of many items, where the order of its two sides matters to the bounds."""
    outcome, numbers, selected, _ = first_pass(problem.profits, problem.weights, problem.capacity, 10**9, True,
                                               2**18, 2**11, 24, 4096 * 24, 10, True, limits.stop_flag())
    if outcome in (FITS, SOLVED, REDUCED):
        assert int(numbers[0]) == solve_kp1(problem, method="dp").value
        assert int(problem.weights[selected].sum()) <= problem.capacity


@pytest.mark.parametrize("sampled", ["least efficient", "most efficient"])
def test_a_sample_that_misleads_the_estimate(sampled):
    """The sampled items less efficient than nearly all the others (or more): the estimate's band misses the
    break item, which then lies among the items clearly before it (after it), and is still found."""
    n = 5000
    rng = np.random.default_rng(7)
    p, w = rng.integers(1, 1000, n), rng.integers(1000, 2000, n)
    at = np.arange(kp1_break._SAMPLE) * n // kp1_break._SAMPLE
    p[at], w[at] = (1, 1000) if sampled == "least efficient" else (10**6, 1)
    e, capacity = p / w, int(w.sum()) // 2
    lo, hi, _ = kp1_break._split_by_estimate(np.arange(n), e, np.arange(n), w, capacity)
    assert lo == 0 if sampled == "least efficient" else hi == n
    ids = np.arange(n)
    b, used = break_item(ids, e, np.arange(n), w, capacity)
    expected_b, order = _first_b(e, w, capacity)
    assert (b, ids[b], used) == (expected_b, order[expected_b], int(w[order[:b]].sum()))


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 3000), st.integers(0, 10**6), st.sampled_from([10, 1000, 10**6]), st.floats(0.01, 0.99),
       st.sampled_from(["spread", "many light"]))
def test_the_greedy_solution_is_the_sequential_one(n, seed, r, share, weights):
    """The greedy solution by picks, then by the sorted rest, against the scan of every item in the usual
    order: the same items (many light items after the break item: more than the picks)."""
    rng = np.random.default_rng(seed)
    p = rng.integers(1, r + 1, n)
    w = rng.integers(1, r + 1, n)
    if weights == "many light":
        w[rng.random(n) < 0.5] = 1
    capacity = int(share * w.sum())
    if int(w.sum()) <= capacity:
        return
    usual = ordered(p, w, capacity, 0, rounds=0)
    e = p / w
    order = np.arange(n)
    b, used = break_item(order, e, np.arange(n), w, capacity)
    value, taken = kp1_first._greedy(p[order], w[order], e[order], order, b, capacity - used, int(p[order[:b]].sum()))
    assert set(order[taken].tolist()) == set(usual[0][usual[5]].tolist())
    assert value == int(p[usual[0][usual[5]]].sum())


def test_the_warm_up_meets_every_path_of_kp1():
    """python -m core.warmup compiles the knapsack solvers too: its KP1 instances are settled by the first
    pass, grouped, handed over, and past the first pass's size."""
    from core import warmup
    from core.knapsack.kp1_first import FIRST_PASS_ITEMS

    problems = warmup.kp1_warmups()
    outcomes = [first_pass(p.profits, p.weights, p.capacity, 10**9, True, 2**18, 2**11, 24, 4096 * 24, 10, True,
                           limits.stop_flag())[0] for p in problems[:3]]
    assert outcomes == [SOLVED, GROUPED, HANDOVER]
    assert problems[3].n_items > FIRST_PASS_ITEMS
    warmup.compile_knapsack_kernels()


@SETTINGS
@given(kp1_of_every_class(low_n=1, high_n=13), st.sampled_from([-1, 0, 1, 5]), st.booleans())
def test_the_surrogates_exact_solve_by_the_first_pass(problem, offset, first):
    """kp1_core._solve_exactly (the surrogate's exact solve: the optimum where it beats ``z``) by the first
    pass with ``known`` and by the usual path, against enumeration, ``z`` just below, at and above the
    optimum."""
    from core.knapsack import kp1_core

    keep = (problem.profits > 0) & (problem.weights > 0)  # (as the surrogate's items: sizes above 0)
    p, w, c = problem.profits[keep], problem.weights[keep], problem.capacity
    if not len(p):
        return
    optimum = brute_kp(p, [w], [c])
    z = max(optimum + offset, 0)
    original = kp1_core.FIRST_PASS_ITEMS
    kp1_core.FIRST_PASS_ITEMS = original if first else 0
    try:
        value, mask = kp1_core._solve_exactly(p, w, c, z, 10**9, 10**8)
    finally:
        kp1_core.FIRST_PASS_ITEMS = original
    if optimum > z:
        assert value == optimum and int(p[mask].sum()) == optimum and int(w[mask].sum()) <= c
    else:
        assert (value, mask) == (z, None)
