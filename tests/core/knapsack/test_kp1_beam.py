"""Beams of the KP1 state lists (core.knapsack.kp1_beam) and the exact lists pruning against their values."""

from __future__ import annotations

import dataclasses
import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.knapsack import KP1, SubsetSum, TimeLimitError, kp1_beam, kp1_core, limits, solve
from core.knapsack.generators import jooken
from core.knapsack.kp1 import solve_kp1
from core.knapsack.kp1_core import prepare, solve_by_states
from core.knapsack.state_steps import narrow
from core.knapsack.states import DONE, StateRun, backtrack, expand_core
from tests.benchmarks.children import in_forked_child
from tests.core.knapsack.test_kp1_core import kp1_of_every_class
from tests.knapsack_reference import check_kp_choice

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 60), st.integers(1, 59), st.integers(0, 10**6))
def test_narrowing_keeps_the_highest_dantzig_bounds_in_order(n, width, seed):
    rng = np.random.default_rng(seed)
    width = min(width, n - 1)  # expand_core narrows only lists longer than the beam
    w = np.sort(rng.choice(1000, n, replace=False)).astype(np.int64)
    p = np.cumsum(rng.integers(1, 30, n)).astype(np.int64)
    v = rng.integers(0, 2**40, n).astype(np.uint64)
    # integral efficiencies: the bounds are exact in floats and often tie (the lightest of a tie are kept)
    capacity, eff_add, eff_remove = 500, float(rng.choice([-1.0, 1.0, 2.0])), float(rng.choice([-1.0, 3.0]))
    over = w > capacity
    eff = np.where(over, eff_remove, eff_add)
    keys = np.where(eff < 0, np.where(over, -np.inf, p), p + (capacity - w) * eff)
    want = np.sort(np.lexsort((np.arange(n), -keys))[:width])  # by bound, then by weight
    ow, op, ov = w.copy(), p.copy(), v.copy()
    m = narrow(ow, op, ov, n, width, capacity, eff_add, eff_remove, np.empty(n, np.float64))
    assert m == width
    assert np.array_equal(ow[:m], w[want]) and np.array_equal(op[:m], p[want]) and np.array_equal(ov[:m], v[want])


def _core_args(setup):
    free = np.flatnonzero(setup.fixed < 0)
    b = setup.break_item
    return (setup.profits, setup.weights, np.int64(setup.capacity), setup.efficiency, free[free < b][::-1].copy(),
            free[free >= b].copy(), np.int64(setup.weights[:b].sum()), np.int64(setup.profits[:b].sum()),
            float(setup.efficiency[b]))


def _run(setup, width=0, shared=None, incumbent=None):
    shared = np.zeros(1, np.int64) if shared is None else shared
    incumbent = setup.lower_bound if incumbent is None else incumbent
    unlimited = np.int64(2**62)
    return StateRun(expand_core(*_core_args(setup), np.int64(incumbent), unlimited, unlimited, unlimited,
                                np.int64(2**40), False, np.zeros(1, np.uint8), np.int64(width), shared))


def _setup(problem):
    usable = (problem.weights > 0) & (problem.weights <= problem.capacity) & (problem.profits > 0)
    p, w = problem.profits[usable], problem.weights[usable]
    if int(w.sum()) <= problem.capacity:
        return None
    # no reductions and a zero incumbent: the lists have work to do
    return dataclasses.replace(prepare(p, w, problem.capacity), lower_bound=0, fixed=np.full(len(p), -1, np.int8))


#: Setups of 30-200 items with work for the lists (see :func:`_setup`).
SETUPS = kp1_of_every_class(low_n=30, high_n=200).map(_setup).filter(
    lambda setup: setup is not None)


@SETTINGS
@given(SETUPS, st.sampled_from([1, 4, 64]))
def test_a_beam_finds_a_feasible_solution_and_publishes_its_value(setup, width):
    exact = _run(setup)
    shared = np.zeros(1, np.int64)
    beam = _run(setup, width, shared)
    assert beam.best <= exact.best
    assert shared[0] == beam.best
    if beam.best_step >= 0:
        taken = backtrack(beam, setup.profits, setup.weights, setup.break_item)
        assert int(setup.weights[taken].sum()) <= setup.capacity
        assert int(setup.profits[taken].sum()) == beam.best


@SETTINGS
@given(SETUPS)
def test_a_beam_wider_than_every_list_is_the_exact_lists(setup):
    exact, beam = _run(setup), _run(setup, 2**40)
    assert (beam.best, beam.best_step, beam.work) == (exact.best, exact.best_step, exact.work)


