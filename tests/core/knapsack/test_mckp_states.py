"""MCKP by LP bound, reduced-cost fixing and state lists (core.knapsack.mckp_core) against brute force,
the capacity DP and HiGHS."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.knapsack import MCKP, MemoryBudgetError, mckp_core, solve
from core.knapsack.generators import MCKP_KINDS, pisinger_mckp
from core.knapsack.mckp import _Reduced, solve_mckp
from core.knapsack.mckp_core import _Subproblem
from core.knapsack.mckp_halves import _balanced, fill, levels, meet
from core.knapsack.mckp_lists import NO_DIVISOR, extend, state_bounds
from core.knapsack.mckp_lp import Increments, divisibility, lp_relaxation
from core.knapsack.problems import KnapsackSolution
from tests.knapsack_reference import best_mckp_from, brute_mckp, check_mckp_choice, highs_mckp, lagrangian_mckp_bound

SETTINGS = settings(max_examples=80, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@st.composite
def mckp_instances(draw, max_classes=5, max_items=4, max_weight=15, max_profit=25):
    """At most 20 items (brute force), coefficients that tie often (dominance, collinear hull points)."""
    m = draw(st.integers(1, max_classes))
    classes = []
    for _ in range(m):
        k = draw(st.integers(1, max_items))
        classes.append((draw(st.lists(st.integers(0, max_profit), min_size=k, max_size=k)),
                        draw(st.lists(st.integers(0, max_weight), min_size=k, max_size=k))))
    lightest = sum(min(w) for _, w in classes)
    return MCKP(classes, lightest + draw(st.integers(0, max_weight * m)))


def _states(problem, budget=10**9):
    value, selected, method = solve_mckp(problem, budget, "states")
    return KnapsackSolution(value, np.asarray(selected), "cpu", method, 0.0)


@pytest.fixture(params=["few classes meet", "lists only"])
def few_classes(request, monkeypatch):
    """Both paths of the core: these small instances take the two-list meet outright unless it is turned off."""
    if request.param == "lists only":
        monkeypatch.setattr(mckp_core, "FEW_CLASSES_STATES", 0)
    return request.param


@SETTINGS
@given(problem=mckp_instances())
def test_states_match_brute_force(few_classes, problem):
    sol = _states(problem)
    assert sol.value == brute_mckp(problem.classes, problem.capacity)
    check_mckp_choice(problem, sol)


@SETTINGS
@given(problem=mckp_instances(max_classes=8, max_items=8, max_weight=400, max_profit=500),
       factor=st.sampled_from([1, 7, 10**9]))
def test_states_match_the_capacity_dp(few_classes, problem, factor):
    # the factor scales the weights past any capacity DP's reach (the gcd keeps the DP small)
    scaled = MCKP([(p, w * factor) for p, w in problem.classes], problem.capacity * factor)
    sol = _states(scaled)
    assert sol.value == solve_mckp(problem, 10**9, "dp").value
    check_mckp_choice(scaled, sol)


@SETTINGS
@given(mckp_instances(max_classes=4, max_items=5))
def test_lp_bound_bounds_the_optimum_and_its_integral_part_fits(problem):
    red = _Reduced(problem)
    if not len(red.dp_classes):
        return
    lam, bound, choice = lp_relaxation(red.profits.astype(np.int64), red.weights, red.class_start, red.capacity)
    picked = red.class_start[:-1] + choice
    assert int(red.weights[picked].sum()) <= red.capacity
    assert lam >= 0 and int(red.profits[picked].sum()) <= bound + 1e-9
    constant = sum(int(p[k]) for (p, _), k in zip(problem.classes, red.fixed))
    assert brute_mckp(problem.classes, problem.capacity) - constant <= bound + 1e-6


def _extend_by_sorting(sw, sp, cw, cp, capacity):
    """Reference extension: every candidate, sorted by weight (profit descending), the dominated dropped."""
    w, p = (sw[:, None] + cw[None, :]).ravel(), (sp[:, None] + cp[None, :]).ravel()
    order = np.lexsort((-p, w))
    order = order[w[order] <= capacity]
    w, p = w[order], p[order]
    keep = np.ones(len(w), bool)
    keep[1:] = p[1:] > np.maximum.accumulate(p)[:-1]
    return w[keep], p[keep]


def _lp_bounds(w, p, capacity, cum_w, cum_p, slopes):
    """Reference bounds: a binary search for the break per state."""
    room = capacity - w
    pos = np.searchsorted(cum_w, room, side="right") - 1
    return p + cum_p[pos] + (room - cum_w[pos]) * slopes[pos]


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 60), st.integers(-50, 200)), min_size=1, max_size=40),
       st.lists(st.tuples(st.integers(0, 30), st.integers(-10, 30)), max_size=7), st.integers(0, 100),
       st.lists(st.tuples(st.integers(1, 20), st.integers(0, 60)), max_size=6), st.integers(-100, 400))
def test_extension_by_merging_matches_sorting_every_candidate(states, items, capacity, increments, floor):
    pairs = np.array(sorted(states, key=lambda s: (s[0], -s[1])), np.int64)
    kept = np.ones(len(pairs), bool)
    kept[1:] = pairs[1:, 1] > np.maximum.accumulate(pairs[:, 1])[:-1]
    sw, sp = pairs[kept, 0].copy(), pairs[kept, 1].copy()
    cw = np.array([w for w, _ in items], np.int64)
    cp = np.array([p for _, p in items], np.int64)
    # outside increments in slope order, as Increments gives them
    inc = sorted(increments, key=lambda x: -x[1] / x[0])
    cum_w = np.concatenate([[0], np.cumsum([w for w, _ in inc])]).astype(np.int64)
    cum_p = np.concatenate([[0], np.cumsum([p for _, p in inc])]).astype(np.int64)
    slopes = np.array([p / w for w, p in inc] + [0.0])
    never = np.zeros(1, np.uint8)
    w, p, parent, item = extend(sw, sp, cw, cp, capacity, (cum_w, cum_p, slopes), NO_DIVISOR, floor, 0.0, never)
    ref_w, ref_p = _extend_by_sorting(sw, sp, cw, cp, capacity)
    alive = _lp_bounds(ref_w, ref_p, capacity, cum_w, cum_p, slopes) >= floor
    np.testing.assert_array_equal(w, ref_w[alive])
    np.testing.assert_array_equal(p, ref_p[alive])
    np.testing.assert_array_equal(sw[parent] + cw[item], w)
    np.testing.assert_array_equal(sp[parent] + cp[item], p)
    base, frac, whole, room = state_bounds(w, p, capacity, (cum_w, cum_p, slopes), NO_DIVISOR, never)
    np.testing.assert_allclose(base + frac, _lp_bounds(w, p, capacity, cum_w, cum_p, slopes))
    np.testing.assert_array_equal(room, capacity - w)
    np.testing.assert_array_equal(whole, p + cum_p[np.searchsorted(cum_w, room, side="right") - 1])


def test_extension_stops_when_the_flag_is_raised():
    sw, sp = np.arange(10, dtype=np.int64), np.arange(10, dtype=np.int64)
    cw = cp = np.array([0, 3], np.int64)
    no_increments = (np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1))
    assert extend(sw, sp, cw, cp, 100, no_increments, NO_DIVISOR, 0, 0.0, np.zeros(1, np.uint8)) is not None
    assert extend(sw, sp, cw, cp, 100, no_increments, NO_DIVISOR, 0, 0.0, np.ones(1, np.uint8)) is None
    assert state_bounds(sw, sp, 100, no_increments, NO_DIVISOR, np.ones(1, np.uint8)) is None


@st.composite
def divisible_classes(draw):
    """Reduced classes (sorted by weight, the first at 0, 0, profits increasing) whose profits are ``mu w + g x``."""
    mu, g = draw(st.integers(0, 2)), draw(st.integers(2, 12))
    profits, weights, starts = [], [], [0]
    for _ in range(draw(st.integers(1, 4))):
        w = sorted(set(draw(st.lists(st.integers(1, 60), min_size=1, max_size=4))))
        x = draw(st.lists(st.integers(0, 9), min_size=len(w), max_size=len(w)))
        kept = [(0, 0)]
        for a, b in zip(w, x):  # undominated, as the solver's reduced classes are
            if mu * a + g * b > kept[-1][1]:
                kept.append((a, mu * a + g * b))
        weights += [a for a, _ in kept]
        profits += [b for _, b in kept]
        starts.append(len(weights))
    return mu, g, np.array(profits, np.int64), np.array(weights, np.int64), np.array(starts, np.int64)


def _best_completion(profits, weights, starts, room):
    classes = [(profits[a:b], weights[a:b]) for a, b in zip(starts[:-1], starts[1:])]
    return brute_mckp(classes, room)


@SETTINGS
@given(divisible_classes(), st.integers(0, 250), st.integers(0, 40), st.integers(0, 5))
def test_divisibility_bound_bounds_every_completion_and_is_no_looser_than_the_lp(classes, capacity, weight, x):
    mu, g, profits, weights, starts = classes
    lp = Increments(profits, weights, starts).prefix(np.ones(len(starts) - 1, np.bool_))[:3]
    reduced = Increments(profits - mu * weights, weights, starts, rising_only=True)
    div = (mu, g) + reduced.prefix(np.ones(len(starts) - 1, np.bool_))[:3]
    # a state of the classes already in: any weight, a profit mu w + g x as every choice of them has
    sw, sp = np.array([weight], np.int64), np.array([mu * weight + g * x], np.int64)
    bound = sum(x[0] for x in state_bounds(sw, sp, capacity, lp, div, np.zeros(1, np.uint8))[:2])
    lp_bound = sum(x[0] for x in state_bounds(sw, sp, capacity, lp, NO_DIVISOR, np.zeros(1, np.uint8))[:2])
    assert bound <= lp_bound + 1e-9
    best = _best_completion(profits, weights, starts, capacity - weight) if weight <= capacity else None
    if best is not None:
        assert int(sp[0]) + best <= bound + 1e-9


def test_divisibility_is_found_on_strongly_correlated_classes_only():
    for kind, divisor in (("strongly", 10), ("uncorrelated", 1), ("weakly", 1)):
        red = _Reduced(pisinger_mckp(kind, 30, 10, 10**6, seed=2))
        lam = lp_relaxation(red.profits.astype(np.int64), red.weights, red.class_start, red.capacity)[0]
        mu, g, increments = divisibility(red.profits.astype(np.int64), red.weights, red.class_start, lam)
        assert g == divisor and (increments is None) == (divisor == 1)


@SETTINGS
@given(problem=mckp_instances(max_classes=5, max_items=4, max_weight=40), mu=st.integers(1, 2), g=st.integers(2, 10))
def test_states_match_brute_force_when_profits_are_divisible(few_classes, problem, mu, g):
    # p = mu w + g x: the divisibility bound is on (strongly correlated classes are of this form)
    divisible = MCKP([([mu * int(a) + g * int(b) for a, b in zip(w, p)], w) for p, w in problem.classes],
                     problem.capacity)
    sol = _states(divisible)
    assert sol.value == brute_mckp(divisible.classes, divisible.capacity)
    check_mckp_choice(divisible, sol)


def _subproblem_with_random_costs(problem, seed):
    """``(sub, reduced problem)``: every reduced class free, reduced costs 0 or 1 at random (the fill may use
    the items of cost 0 and the LP's own), the LP's choice set; ``(None, None)`` when no class is left."""
    red = _Reduced(problem)
    if not len(red.dp_classes):
        return None, None
    profits, weights, starts = red.profits.astype(np.int64), red.weights, red.class_start
    costs = np.random.default_rng(seed).integers(0, 2, len(profits)).astype(np.float64)
    sub = _Subproblem(profits, weights, starts, np.ones(len(profits), bool), np.arange(len(starts) - 1), costs, 1.0)
    sub.star = lp_relaxation(sub.flat_p, sub.flat_w, sub.starts, red.capacity)[2]
    return sub, red


@SETTINGS
@given(mckp_instances(max_classes=6, max_items=4, max_weight=60), st.integers(0, 3))
def test_fill_by_two_lists_is_the_best_choice_among_the_items_it_may_use(problem, seed):
    sub, red = _subproblem_with_random_costs(problem, seed)
    if sub is None:
        return
    found = fill(sub, red.capacity, 0.5, 10**6)
    allowed = [np.union1d(np.flatnonzero(c <= 0.5), [sub.star[k]]) for k, c in enumerate(sub.costs)]
    classes = [(sub.prof[k][a], sub.wts[k][a]) for k, a in enumerate(allowed)]
    best = brute_mckp(classes, red.capacity)
    if all(len(a) == 1 for a in allowed):
        assert found is None
        return
    value, chosen = found
    assert value == best
    picked = sub.starts[:-1] + chosen
    assert int(sub.flat_w[picked].sum()) <= red.capacity and int(sub.flat_p[picked].sum()) == value
    assert all(c in a for c, a in zip(chosen, allowed))


def _whole_subproblem(problem):
    """Every reduced class free with all its items (reduced costs 0), as the lists see them, and its capacity."""
    red = _Reduced(problem)
    profits, weights, starts = red.profits.astype(np.int64), red.weights, red.class_start
    sub = _Subproblem(profits, weights, starts, np.ones(len(profits), bool), np.arange(len(starts) - 1),
                      np.zeros(len(profits)), 1.0)
    _, bound, sub.star = lp_relaxation(sub.flat_p, sub.flat_w, sub.starts, red.capacity)
    sub.top = int(np.floor(bound + 1e-9))
    classes = [(sub.prof[k], sub.wts[k]) for k in range(len(sub.wts))]
    return sub, red.capacity, classes


@SETTINGS
@given(mckp_instances(max_classes=6, max_items=4, max_weight=60), st.integers(1, 6), st.booleans())
def test_meet_in_the_middle_levels_find_the_optimum_above_the_incumbent_or_nothing(problem, below, tiny_cap):
    sub, capacity, classes = _whole_subproblem(problem)
    if not classes:
        return
    best = brute_mckp(classes, capacity)
    target = best - below
    if tiny_cap:  # every level past one state per list: the beam answers, and only what it proves counts
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr("core.knapsack.mckp_halves.MEET_EXACT_STATES", 1)
            mp.setattr("core.knapsack.mckp_halves.MEET_BEAM_STATES", 1)
            chosen = levels(sub, capacity, target, 10**9, 10**9)
    else:
        chosen = levels(sub, capacity, target, 10**9, 10**9)
    if chosen is None:
        assert tiny_cap  # exact lists settle every value from the bound down to the optimum
        return
    picked = sub.starts[:-1] + chosen
    assert int(sub.flat_w[picked].sum()) <= capacity
    assert int(sub.flat_p[picked].sum()) == best
    # above the optimum nothing is found, and every value ruled out on the way was above it
    assert sub.top >= best


@SETTINGS
@given(mckp_instances(max_classes=6, max_items=4, max_weight=60))
def test_meet_in_the_middle_finds_nothing_above_the_optimum(problem):
    sub, capacity, classes = _whole_subproblem(problem)
    if not classes:
        return
    best = brute_mckp(classes, capacity)
    assert levels(sub, capacity, best, 10**9, 10**9) is None
    assert sub.top >= best
    met = meet(sub, capacity, best, 10**6, False, 10**9, 10**9)
    chosen, exact, _ = met
    assert exact and int(sub.flat_p[sub.starts[:-1] + chosen].sum()) == best


def test_best_mckp_from_a_floor_is_the_brute_force_optimum_or_nothing():
    rng = np.random.default_rng(5)
    for _ in range(40):
        classes = [(rng.integers(0, 40, 3), rng.integers(0, 30, 3)) for _ in range(int(rng.integers(1, 7)))]
        capacity = int(rng.integers(0, 30 * len(classes)))
        if capacity < sum(int(w.min()) for _, w in classes):
            continue
        best = brute_mckp(classes, capacity)
        for lam in (0.0, 0.7, 1.3):
            assert best_mckp_from(classes, capacity, lam, best) == best
            assert best_mckp_from(classes, capacity, lam, best - 3) == best
            assert best_mckp_from(classes, capacity, lam, best + 1) is None


def test_weakly_correlated_classes_with_little_room_are_settled_by_meeting_in_the_middle():
    # p = w + U[-10, 10] at R = 10^9, the room above the lightest items halved: the lists outgrew 2 GiB and
    # the fill ends 5 below the LP bound; the levels settle it 4 below.  The reference enumerates every
    # choice worth at least the value found (within the LP bound's reduced-cost gap) and finds no better one.
    drawn = pisinger_mckp("weakly", 100, 10, 10**9, seed=1)
    problem = MCKP(drawn.classes, (drawn.capacity + drawn.min_weight) // 2)
    sol = _states(problem, budget=2**31)
    check_mckp_choice(problem, sol)
    red = _Reduced(problem)
    lam, bound, _ = lp_relaxation(red.profits.astype(np.int64), red.weights, red.class_start, red.capacity)
    assert best_mckp_from(problem.classes, problem.capacity, lam, sol.value) == sol.value
    constant = sum(int(p[k]) for (p, _), k in zip(problem.classes, red.fixed))
    assert constant + bound - sol.value > 4  # the fill alone (5 below the bound) would not have settled it


@st.composite
def near_degenerate_instances(draw):
    """Up to 8 classes of 3-4 items with ``p = w + U[0, 6]`` (ties at the LP's slope, as weakly correlated
    classes at large R): the LP bound prunes little, so small state budgets end the lists."""
    classes = []
    for _ in range(draw(st.integers(5, 8))):
        w = draw(st.lists(st.integers(0, 1000), min_size=3, max_size=4))
        classes.append(([x + draw(st.integers(0, 6)) for x in w], w))
    lightest, heaviest = sum(min(w) for _, w in classes), sum(max(w) for _, w in classes)
    return MCKP(classes, lightest + draw(st.integers(0, heaviest - lightest)))


def test_weakly_correlated_classes_at_large_coefficients_reach_the_lp_bound_by_an_exact_fill():
    # p = w + U[-10, 10] at R = 10^9: the lists alone outgrew 2 GiB; the fill reaches the LP bound
    problem = pisinger_mckp("weakly", 100, 10, 10**9, seed=1)
    _assert_at_the_lagrangian_bound(problem, _states(problem, budget=2**31))


def test_an_exact_fill_moves_the_classes_it_leaves_out_so_that_the_room_falls_within_its_lists():
    """30 classes of 100 items at R = 10^9, the capacity 3/4 of the way up: the fill's two lists hold 14 of
    the classes with ties at the LP's slope, the rest at the LP's choice left them a room above their heaviest
    sum, so no exact fill was found and the lists outgrew 256 MiB (refused); with the other classes moved among
    their ties to put the room mid-way, the fill reaches the LP bound."""
    problem = _at_share("weakly", 30, 100, 0.75)
    _assert_at_the_lagrangian_bound(problem, _states(problem, budget=2**28))


def _assert_at_the_lagrangian_bound(problem, sol):
    """``sol`` is feasible and worth the floor of the Lagrangian bound at the LP's slope: optimal."""
    check_mckp_choice(problem, sol)
    red = _Reduced(problem)
    lam = lp_relaxation(red.profits.astype(np.int64), red.weights, red.class_start, red.capacity)[0]
    assert sol.value == lagrangian_mckp_bound(problem.classes, problem.capacity, lam)


@SETTINGS
@given(problem=near_degenerate_instances(), seed=st.integers(0, 3), cap=st.integers(2, 12))
def test_the_fill_moves_only_the_classes_outside_its_lists_and_only_towards_their_middle(problem, seed, cap):
    sub, red = _subproblem_with_random_costs(problem, seed)
    if sub is None:
        return
    m = len(sub.starts) - 1
    items = [np.union1d(np.flatnonzero(c <= 0.5), [sub.star[k]]) for k, c in enumerate(sub.costs)]
    free = [k for k in range(m) if len(items[k]) > 1][: m // 2]
    moved = _balanced(sub, items, free, red.capacity)
    weight = lambda k, item: int(sub.flat_w[sub.starts[k] + item])  # noqa: E731
    lo = sum(min(weight(k, i) for i in items[k]) for k in free)
    hi = sum(max(weight(k, i) for i in items[k]) for k in free)
    room = [red.capacity - sum(weight(k, x[k]) for k in range(m) if k not in free) for x in (sub.star, moved)]
    assert abs(2 * room[1] - (lo + hi)) <= abs(2 * room[0] - (lo + hi))
    for k in range(m):
        if k in free or moved[k] == sub.star[k]:
            continue
        assert moved[k] in items[k] and sub.costs[k][moved[k]] <= sub.costs[k][sub.star[k]]
    found = fill(sub, red.capacity, 0.5, 8 * cap)  # lists of at most ``cap`` states: few classes in them
    if found is not None:
        value, chosen = found
        picked = sub.starts[:-1] + chosen
        assert int(sub.flat_w[picked].sum()) <= red.capacity and int(sub.flat_p[picked].sum()) == value
        assert all(c in a for c, a in zip(chosen, items))


@pytest.mark.parametrize("kind", MCKP_KINDS)
def test_states_match_brute_force_at_large_coefficients(few_classes, kind):
    problem = pisinger_mckp(kind, 6, 6, 10**9, seed=3)
    sol = _states(problem)
    assert sol.value == brute_mckp(problem.classes, problem.capacity)
    check_mckp_choice(problem, sol)


@pytest.mark.parametrize("share", [0.25, 0.75])
def test_ten_weakly_correlated_classes_at_large_coefficients_are_met_in_the_middle(share):
    """10 classes of 10 items, R = 10^9: the LP bound stands 3.8 x 10^6 above the first solution and prunes
    nothing, so the one list grew towards 10^9 states and was refused past 2 GiB; two lists of 10^5 settle it."""
    problem = _at_share("weakly", 10, 10, share)
    _assert_optimal_by_enumeration(problem, _states(problem, budget=2**28))


@pytest.mark.parametrize("kind, share", [("weakly", 0.25), ("weakly", 0.5), ("strongly", 0.25), ("strongly", 0.5)])
def test_lists_past_their_budget_leave_the_optimum_to_the_meet_in_the_middle(kind, share):
    """10 classes of 40 items at R = 10^9 in 128 MiB: the one list outgrows the budget with the incumbent more
    than MEET_LEVELS below the LP bound, where the lists used to give up (refused); the levels, tried once more
    from there, settle it."""
    problem = _at_share(kind, 10, 40, share)
    _assert_optimal_by_enumeration(problem, _states(problem, budget=2**27))


def _at_share(kind, classes, items, share):
    """Pisinger's MCKP at R = 10^9 (seed 1) with the capacity ``share`` of the way from the lightest choice to
    the heaviest (as bench_knapsack_sweep)."""
    drawn = pisinger_mckp(kind, classes, items, 10**9, seed=1)
    lightest = sum(int(w.min()) for _, w in drawn.classes)
    heaviest = sum(int(w.max()) for _, w in drawn.classes)
    return MCKP(drawn.classes, lightest + int(share * (heaviest - lightest)))


def _assert_optimal_by_enumeration(problem, sol):
    """``sol`` is feasible, and the reference, enumerating every choice within the LP bound's gap of a value,
    reaches its value and finds nothing worth 1 more."""
    check_mckp_choice(problem, sol)
    red = _Reduced(problem)
    lam = lp_relaxation(red.profits.astype(np.int64), red.weights, red.class_start, red.capacity)[0]
    assert best_mckp_from(problem.classes, problem.capacity, lam, sol.value) == sol.value
    assert best_mckp_from(problem.classes, problem.capacity, lam, sol.value + 1) is None


@settings(SETTINGS, max_examples=200)
@given(problem=near_degenerate_instances(), max_states=st.integers(1, 3000))
def test_lists_out_of_memory_answer_the_optimum_or_say_so(problem, max_states):
    """Small state budgets end the lists early: what the last meet in the middle settles (or proves the
    incumbent to be) is the optimum, and otherwise the status says the lists ran out."""
    red = _Reduced(problem)
    if not len(red.dp_classes):
        return
    status, choice, value = mckp_core.solve_classes_by_states(
        red.profits.astype(np.int64), red.weights, red.class_start, red.capacity, 10**9, max_states)
    best = brute_mckp([(red.profits[a:b], red.weights[a:b]) for a, b in zip(red.class_start, red.class_start[1:])],
                      red.capacity)
    picked = red.class_start[:-1] + choice
    assert int(red.weights[picked].sum()) <= red.capacity and int(red.profits[picked].sum()) == value
    assert value <= best
    if status == mckp_core.DONE:
        assert value == best
    else:
        assert status == mckp_core.OUT_OF_MEMORY


def test_states_match_highs_on_a_larger_uncorrelated_instance():
    problem = pisinger_mckp("uncorrelated", 30, 20, 10**7, seed=3)
    sol = _states(problem)
    assert sol.value == highs_mckp(problem.classes, problem.capacity)
    check_mckp_choice(problem, sol)


def test_auto_uses_the_states_past_the_capacity_dp():
    drawn = pisinger_mckp("uncorrelated", 50, 40, 10**12, seed=5)
    # Pisinger's capacity lets the heaviest undominated items all fit: halve the room above the lightest
    problem = MCKP(drawn.classes, (drawn.capacity + drawn.min_weight) // 2)  # a DP of 50 x 10^13 cells
    sol = solve(problem, backend="cpu", memory_budget_bytes=10**8)
    assert sol.method == "states"
    check_mckp_choice(problem, sol)
    small = pisinger_mckp("uncorrelated", 5, 4, 100, seed=5)
    assert solve(small, backend="cpu").method == "dp"


def test_refused_only_when_neither_method_fits():
    drawn = pisinger_mckp("weakly", 20, 10, 10**9, seed=5)  # long lists, a DP of 10^10 cells
    problem = MCKP(drawn.classes, (drawn.capacity + drawn.min_weight) // 2)
    with pytest.raises(MemoryBudgetError, match=r"state lists outgrew the budget; the capacity DP needs"):
        solve(problem, backend="cpu", memory_budget_bytes=10**5)


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="method must be one of auto, dp, states"):
        solve_mckp(MCKP([([1], [1])], 1), None, "lists")


def test_generator_is_seeded_and_checks_its_kind():
    a, b = pisinger_mckp("strongly", 3, 4, 100, seed=2), pisinger_mckp("strongly", 3, 4, 100, seed=2)
    assert all(np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]) for x, y in zip(a.classes, b.classes))
    assert all(np.all(np.diff(w) > 0) for _, w in a.classes)  # prefix sums: weights increase
    with pytest.raises(ValueError, match="kind must be one of"):
        pisinger_mckp("circle", 3, 4)


def test_the_quick_lists_give_the_optimum_or_nothing():
    from core.knapsack.generators import pisinger_mckp
    from core.knapsack.mckp import solve_mckp, solve_mckp_quick

    settled = {"uncorrelated": 0, "weakly": 0, "strongly": 0}
    for seed in range(12):
        kind = ("uncorrelated", "weakly", "strongly")[seed % 3]
        problem = pisinger_mckp(kind, 30, 5, 10**6, seed=seed)
        quick = solve_mckp_quick(problem)
        if quick is not None:
            settled[kind] += 1
            assert quick.value == solve_mckp(problem).value and quick.method in ("states", "reduction")
            assert sum(int(w[j]) for (_, w), j in zip(problem.classes, quick.selected)) <= problem.capacity
    assert settled["uncorrelated"] == 4  # the easy class: settled at once; the correlated ones may be left
    assert solve_mckp_quick(pisinger_mckp("weakly", 100, 10, 10**9, seed=1)) is None  # hard: left to the caller
