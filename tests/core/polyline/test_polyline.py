"""core.polyline: hand-made problems with exact answers, validation, errors, the contract."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from core.engine import BackendUnavailableError, gpu_available
from core.memory import check_allocation
from core.polyline import (
    METHODS,
    NoFeasiblePolylineError,
    PolylineProblem,
    PolylineSolution,
    path_score,
    prepare,
    solve,
    solve_prepared,
)
from core.polyline.brute import MAX_BRUTE_PATHS
from core.polyline.problem import solution_for_path

THREE = np.array([-1.0, 0.0, 1.0])


def problem(first, links, last, offsets=THREE, spacing=1.0, max_turn_deg=30.0, **kwargs):
    return PolylineProblem(
        np.asarray(first, dtype=np.float32), np.asarray(links, dtype=np.float32),
        np.asarray(last, dtype=np.float32), offsets, spacing, max_turn_deg, **kwargs,
    )


def solve_all(prob):
    return {method: solve(prob, method=method, backend="cpu") for method in METHODS}


def test_a_single_strong_straight_path_wins():
    links = np.ones((2, 3, 3))
    links[:, 1, 1] = 5.0
    prob = problem([1, 5, 1], links, [1, 5, 1])
    for method, sol in solve_all(prob).items():
        assert isinstance(sol, PolylineSolution)
        assert sol.indices.tolist() == [1, 1, 1], method
        assert sol.indices.dtype == np.int64
        assert sol.score == 20.0
        assert (sol.start_index, sol.end_index) == (0, 0)
        assert (sol.method, sol.backend) == (method, "cpu")


def zigzag_problem(max_turn_deg):
    # The zigzag start -> -1 -> +1 -> end scores 10 but turns by atan(2) + atan(1) = 108.43
    # degrees at both guides; the straight path along the axis scores 2.
    links = np.zeros((1, 3, 3))
    links[0, 0, 2] = 10.0
    return problem([0, 1, 0], links, [0, 1, 0], max_turn_deg=max_turn_deg)


@pytest.mark.parametrize(
    ("max_turn_deg", "indices", "score"),
    [(180.0, [0, 2], 10.0), (108.5, [0, 2], 10.0), (108.4, [1, 1], 2.0), (1.0, [1, 1], 2.0)],
)
def test_the_angle_limit_changes_the_answer(max_turn_deg, indices, score):
    assert math.degrees(math.atan(2) + math.atan(1)) == pytest.approx(108.4349, abs=1e-4)
    for method, sol in solve_all(zigzag_problem(max_turn_deg)).items():
        assert sol.indices.tolist() == indices, method
        assert sol.score == score


@pytest.mark.parametrize(("max_turn_deg", "indices", "score"), [(90.0, [0], 6.0), (89.9, [1], 2.0)])
def test_one_guide_with_a_turn_exactly_at_the_limit(max_turn_deg, indices, score):
    # m = 1: start (0) -> guide point at offset -2 -> end (0) turns by exactly 90 degrees.
    prob = problem([3, 1, 0], np.zeros((0, 3, 3)), [3, 1, 0], offsets=np.array([-2.0, 0.0, 2.0]),
                   spacing=2.0, max_turn_deg=max_turn_deg)
    for method, sol in solve_all(prob).items():
        assert sol.indices.tolist() == indices, method
        assert sol.score == score


def test_snapping_shaped_problem_chooses_start_and_end():
    first = np.zeros((3, 3))
    first[2, 2] = 4.0  # start candidate at offset 1 straight on to guide 1 at offset 1
    links = np.zeros((1, 3, 3))
    links[0, 2, 2] = 4.0
    last = np.zeros((3, 2))
    last[2, 1] = 4.0  # and on to the end candidate at offset 1
    prob = problem(first, links, last, max_turn_deg=10.0,
                   start_offsets=np.array([-1.0, 0.0, 1.0]), end_offsets=np.array([0.0, 1.0]))
    for method, sol in solve_all(prob).items():
        assert (sol.start_index, sol.indices.tolist(), sol.end_index) == (2, [2, 2], 1), method
        assert sol.score == 12.0


def test_every_solver_reports_an_infeasible_problem():
    # Guides at offsets 5 and 6 with spacing 1: entering guide 1 at 78.7 degrees, every way on
    # turns by at least 33.7 degrees.
    prob = problem([1, 1], np.ones((1, 2, 2)), [1, 1], offsets=np.array([5.0, 6.0]), max_turn_deg=10.0)
    for method in METHODS:
        with pytest.raises(NoFeasiblePolylineError, match="max_turn_deg = 10"):
            solve(prob, method=method, backend="cpu")
    assert issubclass(NoFeasiblePolylineError, ValueError)


def test_one_point_per_guide_and_fixed_ties():
    prob = problem([2], np.full((3, 1, 1), 2.0), [2], offsets=np.array([0.0]), max_turn_deg=1e-6)
    for sol in solve_all(prob).values():
        assert sol.indices.tolist() == [0, 0, 0, 0]
        assert sol.score == 10.0


@pytest.mark.parametrize("max_turn_deg, feasible", [(62.0, True), (61.9, False)])
def test_one_point_per_guide_is_a_problem_of_one_polyline(max_turn_deg, feasible):
    # DESIGN.md's "points d >= 2" is the guide layout's (build_guides refuses points=1: o_p divides by d - 1); the
    # problem's contract only asks ascending (d,) offsets, and its endpoints are layers of one candidate already.
    # One off-axis point (3 px at spacing 5): the only polyline turns by 2 atan(3/5) = 61.93 degrees at it.
    prob = problem([1.5], np.zeros((0, 1, 1)), [0.5], offsets=np.array([3.0]), spacing=5.0, max_turn_deg=max_turn_deg)
    for method in METHODS:
        if feasible:
            sol = solve(prob, method=method, backend="cpu")
            assert sol.indices.tolist() == [0] and sol.score == 2.0
        else:
            with pytest.raises(NoFeasiblePolylineError, match="max_turn_deg = 61.9"):
                solve(prob, method=method, backend="cpu")


def test_all_zero_scores_give_some_feasible_path_of_score_zero():
    prob = problem(np.zeros(3), np.zeros((3, 3, 3)), np.zeros(3), max_turn_deg=45.0)
    for sol in solve_all(prob).values():
        path = [0.0, *THREE[sol.indices], 0.0]
        angles = [math.atan2(b - a, 1.0) for a, b in zip(path, path[1:])]
        assert all(abs(b - a) <= math.radians(45) + 1e-9 for a, b in zip(angles, angles[1:]))
        assert sol.score == 0.0


def test_inputs_are_not_modified_and_float64_inputs_work():
    rng = np.random.default_rng(3)
    first, links, last = rng.random(3), rng.random((2, 3, 3)), rng.random(3)
    offsets = THREE.copy()
    copies = [a.copy() for a in (first, links, last, offsets)]
    prob = PolylineProblem(first, links, last, offsets, 1.0, 45.0)
    scores = {method: solve(prob, method=method, backend="cpu").score for method in METHODS}
    for original, copy in zip((first, links, last, offsets), copies):
        np.testing.assert_array_equal(original, copy)
    assert scores["window"] == pytest.approx(scores["brute"]) == pytest.approx(scores["mitm"])


def test_path_score_sums_the_float32_tables_in_path_order():
    prepared = prepare(problem([1.5, 2, 3], np.arange(18).reshape(2, 3, 3), [0.25, 0, 1], max_turn_deg=90))
    assert prepared.first.dtype == prepared.links.dtype == prepared.last.dtype == np.float32
    assert path_score(prepared, 0, np.array([0, 2, 1]), 0) == 1.5 + 2 + 16 + 0
    with pytest.raises(ValueError, match="indices"):
        path_score(prepared, 0, [0, 3, 1], 0)
    with pytest.raises(ValueError, match="indices"):
        path_score(prepared, 0, [0, 1], 0)
    with pytest.raises(ValueError, match="start_index"):
        path_score(prepared, 1, [0, 1, 1], 0)


def test_prepare_builds_the_chain_of_layers():
    links = np.zeros((3, 3, 3))
    prepared = prepare(problem(np.zeros((2, 3)), links, np.zeros(3), start_offsets=[0.0, 1.0]))
    assert prepared.n_guides == 4 and prepared.n_points == 3
    assert prepared.first.shape == (2, 3) and prepared.last.shape == (3, 1)
    assert len(prepared.ranges) == 4
    assert [lo.shape for lo, _ in prepared.ranges] == [(3, 3), (3, 3), (3, 3), (3, 1)]
    assert prepared.ranges[1][0] is prepared.ranges[2][0]  # the inner layers share one pair
    assert all(lo.dtype == hi.dtype == np.int64 for lo, hi in prepared.ranges)
    for (lo, hi), (lo32, hi32) in zip(prepared.ranges, prepared.ranges32):
        assert lo32.dtype == hi32.dtype == np.int32
        np.testing.assert_array_equal(lo32, lo)
        np.testing.assert_array_equal(hi32, hi)
    assert prepared.ranges32[1][0] is prepared.ranges32[2][0]
    assert prepared.table(0) is prepared.first and prepared.table(4) is prepared.last


def valid_fields():
    return dict(start_scores=np.zeros(3), link_scores=np.zeros((1, 3, 3)), end_scores=np.zeros(3),
                offsets=THREE, spacing=1.0, max_turn_deg=30.0)


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        (dict(start_scores=np.zeros(4)), ValueError, "start_scores"),
        (dict(start_scores=np.zeros((2, 3))), ValueError, "start_scores"),
        (dict(end_scores=np.zeros((3, 2))), ValueError, "end_scores"),
        (dict(link_scores=np.zeros((1, 3, 4))), ValueError, "link_scores"),
        (dict(link_scores=np.zeros((3, 3))), ValueError, "link_scores"),
        (dict(link_scores=np.full((1, 3, 3), np.nan)), ValueError, "link_scores must be finite"),
        (dict(start_scores=np.array([0, np.inf, 0])), ValueError, "start_scores must be finite"),
        (dict(end_scores=np.array([0, 1e300, 0])), ValueError, "end_scores must be finite"),
        (dict(end_scores=np.array(["a", "b", "c"])), TypeError, "end_scores"),
        (dict(link_scores=np.zeros((1, 3, 3), dtype=complex)), TypeError, "link_scores"),
        (dict(offsets=np.array([1.0, 0.0, 2.0])), ValueError, "offsets must be ascending"),
        (dict(offsets=np.array([0.0, np.nan, 2.0])), ValueError, "offsets must be finite"),
        (dict(offsets=np.zeros((3, 1))), ValueError, "offsets"),
        (dict(spacing=0.0), ValueError, "spacing"),
        (dict(spacing=-1.0), ValueError, "spacing"),
        (dict(spacing=math.inf), ValueError, "spacing"),
        (dict(spacing="1"), TypeError, "spacing"),
        (dict(max_turn_deg=0.0), ValueError, r"max_turn_deg must be in \(0, 180\]"),
        (dict(max_turn_deg=-5.0), ValueError, "max_turn_deg"),
        (dict(max_turn_deg=180.5), ValueError, "max_turn_deg"),
        (dict(max_turn_deg=math.nan), ValueError, "max_turn_deg"),
        (dict(max_turn_deg=None), TypeError, "max_turn_deg"),
        (dict(start_offsets=[0.0, 1.0]), ValueError, "start_scores"),
        (dict(end_offsets=[1.0, 0.0]), ValueError, "end_offsets must be ascending"),
    ],
)
def test_invalid_problems_are_refused_with_the_argument_named(change, error, match):
    prob = PolylineProblem(**{**valid_fields(), **change})
    with pytest.raises(error, match=match):
        prepare(prob)
    with pytest.raises(error, match=match):
        solve(prob, method="window", backend="cpu")


def test_boundary_values_are_accepted():
    fields = valid_fields()
    fields.update(max_turn_deg=180, spacing=1e-6, offsets=np.array([0.0, 0.0, 1.0]))  # repeats allowed
    assert solve(PolylineProblem(**fields), backend="cpu").score == 0.0


def test_unknown_method_backend_and_problem_type():
    prob = PolylineProblem(**valid_fields())
    with pytest.raises(ValueError, match="method"):
        solve(prob, method="dijkstra")
    with pytest.raises(ValueError, match="backend"):
        solve(prob, backend="tpu")
    with pytest.raises(TypeError, match="PolylineProblem"):
        solve(valid_fields())
    with pytest.raises(ValueError, match="brute"):
        solve(prob, method="brute", backend="gpu")


def test_brute_is_cpu_only_and_auto_runs_it_on_the_cpu():
    sol = solve(PolylineProblem(**valid_fields()), method="brute", backend="auto")
    assert (sol.method, sol.backend) == ("brute", "cpu")


@pytest.mark.skipif(gpu_available(), reason="a CUDA device (or the simulator) is present")
def test_gpu_backend_without_a_gpu_is_a_clear_error():
    with pytest.raises(BackendUnavailableError, match="gpu"):
        solve(PolylineProblem(**valid_fields()), backend="gpu")


def test_brute_refuses_too_many_polylines():
    d, m = 50, 4
    assert d**m > MAX_BRUTE_PATHS
    prob = problem(np.zeros(d), np.zeros((m - 1, d, d)), np.zeros(d), offsets=np.arange(d, dtype=float))
    with pytest.raises(ValueError, match="brute.*window"):
        solve(prob, method="brute", backend="cpu")


def test_tables_larger_than_the_machine_are_refused_before_allocation():
    d = 300_000  # a (2, d, d) table is 720 GB; broadcasting makes it without memory
    prob = PolylineProblem(np.zeros(d), np.broadcast_to(np.float64(1.0), (2, d, d)), np.zeros(d),
                           np.arange(d, dtype=float), 1.0, 30.0)
    with pytest.raises(ValueError, match=r"would need \d+\.\d [GT]iB"):
        prepare(prob)
    with pytest.raises(ValueError, match="GiB"):
        check_allocation(1 << 60, "a test")
    check_allocation(1 << 20, "a test")


def test_timings_of_the_cpu_solvers():
    prepared = prepare(zigzag_problem(180.0))
    for method in ("window", "mitm"):
        sol = solve_prepared(prepared, method, "cpu")
        timings = sol.timings_ms
        assert sol.indices.tolist() == [0, 2]
        assert set(timings) == {"dp", "backtrack"} and min(timings.values()) >= 0


def test_concurrent_solves_from_threads_agree():
    rng = np.random.default_rng(5)
    prob = problem(rng.random(12), rng.random((4, 12, 12)), rng.random(12), offsets=np.linspace(-3, 3, 12))
    expected = solve(prob, method="brute", backend="cpu").score
    results, errors = [], []

    def work(method):
        try:
            results.append(solve(prob, method=method, backend="cpu").score)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(m,)) for m in ("window", "mitm") * 3]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert results == pytest.approx([expected] * 6)


class FakeGpuPolyline:
    """A stand-in for gpu.polyline.solve: returns a fixed path (scored as the GPU twin does) or runs out of memory."""

    def __init__(self, path=None):
        self.path, self.calls = path, []

    def solve_prepared(self, prepared, method, cancel=None):
        self.calls.append(method)
        if self.path is None:
            raise MemoryError("the problem needs 9000 MiB of GPU memory; 10 MiB are free")
        return solution_for_path(prepared, *self.path, method, "gpu", {"dp": 0.0, "backtrack": 0.0})


@pytest.fixture
def fake_gpu(monkeypatch):

    import core.engine

    def install(path=None):
        fake = FakeGpuPolyline(path)
        monkeypatch.setattr(core.engine, "gpu_package", lambda name: fake)
        monkeypatch.setattr(core.engine, "resolve_backend", lambda backend: "gpu")
        return fake

    return install


def test_gpu_backend_delegates_to_gpu_polyline_and_recomputes_the_score(fake_gpu):
    fake = fake_gpu((0, np.array([1, 1]), 0))
    sol = solve(zigzag_problem(180.0), method="mitm", backend="gpu")
    assert fake.calls == ["mitm"]
    assert (sol.backend, sol.method, sol.indices.tolist(), sol.score) == ("gpu", "mitm", [1, 1], 2.0)


def test_gpu_out_of_memory_falls_back_to_the_cpu_with_a_warning(fake_gpu):
    fake = fake_gpu(None)
    with pytest.warns(RuntimeWarning, match="GPU memory.*CPU"):
        sol = solve(zigzag_problem(180.0), method="window", backend="auto")
    assert fake.calls == ["window"]
    assert (sol.backend, sol.indices.tolist(), sol.score) == ("cpu", [0, 2], 10.0)


def test_solve_prepared_wants_a_prepared_problem():
    with pytest.raises(TypeError, match="PreparedProblem"):
        solve_prepared(zigzag_problem(180.0), "window", "cpu")