@SETTINGS
@given(SETUPS)
def test_the_exact_lists_prune_against_a_shared_value(setup):
    """Given the optimum's value, the lists prove it with no more work and report no state of their own."""
    exact = _run(setup)
    helped = _run(setup, shared=np.array([exact.best], np.int64))
    assert helped.status == DONE and helped.best == exact.best
    assert helped.work <= exact.work
    if exact.best > setup.lower_bound:
        assert helped.best_step == -1


def _two_cores(monkeypatch):
    """Beams as on two cores, from the start (these runs last less than the beams' usual wait)."""
    monkeypatch.setattr(kp1_beam, "cores", lambda: 2)
    monkeypatch.setattr(kp1_beam, "START_DELAY_S", 0.0)


def _record_beams(monkeypatch) -> list:
    """A list that gets, for each run of the lists, whether it had a beams thread."""
    runs = []
    for kind in (kp1_beam.Beams, type(kp1_beam.NO_BEAMS)):  # (the stand-in where no beams can run)
        def enter(self, real_enter=kind.__enter__):
            runs.append(self.running)
            return real_enter(self)

        monkeypatch.setattr(kind, "__enter__", enter)
    return runs


@SETTINGS
@given(kp1_of_every_class(low_n=100, high_n=400))
def test_state_lists_with_beams_match_the_capacity_dp(problem):
    if problem.capacity > 2 * 10**6:  # keep the reference DP small
        problem = KP1(problem.profits % 1000 + 1, problem.weights % 1000 + 1, problem.capacity % 100_000)
    setup = _setup(problem)
    if setup is None:
        return
    with pytest.MonkeyPatch.context() as monkeypatch:
        _two_cores(monkeypatch)
        mask, run = solve_by_states(setup, 2**62, 10**8, beams=True)
    usable = (problem.weights > 0) & (problem.weights <= problem.capacity) & (problem.profits > 0)
    p, w = problem.profits[usable], problem.weights[usable]
    assert int(w[mask].sum()) <= problem.capacity
    assert int(p[mask].sum()) == solve_kp1(problem, None, "dp").value


def _hard_setup():
    """A Jooken-style instance with neither reductions nor an incumbent (an empty one), so that the lists and
    the beams both have a solution to find."""
    problem = jooken(150, 10**6, 3, 0.1, 0.01, 30, seed=4)
    usable = problem.weights <= problem.capacity
    p, w = problem.profits[usable], problem.weights[usable]
    setup = dataclasses.replace(_setup(problem), greedy=np.zeros(len(p), np.bool_))
    return problem, p, w, setup


def test_the_beams_solution_is_returned_when_the_lists_proved_its_value(monkeypatch):
    """Beams run to the end before the lists start: the lists adopt their value, and their solution comes back."""
    problem, p, w, setup = _hard_setup()
    optimum = solve_kp1(problem, None, "dp").value
    _two_cores(monkeypatch)

    def enter_and_finish(self):
        self._run()
        return self

    monkeypatch.setattr(kp1_beam.Beams, "__enter__", enter_and_finish)
    mask, run = solve_by_states(setup, 2**62, 10**8, beams=True)
    assert run.beams and run.beams[-1][0] >= kp1_beam.FIRST_WIDTH
    assert run.best == optimum and run.best_step == -1  # the lists found nothing better than the beams' value
    assert int(w[mask].sum()) <= problem.capacity and int(p[mask].sum()) == optimum


def test_no_beams_on_one_core_or_a_small_budget(monkeypatch):
    problem, p, w, setup = _hard_setup()
    monkeypatch.setattr(kp1_beam, "cores", lambda: 1)
    assert solve_by_states(setup, 2**62, 10**8, beams=True)[1].beams == []
    _two_cores(monkeypatch)
    small = 8 * kp1_beam.beam_states(kp1_beam.FIRST_WIDTH, len(p)) - 8
    assert solve_by_states(setup, 2**62, small, beams=True)[1].beams == []
    assert solve_by_states(setup, 2**62, 10**8, beams=False)[1].beams == []


def test_no_beams_when_the_incumbent_already_meets_the_bound(monkeypatch):
    """A long run with nothing to do (the surrogate's bound is the incumbent's value) starts no thread."""
    problem, p, w, setup = _hard_setup()
    _two_cores(monkeypatch)
    started = _record_beams(monkeypatch)
    mask, run = solve_by_states(setup, 2**62, 10**8, upper_bound=setup.lower_bound, beams=True)
    assert np.array_equal(mask[setup.order], setup.greedy)
    solve_by_states(setup, 2**62, 10**8, upper_bound=setup.lower_bound + 1, beams=True)
    assert started == [False, True]


