"""KP1 by the expanding core (reductions, bounds, state lists) against brute force and the capacity DP."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.knapsack import KP1, kp1_core
from core.knapsack.generators import PISINGER_HARD_CLASSES, PISINGER_KINDS, jooken, pisinger, pisinger_hard
from core.knapsack.kp1 import solve_kp1
from core.knapsack.kp1_core import cardinality_bound, prepare, solve_by_states
from core.knapsack.kp1_greedy import improve_by_exchanges
from tests.knapsack_reference import brute_kp, check_kp_choice, ortools_kp

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def kp1_of_every_class(draw, low_n=1, high_n=14):
    """Raw items (profits sharing a factor or not), a classic class 1-6, a hard class 11-16 or a Jooken instance."""
    n = draw(st.integers(low_n, high_n))
    seed = draw(st.integers(0, 10**6))
    family = draw(st.sampled_from(["raw", "divisible", "classic", "hard", "jooken"]))
    if family in ("raw", "divisible"):
        rng = np.random.default_rng(seed)
        weights = rng.integers(0, 40 if n < 50 else 4000, n)
        factor = draw(st.sampled_from([2, 3, 7])) if family == "divisible" else 1
        return KP1(factor * rng.integers(0, 60, n), weights, int(rng.integers(0, weights.sum() + 2)))
    r = draw(st.sampled_from([10, 100, 10**6]))
    v = draw(st.integers(1, 10))
    if family == "classic":
        return pisinger(draw(st.sampled_from(PISINGER_KINDS)), n, r, v, 10, seed)
    if family == "hard":
        return pisinger_hard(draw(st.sampled_from(sorted(PISINGER_HARD_CLASSES))), n, r, v, 10, seed)
    return jooken(n, draw(st.sampled_from([10**3, 10**6, 10**10])), draw(st.integers(2, 5)),
                  draw(st.sampled_from([0.1, 0.5])), draw(st.sampled_from([0.0, 0.01])), draw(st.integers(1, 50)), seed)


@SETTINGS
@given(kp1_of_every_class(), st.sampled_from(["auto", "states"]))
def test_kp1_core_matches_brute_force(problem, method):
    result = solve_kp1(problem, None, method)
    assert result.value == brute_kp(problem.profits, [problem.weights], [problem.capacity])
    check_kp_choice(problem, result)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kp1_of_every_class(low_n=100, high_n=400))
def test_state_lists_match_the_capacity_dp(problem):
    """Moderate capacities, long cores: the state lists back-track through several 64-step snapshots."""
    if problem.capacity > 2 * 10**6:  # keep the reference DP small
        problem = KP1(problem.profits % 1000 + 1, problem.weights % 1000 + 1, problem.capacity % 100_000)
    states = solve_kp1(problem, None, "states")
    assert states.value == solve_kp1(problem, None, "dp").value
    check_kp_choice(problem, states)


def test_backtracking_crosses_snapshots(monkeypatch):
    """Without reductions and from a zero incumbent the optimum turns up late, past several snapshots."""
    monkeypatch.setattr(kp1_core, "SKIP_HOPELESS", False)
    problem = pisinger("weakly", 600, 10**5, 37, 100, seed=0)
    usable = problem.weights <= problem.capacity
    p, w = problem.profits[usable], problem.weights[usable]
    setup = dataclasses.replace(prepare(p, w, problem.capacity), lower_bound=0,
                                fixed=np.full(len(p), -1, np.int8))
    mask, run = solve_by_states(setup, 10**9, 10**8)
    assert run.best_step > 3 * 64 and len(run.snap_off) > 3
    assert int(w[mask].sum()) <= problem.capacity
    assert int(p[mask].sum()) == run.best == ortools_kp(p, [w], [problem.capacity])


def test_hopeless_items_skipped_as_the_incumbent_rises(monkeypatch):
    """From a zero incumbent the reductions fix nothing; once the lists find good solutions, the items whose
    flip cannot beat them are skipped (combo's haschance): fewer steps and states, the same optimum."""
    problem = pisinger("weakly", 600, 10**5, 37, 100, seed=0)
    usable = problem.weights <= problem.capacity
    p, w = problem.profits[usable], problem.weights[usable]
    setup = dataclasses.replace(prepare(p, w, problem.capacity), lower_bound=0,
                                fixed=np.full(len(p), -1, np.int8))
    runs, optimum = {}, ortools_kp(p, [w], [problem.capacity])  # (the capacity DP takes 3 s here, OR-Tools 0.1)
    for skip in (False, True):
        monkeypatch.setattr(kp1_core, "SKIP_HOPELESS", skip)
        mask, runs[skip] = solve_by_states(setup, 10**9, 10**8)
        assert int(w[mask].sum()) <= problem.capacity
        assert int(p[mask].sum()) == optimum
    assert len(runs[True].step_items) < len(runs[False].step_items) // 2
    assert runs[True].work < runs[False].work


def _brute_with_fixed(p, w, c, fixed):
    """Best value when the items of ``fixed`` (1 in, 0 out, -1 free) keep their decision."""
    free = np.flatnonzero(fixed < 0)
    base = fixed == 1
    best = -1
    for bits in itertools.product((0, 1), repeat=len(free)):
        x = base.copy()
        x[free] = np.array(bits, bool)
        if w[x].sum() <= c:
            best = max(best, int(p[x].sum()))
    return best


@SETTINGS
@given(kp1_of_every_class(low_n=3, high_n=13))
def test_reductions_and_bounds_keep_the_optimum(problem):
    usable = (problem.weights > 0) & (problem.weights <= problem.capacity) & (problem.profits > 0)
    p, w, c = problem.profits[usable], problem.weights[usable], problem.capacity
    if int(w.sum()) <= c:
        return
    setup = prepare(p, w, c)
    optimum = brute_kp(p, [w], [c])
    assert setup.lower_bound == int(setup.profits[setup.greedy].sum()) <= optimum <= setup.upper_bound
    assert int(setup.weights[setup.greedy].sum()) <= c
    assert optimum <= cardinality_bound(setup) <= setup.upper_bound
    reduced = _brute_with_fixed(setup.profits, setup.weights, c, setup.fixed)
    assert max(reduced, setup.lower_bound) == optimum


@SETTINGS
@given(kp1_of_every_class(low_n=3, high_n=12), st.integers(0, 10**6))
def test_a_better_incumbent_fixes_more_items_and_keeps_the_optimum(problem, seed):
    """with_incumbent given a better solution: the items fixed before stay so, and every solution worth more
    than the new incumbent keeps the new fixings (brute force over the free items)."""
    usable = (problem.weights > 0) & (problem.weights <= problem.capacity) & (problem.profits > 0)
    p, w, c = problem.profits[usable], problem.weights[usable], problem.capacity
    if int(w.sum()) <= c:
        return
    setup = prepare(p, w, c)
    rng = np.random.default_rng(seed)
    choices = [np.array(bits, bool) for bits in itertools.product((0, 1), repeat=len(p))]
    better = [x for x in choices if setup.weights[x].sum() <= c and setup.profits[x].sum() > setup.lower_bound]
    if not better:
        return
    taken = better[int(rng.integers(len(better)))]
    raised = kp1_core.with_incumbent(setup, taken)
    assert raised.lower_bound == int(setup.profits[taken].sum())
    before = setup.fixed >= 0
    np.testing.assert_array_equal(raised.fixed[before], setup.fixed[before])
    optimum = brute_kp(p, [w], [c])
    assert max(_brute_with_fixed(setup.profits, setup.weights, c, raised.fixed), raised.lower_bound) == optimum


def test_hard_strongly_correlated_solved_without_a_capacity_row():
    """C ~ 2.5e8: a capacity DP would need gigabytes; the state lists a few megabytes."""
    problem = pisinger("strongly", 1000, 10**6, 50, 100, seed=1)
    result = solve_kp1(problem, 50 * 2**20, "auto")
    assert result.method == "states"
    assert result.value <= cardinality_bound(prepare(problem.profits, problem.weights, problem.capacity))
    check_kp_choice(problem, result)


def test_kp1_method_is_checked():
    with pytest.raises(ValueError, match="method must be one of auto, dp, states; got 'fast'"):
        solve_kp1(KP1([1], [1], 1), None, "fast")


def test_auto_reports_the_method_that_ran():
    # past a tenth of the DP's cells (here 150) in states generated, the lists hand over to the DP
    assert solve_kp1(KP1([60, 100, 120], [10, 20, 30], 50)).method == "dp"
    # no DP outright below 2 x 10^6 cells any more: 100 items, C ~ 2,500, settled by the lists
    assert solve_kp1(pisinger("uncorrelated", 100, 100, 10, 100, seed=2)).method == "states"
    big = pisinger("uncorrelated", 2000, 10**7, 50, 100, seed=2)  # C ~ 5e9
    assert solve_kp1(big).method in ("states", "reduction")


def test_the_quick_lists_give_the_optimum_or_nothing():
    from core.knapsack.kp1 import solve_kp1_quick

    rng = np.random.default_rng(21)
    settled = 0
    for _ in range(30):
        n = int(rng.integers(1, 60))
        weights = rng.integers(1, 10**6, n)
        problem = KP1(rng.integers(1, 10**6, n), weights, int(rng.integers(0, weights.sum() + 1)))
        quick = solve_kp1_quick(problem)
        if quick is not None:
            settled += 1
            assert quick.value == solve_kp1(problem).value and quick.method in ("states", "reduction")
            assert int(problem.weights[quick.selected].sum()) <= problem.capacity
            assert int(problem.profits[quick.selected].sum()) == quick.value
    assert settled >= 25  # random instances: the lists settle nearly all at once
    assert solve_kp1_quick(pisinger("strongly", 1000, 10**7, 50, 100, seed=1)) is None  # hard: left to the caller
    assert solve_kp1_quick(jooken(400, 10**8, 10, 0.1, 0.01, 100, seed=1)) is None


def _exchanges_by_numpy(p, w, capacity, taken, rounds=8):
    """The best single swap repeated while it gains, re-sorting every round (the slow reference)."""
    taken = taken.copy()
    for _ in range(rounds):
        room = capacity - int(w[taken].sum())
        inside, outside = np.flatnonzero(taken), np.flatnonzero(~taken)
        if not len(inside) or not len(outside):
            break
        by_weight = inside[np.argsort(w[inside], kind="stable")]
        cheapest = np.minimum.accumulate(p[by_weight][::-1])[::-1]
        first = np.searchsorted(w[by_weight], w[outside] - room, side="left")
        gain = np.where(first < len(by_weight), p[outside] - cheapest[np.minimum(first, len(by_weight) - 1)], 0)
        best = int(np.argmax(gain))
        if gain[best] <= 0:
            break
        dropped = by_weight[first[best]:][int(np.argmin(p[by_weight[first[best]:]]))]
        taken[dropped], taken[outside[best]] = False, True
    return taken


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 40), st.sampled_from([4, 20, 10**6, 2**60]))
def test_exchanges_match_the_numpy_reference(seed, n, top):
    """Equal weights and profits tie often at small ``top``; at 2^60 the one-key sort by weight would overflow."""
    rng = np.random.default_rng(seed)
    w, p = rng.integers(1, top, n).astype(np.int64), rng.integers(1, top, n).astype(np.int64)
    capacity = int(rng.integers(1, int(w.astype(object).sum()) + 1)) if top < 2**60 else int(w.max())
    taken, room = np.zeros(n, np.bool_), capacity
    for j in rng.permutation(n):
        if w[j] <= room and rng.random() < 0.7:
            taken[j], room = True, room - w[j]
    assert np.array_equal(improve_by_exchanges(p, w, capacity, taken), _exchanges_by_numpy(p, w, capacity, taken))


