"""Combo's extras for KP1 state lists: pairing, the completion bound, the surrogate relaxation with cardinality."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.knapsack import KP1
from core.knapsack.cardinality import ONE_EACH, cardinality_limits
from core.knapsack.generators import pisinger, pisinger_hard
from core.knapsack.kp1 import solve_kp1
from core.knapsack.kp1_core import improving_cardinality_bound, prepare, solve_by_bounds, solve_by_states
from core.knapsack.lp_bound import _lp_and_count, _surrogate_lp, surrogate_lp
from core.knapsack.state_steps import completion_list
from core.knapsack.surrogate import _best_multiplier, _guided_probe, surrogate_bound
from tests.core.knapsack.test_kp1_core import kp1_of_every_class
from tests.knapsack_reference import brute_kp, check_kp_choice

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _usable(problem):
    """Items the core solvers take (profit > 0, 0 < weight <= capacity), or None when they all fit."""
    keep = (problem.weights > 0) & (problem.weights <= problem.capacity) & (problem.profits > 0)
    p, w = problem.profits[keep], problem.weights[keep]
    return None if int(w.sum()) <= problem.capacity else (p, w, problem.capacity)


def _brute_choices(p, w, c):
    """Every feasible choice as (value, count) pairs."""
    for bits in itertools.product((0, 1), repeat=len(p)):
        x = np.array(bits, bool)
        if w[x].sum() <= c:
            yield int(p[x].sum()), int(x.sum())


@SETTINGS
@given(kp1_of_every_class(low_n=2, high_n=13), st.booleans())
def test_eager_pairing_and_completion_bound_keep_the_optimum(problem, from_zero):
    """Pairing and the completion bound at every step, from the greedy or from a zero incumbent."""
    items = _usable(problem)
    if items is None:
        return
    p, w, c = items
    setup = prepare(p, w, c)
    if from_zero:
        setup = dataclasses.replace(setup, lower_bound=0, fixed=np.full(len(p), -1, np.int8))
    mask, run = solve_by_states(setup, 10**9, 10**8, eager=True)
    assert int(w[mask].sum()) <= c
    assert int(p[mask].sum()) == brute_kp(p, [w], [c])


@SETTINGS
@given(kp1_of_every_class(low_n=2, high_n=13))
def test_surrogate_path_keeps_the_optimum(problem):
    """A quick run of one state forces the surrogate relaxation and the long run on small instances."""
    items = _usable(problem)
    if items is None:
        return
    p, w, c = items
    mask, _ = solve_by_bounds(prepare(p, w, c), 1, 10**9, 10**8)
    assert int(w[mask].sum()) <= c
    assert int(p[mask].sum()) == brute_kp(p, [w], [c])


def _brute_exactly(p, w, c, z):
    """The ``solve_exactly`` of :func:`surrogate_bound`, by enumeration."""
    best, chosen = z, None
    for bits in itertools.product((0, 1), repeat=len(p)):
        x = np.array(bits, bool)
        if w[x].sum() <= c and int(p[x].sum()) > best:
            best, chosen = int(p[x].sum()), x
    return best, chosen


@SETTINGS
@given(kp1_of_every_class(low_n=2, high_n=12), st.integers(0, 3))
def test_surrogate_bound_bounds_every_improving_solution(problem, below):
    items = _usable(problem)
    if items is None:
        return
    p, w, c = items
    setup = prepare(p, w, c)
    optimum = brute_kp(p, [w], [c])
    incumbent = max(0, setup.lower_bound - below)
    card_max, card_min = cardinality_limits(p, w, c, incumbent)
    counts = [k for value, k in _brute_choices(p, w, c)]
    assert max(counts) == card_max
    assert all(k >= card_min for value, k in _brute_choices(p, w, c) if value > incumbent)
    bound, choice = surrogate_bound(p, w, c, setup.break_item, incumbent, _brute_exactly)
    if bound is None:
        return
    assert bound >= max(optimum, incumbent)
    if choice is not None:
        assert int(w[choice].sum()) <= c and int(p[choice].sum()) == bound == optimum


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 9), st.integers(1, 40), st.floats(0.0, 1.2))
def test_completion_list_bounds_the_knapsack_of_the_items_outside(seed, n, limit, share):
    """The sparse table: at most ``limit`` entries, a bound at every weight up to the capacity, exact at grid 1."""
    rng = np.random.default_rng(seed)
    profits, weights = rng.integers(1, 100, n), rng.integers(1, 200, n)
    capacity = max(1, int(share * weights.sum()))
    halves = np.arange(n // 2), np.arange(n // 2, n)
    cells, values, grid, _ = completion_list(profits, weights, *halves, capacity, limit, np.zeros(1, np.uint8))
    assert len(cells) <= limit and cells[0] == 0 and (np.diff(cells) > 0).all() and (np.diff(values) > 0).all()
    assert cells[-1] * grid <= capacity
    for x in range(0, capacity + 1, max(1, capacity // 9)):
        bound = values[np.searchsorted(cells, x // grid, "right") - 1]
        best = brute_kp(profits, [weights], [x])
        assert bound >= best
        if grid == 1:
            assert bound == best


def test_completion_list_stopped_is_empty():
    """A raised stop flag (a time limit passed) gives no table, so no bound: the build never outlasts the limit."""
    rng = np.random.default_rng(3)
    profits, weights = rng.integers(1, 100, 30), rng.integers(1, 200, 30)
    halves = np.arange(15), np.arange(15, 30)
    cells, values, _, _ = completion_list(profits, weights, *halves, 1000, 64, np.ones(1, np.uint8))
    assert len(cells) == len(values) == 0
    cells, values, _, _ = completion_list(profits, weights, *halves, 1000, 64, np.zeros(1, np.uint8))
    assert len(cells) > 1


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(["strongly", "inverse-strongly", "almost-strongly", "subset-sum"]), st.integers(0, 10**6))
def test_surrogate_path_matches_the_capacity_dp_on_long_cores(kind, seed):
    """Strongly correlated families with n = 150: the exact surrogate solve and the pairing on real lists."""
    problem = pisinger(kind, 150, 10**4, 50, 100, seed)
    p, w, c = _usable(problem)
    mask, _ = solve_by_bounds(prepare(p, w, c), 1, 10**9, 10**8)
    assert int(w[mask].sum()) <= c
    assert int(p[mask].sum()) == solve_kp1(problem, None, "dp").value


def test_strongly_and_inverse_strongly_correlated_at_r_1e7_are_solved_by_states():
    """Refused with MemoryBudgetError before the surrogate relaxation and pairing (C ~ 2.5e9 and 3e9)."""
    for kind in ("strongly", "inverse-strongly"):
        problem = pisinger(kind, 1000, 10**7, 50, 100, seed=1)
        result = solve_kp1(problem, 2**30, "states")
        check_kp_choice(problem, result)
        setup = prepare(*_usable(problem))
        bound, _ = surrogate_bound(setup.profits, setup.weights, setup.capacity, setup.break_item,
                                   result.value, lambda *args: (None, None))
        assert result.value <= setup.upper_bound and (bound is None or result.value <= bound)


def _lp_by_sorting(profits, weights, capacity, card, multiplier, counts=None):
    """The surrogate's LP bound the plain way: every item by efficiency, the break item in part."""
    units = 1 if counts is None else counts
    size = weights.astype(np.float64) + multiplier * units
    forced = size <= 0
    room = capacity + multiplier * card - size[forced].sum()
    if room < 0:
        return -np.inf
    p, size = profits[~forced].astype(np.float64), size[~forced]
    value = float(profits[forced].sum())
    for j in np.argsort(-(p / size), kind="stable"):
        take = min(1.0, room / size[j])
        value += take * p[j]
        room -= take * size[j]
        if room <= 0:
            break
    return value


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 80), st.booleans(), st.booleans())
def test_surrogate_lp_by_partitions_equals_the_sorted_bound(seed, n, correlated, with_counts):
    """Ties of efficiency (correlated items, repeated counts), forced items (negative multipliers), overfull
    and empty rooms."""
    rng = np.random.default_rng(seed)
    w = rng.integers(1, 30, n)
    p = np.maximum(w + rng.integers(-3, 4, n), 1) if correlated else rng.integers(1, 30, n)
    counts = rng.integers(1, 4, n) if with_counts else None
    capacity, card = int(rng.integers(0, w.sum() + 5)), int(rng.integers(0, n + 1))
    multiplier = float(rng.integers(-30, 31))
    fast, plain = surrogate_lp(p, w, capacity, card, multiplier, counts), _lp_by_sorting(p, w, capacity, card,
                                                                                            multiplier, counts)
    assert fast == plain or abs(fast - plain) <= 1e-9 * max(1.0, abs(plain))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 80), st.booleans(), st.sampled_from([1e-6, 0.01, 0.3]))
