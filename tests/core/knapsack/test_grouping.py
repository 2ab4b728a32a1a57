"""Identical KP1 items grouped into bounded types split in powers of two (core.knapsack.grouping)."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.knapsack import KP1
from core.knapsack.cardinality import cardinality_limits
from core.knapsack.generators import pisinger_hard
from core.knapsack.grouping import _more_types_than, _types, group_identical
from core.knapsack.kp1 import solve_kp1
from core.knapsack.kp1_core import break_copies, cardinality_bound, prepare
from core.knapsack.surrogate import surrogate_bound
from tests.knapsack_reference import check_kp_choice

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _repeated(types, counts, seed=0):
    """Items: ``counts[t]`` copies of ``types[t] = (profit, weight)``, shuffled."""
    profits = np.repeat([p for p, _ in types], counts).astype(np.int64)
    weights = np.repeat([w for _, w in types], counts).astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(profits))
    return profits[order], weights[order]


@pytest.mark.parametrize("count", [1, 2, 3, 7, 8, 40, 63, 64, 500])
def test_the_pieces_of_a_type_reach_every_count_and_no_other(count):
    profits, weights = _repeated([(5, 3), (9, 4)], [count, 200])
    grouping = group_identical(profits, weights)
    assert grouping is not None
    first = grouping.weights % 3 == 0  # the pieces of type (5, 3): weights 3 s
    sizes = grouping.weights[first] // 3
    np.testing.assert_array_equal(grouping.profits[first], 5 * sizes)
    assert sizes.sum() == count and len(sizes) <= np.log2(count + 1) + 1
    assert np.all(np.diff(sizes) <= 0)  # largest first (the greedy then fills a type's room as with copies)
    if len(sizes) <= 12:
        reach = {sum(c) for k in range(len(sizes) + 1) for c in itertools.combinations(sizes.tolist(), k)}
        assert reach == set(range(count + 1))


def test_expanding_chosen_pieces_takes_that_many_copies_of_their_type():
    types = [(5, 3), (9, 4), (2, 7)]
    profits, weights = _repeated(types, [100, 37, 64], seed=3)
    grouping = group_identical(profits, weights)
    chosen = np.random.default_rng(1).random(len(grouping.profits)) < 0.5
    mask = grouping.expand(chosen)
    assert profits[mask].sum() == grouping.profits[chosen].sum()
    assert weights[mask].sum() == grouping.weights[chosen].sum()
    np.testing.assert_array_equal(np.sort(grouping.members), np.arange(len(profits)))


def test_items_seldom_repeated_are_not_grouped():
    rng = np.random.default_rng(0)
    assert group_identical(rng.integers(1, 1000, 500), rng.integers(1, 1000, 500)) is None
    assert group_identical(np.array([3, 3, 3]), np.array([2, 2, 2])) is None  # too few to bother


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 300), st.sampled_from([2, 5, 50, 10**6, 2**62]), st.integers(0, 300),
       st.booleans())
def test_the_count_of_types_against_a_set(seed, n, top, limit, one_profit):
    """The hash table's test of "more than ``limit`` distinct pairs", and its types numbered in order of
    first occurrence, against Python's dict of the distinct pairs (with one profit for all, pairs that
    collide in the table differ only in weight)."""
    rng = np.random.default_rng(seed)
    profits, weights = rng.integers(1, top, n).astype(np.int64), rng.integers(1, top, n).astype(np.int64)
    profits = np.ones(n, np.int64) if one_profit else profits
    first_seen = {}
    for pair in zip(profits.tolist(), weights.tolist()):
        first_seen.setdefault(pair, len(first_seen))
    assert _more_types_than(profits, weights, limit) == (len(first_seen) > limit)
    type_of, type_p, type_w, counts = _types(profits, weights)
    assert list(zip(type_p.tolist(), type_w.tolist())) == list(first_seen)
    assert type_of.tolist() == [first_seen[pair] for pair in zip(profits.tolist(), weights.tolist())]
    assert counts.tolist() == np.bincount(type_of, minlength=len(first_seen)).tolist()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(4, 200), st.sampled_from([3, 20, 10**6, 2**52]))
def test_the_types_come_in_the_lexsort_order_and_every_item_once(seed, n, top):
    """Profit, then weight, then position; with coefficients near 2^52 the one-key sort would overflow (the
    lexsort runs), and the split items stay below 2^62 as group_identical requires."""
    rng = np.random.default_rng(seed)
    types = rng.integers(1, top, (max(1, n // 8), 2))
    pick = rng.integers(0, len(types), n)
    profits, weights = types[pick, 0].astype(np.int64), types[pick, 1].astype(np.int64)
    grouping = group_identical(profits, weights)
    if grouping is None:
        return
    assert np.array_equal(grouping.members, np.lexsort((weights, profits)))
    copies = np.repeat(np.arange(len(grouping.counts)), grouping.counts)
    assert np.array_equal(grouping.profits[copies] // grouping.counts[copies], profits[grouping.members])
    assert np.array_equal(grouping.weights[copies] // grouping.counts[copies], weights[grouping.members])


def _best_by_counts(types, counts, capacity) -> int:
    """The bounded knapsack's optimum by enumerating every count of every type (an independent reference)."""
    grids = np.meshgrid(*[np.arange(c + 1) for c in counts], indexing="ij")
    taken = np.stack([g.ravel() for g in grids], axis=1)
    weight = taken @ np.array([w for _, w in types])
    value = taken @ np.array([p for p, _ in types])
    return int(value[weight <= capacity].max())