def _prepare_by_numpy(profits, weights, capacity, known):
    """The preparation as numpy steps (the code before it was compiled): order, break item, greedy value,
    upper bound and reductions."""
    efficiency = profits / weights
    order = np.argsort(-efficiency, kind="stable")
    p, w, e = profits[order], weights[order], efficiency[order]
    prefix = np.cumsum(w)
    b = int(np.searchsorted(prefix, capacity, side="right"))
    taken = np.zeros(len(w), np.bool_)
    room = capacity
    for j in range(len(w)):
        if j < b or w[j] <= room:
            taken[j], room = True, room - w[j]
    taken = _exchanges_by_numpy(p, w, capacity, taken)
    lower = max(int(p[taken].sum()), known)
    break_profit, residual = int(p[:b].sum()), capacity - (int(prefix[b - 1]) if b else 0)
    gcd = int(np.gcd.reduce(p))
    upper = (break_profit + residual * int(p[b]) // int(w[b])) // gcd * gcd
    target = (lower // gcd + 1) * gcd
    sign = np.where(np.arange(len(p)) < b, -1, 1)
    whole = (break_profit - target + sign * p).astype(np.float64)
    room = (residual - sign * w) * float(e[b])
    fixed = np.where(sign < 0, 1, 0).astype(np.int8)
    fixed[whole + room >= -1e-9 * (np.abs(room) + 1.0)] = -1
    return order, b, taken, lower, upper, fixed


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 60), st.sampled_from([3, 20, 10**6, 10**12]), st.booleans())
def test_the_compiled_preparation_matches_numpy_steps(seed, n, top, correlated):
    """Efficiency ties are frequent at small ``top`` and with correlated items (equal ``p - w``)."""
    rng = np.random.default_rng(seed)
    w = rng.integers(1, top, n).astype(np.int64)
    p = w + top // 10 + 1 if correlated else rng.integers(1, top, n).astype(np.int64)
    capacity = int(rng.integers(w.max(), max(int(w.sum()), int(w.max()) + 1)))
    if int(w.sum()) <= capacity:
        return
    known = int(rng.integers(0, int(p.sum()))) if rng.random() < 0.3 else 0
    setup = prepare(p, w, capacity, known=known)
    order, b, taken, lower, upper, fixed = _prepare_by_numpy(p, w, capacity, known)
    assert np.array_equal(setup.order, order) and setup.break_item == b
    assert np.array_equal(setup.greedy, taken) and setup.lower_bound == lower and setup.upper_bound == upper
    assert np.array_equal(setup.fixed, fixed)