def test_surrogate_lp_from_a_guess_equals_the_sorted_bound(seed, n, correlated, width):
    """A guessed break item (or none) whose window holds the break item or not, at ties of efficiencies or
    not; each call's guess the one the previous call left."""
    rng = np.random.default_rng(seed)
    w = rng.integers(1, 30, n)
    p = np.maximum(w + rng.integers(-3, 4, n), 1) if correlated else rng.integers(1, 30, n)
    capacity, card = int(rng.integers(0, w.sum() + 5)), int(rng.integers(0, n + 1))
    guess = np.array([int(rng.integers(-1, n)), int(width * 2**40)], np.int64)
    for multiplier in rng.integers(-30, 31, 4).astype(np.float64):
        fast = _surrogate_lp(p, w, ONE_EACH, float(capacity), float(card), multiplier, guess)
        plain = _lp_by_sorting(p, w, capacity, card, multiplier)
        assert fast == plain or abs(fast - plain) <= 1e-9 * max(1.0, abs(plain))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 80), st.sampled_from([3, 30, 10**6]), st.booleans())
def test_the_cardinality_limits_equal_the_sorted_sums(seed, n, top, with_counts):
    """The limits by partitions against the single copies sorted and summed (ties of values at small ``top``;
    shown to fail with the tied copies taken all or none, and with the largest profits taken last)."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 5, n) if with_counts else None
    copies = np.ones(n, np.int64) if counts is None else counts
    w, p = rng.integers(1, top, n) * copies, rng.integers(1, top, n) * copies
    capacity, incumbent = int(rng.integers(0, w.sum() + 5)), int(rng.integers(0, p.sum() + 5))
    single_w, single_p = np.repeat(w // copies, copies), np.repeat(p // copies, copies)
    card_max = int(np.searchsorted(np.cumsum(np.sort(single_w)), capacity, side="right"))
    card_min = int(np.searchsorted(np.cumsum(np.sort(single_p)[::-1]), incumbent, side="right")) + 1
    assert cardinality_limits(p, w, capacity, incumbent, counts) == (card_max, card_min)


def _lp_count_range_by_sorting(profits, weights, capacity, card, multiplier, counts=None):
    """``sum u x`` of the surrogate's LP solutions the plain way: the least and the most over the ways to fill
    the room with the items tied at the break efficiency (the others by efficiency, the break item in part)."""
    units = np.ones(len(profits)) if counts is None else counts.astype(np.float64)
    size = weights.astype(np.float64) + multiplier * units
    forced = size <= 0
    room = capacity + multiplier * card - size[forced].sum()
    if room < 0:
        return 0.0, 0.0
    p, size, units, base = profits[~forced].astype(np.float64), size[~forced], units[~forced], units[forced].sum()
    order = np.argsort(-(p / size), kind="stable")
    above = np.cumsum(size[order])
    k = int(np.searchsorted(above, room, side="right"))
    if k == len(order):
        return base + units.sum(), base + units.sum()
    ratio = p / size
    tied = np.flatnonzero(ratio == ratio[order[k]])
    before = base + units[ratio > ratio[order[k]]].sum()
    left = room - size[ratio > ratio[order[k]]].sum()
    ends = []
    for sign in (1, -1):  # fewest copies per size first, then most
        count, rest = 0.0, left
        for j in tied[np.argsort(sign * units[tied] / size[tied], kind="stable")]:
            take = min(1.0, rest / size[j])
            count, rest = count + take * units[j], rest - take * size[j]
        ends.append(before + count)
    return min(ends), max(ends)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 80), st.booleans(), st.booleans(), st.booleans())
def test_the_lp_solutions_copies_are_those_of_the_sorted_solution(seed, n, correlated, with_counts, fraction):
    """The count the search's bisection reads the bound's slope from (`_lp_and_count`): one of the LP
    solutions' ``sum u x`` where ties at the break efficiency leave a choice, and their only one elsewhere
    (shown to fail with the break item's part left out, and with the copies of the items above the window
    left out)."""
    rng = np.random.default_rng(seed)
    w = rng.integers(1, 30, n)
    p = np.maximum(w + rng.integers(-3, 4, n), 1) if correlated else rng.integers(1, 30, n)
    counts = rng.integers(1, 4, n) if with_counts else None
    capacity, card = int(rng.integers(0, w.sum() + 5)), int(rng.integers(0, n + 1))
    guess = np.array([int(rng.integers(-1, n)), int(0.01 * 2**40)], np.int64)
    for multiplier in rng.integers(-30, 31, 4) + (rng.random(4) if fraction else 0.0):
        value, count = _lp_and_count(p, w, ONE_EACH if counts is None else counts, float(capacity), float(card),
                                     float(multiplier), guess)
        least, most = _lp_count_range_by_sorting(p, w, capacity, card, multiplier, counts)
        assert least - 1e-9 * n <= count <= most + 1e-9 * n, (count, least, most)


def test_a_good_guess_partitions_only_the_window():
    """The guess from a call at a nearby multiplier holds the break item: the next call then only partitions
    the items in the window (seen as the width narrowing where the window held more than 64 of them)."""
    rng = np.random.default_rng(0)
    w = rng.integers(10**5, 10**6, 5000)
    p = w + 10**5
    capacity, card = int(w.sum() // 2), 2500
    guess = np.array([-1, 2**39], np.int64)
    _surrogate_lp(p, w, ONE_EACH, float(capacity), float(card), 1000.0, guess)
    assert guess[0] >= 0 and guess[1] == 2**39  # no guess yet: every item partitioned, the width kept
    _surrogate_lp(p, w, ONE_EACH, float(capacity), float(card), 1001.0, guess)
    assert guess[1] == 2**38


@SETTINGS
@given(kp1_of_every_class(low_n=2, high_n=13))
def test_the_improving_cardinality_bound_bounds_the_optimum(problem):
    """Over the free items after the reductions: at least the optimum, and within the incumbent and Dantzig's."""
    usable = _usable(problem)
    if usable is None:
        return
    p, w, c = usable
    setup = prepare(p, w, c)
    optimum = brute_kp(p, [w], [c])
    assert setup.lower_bound <= improving_cardinality_bound(setup) <= setup.upper_bound
    assert optimum <= improving_cardinality_bound(setup)