def test_a_run_shorter_than_the_wait_runs_no_beam(monkeypatch):
    """The thread starts but waits START_DELAY_S before its first beam; a run that ends first stops it there."""
    _, _, _, setup = _hard_setup()
    monkeypatch.setattr(kp1_beam, "cores", lambda: 2)
    monkeypatch.setattr(kp1_beam, "START_DELAY_S", 60.0)
    started = _record_beams(monkeypatch)
    begin = time.perf_counter()
    _, run = solve_by_states(setup, 2**62, 10**8, beams=True)
    assert started == [True] and run.beams == [] and time.perf_counter() - begin < 30


def test_beams_run_in_a_forked_child(monkeypatch):
    """The beams' threads are kept between solves; a forked child, where the parent's threads do not exist,
    starts its own."""
    _, _, _, setup = _hard_setup()
    _two_cores(monkeypatch)
    real_enter = kp1_beam.Beams.__enter__

    def enter_and_wait(self):  # the lists start once the beams have ended: no race between the two
        real_enter(self)
        self._finished.wait(60)
        return self

    monkeypatch.setattr(kp1_beam.Beams, "__enter__", enter_and_wait)
    assert solve_by_states(setup, 2**62, 10**8, beams=True)[1].beams  # the parent's thread now exists

    def child():
        return len(solve_by_states(setup, 2**62, 10**8, beams=True)[1].beams)

    assert (in_forked_child(child, (), 120) or 0) > 0


def test_an_error_in_the_beams_thread_reaches_the_caller(monkeypatch):
    _, _, _, setup = _hard_setup()
    _two_cores(monkeypatch)
    failed = threading.Event()

    def broken(*args):
        failed.set()
        raise ValueError("beam failed")

    def lists_after_the_beam(*args):  # the lists can end before a beam starts; here they wait for it
        failed.wait(10)
        return expand_core(*args)

    monkeypatch.setattr(kp1_beam, "expand_core", broken)
    monkeypatch.setattr(kp1_beam, "START_DELAY_S", 0.0)
    monkeypatch.setattr(kp1_core, "expand_core", lists_after_the_beam)
    with pytest.raises(ValueError, match="beam failed"):
        solve_by_states(setup, 2**62, 10**8, beams=True)


def test_solve_with_beams_gives_the_optimum_through_the_public_call(monkeypatch):
    """A Jooken-style instance past the quick run: the long run with beams, through solve_kp1."""
    _two_cores(monkeypatch)
    problem = jooken(300, 10**6, 10, 0.1, 0.01, 100, seed=2)
    result = solve_kp1(problem, None, "states")
    assert result.value == solve_kp1(problem, None, "dp").value
    check_kp_choice(problem, result)


def test_a_time_limit_stops_the_lists_and_their_beams(monkeypatch):
    """Jooken-style n = 400, C = 10^8 takes seconds in the long run; its limit ends both threads at once."""
    _two_cores(monkeypatch)
    started = _record_beams(monkeypatch)
    problem = jooken(400, 10**8, 10, 0.1, 0.01, 100, seed=1)
    with limits.time_limit(100):  # the time limits' watchdog thread starts with the first flag and stays
        limits.stop_flag()
    solve_kp1(jooken(300, 10**6, 10, 0.1, 0.01, 100, seed=2), None, "states")  # as do the beams' threads
    threads = threading.active_count()
    begin = time.perf_counter()
    with pytest.raises(TimeLimitError):
        solve_kp1(problem, None, "states", time_limit_s=1.5)
    assert time.perf_counter() - begin < 6.0
    assert True in started  # the long run had its beams when the limit came
    assert threading.active_count() == threads


def test_subset_sum_runs_its_lists_without_beams(monkeypatch):
    """Every state of a subset sum has the same Dantzig bound: a beam would keep an arbitrary few."""
    _two_cores(monkeypatch)
    entered = _record_beams(monkeypatch)
    weights = np.random.default_rng(5).integers(1, 10**12, 36)
    solution = solve(SubsetSum(weights, int(weights.sum() // 3) + 7), backend="cpu")
    assert solution.method == "states" and len(entered) >= 2 and not any(entered)  # the quick and the long run
