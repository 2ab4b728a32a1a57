"""Time limits and a-priori bounds of the state-list solvers (issue 16): hard instances end in one clear error."""

from __future__ import annotations

import itertools
import threading
import time

import numpy as np
import pytest

from core.knapsack import KP1, KP2, MCKP, MemoryBudgetError, SubsetSum, TimeLimitError, kp2, limits, solve
from core.knapsack.generators import jooken, pisinger_mckp
from core.knapsack.kp1 import solve_kp1
from core.knapsack.kp2 import solve_kp2, solve_kp2_batch
from core.knapsack.mckp import solve_mckp
from core.knapsack.subset_sum import solve_subset_sum
from tests.benchmarks.children import in_forked_child

#: Slack for the stop after the deadline: the lists poll between steps, and the machine is shared.
STOP_SLACK_S = 3.0


def _hard_kp1():
    return jooken(400, 10**8, 10, 0.1, 0.01, 100, seed=1)  # ~30 s without a limit (BENCHMARKS.md)


def _hard_subset_sum():
    weights = np.random.default_rng(1).integers(10**11, 10**12, 60)
    return SubsetSum(weights, int(weights.sum()) // 2)


def _hard_mckp():
    """Weakly correlated at R = 10^9, the room above the lightest items halved: no capacity DP, the state
    lists run past 30 s without a limit."""
    drawn = pisinger_mckp("weakly", 100, 10, 10**9, seed=1)
    return MCKP(drawn.classes, (drawn.capacity + drawn.min_weight) // 2)


def _hard_kp2():
    """Correlated profits, capacities of 10^7: no capacity DP, the state lists run past 30 s without a limit."""
    rng = np.random.default_rng(1)
    w1, w2 = rng.integers(1, 10**6, 1000), rng.integers(1, 10**6, 1000)
    return KP2((w1 + w2) // 2 + rng.integers(1, 10**4, 1000), w1, w2, int(w1.sum()) // 2, int(w2.sum()) // 2)


def _kp2_dp(n, capacity, seed=4):
    """A KP2 whose capacity DP fills about ``n x capacity^2`` cells (weights up to the capacity)."""
    rng = np.random.default_rng(seed)
    return KP2(rng.integers(1, 1000, n), rng.integers(1, capacity, n), rng.integers(1, capacity, n), capacity, capacity)


def _timed(call):
    begin = time.perf_counter()
    with pytest.raises(TimeLimitError) as info:
        call()
    return info.value, time.perf_counter() - begin


@pytest.fixture(scope="module", autouse=True)
def compiled():
    """Compile the solvers first (a cold numba compile is not the solver's time): with the tests' own limit,
    again until two solves in a row keep to it, so that every stage they reach is compiled (a compile inside
    one solve uses up its limit, and the next solve reaches a later stage: MCKP's, from a cold cache, whose
    helper thread makes the stages reached vary)."""
    for make in (_hard_kp1, _hard_subset_sum, _hard_mckp, _hard_kp2):
        kept = 0
        for _ in range(8):
            begin = time.perf_counter()
            try:
                solve(make(), backend="cpu", time_limit_s=0.5)
            except TimeLimitError:
                pass
            kept = kept + 1 if time.perf_counter() - begin < 0.5 + STOP_SLACK_S / 2 else 0
            if kept == 2:
                break
    small = KP2([6, 10, 7], [5, 6, 4], [2, 7, 6], 9, 8)
    solve_kp2(small, None, "dp")
    rng = np.random.default_rng(0)
    many = KP2(rng.integers(1, 9, 400), rng.integers(1, 9, 400), rng.integers(1, 9, 400), 50, 50)
    solve_kp2(many, 100_000, "dp")  # divide and conquer: its bits need 125 kB
    solve_kp2_batch([small] * 2)


@pytest.mark.parametrize("make, label", [(_hard_kp1, "KP1 by state lists"),
                                         (_hard_subset_sum, "subset sum by state lists"),
                                         (_hard_mckp, "MCKP by state lists"),
                                         (_hard_kp2, "KP2 by state lists")])
def test_a_hard_instance_stops_at_its_time_limit_with_what_it_reached(make, label):
    err, elapsed = _timed(lambda: solve(make(), backend="cpu", time_limit_s=0.5))
    # MCKP and KP2 may stop earlier: a stage estimated to end past the limit is not started
    assert (0.5 if label.startswith("KP1") else 0.0) <= elapsed < 0.5 + STOP_SLACK_S
    assert str(err).startswith(label) and "stopped at the time limit of 0.5 s after" in str(err)
    assert "states" in err.reached and "raise time_limit_s" in str(err)
    assert err.limit_s == 0.5 and isinstance(err, ValueError)


@pytest.mark.parametrize("solver, make", [(solve_kp1, _hard_kp1), (solve_subset_sum, _hard_subset_sum),
                                          (solve_mckp, _hard_mckp),
                                          (lambda q, *_: _limited(0.3, solve_kp2, q), _hard_kp2)])
def test_the_cpu_solvers_take_the_limit_themselves(solver, make):
    _, elapsed = _timed(lambda: solver(make(), None, "auto", 0.3))
    assert elapsed < 0.3 + STOP_SLACK_S


def _limited(seconds, solver, *args):
    with limits.time_limit(seconds):
        return solver(*args)


def test_the_kp2_capacity_dp_stops_within_its_sweep(monkeypatch):
    from core.knapsack.kp2 import _sweep

    monkeypatch.setattr(limits, "DP_CELLS_PER_S", 1e15)  # let the estimate pass: the sweep's own poll must stop it
    # divide and conquer (the bits would need 3 GB): two value tables of ~1.2e10 cells, about 10 s without a limit
    err, elapsed = _timed(lambda: _limited(0.2, solve_kp2, _kp2_dp(6000, 2000), 256 * 2**20, "dp"))
    assert elapsed < 0.2 + STOP_SLACK_S and str(err).startswith("KP2 by the capacity DP (6,000 items")
    assert "stopped within divide and conquer's tables" in err.reached
    monkeypatch.setattr(kp2, "DP_OUTRIGHT_CELLS", 10**12)  # the batch's DP, not the lists, for these instances
    err, _ = _timed(lambda: _limited(0.05, solve_kp2_batch, [_kp2_dp(2000, 700)] * 4))
    assert str(err).startswith("4 KP2 instances side by side") and "stopped within the DP" in err.reached
    problem = _kp2_dp(50, 40)
    win = np.stack([np.zeros(50, np.int64), np.full(50, 40), np.zeros(50, np.int64), np.full(50, 40)])
    args = (problem.profits.astype(np.int32), problem.weights1, problem.weights2, 40, 40, win, np.zeros(0, np.uint64),
            np.zeros(0, np.int64))
    assert _sweep(*args, np.zeros(1, np.uint8)).max() > 0  # items were added
    assert _sweep(*args, np.ones(1, np.uint8)).max() == 0  # stopped before the first item


def test_a_kp2_capacity_dp_that_would_outlast_the_limit_is_refused_before_it_starts():
    rng = np.random.default_rng(5)
    w1, w2 = rng.integers(1, 10**5, 3000), rng.integers(1, 10**5, 3000)
    problem = KP2(rng.integers(1, 1000, 3000), w1, w2, int(w1.sum()) // 2, int(w2.sum()) // 2)  # ~10^16 cells
    begin = time.perf_counter()
    with pytest.raises(TimeLimitError, match=r"KP2 by the capacity DP .*\(refused before starting\)"):
        _limited(5.0, solve_kp2, problem, None, "dp")
    assert time.perf_counter() - begin < 2.0


def test_kp2_answers_within_a_limit_are_the_answers_without_one():
    rng = np.random.default_rng(8)
    for _ in range(10):
        n = int(rng.integers(1, 11))
        p, w1, w2 = rng.integers(1, 100, n), rng.integers(0, 10**6, n), rng.integers(0, 10**6, n)
        c1, c2 = int(rng.integers(0, w1.sum() + 1)), int(rng.integers(0, w2.sum() + 1))
        best = max(int(p[list(c)].sum()) for k in range(n + 1) for c in itertools.combinations(range(n), k)
                   if int(w1[list(c)].sum()) <= c1 and int(w2[list(c)].sum()) <= c2)  # brute force
        assert solve(KP2(p, w1, w2, c1, c2), backend="cpu", time_limit_s=30).value == best


def test_no_thread_outlives_a_solve_but_the_kept_ones():
    """Solves under time limits leave no thread per call: at most the limits' one watchdog and one of the
    beams' kept threads (kp1_beam._threads) that solves one after another share."""
    before = set(threading.enumerate())
    solve(KP1([60, 100, 120], [10, 20, 30], 50), backend="cpu", time_limit_s=5)
    for _ in range(3):
        _timed(lambda: solve(_hard_kp1(), backend="cpu", time_limit_s=0.2))
    added = set(threading.enumerate()) - before
    assert len(added) <= 2
    assert all(thread.name == "knapsack time limits" or thread.name.startswith("kp1-beams") for thread in added)


def test_answers_within_a_limit_are_the_answers_without_one():
    rng = np.random.default_rng(7)
    for _ in range(20):
        n = int(rng.integers(1, 13))
        p, w = rng.integers(1, 10**6, n), rng.integers(1, 10**6, n)
        capacity = int(rng.integers(0, w.sum() + 1))
        best = max(int(p[list(c)].sum()) for k in range(n + 1) for c in itertools.combinations(range(n), k)
                   if int(w[list(c)].sum()) <= capacity)  # brute force: the independent reference
        assert solve(KP1(p, w, capacity), backend="cpu", time_limit_s=30).value == best
        assert solve(KP1(p, w, capacity), backend="cpu").value == best


def test_a_budget_below_the_first_state_buffers_is_refused_before_any_work():
    with pytest.raises(MemoryBudgetError, match="KP1 by state lists .* first state buffers"):
        solve_kp1(_hard_kp1(), 10_000, "states")
    with pytest.raises(MemoryBudgetError, match="MCKP by state lists .* first state buffers"):
        solve_mckp(_hard_mckp(), 64, "states")


def test_the_running_memory_guard_stops_a_hard_instance_quickly():
    begin = time.perf_counter()
    with pytest.raises(MemoryBudgetError, match="KP1 by state lists"):
        solve(_hard_kp1(), backend="cpu", memory_budget_bytes=16 * 2**20)
    assert time.perf_counter() - begin < 20


def test_a_capacity_dp_that_would_outlast_the_limit_is_refused_before_it_starts():
    rng = np.random.default_rng(2)
    problem = KP1(rng.integers(1, 1000, 2000), rng.integers(10**8, 2 * 10**8, 2000), 10**11)  # 2e14 cells
    begin = time.perf_counter()
    with pytest.raises(TimeLimitError, match="refused before starting"):
        solve_kp1(problem, None, "dp", 5.0)
    assert time.perf_counter() - begin < 2.0


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan"), "soon", "5", True])
def test_a_bad_time_limit_names_the_argument(bad):
    with pytest.raises(ValueError, match="time_limit_s must be a positive number of seconds or None"):
        solve(KP1([1], [1], 1), backend="cpu", time_limit_s=bad)


def test_an_inner_limit_never_extends_the_outer_one():
    with limits.time_limit(0.2):
        with limits.time_limit(100):
            time.sleep(0.3)
            assert limits.expired()
    assert not limits.expired()


def _raised_within(flag, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if flag[0]:
            return True
        time.sleep(0.005)
    return bool(flag[0])


def test_the_watchdog_raises_each_flag_at_its_own_deadline_and_none_after_its_block():
    """One watchdog thread serves every limit: a short limit armed while it sleeps until a long one's deadline
    is raised on time, in another thread too; a limit whose block has ended is never raised."""
    flags = {}

    def short_limit():
        with limits.time_limit(0.2):
            flags["short"] = limits.stop_flag()
            flags["short raised"] = _raised_within(flags["short"], 2.0)

    with limits.time_limit(30):
        flags["long"] = limits.stop_flag()
        other = threading.Thread(target=short_limit)
        other.start()
        other.join()
        assert flags["short raised"] and not flags["long"][0]
    with limits.time_limit(0.2):
        ended = limits.stop_flag()
    assert not _raised_within(ended, 0.5)
    with limits.time_limit(0.1):
        assert _raised_within(limits.stop_flag(), 2.0)


def test_a_limit_is_watched_from_its_first_stop_flag_and_a_short_call_needs_none():
    """The watchdog watches a limit only once a compiled loop asks for its flag; a call known to end well within
    the time left gets the never-raised flag; the deadline holds without a flag, and a flag first asked for
    after it comes raised."""
    with limits.time_limit(30):
        limit = limits._active.get()
        assert limits.stop_flag_within(1.0) is limits._NEVER and limit not in limits._watchdog._armed
        flag = limits.stop_flag()
        assert limit in limits._watchdog._armed and not flag[0]
        assert limits.stop_flag() is flag and limits.stop_flag_within(1.0) is flag  # (armed: the one flag)
    assert limit not in limits._watchdog._armed
    with limits.time_limit(0.5):
        assert limits.stop_flag_within(1.0) is not limits._NEVER  # (less than a second left: watched)
    with limits.time_limit(0.05):
        time.sleep(0.1)
        assert limits.expired() and limits.stop_flag()[0]
        with pytest.raises(TimeLimitError):
            limits.check("the test")


def test_a_kp1_first_pass_under_a_long_limit_arms_no_watchdog(monkeypatch):
    """An easy KP1 that the first pass settles under a 60 s limit never arms the watchdog, and its answer is
    the one without a limit."""
    armed = []
    original = limits._watchdog.arm
    monkeypatch.setattr(limits._watchdog, "arm", lambda limit: armed.append(limit) or original(limit))
    rng = np.random.default_rng(3)
    problem = KP1(rng.integers(1, 1000, 300), rng.integers(1, 1000, 300), 30000)
    limited = solve(problem, backend="cpu", time_limit_s=60)
    assert limited.method == "states" and not armed
    assert limited.value == solve(problem, backend="cpu").value


def test_a_forked_child_has_its_own_watchdog():
    def child():
        with limits.time_limit(0.1):
            return _raised_within(limits.stop_flag(), 2.0)

    with limits.time_limit(30):  # the parent's thread runs when the child is forked
        assert in_forked_child(child, (), 30)


def _pareto_size(profits, weights):
    """Undominated (weight, profit) pairs over all subsets, by enumeration (the lists can hold no more)."""
    pairs = {(int(weights[list(c)].sum()), int(profits[list(c)].sum()))
             for k in range(len(profits) + 1) for c in itertools.combinations(range(len(profits)), k)}
    best, count = -1, 0
    for _, p in sorted(pairs, key=lambda x: (x[0], -x[1])):
        if p > best:
            best, count = p, count + 1
    return count


def test_the_kp1_state_bound_holds_and_is_reached():
    rng = np.random.default_rng(5)
    for _ in range(30):
        n = int(rng.integers(1, 11))
        p, w = rng.integers(1, 30, n), rng.integers(1, 30, n)
        assert _pareto_size(p, w) <= limits.kp1_state_bound(p, w, np.arange(n))
    powers = 2 ** np.arange(8)  # every subset sum distinct, profits = weights: all 2^8 states undominated
    assert _pareto_size(powers, powers) == limits.kp1_state_bound(powers, powers, np.arange(8)) == 256


def test_the_mckp_state_bound_holds():
    rng = np.random.default_rng(6)
    for _ in range(20):
        classes = [(np.sort(rng.integers(0, 40, 3)), np.sort(rng.integers(0, 40, 3))) for _ in range(4)]
        capacity = int(rng.integers(0, 120))
        picks = [[(p[j], w[j]) for (p, w), j in zip(classes, pick)] for pick in itertools.product(range(3), repeat=4)]
        pairs = {(sum(int(w) for _, w in pick), sum(int(p) for p, _ in pick)) for pick in picks}
        best, count = -1, 0
        for wt, pr in sorted(pairs, key=lambda x: (x[0], -x[1])):
            if wt <= capacity and pr > best:
                best, count = pr, count + 1
        assert count <= limits.mckp_state_bound([p for p, _ in classes], [w for _, w in classes], capacity)


def test_mckp_without_a_limit_still_solves_small_instances():
    problem = MCKP([([3, 5], [1, 2]), ([4, 6], [2, 3])], 5)
    assert solve(problem, backend="cpu", time_limit_s=10).value == solve(problem, backend="cpu").value == 11


def test_a_merge_stops_within_itself_when_the_flag_is_raised():
    from core.knapsack.state_steps import merge_pairs

    weights = profits = np.arange(200_000, dtype=np.int64)
    out = [np.empty(2 * len(weights), np.int64) for _ in range(2)]
    args = (weights, profits, len(weights), 7, 7, *out)
    top = np.int64(2**62)
    assert merge_pairs(*args, np.zeros(1, np.uint8), top) == len(weights) + 7  # a chain: all kept, the tail adds 7
    assert merge_pairs(*args, np.ones(1, np.uint8), top) == -1


def test_a_limit_passing_within_the_lists_last_meet_in_the_middle_stops_with_the_time_limit(monkeypatch):
    """The lists outgrow 128 MiB and the levels get a last try (core.knapsack.mckp_core): the limit passing
    there is a TimeLimitError, not the memory refusal that follows a futile try."""
    from core.knapsack import mckp_core

    real_levels = mckp_core.levels

    def levels_past_the_limit(*args, **kwargs):
        limits.stop_flag()[0] = 1  # the limit passes as the try starts: its lists stop at once
        return real_levels(*args, **kwargs)

    monkeypatch.setattr(mckp_core, "levels", levels_past_the_limit)
    drawn = pisinger_mckp("weakly", 10, 40, 10**9, seed=1)
    problem = MCKP(drawn.classes, sum(int(w.min()) for _, w in drawn.classes) + 10**9)
    with pytest.raises(TimeLimitError, match="MCKP by state lists"):
        solve_mckp(problem, 2**27, "states", 30.0)