@pytest.mark.parametrize("kind, n, r, seed, share, side", [
    ("inverse-strongly", 400, 1000, 1, 75, "at least"), ("inverse-strongly", 400, 1000, 2, 60, "at least"),
    ("inverse-strongly", 400, 1000, 3, 90, "at least"), ("inverse-strongly", 400, 1000, 4, 30, "at least"),
    ("strongly", 60, 300, 4, 75, "at most"), ("strongly", 60, 300, 5, 50, "at most"),
    ("inverse-strongly", 60, 300, 1, 10, "at most"),
    ("almost-strongly", 200, 1000, 1, 50, "at most"), ("almost-strongly", 200, 1000, 2, 50, "at least"),
    ("almost-strongly", 400, 600, 3, 90, "at most"), ("weakly", 200, 1000, 4, 30, "at most"),
    ("uncorrelated", 200, 1000, 5, 70, "at least"),
])
def test_surrogate_multiplier_is_the_least_bound_of_every_integer(kind, n, r, seed, share, side):
    """The scan and the bisection on the slope against every integer multiplier of one cardinality side.

    Inverse strongly correlated items, ``sum x >= b + 1``: most multipliers below ``-R/10`` force items in and
    flatten the bound at the sum of the profits, the plateau a golden section alone walked into.  Strongly
    correlated items, ``sum x <= b``: the bound dips sharply at ``s = R/10``, where the surrogate is a subset
    sum, and a bisection on the bound's slope over the whole range (combo's ``surbin``) missed it on these; on
    the inverse strongly correlated instance the least bound is at the range's end, which that bisection missed
    too.  The scan brackets the least value first.
    """
    problem = pisinger(kind, n, r, share, 100, seed)
    setup = prepare(*_usable(problem))
    p, w, c = setup.profits, setup.weights, setup.capacity
    top = int(w.max())
    card, low, high = (setup.break_item + 1, -top, 0) if side == "at least" else (setup.break_item, 0, top)
    every = np.array([surrogate_lp(p, w, c, card, float(s)) for s in range(low, high + 1)])
    found = surrogate_lp(p, w, c, card, _best_multiplier(p, w, c, card, low, high))
    least = every.min()  # (-inf: a side no solution has)
    assert found == least or found <= least + 1e-9 * abs(least) + 1e-6, (found, least, int(np.argmin(every)) + low)