@pytest.mark.parametrize("seed", range(12))
def test_the_preparation_matches_numpy_steps_on_large_instances(seed):
    """The exchanges weigh only the items the reductions leave them (most are fixed at n in the thousands):
    the same swaps, incumbent and reductions as over every item (shown to fail with the free items before
    the break item left out of the swaps, and with the reductions not tested again after a gain)."""
    rng = np.random.default_rng(seed)
    kind = ["uncorrelated", "weakly", "strongly", "inverse-strongly", "almost-strongly", "subset-sum"][seed % 6]
    problem = pisinger(kind, int(rng.integers(200, 3000)), int(rng.choice([100, 1000, 10**6])),
                       int(rng.integers(1, 100)), 100, seed=seed)
    fits = problem.weights <= problem.capacity
    p, w, capacity = problem.profits[fits], problem.weights[fits], problem.capacity
    for known in (0, int(rng.integers(0, int(p.sum())))):
        setup = prepare(p, w, capacity, known=known)
        order, b, taken, lower, upper, fixed = _prepare_by_numpy(p, w, capacity, known)
        assert np.array_equal(setup.order, order) and setup.break_item == b
        assert np.array_equal(setup.greedy, taken) and setup.lower_bound == lower and setup.upper_bound == upper
        assert np.array_equal(setup.fixed, fixed)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 40), st.integers(0, 30), st.sampled_from([2, 5, 40]))
