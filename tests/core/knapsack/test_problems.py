"""Problem classes: validation, copies, the public contract of core.knapsack."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from core.knapsack import KP1, KP2, MCKP, KnapsackSolution, MemoryBudgetError, SubsetSum, solve, solve_many
from core.knapsack.problems import problem_kind
from core.memory import available_host_bytes, default_budget_bytes, resolve_budget


def test_contract_example():
    sol = solve(KP1([60, 100, 120], [10, 20, 30], 50), backend="cpu")
    assert sol.value == 220
    assert sol.selected.tolist() == [1, 2]
    assert (sol.backend, sol.method) == ("cpu", "dp")
    assert sol.time_ms >= 0
    sols = solve_many([KP2([5, 4, 3], [2, 3, 1], [3, 1, 2], 4, 4)], backend="cpu")
    assert [s.value for s in sols] == [7]  # items 1 and 2: weights (4, 3)


def test_arrays_are_read_only_int64_copies():
    profits = np.array([3, 4], dtype=np.int32)
    problem = KP1(profits, [1.0, 2.0], np.int64(3))
    assert problem.profits.dtype == np.int64 and problem.weights.dtype == np.int64
    assert isinstance(problem.capacity, int)
    assert not problem.profits.flags.writeable
    profits[0] = 99
    assert problem.profits[0] == 3


@pytest.mark.parametrize("problem", [KP1([3, 4], [1, 2], 2), KP2([3, 4], [1, 2], [2, 1], 2, 2),
                                     SubsetSum([3, 4], 5), MCKP([([1, 2], [3, 4]), ([5], [1])], 5)])
def test_an_unpickled_or_copied_problem_keeps_its_arrays_read_only(problem):
    # numpy restores arrays writable: a problem sent to the panel's worker could be changed after its
    # checks, and the compiled solvers saw another type there (each function loaded twice)
    for back in (pickle.loads(pickle.dumps(problem)), copy.deepcopy(problem)):
        arrays = [a for pair in back.classes for a in pair] if problem_kind(back) == "mckp" else [
            v for v in vars(back).values() if isinstance(v, np.ndarray)]
        assert arrays and not any(a.flags.writeable for a in arrays)
        assert vars(back).keys() == vars(problem).keys() and solve(back, "cpu").value == solve(problem, "cpu").value


def test_an_unpickled_problem_runs_the_compiled_code_of_the_original():
    from core.knapsack import kp1_first
    from core.knapsack.generators import pisinger

    problem = pisinger("strongly", 200, 1000, 50, 100, seed=3)
    solve(problem, "cpu")
    loaded = len(kp1_first.first_pass.signatures)
    assert solve(pickle.loads(pickle.dumps(problem)), "cpu").value == solve(problem, "cpu").value
    assert len(kp1_first.first_pass.signatures) == loaded


@pytest.mark.parametrize(
    "args, match",
    [
        (([1, -2], [3, 4], 5), "profits must be non-negative"),
        (([1, 2], [3, -4], 5), "weights must be non-negative"),
        (([1.5, 2], [3, 4], 5), "profits must hold integers"),
        (([1, 2], [3, np.nan], 5), "weights must hold integers"),
        ((["a"], [1], 1), "profits must hold integers"),
        (([True, False], [1, 1], 1), "profits must hold integers"),
        (([True, 6, 3], [4, 5, 2], 10), "profits must hold integers; got a boolean"),  # (read as [1, 6, 3])
        (([1, 6], [4, np.True_], 10), "weights must hold integers; got a boolean"),
        (([1, 2**70], [1, 1], 1), r"profits values must be below 2\*\*62"),  # not "got dtype object"
        (([], [], 3), "profits must not be empty"),
        (([1, 2], [3], 3), "equal lengths"),
        (([[1, 2]], [[1, 2]], 3), "profits must be 1-D"),
        (([1, 2], [3, 4], -1), "capacity must be in"),
        (([1, 2], [3, 4], 2.5), "capacity must be a non-negative integer"),
        (([1, 2], [3, 4], True), "capacity must be a non-negative integer"),
        (([1, 2], [3, 4], "5"), "capacity must be a non-negative integer"),
        (([2**62, 1], [1, 1], 1), "below 2\\*\\*62"),
    ],
)
def test_kp1_validation(args, match):
    with pytest.raises(ValueError, match=match):
        KP1(*args)


def test_kp2_subset_sum_validation():
    with pytest.raises(ValueError, match="weights2 has 1"):
        KP2([1, 2], [1, 2], [1], 3, 3)
    with pytest.raises(ValueError, match="capacity2"):
        KP2([1], [1], [1], 3, -3)
    with pytest.raises(ValueError, match="weights must not be empty"):
        SubsetSum([], 3)
    with pytest.raises(ValueError, match="non-negative"):
        SubsetSum([3, -1], 3)


@pytest.mark.parametrize(
    "classes, capacity, match",
    [
        ([], 5, "classes must not be empty"),
        ([([1, 2], [1])], 5, "has 2 profits but 1 weights"),
        ([([], [])], 5, "classes\\[0\\] profits must not be empty"),
        ([([1], [1]), ([1], [-1])], 5, "classes\\[1\\] weights must be non-negative"),
        ([(1, 2, 3)], 5, "pair"),
        (7, 5, "sequence of"),
        ([([1, 2], [5, 6]), ([3], [7])], 11, "infeasible"),
    ],
)
def test_mckp_validation(classes, capacity, match):
    with pytest.raises(ValueError, match=match):
        MCKP(classes, capacity)


def test_mckp_keeps_classes_as_tuples_of_arrays():
    problem = MCKP([([1, 2], [3, 4]), ([5], [0])], 3)
    assert problem.n_classes == 2 and problem.min_weight == 3
    p, w = problem.classes[1]
    assert p.dtype == np.int64 and w.tolist() == [0]


def test_problem_kind_rejects_other_objects():
    assert problem_kind(SubsetSum([1], 1)) == "subset-sum"
    with pytest.raises(TypeError, match="KP1, KP2, SubsetSum or MCKP"):
        solve([1, 2, 3], backend="cpu")


def test_bad_backend_and_budget():
    problem = KP1([1], [1], 1)
    with pytest.raises(ValueError, match="backend must be one of"):
        solve(problem, backend="tpu")
    for bad in (0, -5, 1.5, True, "10"):
        with pytest.raises(ValueError, match="memory_budget_bytes"):
            solve(problem, backend="cpu", memory_budget_bytes=bad)


def test_memory_budget_defaults():
    assert 0 < default_budget_bytes() <= available_host_bytes()
    assert resolve_budget(None) > 0
    assert resolve_budget(np.int64(1000)) == 1000
    # past 2^62 bytes the same as 2^62 (2^64 stopped the compiled KP1 code with numba's TypingError)
    assert resolve_budget(2**64) == 2**62
    assert solve(KP1([1, 2], [1, 2], 2), backend="cpu", memory_budget_bytes=2**64).value == 2


def test_memory_budget_error_says_needed_and_budget():
    err = MemoryBudgetError("KP1", 2048, 1024)
    assert isinstance(err, ValueError)
    assert "2,048 bytes" in str(err) and "1,024 bytes" in str(err)
    assert (err.needed_bytes, err.budget_bytes) == (2048, 1024)


def test_solution_is_a_frozen_dataclass():
    sol = KnapsackSolution(3, np.array([0]), "cpu", "dp", 1.0)
    with pytest.raises(AttributeError):
        sol.value = 4
