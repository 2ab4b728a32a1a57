"""GPU knapsack solvers (gpu/knapsack/solve*.py) against brute force and the CPU solvers.

Tests marked ``kernels`` run on a GPU, or under the CUDA simulator in the child
pytest of :func:`test_kernels_under_cuda_simulator` (tiny instances, launch
sizes patched small below so that launches span several blocks, partial last
blocks and block-stride loops).  Tests marked ``gpu`` need a real GPU and check
full-size instances (the real data files and fresh random seeds) against the
known optima and the CPU solvers.
"""

from __future__ import annotations

import itertools
import secrets
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.engine import BackendUnavailableError
from core.knapsack import KP1, KP2, MCKP, MemoryBudgetError, SubsetSum, TimeLimitError, limits
from tests.gpu.conftest import SIMULATOR, run_kernels_under_simulator
from tests.shared_data import shared_file

kernels = pytest.mark.kernels
few = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Launch configuration of the knapsack kernels under the simulator.
SIMULATOR_KNAPSACK_CONFIG = {
    "KNAPSACK_THREADS_PER_BLOCK": 32,
    "KNAPSACK_MAX_BLOCKS": 3,
    "KNAPSACK_CELLS_PER_THREAD": 2,
    "KNAPSACK_WAVEFRONT_THREADS": 32,
    "KNAPSACK_WAVEFRONT_BLOCKS": 3,
    "KNAPSACK_WAVEFRONT_BATCH": 3,
    "KNAPSACK_BACKTRACK_THREADS": 8,
    "SUBSET_SUM_THREADS": 8,
    "SUBSET_SUM_POLL_ITEMS": 2,
    "MCKP_THREADS": 8,
    "MCKP_CELLS_PER_THREAD": 2,
    "MCKP_ITEM_CHUNK": 3,
}


@pytest.fixture(autouse=True)
def small_knapsack_launches(monkeypatch):
    from gpu import config

    monkeypatch.setattr(config, "KNAPSACK_HOST_FIRST", False)  # the kernels, not the host's quick lists
    if SIMULATOR:
        from gpu import config
        from gpu.knapsack import kernels_mitm

        for name, value in SIMULATOR_KNAPSACK_CONFIG.items():
            monkeypatch.setattr(config, name, value)
        monkeypatch.setattr(kernels_mitm, "THREADS", 32)
    yield


def configured(**values):
    """Set names of gpu.config inside a hypothesis example (no function-scoped fixtures there)."""
    return mock.patch.multiple("gpu.config", **values)


#: Forces one KP1/KP2 method: the meet in the middle, the row DP or the wavefront DP.
PATHS = {
    "mitm": dict(KNAPSACK_MITM_MAX_ITEMS=22, KNAPSACK_WAVEFRONT_MIN_ITEMS=10**9),
    "rows": dict(KNAPSACK_MITM_MAX_ITEMS=0, KNAPSACK_WAVEFRONT_MIN_ITEMS=10**9),
    "wavefront": dict(KNAPSACK_MITM_MAX_ITEMS=0, KNAPSACK_WAVEFRONT_MIN_ITEMS=1),
}


# --- independent slow references -------------------------------------------


