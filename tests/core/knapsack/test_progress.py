"""The solvers' stage reports (core.knapsack.progress): method and bound gap between stages."""

from __future__ import annotations

import numpy as np

from core.knapsack import KP2, MCKP, solve
from core.knapsack.generators import pisinger, pisinger_mckp
from core.knapsack.progress import Stage, listening, report


def _stages(problem, **kwargs):
    stages = []
    with listening(stages.append):
        solution = solve(problem, backend="cpu", **kwargs)
    return solution, stages


def test_mckp_states_report_a_shrinking_nonnegative_gap():
    drawn = pisinger_mckp("uncorrelated", 200, 30, 10**9, seed=2)
    solution, stages = _stages(MCKP(drawn.classes, (drawn.capacity + drawn.min_weight) // 2))
    assert solution.method == "states" and stages and {s.method for s in stages} == {"states"}
    gaps = [s.gap for s in stages if s.gap is not None]
    assert gaps and min(gaps) >= 0


def test_kp2_states_report_gaps_against_their_incumbent():
    rng = np.random.default_rng(3)
    w1, w2 = rng.integers(1, 10**9, 80), rng.integers(1, 10**9, 80)
    problem = KP2(rng.integers(1, 10**9, 80), w1, w2, int(w1.sum()) // 2, int(w2.sum()) // 2)
    solution, stages = _stages(problem)
    assert solution.method == "states"
    reported = [s for s in stages if s.gap is not None]
    assert reported and all(s.gap >= 0 and s.best <= solution.value for s in reported)


def test_kp1_reports_the_dp_when_it_hands_over():
    solution, stages = _stages(pisinger("uncorrelated", 20, 100, 10, 100, seed=3))  # lists past 1/10 of the DP
    assert solution.method == "dp" and stages[-1].method == "dp"
    assert stages[0].method == "states" and stages[0].gap >= 0


def test_without_a_listener_a_report_is_silent_and_stages_describe_themselves():
    report("states", 3.0, 100)
    assert Stage("states", 12.0, 4000).describe() == "states, bound gap 12 (0.3%)"
    assert Stage("dp").describe() == "dp"


def test_kp1s_exact_lists_report_their_progress_while_they_run(monkeypatch):
    # a hard instance spends seconds in one compiled run: the panel showed its gap once, then nothing
    from core.knapsack import progress
    from core.knapsack.generators import jooken

    monkeypatch.setattr(progress, "WATCH_INTERVAL_S", 0.01)
    solution, stages = _stages(jooken(400, 10**7, 10, 0.1, 0.01, 100, seed=1))  # ~0.7 s in its exact lists
    watched = [s for s in stages if s.total]
    assert solution.method == "states" and len(watched) >= 5
    done = [s.done for s in watched]
    assert done == sorted(done) and done[-1] > done[0] and all(d <= watched[0].total for d in done)
    assert all(0 <= s.gap and s.best <= solution.value for s in watched)
    assert ", of " not in watched[-1].describe() and "items decided" in watched[-1].describe()
    assert Stage("states", 12.0, 4000, 3, 400).describe() == "states, bound gap 12 (0.3%), 3 of 400 items decided"

