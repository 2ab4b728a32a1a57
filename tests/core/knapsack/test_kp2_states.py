"""KP2 by surrogate bounds and dominance (core.knapsack.kp2_states) against brute force, the capacity DP
and HiGHS."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.knapsack import KP2, MemoryBudgetError, kp2_states, solve
from core.knapsack.kp2 import solve_kp2
from core.knapsack.kp2_states import _undominated
from core.knapsack.problems import KnapsackSolution
from tests.knapsack_reference import check_kp_choice, highs_milp

SETTINGS = settings(max_examples=80, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@st.composite
def kp2_instances(draw, max_n=12, max_weight=20):
    n = draw(st.integers(1, max_n))
    items = st.lists(st.integers(0, max_weight), min_size=n, max_size=n)
    w1, w2, profits = draw(items), draw(items), draw(st.lists(st.integers(0, 30), min_size=n, max_size=n))
    return KP2(profits, w1, w2, draw(st.integers(0, sum(w1) + 2)), draw(st.integers(0, sum(w2) + 2)))


def brute_kp2(problem) -> int:
    best = 0
    for subset in itertools.product((0, 1), repeat=problem.n_items):
        take = np.flatnonzero(subset)
        if (problem.weights1[take].sum() <= problem.capacity1 and problem.weights2[take].sum() <= problem.capacity2):
            best = max(best, int(problem.profits[take].sum()))
    return best


@pytest.fixture(params=["plain lists", "beam and fixing"])
def path(request):
    """Run each test through the plain lists (easy instances end there) and through the beam, fixing and lists
    over the free items (EASY_WORK 0: the plain lists stop at once)."""
    with pytest.MonkeyPatch.context() as patch:
        if request.param == "beam and fixing":
            patch.setattr(kp2_states, "EASY_WORK", 0)
            patch.setattr(kp2_states, "BEAM", 3)  # a narrow beam: a weaker incumbent, fewer items fixed
        yield request.param


def _states(problem, budget=10**9):
    value, selected, method = solve_kp2(problem, budget, "states")
    return KnapsackSolution(value, np.asarray(selected), "cpu", method, 0.0)


@SETTINGS
@given(kp2_instances())
def test_states_match_brute_force(path, problem):
    sol = _states(problem)
    assert sol.value == brute_kp2(problem)
    check_kp_choice(problem, sol)


@SETTINGS
@given(kp2_instances(max_n=40, max_weight=60), st.sampled_from([1, 13, 10**9]))
def test_states_match_the_capacity_dp(path, problem, factor):
    scaled = KP2(problem.profits, problem.weights1 * factor, problem.weights2,
                 problem.capacity1 * factor, problem.capacity2)
    sol = _states(scaled)
    assert sol.value == solve_kp2(problem, 10**9, "dp").value
    check_kp_choice(scaled, sol)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=30))
def test_dominance_keeps_exactly_the_undominated_states(states):
    w1, w2, p = (np.array(x, np.int64) for x in zip(*states))
    order = np.lexsort((-p, w2, w1))
    ranks, rank2 = np.unique(w2[order], return_inverse=True)
    kept = order[_undominated(w1[order], w2[order], p[order], rank2.astype(np.int64), len(ranks))]
    triples = set(zip(w1.tolist(), w2.tolist(), p.tolist()))
    expected = {a for a in triples
                if not any(b != a and b[0] <= a[0] and b[1] <= a[1] and b[2] >= a[2] for b in triples)}
    assert {(int(w1[k]), int(w2[k]), int(p[k])) for k in kept} == expected
    assert len(kept) == len({(w1[k], w2[k], p[k]) for k in kept})


def _correlated(n, coefficient_range, seed):
    rng = np.random.default_rng(seed)
    w1, w2 = rng.integers(1, coefficient_range, n), rng.integers(1, coefficient_range, n)
    profits = (w1 + w2) // 2 + rng.integers(1, coefficient_range // 10, n)
    return KP2(profits, w1, w2, int(w1.sum()) // 2, int(w2.sum()) // 2)


def test_auto_uses_the_states_at_large_capacities_and_matches_highs():
    problem = _correlated(60, 10**9, seed=4)  # a table of 10^19 cells
    sol = solve(problem, backend="cpu", memory_budget_bytes=10**8)
    assert sol.method == "states"
    assert sol.value == highs_milp(problem.profits, [problem.weights1, problem.weights2],
                                   [problem.capacity1, problem.capacity2])
    check_kp_choice(problem, sol)


@pytest.mark.parametrize("n, r, seed", [(120, 10**6, 2), (120, 10**9, 3)])
def test_hard_correlated_instances_match_highs_through_the_fixing(n, r, seed, monkeypatch):
    calls = []
    monkeypatch.setattr(kp2_states, "_fixed_items", lambda *a: calls.append(1) or fixed_items(*a))
    problem = _correlated(n, r, seed=seed)
    sol = _states(problem)
    assert calls  # the plain lists did not end within EASY_WORK: the beam and the fixing ran
    assert sol.value == highs_milp(problem.profits, [problem.weights1, problem.weights2],
                                   [problem.capacity1, problem.capacity2])
    check_kp_choice(problem, sol)


fixed_items = kp2_states._fixed_items


def test_refused_only_when_neither_method_fits():
    with pytest.raises(MemoryBudgetError, match=r"state lists outgrew the budget; the capacity DP needs"):
        solve(_correlated(300, 10**6, seed=1), backend="cpu", memory_budget_bytes=10**4)


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="method must be one of auto, dp, states"):
        solve_kp2(KP2([1], [1], [1], 1, 1), None, "lists")


def test_the_state_lists_keep_near_their_memory_budget():
    # a step's doubled list, sort order, uniques and bounds were not counted: a 200 MB budget peaked at 660 MB
    import subprocess
    import sys

    script = (
        "import resource, numpy as np\n"
        "from core.knapsack import KP2, solve\n"
        "rng = np.random.default_rng(1); n = 200\n"
        "w1 = rng.integers(10**8, 10**9, n); w2 = rng.integers(10**8, 10**9, n)\n"
        "p = w1 + w2 + rng.integers(0, 1000, n)\n"
        "solve(KP2([1], [1], [1], 1, 1), 'cpu')\n"
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "try:\n"
        "    solve(KP2(p, w1, w2, int(w1.sum() // 2), int(w2.sum() // 2)), 'cpu', memory_budget_bytes=100_000_000)\n"
        "except Exception as e:\n"
        "    print(type(e).__name__)\n"
        "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) * 1024)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=__import__("pathlib").Path(__file__).resolve().parents[3])
    outcome, grown = done.stdout.split()
    assert outcome == "MemoryBudgetError" and int(grown) < 1.5 * 100_000_000, done.stdout