@st.composite
def repeated_kp1(draw):
    n_types = draw(st.integers(1, 3))
    types = [(draw(st.integers(1, 60)), draw(st.integers(1, 60))) for _ in range(n_types)]
    counts = [draw(st.integers(40, 120)) for _ in range(n_types)]  # enough copies to be grouped
    extra = draw(st.integers(0, 3))  # a few items of their own beside the types
    seed = draw(st.integers(0, 10**6))
    profits, weights = _repeated(types, counts, seed)
    rng = np.random.default_rng(seed)
    profits = np.concatenate([profits, rng.integers(1, 60, extra)])
    weights = np.concatenate([weights, rng.integers(1, 60, extra)])
    capacity = int(draw(st.floats(0.05, 0.95)) * weights.sum())
    return KP1(profits, weights, capacity), types, counts, extra


@SETTINGS
@given(repeated_kp1(), st.sampled_from(["auto", "states"]))
def test_repeated_items_are_solved_exactly(drawn, method):
    problem, types, counts, extra = drawn
    assert group_identical(problem.profits, problem.weights) is not None
    result = solve_kp1(problem, None, method)
    check_kp_choice(problem, result)
    assert result.value == solve_kp1(problem, None, "dp").value  # the capacity DP never groups
    if not extra:
        assert result.value == _best_by_counts(types, counts, problem.capacity)


@pytest.mark.parametrize("klass", [11, 12, 13])
@pytest.mark.parametrize("v", [10, 50, 90])
def test_spanner_instances_are_solved_exactly(klass, v):
    """Pisinger's spanner classes: 20 distinct items among 2000, the optimum of the ungrouped capacity DP."""
    problem = pisinger_hard(klass, 2000, 100, v, 100, seed=4)
    assert group_identical(problem.profits, problem.weights) is not None
    result = solve_kp1(problem, None, "states")
    check_kp_choice(problem, result)
    assert result.value == solve_kp1(problem, None, "dp").value


@SETTINGS
@given(repeated_kp1(), st.integers(0, 3))
def test_the_bounds_over_grouped_items_count_copies_as_over_the_single_items(drawn, below):
    """Cardinality limits, the cardinality bound and the surrogate bound over split items with their counts
    equal those over the single copies, and bound the bounded knapsack's optimum (by enumeration)."""
    problem, types, counts, extra = drawn
    grouping = group_identical(problem.profits, problem.weights)
    usable = grouping.weights <= problem.capacity
    p, w, k = grouping.profits[usable], grouping.weights[usable], grouping.counts[usable]
    if extra or int(w.sum()) <= problem.capacity:
        return
    optimum = _best_by_counts(types, counts, problem.capacity)
    grouped = prepare(p, w, problem.capacity, counts=k)
    single = grouping.expand(usable)  # the copies of the pieces that fit (those of the others cannot all be used)
    plain = prepare(problem.profits[single], problem.weights[single], problem.capacity)
    incumbent = max(0, min(grouped.lower_bound, plain.lower_bound) - below)
    assert cardinality_limits(p, w, problem.capacity, incumbent, k) == cardinality_limits(
        plain.profits, plain.weights, problem.capacity, incumbent)
    assert optimum <= cardinality_bound(grouped) <= grouped.upper_bound
    assert abs(cardinality_bound(grouped) - cardinality_bound(plain)) <= 1

    def exactly(pp, ww, cc, zz):
        value = solve_kp1(KP1(pp, ww, cc), None, "dp").value
        return (value, None) if value > zz else (zz, None)

    every_free = dataclasses.replace(grouped, fixed=np.full(len(p), -1, np.int8))  # surrogate_bound sees all
    in_break = break_copies(every_free)
    bound, _ = surrogate_bound(p, w, problem.capacity, in_break, incumbent, exactly, k)
    assert bound is None or bound >= max(optimum, incumbent)
    if len({pt / wt for pt, wt in types}) == len(types):  # no ties: the same break solution in copies
        assert in_break == plain.break_item
        assert bound == surrogate_bound(plain.profits, plain.weights, problem.capacity, plain.break_item, incumbent,
                                        exactly)[0]

