"""Instance files: readers on the real data (known optima reproduced), malformed files, JSON, generators.

The normal suite reproduces the optimum of every Pisinger csv block whose DP is
small (n * c <= 2e7: 228 of the 500 blocks), of every large-scale knapPI file
with n <= 1000 plus knapPI_3_10000_1000_1, checks every tenth MSB file and the
small class-A instances against OR-Tools.  LINESNAP_SLOW_TESTS=1 adds every
remaining block, file and instance (about a minute on a 2-core machine).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from core.knapsack import KP1, KP2, MCKP, SubsetSum, solve, solve_many
from core.knapsack.generators import CURTIS_KINDS, PISINGER_KINDS, SURI_SETS, curtis, pisinger, suri
from core.knapsack.io import (
    KnapsackFormatError,
    KnapsackInstance,
    read_instances,
    read_json,
    solution_to_dict,
    write_json,
)
from tests.knapsack_reference import check_kp_choice, ortools_kp
from tests.shared_data import shared_file

SLOW = os.environ.get("LINESNAP_SLOW_TESTS") == "1"
needs_slow = pytest.mark.skipif(not SLOW, reason="set LINESNAP_SLOW_TESTS=1 for the full real-data check")
LARGE = "knapsack/pisinger/large_scale"
CSV_FILES = [
    "knapsack/pisinger/hardinstances_pisinger/knapPI_11_20_1000.csv",
    "knapsack/pisinger/smallcoeff_pisinger/knapPI_1_50_1000.csv",
    "knapsack/pisinger/smallcoeff_pisinger/knapPI_9_50_1000.csv",
    "knapsack/pisinger/largecoeff_pisinger/knapPI_1_50_100000.csv",
    "knapsack/pisinger/largecoeff_pisinger/knapPI_1_100_100000.csv",
]


def _kp2_reference(problem: KP2) -> int:
    weights = [problem.weights1, problem.weights2]
    return ortools_kp(problem.profits, weights, [problem.capacity1, problem.capacity2])


# --- real data --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [f"knapPI_{k}_{n}_1000_1" for k in (1, 2, 3) for n in (100, 200, 500, 1000)]
                         + ["knapPI_3_10000_1000_1"])
def test_large_scale_optimum(name):
    (instance,) = read_instances(shared_file(f"{LARGE}/{name}"))
    assert instance.optimum is not None
    assert instance.problem.profits[instance.known_choice].sum() == instance.optimum  # the file's own vector
    sol = solve(instance.problem, backend="cpu")
    assert sol.value == instance.optimum
    check_kp_choice(instance.problem, sol)


@needs_slow
@pytest.mark.parametrize("name", [f"knapPI_{k}_{n}_1000_1" for k in (1, 2, 3) for n in (2000, 5000, 10000)])
def test_large_scale_optimum_all(name):
    (instance,) = read_instances(shared_file(f"{LARGE}/{name}"))
    assert solve(instance.problem, backend="cpu").value == instance.optimum


def _csv_blocks(path, small: bool):
    instances = read_instances(shared_file(path))
    assert len(instances) == 100 and all(i.name.startswith("knapPI_") for i in instances)
    return [i for i in instances if (i.problem.n_items * i.problem.capacity <= 2e7) == small]


@pytest.mark.parametrize("path", CSV_FILES)
def test_csv_block_optima(path):
    for instance in _csv_blocks(path, small=True):
        assert instance.problem.profits[instance.known_choice].sum() == instance.optimum, instance.name
        sol = solve(instance.problem, backend="cpu")
        assert sol.value == instance.optimum, instance.name
        check_kp_choice(instance.problem, sol)


@needs_slow
@pytest.mark.parametrize("path", CSV_FILES)
def test_csv_block_optima_large_capacities(path):
    for instance in _csv_blocks(path, small=False):
        assert solve(instance.problem, backend="cpu").value == instance.optimum, instance.name


def _msb(every: int):
    folder = shared_file("knapsack/msb630")
    files = sorted(folder.glob("*.ins2D"))
    assert len(files) == 630
    return [read_instances(path)[0] for path in files[::every]]


@pytest.mark.parametrize("every", [10, pytest.param(1, marks=needs_slow)])
def test_msb_as_kp2_batch_matches_ortools(every):
    instances = _msb(every)
    first = instances[0].problem
    assert first.n_items == 20 and (first.capacity1, first.capacity2) == (1000, 1000)
    assert np.array_equal(first.profits, first.weights1 * first.weights2)
    sols = solve_many([i.problem for i in instances], backend="cpu")
    for instance, sol in zip(instances, sols):
        assert sol.value == _kp2_reference(instance.problem), instance.name
        check_kp_choice(instance.problem, sol)


def test_class_a_as_kp2():
    instances = read_instances(shared_file("knapsack/class_a.txt"))
    assert len(instances) == 43
    a33 = next(i for i in instances if i.name == "a33")
    assert a33.problem.n_items == 134 and (a33.problem.capacity1, a33.problem.capacity2) == (2550, 2100)
    chosen = instances if SLOW else [i for i in instances if i.problem.n_items <= 3]
    sols = solve_many([i.problem for i in chosen], backend="cpu")
    for instance, sol in zip(chosen, sols):
        assert sol.value == _kp2_reference(instance.problem), instance.name


# --- malformed files --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, text, match",
    [
        ("knap", "3\n10\n1 2\n3 4\n", r"knap:5: unexpected end of file"),
        ("knap", "2\n10\n1 x\n3 4\n", r"knap:3: expected integers"),
        ("knap", "2\n10\n1 2 3\n3 4\n", r"knap:3: expected 2 integers, got 3"),
        ("knap", "1\n10\n-1 2\n", r"knap:3: an item's profit and weight must be non-negative; got -1"),
        ("knap", "3\n10\n5 4\n3 -2\n6 7\n", r"knap:4: an item's profit and weight must be non-negative; got -2"),
        ("knap", "1\n-10\n1 2\n", r"knap:2: the capacity must be non-negative; got -10"),
        ("j.in", "2\n1 5 4\n2 3 -2\n9\n", r"j.in:3: an item's profit and weight must be non-negative"),
        ("j.in", "2\n1 5 4\n2 3 2\n-9\n", r"j.in:4: the capacity must be non-negative"),
        # one value past 2**62: its own line, not the sum's check on the first line
        ("knap", "3\n100\n5 10\n4611686018427387909 20\n7 30\n",
         r"knap:4: an item's profit and weight must be below 2\*\*62; got 4611686018427387909"),
        ("knap", "2\n4611686018427387905\n5 10\n7 30\n", r"knap:2: the capacity must be below 2\*\*62"),
        ("j.in", "2\n1 5 4\n2 3 4611686018427387904\n9\n", r"j.in:3: an item's profit and weight must be below"),
        ("b.csv", "kp\nn 1\nc -5\nz 3\ntime 0\n1,3,2,1\n-----\n", r"b.csv:3: the capacity must be non-negative"),
        ("b.csv", "kp\nn 1\nc 5\nz 3\ntime 0\n1,-3,2,1\n-----\n", r"b.csv:6: an item's profit and weight"),
        ("m.ins2D", "1\n10 10\n2 -4 4 1 1 0\n", r"m.ins2D:3: an item's width and height must be non-negative"),
        ("a.txt", "a1;1;10;10;-1,2\n", r"a.txt:1: widths and heights must be non-negative; got -1"),
        ("knap", "2\n10\n1 2\n3 4\n0 2\n", r"knap:5: the solution vector must hold 0 or 1"),
        ("knap", "2\n10\n1 2\n3 4\n0\n", r"knap:5: expected 2 integers, got 1"),
        ("b.csv", "kp\nn 1\nc 5\nz 3\ntime 0\n1,3,2,1\n", r"b.csv:7: expected '-----'"),
        ("b.csv", "kp\nn 1\nc 5\nq 3\n", r"b.csv:4: expected 'z <value>'"),
        ("b.csv", "kp\nn one\nc 5\nz 3\ntime 0\n", r"b.csv:2: n, c and z must be integers"),
        ("m.ins2D", "1\n10 10\n1 2 3 0 1 0\n", r"m.ins2D:3: demand must be at least 1"),
        ("m.ins2D", "2\n10 10\n1 2 3 1 1 0\n", r"m.ins2D:4: unexpected end of file"),
        # int64 products wrap silently: 2**32 x 2**32 once loaded as a profit of 0
        ("m.ins2D", "1\n4294967296 4294967296\n1 4294967296 4294967296 1 1 0\n",
         r"m.ins2D:3: the profit w \* h = 18446744073709551616 of item 0 is too large"),
        ("m.ins2D", "1\n10 10\n1 2 3 1000000000000 1 0\n", r"m.ins2D:3: the demands add up to 1,000,000,000,000 items"),
        ("a.txt", "a1;1;4294967296;4294967296;4294967296,4294967296\n", r"a.txt:1: the profit w \* h"),
        ("a.txt", "a1;1;10;10;1,99999999999999999999\n", r"a.txt:1: 99999999999999999999 does not fit"),
        ("knap", "1\n10\n1 99999999999999999999\n", r"knap:3: 99999999999999999999 does not fit in a 64-bit integer"),
        ("a.txt", "a1;2;10;10;1,2\n", r"a.txt:1: expected 2 item types"),
        ("a.txt", "a1;1;10;x;1,2\n", r"a.txt:1: expected integers"),
        ("p.json", "{\"problem\": \"kp3\"}", r"'problem' must be one of"),
        ("p.json", "{\"type\": \"FeatureCollection\"}", r"p.json: not a knapsack instance: it has no 'problem'"),
        ("p.json", "{\"problem\": \"kp1\", \"profits\": [1]}", r"needs the fields weights, capacity"),
        ("p.json", "{\"problem\": \"kp1\", \"profits\": [1], \"weights\": [1, 2], \"capacity\": 3}", r"equal lengths"),
        ("p.json", "{\"problem\": \"mckp\", \"classes\": [1], \"capacity\": 3}", r"'classes' must be a list"),
        ("p.json", "{\"problem\": \"kp1\",\n", r"p.json:2: invalid JSON"),
        ("p.json", "{\"instances\": []}", r"'instances' must be a non-empty list"),
        ("what", "hello world\n", r"unknown instance format"),
        ("nc", "3 10\n5 4\n4 -3\n3 2\n", r"nc:3: an item's profit and weight must be non-negative; got -3"),
        ("nc", "2 10\n5 4\n", r"nc:3: unexpected end of file"),
        ("nc", "1 10\n5 4\n7 7\n", r"nc:3: the first line says 1 item \('n c'\), but more lines follow"),
        ("nc", "1 99999999999999999999\n5 4\n", r"nc:1: 99999999999999999999 does not fit"),
        ("nc", "0 10\n", r"nc:1: the item count must be at least 1; got 0"),  # (numpy's reshape error before)
        ("nc", "-3 10\n5 4\n", r"nc:1: the item count must be at least 1; got -3"),
        ("knap", "0\n10\n", r"knap:1: the item count must be at least 1; got 0"),
        ("test.in", "0\n10\n", r"test.in:1: the item count must be at least 1; got 0"),
        # counts of no items and lines past the items (a numpy error without file or line, and lines ignored)
        ("m.ins2D", "0\n1000 1000\n", r"m.ins2D:1: the item count must be at least 1; got 0"),
        ("m.ins2D", "-1\n1000 1000\n", r"m.ins2D:1: the item count must be at least 1; got -1"),
        ("m.ins2D", "2\n1000 1000\n1 2 3 1 1 0\n2 3 4 1 1 0\n3 900 900 1 1 0\n",
         r"m.ins2D:5: the first line says 2 items, but more lines follow"),
        ("p.csv", "knapPI_1_2_1000_1\nn 2\nc 10\nz 5\ntime 0.00\n1,5,4,1\n2,6,9,7\n-----\n",
         r"p.csv:7: x must be 0 or 1"),
        ("p.csv", "knapPI_1_50_1000_1\nn 0\nc 10\nz 0\ntime 0.00\n-----\n",
         r"p.csv:2: the item count must be at least 1; got 0"),
        ("a.txt", "a01;2;2750;1220;463,386,-3;1680,420,0\n", r"a.txt:1: demand must be at least 1"),
        ("test.in", "3\n1 5 4\n2 6 5\n3 3 2\n10\n1 100 1\n",
         r"test.in:6: the first line says 3 items, then the capacity, but more lines follow"),
        # text after a knapPI file's solution vector (or after its items) was accepted
        ("knap", "2\n10\n5 4\n6 9\n1 0\n1 1\n",
         r"knap:6: the file says 2 items \(then its solution vector\), but more lines follow"),
        ("knap", "2\n10\n5 4\n6 9\n\n7 7\n", r"knap:6: the file says 2 items .*but more lines follow"),
    ],
)
def test_malformed_files_name_file_and_line(tmp_path, name, text, match):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(KnapsackFormatError, match=match):
        read_instances(path)


def test_missing_file(tmp_path):
    with pytest.raises(KnapsackFormatError, match="no such file"):
        read_instances(tmp_path / "absent.json")
    with pytest.raises(KnapsackFormatError, match="is a folder: give the instance files in it"):
        read_instances(tmp_path)


def test_n_c_then_p_w_lines_read_as_a_kp1(tmp_path):
    # the layout of many published small instances: the low-dimensional set's f1_l-d_kp_10_269, optimum 295
    path = tmp_path / "f1_l-d_kp_10_269"
    path.write_text("10 269\n55 95\n10 4\n47 60\n5 32\n4 23\n50 72\n8 80\n61 62\n85 65\n87 46\n\n")
    (instance,) = read_instances(path)
    assert instance.name == "f1_l-d_kp_10_269" and instance.problem.capacity == 269
    assert instance.problem.profits.tolist()[:2] == [55, 10] and instance.problem.weights.tolist()[:2] == [95, 4]
    assert solve(instance.problem, "cpu").value == 295


def test_format_error_is_a_value_error():
    assert issubclass(KnapsackFormatError, ValueError)


def test_csv_first_block_name_gets_its_k(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("napPI_1_2_3_1\nn 2\nc 5\nz 7\ntime 0.00\n1,3,2,1\n2,4,3,1\n-----\n\n"
                    "knapPI_1_2_3_2\nn 1\nc 1\nz 0\ntime 0\n1,3,2,0\n-----\n")
    first, second = read_instances(path)
    assert (first.name, first.optimum, second.name) == ("knapPI_1_2_3_1", 7, "knapPI_1_2_3_2")
    assert first.problem.profits.tolist() == [3, 4] and first.problem.capacity == 5


# --- JSON ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "problem",
    [
        KP1([3, 4], [1, 2], 2),
        KP2([3, 4], [1, 2], [0, 5], 2, 6),
        SubsetSum([3, 5, 7], 11),
        MCKP([([1, 5], [1, 3]), ([2], [2])], 6),
    ],
)
def test_json_round_trip(tmp_path, problem):
    path = tmp_path / "p.json"
    write_json(path, KnapsackInstance("mine", problem, 42))
    (back,) = read_instances(path)
    assert (back.name, back.optimum, type(back.problem)) == ("mine", 42, type(problem))
    assert solve(back.problem, backend="cpu").value == solve(problem, backend="cpu").value


def test_json_lists_and_bare_problems(tmp_path):
    path = tmp_path / "many.json"
    write_json(path, [KP1([1], [1], 1), SubsetSum([2], 2)])
    instances = read_json(path)
    assert [i.name for i in instances] == ["many-0", "many-1"]
    assert not list(tmp_path.glob(".*.tmp"))  # the temporary file is gone


@pytest.mark.parametrize(
    "name, text, optimum",
    [
        ("bom_knapPI", "2\n10\n3 4\n5 6\n", 8),
        ("bom.csv", "knapPI_1_2_3_1\nn 2\nc 10\nz 8\ntime 0\n1,3,4,1\n2,5,6,1\n-----\n", 8),
        ("bom.json", '{"problem": "kp1", "profits": [3, 5], "weights": [4, 6], "capacity": 10}', 8),
        ("bom_class_a.txt", "a1;2;10;10;4,1;6,1\n", 10),
        ("bom.ins2D", "2\n10 2\n1 4 1 1 0 0\n2 6 1 1 0 0\n", 10),
    ],
)
def test_a_byte_order_mark_is_no_format_error(tmp_path, name, text, optimum):
    # Windows editors save UTF-8 with a byte-order mark in front of the first line.
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    (instance,) = read_instances(path)
    assert "\ufeff" not in instance.name
    assert solve(instance.problem, backend="cpu").value == optimum


def test_a_json_name_of_null_falls_back_to_the_file_name(tmp_path):
    path = tmp_path / "unnamed.json"
    path.write_text('{"problem": "kp1", "profits": [1], "weights": [1], "capacity": 1, "name": null}')
    assert [i.name for i in read_instances(path)] == ["unnamed"]


def test_solution_to_dict():
    instance = KnapsackInstance("x", KP1([60, 100, 120], [10, 20, 30], 50), 220)
    out = solution_to_dict(solve(instance.problem, backend="cpu"), instance)
    assert out["value"] == out["known_optimum"] == 220
    assert (out["name"], out["problem"], out["selected"], out["backend"]) == ("x", "kp1", [1, 2], "cpu")


# --- generators ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", PISINGER_KINDS)
def test_pisinger_classes(kind):
    problem = pisinger(kind, 200, 1000, instance=30, series=100, seed=5)
    p, w = problem.profits, problem.weights
    assert np.all(p >= 1) and np.all(w >= 1)
    assert problem.capacity == 30 * int(w.sum()) // 101
    expected = {
        "strongly": p - w == 100,
        "inverse-strongly": w - p == 100,
        "subset-sum": p == w,
        "weakly": np.abs(p - w) <= 100,
        "almost-strongly": np.abs(p - w - 100) <= 2,
        "uncorrelated": p <= 1000,
    }[kind]
    assert np.all(expected)
    assert np.array_equal(pisinger(kind, 200, 1000, 30, 100, seed=5).profits, p)  # seeded


def test_curtis_classes():
    half = curtis("half", 100, seed=1)
    assert np.all(half.weights % 10 == 0) and half.capacity % 10 == 5
    assert half.capacity == int(half.weights.sum()) // 20 * 10 + 5
    p = curtis("p", 100, seed=1)
    assert np.all(p.weights % 2 == 0) and p.capacity % 2 == 1 and p.capacity in (12_500_000, 12_500_001)
    uniform = curtis("uniform", 100, seed=1)
    assert uniform.capacity == 10**6 + 1 and uniform.weights.max() < uniform.capacity
    assert set(CURTIS_KINDS) == {"half", "p", "uniform"}


@pytest.mark.parametrize("set_number", sorted(SURI_SETS))
def test_suri_sets(set_number):
    problem = suri(set_number, seed=2)
    m, capacity = SURI_SETS[set_number]
    assert (problem.n_classes, problem.capacity) == (m, capacity)
    sizes = [len(p) for p, _ in problem.classes]
    assert 10 <= min(sizes) and max(sizes) <= 1024
    assert all(p.min() >= 1 and w.max() <= 10000 for p, w in problem.classes)
    assert {len(p) for p, _ in suri(set_number, seed=2, items_per_class=16).classes} == {16}


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: pisinger("hard", 10), "kind must be one of"),
        (lambda: pisinger("strongly", 0), "n must be an integer >= 1"),
        (lambda: pisinger("strongly", 10, instance=5, series=4), "instance must be in"),
        (lambda: curtis("half", -1), "n must be"),
        (lambda: suri(6), "set_number must be one of"),
        (lambda: pisinger("strongly", 10, coefficient_range=10**20), r"coefficient_range must be an integer in \[10, "),
        (lambda: pisinger("strongly", 10, seed=-1), "seed must be an integer >= 0"),
        (lambda: curtis("half", 10, seed=1.5), "seed must be an integer >= 0"),
        (lambda: suri(1, seed=-3), "seed must be an integer >= 0"),
    ],
)
def test_generator_validation(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_a_selection_with_pisinger_opt_files_reads_them_as_optima(tmp_path):
    # a whole folder selected at once (the panel's dialog, a shell's *) holds knapPI_x and knapPI_x.opt:
    # the .opt was read as an instance ("knapPI_x.opt:2: unexpected end of file") and nothing loaded
    from core.knapsack.io import instance_files

    instance = tmp_path / "knapPI_1_3_1000_1"
    instance.write_text("3\n10\n5 4\n3 2\n6 7\n")
    (tmp_path / "knapPI_1_3_1000_1.opt").write_text("11\n")
    lone = tmp_path / "other.opt"
    paths = sorted(str(p) for p in tmp_path.iterdir())
    assert instance_files(paths) == [str(instance)]
    assert instance_files([*paths, str(lone)]) == [str(instance), str(lone)]  # no instance of that name
    (loaded,) = [i for p in instance_files(paths) for i in read_instances(p)]
    assert loaded.optimum == 11


def test_an_empty_file_is_called_empty(tmp_path):
    empty = tmp_path / "blank.txt"
    empty.write_text("\n  \n")
    with pytest.raises(KnapsackFormatError, match="blank.txt: the file is empty"):
        read_instances(empty)