def _subsets(n):
    """(2**n, n) 0/1 matrix of every subset."""
    return (np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1


def brute_kp(profits, weights_list, capacities):
    masks = _subsets(len(profits))
    fits = np.all([masks @ w <= c for w, c in zip(weights_list, capacities)], axis=0)
    return int((masks @ profits)[fits].max())


def brute_subset_sum(weights, capacity):
    sums = _subsets(len(weights)) @ weights
    return int(sums[sums <= capacity].max())


def brute_mckp(classes, capacity):
    best = None
    for choice in itertools.product(*[range(len(p)) for p, _ in classes]):
        weight = sum(int(w[t]) for (_, w), t in zip(classes, choice))
        value = sum(int(p[t]) for (p, _), t in zip(classes, choice))
        if weight <= capacity and (best is None or value > best):
            best = value
    return best


def assert_kp(problem_weights, profits, capacities, value, selected, expected):
    assert value == expected
    assert list(selected) == sorted(set(int(i) for i in selected))
    assert int(profits[selected].sum()) == value
    for w, c in zip(problem_weights, capacities):
        assert int(w[selected].sum()) <= c


# --- strategies --------------------------------------------------------------

small = st.integers(0, 30)


@st.composite
def kp1_problems(draw, max_items=8):
    n = draw(st.integers(1, max_items))
    profits = draw(st.lists(small, min_size=n, max_size=n))
    weights = draw(st.lists(st.integers(0, 60), min_size=n, max_size=n))
    capacity = draw(st.integers(0, max(1, sum(weights))))
    return KP1(profits, weights, capacity)


@st.composite
def kp2_problems(draw, max_items=6):
    n = draw(st.integers(1, max_items))
    lists = [draw(st.lists(bound, min_size=n, max_size=n)) for bound in (small, st.integers(0, 9), st.integers(0, 50))]
    return KP2(*lists, draw(st.integers(0, 25)), draw(st.integers(0, 120)))


# --- kernels: tiny cases with known answers ---------------------------------


@kernels
def test_kp1_textbook_case():
    from gpu.knapsack.solve import solve_kp1

    value, selected, _ = solve_kp1(KP1([60, 100, 120], [10, 20, 30], 50))
    assert value == 220 and selected.tolist() == [1, 2]


@kernels
def test_kp2_hand_made_case():
    from gpu.knapsack.solve import solve_kp2

    # Items 0 and 2 fit both capacities (5 + 4 <= 9, 2 + 6 <= 8) and are worth 13;
    # item 1 is the most profitable but blocks both others.
    value, selected, _ = solve_kp2(KP2([6, 10, 7], [5, 6, 4], [2, 7, 6], 9, 8))
    assert value == 13 and selected.tolist() == [0, 2]


@kernels
def test_subset_sum_hand_made_cases():
    from gpu.knapsack.solve import solve_subset_sum

    assert solve_subset_sum(SubsetSum([3, 5, 9], 16))[0] == 14
    assert solve_subset_sum(SubsetSum([10, 20, 30], 45))[0] == 40  # gcd 10
    assert solve_subset_sum(SubsetSum([7, 8], 100))[0] == 15  # all fit
    assert solve_subset_sum(SubsetSum([70, 80], 5))[0] == 0  # none fits


@kernels
def test_mckp_hand_made_case():
    from gpu.knapsack.solve import solve_mckp

    classes = [([3, 8, 9], [1, 5, 9]), ([4, 6], [2, 3])]
    # capacity 8: (8 from class 0 at weight 5) + (6 at weight 3) = 14 exactly fills it
    value, selected, _ = solve_mckp(MCKP(classes, 8))
    assert value == 14 and selected.tolist() == [1, 1]


# --- kernels: random instances against brute force --------------------------


@kernels
@few
@given(kp1_problems(), st.sampled_from(sorted(PATHS)))
def test_kp1_matches_brute_force(problem, path):
    from gpu.knapsack import solve as knapsack

    with configured(**PATHS[path]):
        value, selected, _ = knapsack.solve_kp1(problem)
    expected = brute_kp(problem.profits, [problem.weights], [problem.capacity])
    assert_kp([problem.weights], problem.profits, [problem.capacity], value, selected, expected)


@kernels
@few
@given(st.lists(kp2_problems(), min_size=1, max_size=4), st.integers(1, 3), st.sampled_from([0, 3, 22]))
def test_kp2_batch_matches_brute_force(problems, items_per_step, mitm_max_items):
    from gpu.knapsack import solve as knapsack

    # mitm_max_items 3 splits a batch between the meet in the middle and the DP
    with configured(KNAPSACK_ITEMS_PER_STEP=items_per_step, KNAPSACK_MITM_MAX_ITEMS=mitm_max_items):
        results = knapsack.solve_kp2_batch(problems)
    for q, (value, selected, _) in zip(problems, results):
        weights, caps = [q.weights1, q.weights2], [q.capacity1, q.capacity2]
        assert_kp(weights, q.profits, caps, value, selected, brute_kp(q.profits, weights, caps))


@kernels
@few
@given(st.lists(st.integers(0, 45), min_size=1, max_size=9), st.integers(1, 3), st.floats(0, 1.1),
       st.sampled_from(["bitset", "gvector"]), st.booleans(), st.booleans())
def test_subset_sum_matches_brute_force(raw, scale, fraction, method, trivial_checks, persistent):
    from gpu.knapsack import subset_sum as ssh

    weights = np.array(raw, dtype=np.int64) * scale
    capacity = int(fraction * weights.sum())
    reduced = ssh.reduce_instance(weights, capacity, trivial_checks)
    if isinstance(reduced, tuple):
        value, selected = reduced
    else:
        value, selected, _ = ssh.solve_plan(reduced, method, 10**9, persistent=persistent)
    assert value == brute_subset_sum(weights, capacity) == int(weights[selected].sum())
    assert len(set(selected.tolist())) == len(selected)


@st.composite
def mckp_problems(draw):
    sizes = draw(st.lists(st.integers(1, 5), min_size=1, max_size=3))
    classes = [(draw(st.lists(small, min_size=s, max_size=s)),
                draw(st.lists(st.integers(0, 40), min_size=s, max_size=s)))
               for s in sizes]
    lightest = sum(min(w) for _, w in classes)
    return MCKP(classes, lightest + draw(st.integers(0, 60)))


@kernels
@few
@given(mckp_problems(), st.booleans(), st.booleans(), st.booleans())
def test_mckp_matches_brute_force(problem, prune, staged, int64_cells):
    from gpu import config
    from gpu.knapsack import mckp as knapsack_mckp

    previous = config.MCKP_ROW_SHARED_BYTES
    config.MCKP_ROW_SHARED_BYTES = 10**6 if staged else 0
    try:
        dtype = np.dtype(np.int64 if int64_cells else np.int32)
        value, selected = knapsack_mckp.solve(problem.classes, problem.capacity, 10**9, dtype, prune)
    finally:
        config.MCKP_ROW_SHARED_BYTES = previous
    assert value == brute_mckp(problem.classes, problem.capacity)
    assert sum(int(p[t]) for (p, _), t in zip(problem.classes, selected)) == value
    assert sum(int(w[t]) for (_, w), t in zip(problem.classes, selected)) <= problem.capacity


@kernels
def test_results_match_the_cpu_solvers():
    from core.knapsack import solve
    from gpu.knapsack import solve as knapsack

    rng = np.random.default_rng(7)
    kp1 = KP1(rng.integers(1, 50, 14), rng.integers(1, 40, 14), 120)
    kp2 = KP2(rng.integers(1, 50, 7), rng.integers(1, 9, 7), rng.integers(1, 30, 7), 20, 70)
    ss = SubsetSum(rng.integers(1, 200, 12) * 2, 701)
    mckp = MCKP([(rng.integers(1, 40, 4), rng.integers(1, 30, 4)) for _ in range(3)], 50)
    pairs = [(knapsack.solve_kp1, kp1), (knapsack.solve_kp2, kp2), (knapsack.solve_subset_sum, ss),
             (knapsack.solve_mckp, mckp)]
    for gpu_solve, problem in pairs:
        assert gpu_solve(problem)[0] == solve(problem, backend="cpu").value


@kernels
@pytest.mark.parametrize("path", sorted(PATHS))
def test_weights_with_a_common_factor_need_no_more_memory_than_without(path):
    # Weights in units of 2**40: the DP over the raw capacities would need terabytes;
    # divided by the weights' gcd (as on the CPU) it is tiny, with the same optimum.
    from core.knapsack import solve, solve_many

    unit = 2**40
    rng = np.random.default_rng(5)
    weights = rng.integers(1, 20, 9) * unit
    kp1 = KP1(rng.integers(0, 50, 9), weights, int(weights.sum()) // 2 + 17)
    kp2 = [KP2(rng.integers(0, 50, 7), rng.integers(1, 9, 7) * unit, rng.integers(1, 30, 7) * 3, 20 * unit, 70)
           for _ in range(3)]
    mckp = MCKP([(rng.integers(0, 40, 4), rng.integers(1, 30, 4) * unit) for _ in range(3)], 50 * unit + 3)
    with configured(**PATHS[path]):
        for problem in (kp1, mckp):
            assert solve(problem, backend="gpu").value == solve(problem, backend="cpu").value
        gpu_values = [s.value for s in solve_many(kp2, backend="gpu")]
    assert gpu_values == [s.value for s in solve_many(kp2, backend="cpu")]


# --- kernels: memory budgets --------------------------------------------------


@kernels
def test_memory_budget_refusals_name_the_bytes_needed():
    from gpu.knapsack import solve as knapsack

    rng = np.random.default_rng(5)
    weights = rng.integers(1, 100, 40)
    big = KP1(rng.integers(1, 100, 40), weights, int(weights.sum()) // 2)  # the host's lists need more too
    with pytest.raises(MemoryBudgetError, match="needs .* bytes but the memory budget is 1,000 bytes"):
        knapsack.solve_kp1(big, memory_budget_bytes=1000)
    with pytest.raises(MemoryBudgetError):
        knapsack.solve_subset_sum(SubsetSum([3, 5, 1000], 1001), memory_budget_bytes=100)
    rng = np.random.default_rng(6)
    classes = [(rng.integers(1, 100, 4), rng.integers(1, 100, 4)) for _ in range(8)]
    with pytest.raises(MemoryBudgetError, match="MCKP on the GPU"):  # nor the host's lists within 100 bytes
        knapsack.solve_mckp(MCKP(classes, 300), memory_budget_bytes=100)
    with pytest.raises(MemoryBudgetError, match="meet in the middle"):
        knapsack.solve_kp2(KP2([3, 4], [1, 2], [2, 1], 3, 3), memory_budget_bytes=10)
    with pytest.raises(ValueError, match="memory_budget_bytes"):
        knapsack.solve_kp1(big, memory_budget_bytes=-5)


@kernels
def test_a_batch_over_budget_runs_in_parts(monkeypatch):
    from gpu import config
    from gpu.knapsack import rows as knapsack_rows
    from gpu.knapsack import solve as knapsack
    from gpu.knapsack.plan import plan_batch

    monkeypatch.setattr(config, "KNAPSACK_MITM_MAX_ITEMS", 0)
    rng = np.random.default_rng(3)
    problems = [KP2(rng.integers(1, 20, 5), rng.integers(0, 6, 5), rng.integers(0, 30, 5), 10, 60) for _ in range(6)]
    singles = [plan_batch([q.profits], [q.weights1], [q.weights2], [10], [60], 2, 32) for q in problems]
    budget = 2 * max(knapsack_rows.device_bytes(plan, 8) for plan in singles)  # one or two instances, not six
    whole_plan = plan_batch([q.profits for q in problems], [q.weights1 for q in problems],
                            [q.weights2 for q in problems], [10] * 6, [60] * 6, 2, 32)
    assert knapsack_rows.device_bytes(whole_plan, 4) > budget
    parts = knapsack.solve_kp2_batch(problems, memory_budget_bytes=budget)
    whole = knapsack.solve_kp2_batch(problems)
    assert [r.value for r in parts] == [r.value for r in whole]


@kernels
def test_the_launch_loops_stop_at_the_time_limit(monkeypatch):
    import time

    from gpu import config
    from gpu.knapsack import solve as knapsack

    monkeypatch.setattr(config, "KNAPSACK_POLL_LAUNCHES", 1)
    monkeypatch.setattr(config, "KNAPSACK_MITM_MAX_ITEMS", 0)  # the row DP: a launch per step
    monkeypatch.setattr(config, "SUBSET_SUM_PERSISTENT", False)  # a launch per item
    rng = np.random.default_rng(9)
    kp2 = KP2(rng.integers(1, 20, 5), rng.integers(1, 5, 5), rng.integers(1, 5, 5), 6, 6)
    subset = SubsetSum(rng.integers(10, 99, 30) * 2 + 1, 401)
    mckp = MCKP([(rng.integers(1, 50, 4), rng.integers(1, 20, 4)) for _ in range(10)], 60)
    for call, what in ((lambda: knapsack.solve_kp2(kp2), "the KP dynamic program on the GPU"),
                       (lambda: knapsack.solve_subset_sum(subset), "subset sum on the GPU"),
                       (lambda: knapsack.solve_mckp(mckp), "MCKP on the GPU")):
        with limits.time_limit(0.01):
            time.sleep(0.05)
            with pytest.raises(TimeLimitError, match=f"^{what} stopped .* after 1 of [0-9]+ launches done"):
                call()
    monkeypatch.setattr(limits, "GPU_DP_CELLS_PER_S", 1.0)  # the one-launch methods are estimated first
    monkeypatch.setattr(config, "KNAPSACK_WAVEFRONT_MIN_ITEMS", 1)
    monkeypatch.setattr(config, "SUBSET_SUM_PERSISTENT", True)
    with limits.time_limit(60):
        with pytest.raises(TimeLimitError, match="KP1 by the wavefront on the GPU .*refused before starting"):
            knapsack.solve_kp1(KP1(rng.integers(1, 20, 30), rng.integers(1, 9, 30), 100))
        with pytest.raises(TimeLimitError, match="subset sum by one bitset launch on the GPU .*refused before"):
            knapsack.solve_subset_sum(subset)


@kernels
def test_kp1_and_mckp_try_the_host_quick_lists_first_by_default(monkeypatch):
    from gpu import config
    from gpu.knapsack import solve as knapsack

    problem = KP1([60, 100, 120, 30, 45], [10, 20, 30, 7, 9], 50)
    on_gpu = knapsack.solve_kp1(problem)  # the kernel tests' setting: the GPU's own methods
    monkeypatch.setattr(config, "KNAPSACK_HOST_FIRST", True)
    first = knapsack.solve_kp1(problem)
    assert first.method.startswith("host-") and not on_gpu.method.startswith("host-")
    assert first.value == on_gpu.value
    monkeypatch.setattr(config, "KNAPSACK_HOST_FIRST", False)
    classes = MCKP([([3, 8, 9], [1, 5, 9]), ([4, 6], [2, 3]), ([2, 7, 5], [1, 4, 6])], 12)
    on_gpu = knapsack.solve_mckp(classes)
    monkeypatch.setattr(config, "KNAPSACK_HOST_FIRST", True)
    first = knapsack.solve_mckp(classes)
    assert first.method.startswith("host-") and on_gpu.method == "dp" and first.value == on_gpu.value


@kernels
def test_instances_too_large_for_a_device_dp_are_solved_by_the_host_state_lists():
    from core.knapsack import kp1, kp2, mckp, subset_sum
    from gpu.knapsack import solve as knapsack

    rng = np.random.default_rng(11)
    weights = rng.integers(10**10, 10**11, 40)
    big_kp1 = KP1(rng.integers(1, 1000, 40), weights, int(weights.sum()) // 2)  # a DP of 10^12 cells
    big_subset = SubsetSum(weights[:24], int(weights[:24].sum()) // 2)
    classes = [(rng.integers(1, 1000, 3), rng.integers(10**10, 10**11, 3)) for _ in range(12)]
    big_mckp = MCKP(classes, sum(int(w.min()) + int(w.max()) for _, w in classes) // 2)
    w1, w2 = rng.integers(10**9, 10**10, 30), rng.integers(10**9, 10**10, 30)
    big_kp2 = KP2(rng.integers(1, 1000, 30), w1, w2, int(w1.sum()) // 2, int(w2.sum()) // 2)
    small_kp2 = KP2([6, 10, 7], [5, 6, 4], [2, 7, 6], 9, 8)
    for gpu_solver, host_solver, problem in ((knapsack.solve_kp1, kp1.solve_kp1, big_kp1),
                                             (knapsack.solve_subset_sum, subset_sum.solve_subset_sum, big_subset),
                                             (knapsack.solve_mckp, mckp.solve_mckp, big_mckp),
                                             (knapsack.solve_kp2, kp2.solve_kp2, big_kp2)):
        result, host = gpu_solver(problem), host_solver(problem)
        assert result.method == f"host-{host.method}" and result.value == host.value
    small, big = knapsack.solve_kp2_batch([small_kp2, big_kp2])  # the batch goes on around the large one
    assert small.value == 13 and not small.method.startswith("host") and big.method.startswith("host-")
    with pytest.raises(MemoryBudgetError, match="on the GPU"):  # where the host refuses too: the GPU's refusal
        knapsack.solve_kp1(big_kp1, memory_budget_bytes=1000)


# --- no kernels: host logic and errors ---------------------------------------


def test_kernels_under_cuda_simulator():
    run_kernels_under_simulator(__file__)


def test_without_a_gpu_the_functions_raise(monkeypatch):
    from gpu.knapsack import solve as knapsack

    monkeypatch.setattr(knapsack, "gpu_available", lambda: False)
    with pytest.raises(BackendUnavailableError):
        knapsack.solve_kp1(KP1([1], [1], 1))
    with pytest.raises(TypeError, match="problem must be a KP1"):
        knapsack.solve_kp1(SubsetSum([1], 1))
    with pytest.raises(TypeError, match=r"problems\[1\] must be a KP2"):
        knapsack.solve_kp2_batch([KP2([1], [1], [1], 1, 1), KP1([1], [1], 1)])


@pytest.mark.parametrize("name", ["solve_kp1", "solve_kp2", "solve_kp2_batch", "solve_subset_sum", "solve_mckp"])
def test_cpu_and_gpu_twins_share_one_signature(name):
    import inspect

    import gpu.knapsack
    from core.knapsack import dispatch

    gpu_twin, cpu_twin = getattr(gpu.knapsack, name), getattr(dispatch._CPU, name)
    common = list(inspect.signature(gpu_twin).parameters.values())
    assert list(inspect.signature(cpu_twin).parameters.values())[: len(common)] == common
    assert [p.name for p in common][1:] == ["memory_budget_bytes"] and common[1].default is None
    assert inspect.signature(gpu_twin).return_annotation == inspect.signature(cpu_twin).return_annotation


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), min_size=1, max_size=12))
def test_prune_dominated_keeps_exactly_the_undominated_items(items):
    from gpu.knapsack.mckp import prune_dominated

    profits = np.array([p for p, _ in items], dtype=np.int64)
    weights = np.array([w for _, w in items], dtype=np.int64)
    kept = set(prune_dominated(profits, weights).tolist())
    for i, (p, w) in enumerate(items):
        beaten = [j for j, (q, v) in enumerate(items) if j != i and v <= w and q >= p and (v, -q, j) < (w, -p, i)]
        assert (i in kept) == (not beaten)


def test_subset_sum_reductions():
    from gpu.knapsack.subset_sum import reduce_instance

    value, selected = reduce_instance(np.array([4, 6]), 100)
    assert value == 10 and selected.tolist() == [0, 1]
    value, selected = reduce_instance(np.array([50, 7]), 5)
    assert value == 0 and selected.size == 0
    # gcd 3, greedy hits 9 exactly: the trivial-solution check answers without a DP
    value, selected = reduce_instance(np.array([6, 3, 9, 12]), 10)
    assert value == 9 and selected.tolist() == [2]
    # capacity far above half the total: the complement range is the short one
    plan = reduce_instance(np.array([40, 30, 20, 11]), 90, trivial_checks=False)
    assert plan.complement and plan.low == 11 and plan.high < 90


# --- real GPU, full sizes -----------------------------------------------------


def _pisinger(name):
    from core.knapsack.io import read_pisinger

    (instance,) = read_pisinger(shared_file(f"knapsack/pisinger/large_scale/{name}"))
    return instance


@pytest.mark.gpu
@pytest.mark.parametrize("name", [f"knapPI_{k}_{n}_1000_1" for k in (1, 2, 3) for n in (1000, 10000)])
@pytest.mark.parametrize("wavefront", [True, False])
def test_pisinger_large_scale_optima(name, wavefront, monkeypatch):
    from gpu import config
    from gpu.knapsack import solve as knapsack

    monkeypatch.setattr(config, "KNAPSACK_WAVEFRONT_MIN_ITEMS", 1 if wavefront else 10**9)
    instance = _pisinger(name)
    value, selected, _ = knapsack.solve_kp1(instance.problem)
    assert value == instance.optimum


@pytest.mark.gpu
@pytest.mark.parametrize("ring_rows", [0, 5])
def test_random_kp1_matches_the_cpu(ring_rows, monkeypatch):
    from core.knapsack import solve
    from gpu import config
    from gpu.knapsack import solve as knapsack

    monkeypatch.setattr(config, "KNAPSACK_WAVEFRONT_RING_ROWS", ring_rows)
    monkeypatch.setattr(config, "KNAPSACK_WAVEFRONT_BATCH", 4 if ring_rows else config.KNAPSACK_WAVEFRONT_BATCH)
    seed = secrets.randbits(32)
    rng = np.random.default_rng(seed)
    for n, r in ((3000, 100), (2000, 5000)):
        w = rng.integers(1, r, n)
        problem = KP1(w + rng.integers(0, r // 10 + 1, n), w, int(w.sum() // 3))
        assert knapsack.solve_kp1(problem)[0] == solve(problem, backend="cpu").value, f"seed {seed}"


@pytest.mark.gpu
@pytest.mark.parametrize("mitm_max_items", [22, 0])
def test_msb_batch_matches_the_cpu(mitm_max_items, monkeypatch):
    from core.knapsack import solve_many
    from core.knapsack.io import read_ins2d
    from gpu import config
    from gpu.knapsack import solve as knapsack

    monkeypatch.setattr(config, "KNAPSACK_MITM_MAX_ITEMS", mitm_max_items)
    folder = shared_file("knapsack/msb630")
    files = sorted(folder.glob("*.ins2D"))
    problems = [read_ins2d(f)[0].problem for f in files]
    gpu_values = [r.value for r in knapsack.solve_kp2_batch(problems)]
    rng = np.random.default_rng(secrets.randbits(32))
    sample = rng.choice(len(problems), 40, replace=False)
    cpu = solve_many([problems[k] for k in sample], backend="cpu")
    assert [gpu_values[k] for k in sample] == [s.value for s in cpu]


@pytest.mark.gpu
def test_mitm_with_22_items_matches_the_cpu():
    from core.knapsack import solve
    from gpu.knapsack import solve as knapsack

    rng = np.random.default_rng(secrets.randbits(32))
    problems = [KP2(rng.integers(1, 10**6, 22), rng.integers(1, 1000, 22), rng.integers(1, 1000, 22),
                    int(rng.integers(2000, 9000)), int(rng.integers(2000, 9000))) for _ in range(20)]
    results = knapsack.solve_kp2_batch(problems)
    assert [r.value for r in results] == [solve(q, backend="cpu").value for q in problems]


@pytest.mark.gpu
def test_generated_subset_sum_and_mckp_match_the_cpu():
    from core.knapsack import solve
    from core.knapsack.generators import curtis, suri
    from gpu import config
    from gpu.knapsack import solve as knapsack

    seed = secrets.randbits(16)
    for kind in ("half", "p", "uniform"):
        problem = curtis(kind, 300, seed=seed)
        for method in ("bitset", "gvector"):
            config.SUBSET_SUM_METHOD, previous = method, config.SUBSET_SUM_METHOD
            try:
                assert knapsack.solve_subset_sum(problem)[0] == solve(problem, backend="cpu").value, (kind, seed)
            finally:
                config.SUBSET_SUM_METHOD = previous
    for set_number in (1, 2, 3):
        problem = suri(set_number, seed=seed)
        assert knapsack.solve_mckp(problem)[0] == solve(problem, backend="cpu").value, (set_number, seed)
