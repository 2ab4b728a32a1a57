"""The MCKP's few-swap search (core.knapsack.mckp_swaps) against brute force over the same neighbourhood,
and the instance it was built for against an independent enumeration."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.knapsack import MCKP
from core.knapsack.generators import pisinger_mckp
from core.knapsack.mckp import _Reduced, solve_mckp
from core.knapsack.mckp_lp import lp_relaxation
from core.knapsack.mckp_swaps import SWAP_LEVELS, _sets, few_swaps
from core.knapsack.problems import KnapsackSolution
from tests.knapsack_reference import best_mckp_from, check_mckp_choice, lagrangian_mckp_bound

_GO = np.zeros(1, np.bool_)


@st.composite
def reduced_instances(draw):
    """Up to 6 classes of up to 4 items with weights from a wide range (few equal sums), as the solver's
    reduction leaves them, with the LP over them."""
    m = draw(st.integers(1, 6))
    classes = []
    for _ in range(m):
        k = draw(st.integers(1, 4))
        weights = draw(st.lists(st.integers(0, 10**6), min_size=k, max_size=k))
        classes.append(([w + draw(st.integers(0, 60)) for w in weights], weights))
    lightest = sum(min(w) for _, w in classes)
    red = _Reduced(MCKP(classes, lightest + draw(st.integers(0, 10**6 * m))))
    profits, weights, starts = red.profits.astype(np.int64), red.weights, red.class_start
    lam, bound, star = lp_relaxation(profits, weights, starts, red.capacity)
    return profits, weights, starts, red.capacity, lam, bound, star


def _neighbourhood_best(profits, weights, starts, capacity, star, swaps=6):
    """Brute force: the best value of the choices that leave ``star`` in at most ``swaps`` classes."""
    best = None
    for choice in itertools.product(*(range(e - s) for s, e in zip(starts[:-1], starts[1:]))):
        choice = np.array(choice, np.int64)
        items = starts[:-1] + choice
        if np.count_nonzero(choice != star) <= swaps and weights[items].sum() <= capacity:
            value = int(profits[items].sum())
            best = value if best is None else max(best, value)
    return best


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reduced_instances(), st.integers(0, 40))
def test_few_swaps_finds_the_best_choice_within_six_swaps_of_the_lp_near_its_bound(instance, below):
    profits, weights, starts, capacity, lam, bound, star = instance
    top = int(np.floor(bound + 1e-9))
    incumbent = top - below
    found = few_swaps(profits, weights, starts, capacity, lam, bound, top, star, incumbent, _GO)
    best = _neighbourhood_best(profits, weights, starts, capacity, star)
    reachable = best is not None and best > max(incumbent, top - SWAP_LEVELS)
    if found is None:
        assert not reachable
        return
    value, choice = found
    items = starts[:-1] + choice
    assert weights[items].sum() <= capacity
    assert value == profits[items].sum() and value > incumbent
    assert np.count_nonzero(choice != star) <= 6
    # the values from the bound down are tried in turn, so the first one found is the neighbourhood's best
    assert reachable and value == best


def test_a_raised_stop_flag_or_too_few_sets_give_nothing():
    drawn = pisinger_mckp("weakly", 100, 10, 10**9, seed=1)
    red = _Reduced(MCKP(drawn.classes, (drawn.capacity + drawn.min_weight) // 2))
    profits, weights, starts = red.profits.astype(np.int64), red.weights, red.class_start
    lam, bound, star = lp_relaxation(profits, weights, starts, red.capacity)
    top = int(np.floor(bound + 1e-9))
    args = (profits, weights, starts, red.capacity, lam, bound, top, star, top - SWAP_LEVELS)
    assert few_swaps(*args, _GO) is not None  # the instance has such a choice ...
    assert few_swaps(*args, np.ones(1, np.bool_)) is None  # ... but a stopped search returns none
    for max_sets in (0, 1, 100):  # and so does one allowed too few sets (the memory budget's share)
        assert few_swaps(*args, _GO, max_sets) is None


def test_weakly_correlated_1000_classes_with_little_room_are_solved_and_nothing_is_worth_more():
    # p = w + U[-10, 10] at R = 10^9, 1000 classes, the room above the lightest items halved: refused
    # (the lists outgrew 2 GiB) until a few swaps from the LP's choice gave a solution 1 below the LP
    # bound's floor and the meet in the middle ruled the floor out.  The reference enumerates every choice
    # whose reduced costs leave it worth one more than the value found: there is none.
    drawn = pisinger_mckp("weakly", 1000, 10, 10**9, seed=1)
    problem = MCKP(drawn.classes, (drawn.capacity + drawn.min_weight) // 2)
    value, selected, method = solve_mckp(problem, 2**31, "states")
    check_mckp_choice(problem, KnapsackSolution(value, np.asarray(selected), "cpu", method, 0.0))
    red = _Reduced(problem)
    lam, _, _ = lp_relaxation(red.profits.astype(np.int64), red.weights, red.class_start, red.capacity)
    assert best_mckp_from(problem.classes, problem.capacity, lam, value + 1) is None


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(-50, 50), st.floats(0, 1)), max_size=9),
       st.floats(0, 2), st.sampled_from([2, 3]))
def test_sets_are_every_set_of_at_most_depth_swaps_in_distinct_classes_within_the_slack(swaps, slack, depth):
    swaps = sorted(swaps, key=lambda s: s[2])  # cheapest first, as few_swaps admits them
    cls = np.array([s[0] for s in swaps], np.int64)
    dw = np.array([s[1] for s in swaps], np.int64)
    cost = np.array([s[2] for s in swaps], np.float64)
    cap = 1000
    sw, sp, ids = np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty((cap, 3), np.int32)
    count = _sets(cls, dw, 2 * dw, cost, slack, sw, sp, ids, _GO, depth)
    listed = sorted(tuple(int(m) for m in ids[t] if m >= 0) for t in range(count))
    expected = sorted(s for size in range(depth + 1) for s in itertools.combinations(range(len(swaps)), size)
                      if len({int(cls[m]) for m in s}) == size and cost[list(s)].sum() <= slack)
    assert listed == expected
    for t in range(count):
        members = [m for m in ids[t] if m >= 0]
        assert sw[t] == dw[members].sum() and sp[t] == 2 * dw[members].sum()


def test_sets_of_two_swaps_fill_where_the_sets_of_three_are_too_many():
    # p = w + U[-10, 10] at R = 10^9, 1000 classes of 100 items, the capacity a tenth of the way up: at the
    # LP bound's floor 1,409 swaps qualify, whose sets of three are far more than the search may list, so it
    # gave up, and the lists outgrew 256 MiB (refused); the sets of two, joined, give a solution of four swaps
    # worth the floor of the Lagrangian bound: optimal.
    drawn = pisinger_mckp("weakly", 1000, 100, 10**9, seed=1)
    lightest = sum(int(w.min()) for _, w in drawn.classes)
    heaviest = sum(int(w.max()) for _, w in drawn.classes)
    problem = MCKP(drawn.classes, lightest + int(0.1 * (heaviest - lightest)))
    value, selected, method = solve_mckp(problem, 2**28, "states")
    check_mckp_choice(problem, KnapsackSolution(value, np.asarray(selected), "cpu", method, 0.0))
    red = _Reduced(problem)
    lam, _, _ = lp_relaxation(red.profits.astype(np.int64), red.weights, red.class_start, red.capacity)
    assert value == lagrangian_mckp_bound(problem.classes, problem.capacity, lam)