def test_the_efficiency_order_is_exact_where_efficiencies_differ_only_in_their_last_bits(seed, near, others, spread):
    """Efficiencies ``1 + k 2^-50`` differ only in bits that the sort keys give to the item's index, so they
    share a key's leading part: the runs are put in exact order (short ones by insertion, long ones by a stable
    sort), ties by index, as numpy's stable argsort orders them."""
    rng = np.random.default_rng(seed)
    w = np.concatenate([np.full(near, 2**50), rng.integers(2**49, 2**51, others)]).astype(np.int64)
    p = np.concatenate([2**50 + rng.integers(0, spread, near), rng.integers(2**49, 2**51, others)]).astype(np.int64)
    shuffle = rng.permutation(len(w))
    p, w = p[shuffle], w[shuffle]
    capacity = int(w.sum()) - 1
    assert np.array_equal(prepare(p, w, capacity).order, np.argsort(-(p / w), kind="stable"))


def test_a_quick_run_gives_up_once_a_step_leaves_too_many_states():
    """Strongly correlated items: the list grows wide at once; with a width limit the quick run stops there,
    and the surrogate and the long run still reach the optimum the uncapped lists find."""
    from core.knapsack.kp1_core import solve_by_bounds
    from core.knapsack.states import OUT_OF_WORK

    problem = pisinger("strongly", 300, 10**5, 50, 100, seed=2)
    usable = problem.weights <= problem.capacity
    p, w = problem.profits[usable], problem.weights[usable]
    setup = prepare(p, w, problem.capacity)
    mask, run = solve_by_states(setup, 2**62, 10**8, max_held=64)
    assert mask is None and run.status == OUT_OF_WORK and run.held > 64
    plain, _ = solve_by_states(setup, 2**62, 10**8)
    capped, _ = solve_by_bounds(setup, 2**62 - 1, 2**62, 10**8, quick_held=64)
    assert int(p[capped].sum()) == int(p[plain].sum()) and int(w[capped].sum()) <= problem.capacity