def test_the_search_probes_where_the_break_items_efficiencies_meet_or_the_tangents_do():
    """`_guided_probe`: on strongly correlated items (p = w + K) any two break items have equal efficiency
    p / (w + s) at s = K; else the tangents' meeting point, next to an end where it lies beyond it; the halving
    where neither applies."""
    p, w, units = np.array([150, 400, 900]), np.array([50, 300, 800]), np.zeros(0, np.int64)  # K = 100
    assert _guided_probe(p, w, units, 0, 1000, 5.0, 9.0, -1.0, 1.0, 0, 2, 500) == 100
    assert _guided_probe(p, w, units, 0, 1000, 5.0, 9.0, -1.0, 1.0, 0, 0, 500) == 498  # (5 - t = 9 + t - 1000)
    assert _guided_probe(p, w, units, 0, 1000, 5.0, 900.0, -1.0, 0.5, 0, 0, 500) == 1  # (they meet below 0)
    assert _guided_probe(p, w, units, 0, 1000, 5.0, 9.0, 1.0, 1.0, -1, 0, 500) == 500  # (no slope sign change)
    assert _guided_probe(p, w, units, 200, 1000, 5.0, 9.0, 1.0, 1.0, 0, 2, 600) == 600  # (below lo; no sign)


def test_inverse_strongly_correlated_instance_whose_multiplier_search_hit_a_plateau():
    """n = 10000, R = 10^6, v = 75: the golden section chose s = 0, so the lists outgrew 8 GB and were refused."""
    problem = pisinger("inverse-strongly", 10000, 10**6, 75, 100, seed=1)
    result = solve_kp1(problem, 2**28)
    check_kp_choice(problem, result)
    setup = prepare(*_usable(problem))
    assert setup.lower_bound < result.value < setup.upper_bound


def test_profit_ceiling_is_settled_by_divisibility():
    """Profits ``3 ceil(w / 3)``: Dantzig's bound 1 above the greedy value, which no multiple of 3 lies between.

    Before the profits' gcd floored the bound, n = 10000, R = 10^4, v = 75 took the lists 3.6 s and the
    capacity DP about 5 s more (9.1 s in all).
    """
    problem = pisinger_hard(15, 10000, 10**4, 75, 100, seed=1)
    setup = prepare(*_usable(problem))
    assert setup.profit_gcd == 3 and setup.upper_bound % 3 == 0
    result = solve_kp1(problem, 2**28)
    check_kp_choice(problem, result)
    assert result.method == "reduction" and result.value == setup.upper_bound


def test_surrogate_bound_says_when_nothing_beats_the_incumbent():
    problem = KP1([10, 10, 10], [6, 6, 6], 12)  # two items at most: 20
    p, w, c = _usable(problem)
    assert surrogate_bound(p, w, c, 2, 20, _brute_exactly) == (20, None)
