"""Pisinger's hard classes 11-16, Jooken's instances: the generators and the reader."""

from __future__ import annotations

import numpy as np
import pytest

from core.knapsack.generators import jooken, pisinger_hard
from core.knapsack.io import KnapsackFormatError, read_instances
from core.knapsack.kp1 import solve_kp1


@pytest.mark.parametrize("klass", [11, 12, 13])
def test_spanner_items_are_multiples_of_two_spanner_items(klass):
    problem = pisinger_hard(klass, 500, 1000, 30, 100, seed=klass)
    pairs = {(p // np.gcd(p, w), w // np.gcd(p, w)) for p, w in zip(problem.profits.tolist(), problem.weights.tolist())}
    assert len(pairs) <= 2  # every item a (p_k, w_k), k one of two spanner items
    assert problem.weights.max() <= 10 * -(-1000 // 10)


def test_hard_class_formulas_and_capacity():
    r = 1000
    mstr, pceil, circle = (pisinger_hard(k, 400, r, 60, 100, seed=3) for k in (14, 15, 16))
    w = mstr.weights
    assert np.array_equal(mstr.profits, np.where(w % 6 == 0, w + 300, w + 200))
    assert np.array_equal(pceil.profits, 3 * -(-pceil.weights // 3))
    exact = 2 / 3 * np.sqrt(4.0 * r * r - (circle.weights - 2.0 * r) ** 2)
    assert np.all((circle.profits <= exact) & (exact < circle.profits + 1))
    assert mstr.capacity == 60 * int(w.sum()) // 101
    tiny = pisinger_hard(11, 3, r, 1, 100, seed=0)  # v sum(w) / (S + 1) below the heaviest item
    assert tiny.capacity == int(tiny.weights.max())


def test_jooken_groups():
    problem = jooken(1000, 10**10, 10, 0.1, 0.01, 100, seed=5)
    w, p = problem.weights, problem.profits
    for group in range(1, 10):
        base = 10**10 // 2**group + 10**8
        rows = slice(100 * (group - 1), 100 * group)
        assert np.all((w[rows] > base) & (w[rows] <= base + 100) & (p[rows] > base) & (p[rows] <= base + 100))
    assert np.all((w[900:] >= 1) & (w[900:] <= 100) & (p[900:] >= 1) & (p[900:] <= 100))
    assert problem.capacity == 10**10
    with pytest.raises(ValueError, match="last_fraction must be in"):
        jooken(10, 100, 2, 0.0, 0.1, 5)


def test_jooken_file_is_read_with_its_optimum(tmp_path):
    folder = tmp_path / "n_4_c_10_g_2_f_0.5_eps_0_s_5"
    folder.mkdir()
    (folder / "test.in").write_text("4\n0 6 5\n1 5 5\n2 3 4\n3 4 6\n10\n")
    (folder / "outp.out").write_text("11\n6 5\n5 5\n")
    (instance,) = read_instances(folder / "test.in")
    assert instance.name == folder.name and instance.optimum == 11
    assert instance.problem.profits.tolist() == [6, 5, 3, 4] and instance.problem.capacity == 10
    assert solve_kp1(instance.problem).value == 11
    (folder / "outp.out").write_text("Killed\n")  # combo did not finish: no optimum
    assert read_instances(folder / "test.in")[0].optimum is None


def test_jooken_file_errors_name_the_line(tmp_path):
    path = tmp_path / "bad.in"
    path.write_text("3\n0 6 5\n1 5\n2 3 4\n10\n")
    with pytest.raises(KnapsackFormatError, match=r"bad.in:3: expected 3 integers, got 2"):
        read_instances(path)
    path.write_text("2\n0 6 5\n1 5 5\n")
    with pytest.raises(KnapsackFormatError, match=r"bad.in:4: unexpected end of file"):
        read_instances(path)