def test_the_lists_pair_once_before_a_quick_run_gives_up():
    """Inverse strongly correlated items, many outside the core: the list stays far below the width at which
    pairing runs every step, but the one pass of pairing (at 10,000 states, or before a run gives up, as
    KP1's quick run does first at 2^11 states) finds the optimum within KP1's quick run (which then gives up,
    the optimum unproven; the surrogate proves it)."""
    from core.knapsack.kp1 import KP1_QUICK_HELD, KP1_QUICK_STATES
    from core.knapsack.states import OUT_OF_WORK, PAIRING_ONCE_STATES, PAIRING_RATIO

    problem = pisinger("inverse-strongly", 10000, 10**6, 10, 100, seed=1)
    optimum = solve_kp1(problem).value
    setup = prepare(problem.profits, problem.weights, problem.capacity)
    assert setup.lower_bound < optimum
    _, run = solve_by_states(setup, KP1_QUICK_STATES, 10**8, max_held=KP1_QUICK_HELD)
    assert run.status == OUT_OF_WORK and KP1_QUICK_HELD < run.held < min(PAIRING_ONCE_STATES,
                                                                         PAIRING_RATIO * setup.n_free)
    assert run.best == optimum and run.best_extra >= 0
    assert int(setup.profits[run.taken].sum()) == optimum


@pytest.mark.parametrize("exponent", [55, 57, 59])
def test_values_whose_efficiencies_round_alike_get_the_optimum(exponent):
    # float64 efficiencies of items near 2^57 round alike: the break item and Dantzig's bound came out wrong
    # and solve() returned a worse choice (2^59: 2B + 8 for 2B + 17) with no error
    from core.knapsack import solve
    from core.knapsack.kp1 import efficiencies_ambiguous

    B = 2**exponent
    problem = KP1([B + 1, B + 10, B + 7], [B + 7, B + 7, B], 2 * B + 8)
    assert solve(problem, backend="cpu").value == 2 * B + 17 == brute_kp(problem.profits, [problem.weights],
                                                                         [problem.capacity])
    rng = np.random.default_rng(exponent)
    for _ in range(150):
        n = int(rng.integers(2, 7))  # (sums below 2^62)
        p, w = B + rng.integers(0, 30, n), B + rng.integers(0, 30, n)
        capacity = B * int(rng.integers(1, n)) + int(rng.integers(0, 60))
        result = solve(KP1(p, w, capacity), backend="cpu")
        assert result.value == brute_kp(p, [w], [capacity]) == int(p[result.selected].sum())
        assert int(w[result.selected].sum()) <= capacity
    # efficiencies equal or apart are not ambiguous; those within rounding are, but only profits summing to
    # 2^50 or more go the exact way (Jooken's instances at C = 10^10 hold such pairs, and their bounds err by
    # 2^-52 of the profits' sum, far below a unit)
    assert not efficiencies_ambiguous(np.array([B, 2 * B, 3]), np.array([B, 2 * B, 7]))
    assert efficiencies_ambiguous(np.array([1350000032, 1350000059]), np.array([1350000039, 1350000066]))
    assert not KP1([1350000032, 1350000059], [1350000039, 1350000066], 10**10).huge and problem.huge
