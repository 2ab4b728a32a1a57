"""Backend dispatch of solve / solve_many: gpu.knapsack imported lazily, KP2 batched, results checked."""

from __future__ import annotations

import types

import numpy as np
import pytest

from core.engine import BackendUnavailableError, gpu_available
from core.knapsack import KP1, KP2, MCKP, SolverResult, SubsetSum, solve, solve_many


class FakeGpu(types.ModuleType):
    """Stands in for gpu.knapsack: answers with the CPU solvers and records the calls."""

    def __init__(self):
        super().__init__("gpu.knapsack")
        self.calls = []

    def _cpu(self, name, problem, budget):
        self.calls.append((name, budget))
        sol = solve(problem, backend="cpu")
        return SolverResult(sol.value, sol.selected, f"fake-{sol.method}")

    def solve_kp1(self, problem, memory_budget_bytes=None):
        return self._cpu("solve_kp1", problem, memory_budget_bytes)

    def solve_kp2(self, problem, memory_budget_bytes=None):
        return self._cpu("solve_kp2", problem, memory_budget_bytes)

    def solve_subset_sum(self, problem, memory_budget_bytes=None):
        return self._cpu("solve_subset_sum", problem, memory_budget_bytes)

    def solve_mckp(self, problem, memory_budget_bytes=None):
        return self._cpu("solve_mckp", problem, memory_budget_bytes)

    def solve_kp2_batch(self, problems, memory_budget_bytes=None):
        self.calls.append(("solve_kp2_batch", len(problems)))
        sols = [solve(p, backend="cpu") for p in problems]
        return [SolverResult(s.value, s.selected, "fake-batch") for s in sols]


@pytest.fixture
def fake_gpu(monkeypatch):
    import core.engine

    fake = FakeGpu()
    monkeypatch.setattr(core.engine, "gpu_package", lambda name: fake)
    monkeypatch.setattr(core.engine, "resolve_backend", lambda backend: "cpu" if backend == "cpu" else "gpu")
    return fake


PROBLEMS = [
    (KP1([60, 100, 120], [10, 20, 30], 50), "solve_kp1"),
    (KP2([5, 4, 3], [2, 3, 1], [3, 1, 2], 4, 4), "solve_kp2"),
    (SubsetSum([3, 5, 7], 11), "solve_subset_sum"),
    (MCKP([([1, 5], [1, 3]), ([2, 4], [2, 5])], 6), "solve_mckp"),
]


@pytest.mark.parametrize("problem, function", PROBLEMS)
def test_gpu_dispatch(fake_gpu, problem, function):
    sol = solve(problem, backend="gpu", memory_budget_bytes=12345)
    assert fake_gpu.calls == [(function, 12345)]
    assert sol.backend == "gpu" and sol.value == solve(problem, backend="cpu").value
    assert sol.method.startswith("fake-")  # the GPU's own method name is reported


def test_gpu_default_budget_is_left_to_the_gpu(fake_gpu):
    solve(KP1([1], [1], 1), backend="auto")
    assert fake_gpu.calls == [("solve_kp1", None)]


def test_solve_many_batches_all_kp2_in_one_gpu_call(fake_gpu):
    problems = [KP2([5, 4, 3], [2, 3, 1], [3, 1, 2], 4, 4), KP1([3], [1], 1), KP2([2, 2], [1, 1], [1, 1], 2, 2)]
    sols = solve_many(problems, backend="gpu")
    assert fake_gpu.calls == [("solve_kp2_batch", 2), ("solve_kp1", None)]
    assert [s.value for s in sols] == [7, 3, 4]
    assert sols[0].method == "fake-batch" and sols[0].time_ms == sols[2].time_ms


def answering(value, selected):
    """A stand-in GPU solver that returns a fixed (possibly wrong) answer."""
    return lambda problem, memory_budget_bytes=None: SolverResult(value, np.array(selected), "dp")


def test_inconsistent_gpu_result_is_caught(fake_gpu, monkeypatch):
    monkeypatch.setattr(fake_gpu, "solve_kp1", answering(999, [0]))
    with pytest.raises(RuntimeError, match="inconsistent solution"):
        solve(KP1([1, 2], [1, 1], 1), backend="gpu")
    monkeypatch.setattr(fake_gpu, "solve_kp1", answering(3, [0, 1]))
    with pytest.raises(RuntimeError, match="feasible: False"):
        solve(KP1([1, 2], [1, 1], 1), backend="gpu")
    monkeypatch.setattr(fake_gpu, "solve_mckp", answering(5, [1]))
    with pytest.raises(RuntimeError, match="inconsistent"):
        solve(MCKP([([1, 5], [1, 3]), ([2, 4], [2, 5])], 6), backend="gpu")


@pytest.mark.parametrize("selected", [[0, 2], [-1, 0], [3], [0, 1, 1, 7]])
def test_a_choice_outside_the_items_is_caught(fake_gpu, monkeypatch, selected):
    monkeypatch.setattr(fake_gpu, "solve_kp1", answering(3, selected))
    with pytest.raises(RuntimeError, match="worth None, feasible: False"):
        solve(KP1([1, 2], [1, 1], 2), backend="gpu")


def test_each_capacity_of_a_kp2_and_a_subset_sum_is_checked(fake_gpu, monkeypatch):
    monkeypatch.setattr(fake_gpu, "solve_kp2", answering(3, [0, 1]))
    with pytest.raises(RuntimeError, match="feasible: False"):  # the second capacity is 1
        solve(KP2([1, 2], [1, 1], [1, 1], 2, 1), backend="gpu")
    assert solve(KP2([1, 2], [1, 1], [1, 1], 2, 2), backend="gpu").value == 3
    monkeypatch.setattr(fake_gpu, "solve_subset_sum", answering(9, [0, 1]))
    with pytest.raises(RuntimeError, match="feasible: False"):
        solve(SubsetSum([4, 5], 8), backend="gpu")
    monkeypatch.setattr(fake_gpu, "solve_subset_sum", answering(9, [1, 0]))  # sorted first, then worth 9
    with pytest.raises(RuntimeError, match="worth 9, feasible: False"):
        solve(SubsetSum([4, 5], 8), backend="gpu")


def test_a_choice_is_returned_sorted_and_once_each(fake_gpu, monkeypatch):
    monkeypatch.setattr(fake_gpu, "solve_kp1", answering(7, [2, 0, 2, 0]))
    assert solve(KP1([3, 1, 4], [1, 1, 1], 2), backend="gpu").selected.tolist() == [0, 2]
    monkeypatch.setattr(fake_gpu, "solve_kp1", answering(0, []))
    assert solve(KP1([3, 1, 4], [5, 5, 5], 2), backend="gpu").selected.tolist() == []


@pytest.mark.skipif(gpu_available(), reason="a GPU (or the simulator) is available here")
def test_gpu_backend_without_gpu_is_a_clear_error():
    with pytest.raises(BackendUnavailableError, match="backend 'gpu'"):
        solve(KP1([1], [1], 1), backend="gpu")
    assert solve(KP1([1], [1], 1), backend="auto").backend == "cpu"
