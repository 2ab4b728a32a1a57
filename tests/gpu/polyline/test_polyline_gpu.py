"""GPU polyline DP (gpu/polyline/solve.py, gpu/polyline/dp.py, gpu/kernels_*.py) against the CPU.

Tests marked ``kernels`` run on a GPU, or under the CUDA simulator in the child
pytest of :func:`test_kernels_under_cuda_simulator` (small sizes, launch sizes
patched small by tests/gpu/conftest.py); tests marked ``gpu`` need a real GPU
and check full sizes with fresh random seeds.
"""

from __future__ import annotations

import secrets
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.engine import BackendUnavailableError
from core.polyline import NoFeasiblePolylineError, PolylineProblem, path_score, prepare, solve, solve_prepared
from core.polyline.turns import link_angles, turn_is_feasible, turn_limit_rad
from tests.gpu.conftest import KERNELS_RUN_HERE, ROOT, run_kernels_under_simulator

kernels = pytest.mark.kernels

try:  # the test kernel below needs numba-cuda (a test dependency); the CPU tests do not
    from numba import cuda, float32, int32
except ImportError:  # pragma: no cover
    cuda = None

if cuda is not None:
    from gpu.config import MAX_REDUCE_THREADS
    from gpu.polyline.kernels_dp import NO_INDEX, group_max_argmax

    @cuda.jit
    def _reduce_groups(values, group, best, best_idx):
        """Every thread gets the max + argmax of its group of ``group`` threads."""
        sh_val = cuda.shared.array(MAX_REDUCE_THREADS, float32)
        sh_idx = cuda.shared.array(MAX_REDUCE_THREADS, int32)
        t = cuda.grid(1)
        value = float32(-np.inf)
        index = NO_INDEX
        if t < values.size:
            value = values[t]
            index = t
        value, index = group_max_argmax(value, index, sh_val, sh_idx, group)
        if t < values.size:
            best[t] = value
            best_idx[t] = index


def random_problem(rng, m, d, snapped=False, max_turn_deg=None, ties=False):
    """A random PolylineProblem: sorted offsets, float32 tables (small integers when ``ties``)."""
    n0 = n1 = d if snapped else 1

    def table(*shape):
        if ties:
            return rng.integers(0, 3, size=shape).astype(np.float32)
        return rng.random(shape, dtype=np.float32)

    offsets = np.sort(rng.uniform(-20, 20, d))
    return PolylineProblem(
        table(n0, d), table(m - 1, d, d), table(d, n1), offsets, float(rng.uniform(2, 12)),
        float(rng.uniform(5, 120) if max_turn_deg is None else max_turn_deg),
        np.sort(rng.uniform(-8, 8, n0)) if snapped else None,
        np.sort(rng.uniform(-8, 8, n1)) if snapped else None,
    )


def assert_feasible(prepared, start, indices, end):
    """Every turn of the path satisfies the limit (the one predicate of core.polyline.turns)."""
    offsets = np.concatenate(([prepared.start_offsets[start]], prepared.offsets[indices], [prepared.end_offsets[end]]))
    angles = link_angles(offsets[:-1], offsets[1:], prepared.spacing).diagonal()
    limit = turn_limit_rad(prepared.max_turn_deg)
    assert all(turn_is_feasible(a, b, limit) for a, b in zip(angles[:-1], angles[1:]))


def check_against_cpu(problem, methods=("window", "mitm"), reference="brute"):
    """The GPU's optimum equals the CPU's (float32 DP tolerance) and its path is feasible."""
    prepared = prepare(problem)
    try:
        expected = solve_prepared(prepared, reference, "cpu")
    except NoFeasiblePolylineError:
        for method in methods:
            with pytest.raises(NoFeasiblePolylineError):
                solve_prepared(prepared, method, "gpu")
        return
    for method in methods:
        got = solve_prepared(prepared, method, "gpu")
        assert got.backend == "gpu" and got.method == method
        assert got.score == pytest.approx(expected.score, rel=1e-5, abs=1e-5), method
        assert got.score == path_score(prepared, got.start_index, got.indices, got.end_index)
        assert_feasible(prepared, got.start_index, got.indices, got.end_index)


@kernels
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    m=st.integers(1, 4),
    d=st.integers(2, 7),
    snapped=st.booleans(),
    ties=st.booleans(),
)
def test_both_methods_match_brute_force(seed, m, d, snapped, ties):
    check_against_cpu(random_problem(np.random.default_rng(seed), m, d, snapped, ties=ties))


@kernels
@pytest.mark.parametrize("snapped", [False, True])
def test_larger_window_problems_match_cpu_window(snapped):
    # d = 16 spans four range-maximum blocks of 4 under the simulator; m = 4
    # runs two forward and two backward steps of mitm, then the merge.
    rng = np.random.default_rng(7 + snapped)
    check_against_cpu(random_problem(rng, 4, 16, snapped, max_turn_deg=40.0), ("window",), reference="window")
    check_against_cpu(random_problem(rng, 4, 8, snapped, max_turn_deg=40.0), ("mitm",), reference="window")


@kernels
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(1, 4), d=st.integers(1, 13), snapped=st.booleans(),
       ties=st.booleans())
def test_padded_window_problems_give_the_same_path_as_unpadded_ones(seed, m, d, snapped, ties):
    # gpu.polyline.padding rounds d up to 16 and the end candidates up to 8: the same optimum, the same
    # path (ties included), and the workspace holds the padded shape
    from gpu.polyline import dp as polyline_dp
    from gpu.polyline import padding

    prepared = prepare(random_problem(np.random.default_rng(seed), m, d, snapped, ties=ties))
    n0, n1 = prepared.first.shape[0], prepared.last.shape[1]
    padded_shape = (m, 16, -(-n0 // 8) * 8, -(-n1 // 8) * 8)
    polyline_dp.release_workspace()
    outcomes, default = [], padding.MAX_POINTS
    for limit in (default, 0):  # padded, then not (MAX_POINTS = 0 keeps every shape)
        padding.MAX_POINTS = limit
        try:
            found = solve_prepared(prepared, "window", "gpu")
            outcomes.append((found.score, found.start_index, found.indices.tolist(), found.end_index))
        except NoFeasiblePolylineError:
            outcomes.append("infeasible")
        finally:
            padding.MAX_POINTS = default
        if limit:
            assert padded_shape in polyline_dp._workspace
    assert outcomes[0] == outcomes[1]
    assert (m, d, n0, n1) in polyline_dp._workspace


@kernels
def test_hand_made_case_with_exact_answer():
    # Offsets -1, 0, 1 and spacing 1: links turn by 0, +-45 or +-63.4 degrees.
    # The best unconstrained path 0 -> 1 -> -1 -> 0 (5 + 9 + 3) turns by 108.4
    # degrees at guide 1; at a 50-degree limit the best is 0 -> 1 -> 1 -> 0 (5 + 1 + 0).
    first = np.array([[0, 0, 5]], dtype=np.float32)
    links = np.array([[[0, 0, 0], [0, 0, 0], [9, 0, 1]]], dtype=np.float32)
    last = np.array([[3], [0], [0]], dtype=np.float32)
    offsets = np.array([-1.0, 0.0, 1.0])
    for method in ("window", "mitm"):
        tight = solve(PolylineProblem(first, links, last, offsets, 1.0, 50.0), method, "gpu")
        assert tight.indices.tolist() == [2, 2] and tight.score == 6.0
        loose = solve(PolylineProblem(first, links, last, offsets, 1.0, 120.0), method, "gpu")
        assert loose.indices.tolist() == [2, 0] and loose.score == 17.0


@kernels
def test_infeasible_problem_raises():
    # A zig-zag of offsets 10 px apart at spacing 1 cannot stay within 1 degree.
    problem = PolylineProblem(
        np.ones((1, 2), np.float32), np.ones((1, 2, 2), np.float32), np.ones((2, 1), np.float32),
        np.array([-10.0, 10.0]), 1.0, 1.0,
    )
    for method in ("window", "mitm"):
        with pytest.raises(NoFeasiblePolylineError, match="max_turn_deg"):
            solve(problem, method, "gpu")


@kernels
@pytest.mark.parametrize("m, turn_deg", [(1, 61.93), (3, 30.96)])
def test_one_point_per_guide(m, turn_deg):
    # a problem of one polyline (DESIGN.md's d >= 2 is the guide layout's), 3 px off the axis at spacing 5: it turns
    # by atan(3/5) = 30.96 degrees at guides 1 and m, by twice that at the one guide of m = 1
    first, links, last = np.ones((1, 1), np.float32), np.ones((m - 1, 1, 1), np.float32), np.ones((1, 1), np.float32)
    for method in ("window", "mitm"):
        solution = solve(PolylineProblem(first, links, last, np.array([3.0]), 5.0, turn_deg + 0.01), method, "gpu")
        assert solution.indices.tolist() == [0] * m and solution.score == m + 1.0
        with pytest.raises(NoFeasiblePolylineError, match="max_turn_deg"):
            solve(PolylineProblem(first, links, last, np.array([3.0]), 5.0, turn_deg - 0.01), method, "gpu")


@kernels
def test_group_reduction_matches_numpy():
    rng = np.random.default_rng(3)
    for group, block in ((1, 4), (3, 6), (4, 8), (6, 6)):
        values = rng.integers(0, 4, size=23).astype(np.float32)  # ties, and a partial last block
        best = np.empty_like(values)
        best_idx = np.empty(values.size, np.int32)
        _reduce_groups[-(-values.size // block), block](values, group, best, best_idx)
        for t in range(values.size):
            lead = t - t % group
            members = values[lead:min(lead + group, values.size)]
            assert best[t] == members.max()
            assert best_idx[t] == lead + int(np.argmax(members))  # ties go to the smaller index


@kernels
@pytest.mark.parametrize("n_prev", [1, 3, 4, 13, 16, 37])
def test_window_range_maxima_answer_every_query(n_prev):
    from gpu import config
    from gpu.polyline.kernels_window import NO_INDEX, shared_bytes, window_stage

    rng = np.random.default_rng(n_prev)
    d = 3
    columns = rng.integers(0, 5, size=(d, n_prev)).astype(np.float32)  # many ties
    columns[0, ::3] = -np.inf  # infeasible states
    queries = [(lo, hi) for lo in range(n_prev) for hi in range(lo - 1, n_prev)]  # empty ranges too
    lo = np.array([[q[0] for q in queries]] * d, dtype=np.int32)
    hi = np.array([[q[1] for q in queries]] * d, dtype=np.int32)
    table = rng.random((d, len(queries)), dtype=np.float32)
    out = np.full((len(queries), d), np.nan, np.float32)
    arg = np.full((d, len(queries)), -7, np.int32)
    bits = config.RMQ_BLOCK_BITS
    window_stage[d, config.WINDOW_THREADS, 0, shared_bytes(n_prev, bits)](columns, out, table, lo, hi, arg, bits)
    for q in range(d):
        for r, (first, last) in enumerate(queries):
            if first > last:
                assert out[r, q] == -np.inf and arg[q, r] == NO_INDEX
                continue
            expected = columns[q, first:last + 1].max()
            assert first <= arg[q, r] <= last and columns[q, arg[q, r]] == expected
            assert out[r, q] == np.float32(table[q, r] + expected)


@kernels
@pytest.mark.parametrize("snapped", [False, True])
def test_reverse_ranges_invert_the_turn_ranges(snapped):
    from gpu.polyline.dp import upload

    prepared = prepare(random_problem(np.random.default_rng(11), 3, 9, snapped, max_turn_deg=35.0))
    problem = upload(prepared, reuse=False)
    for k in range(1, prepared.n_guides + 1):
        lo, hi = prepared.ranges[k - 1]
        rlo, rhi = (array.copy_to_host() for array in problem.reverse(k))
        for p in range(rlo.shape[0]):
            for q in range(prepared.n_points):
                feasible = [r for r in range(lo.shape[1]) if lo[q, r] <= p <= hi[q, r]]
                if feasible:
                    assert (rlo[p, q], rhi[p, q]) == (feasible[0], feasible[-1])
                else:
                    assert rlo[p, q] > rhi[p, q]


@kernels
def test_out_of_memory_falls_back_to_the_cpu(monkeypatch):
    from gpu.polyline import dp as polyline_dp
    from gpu.polyline.solve import GpuMemoryError
    from gpu.polyline.solve import solve_prepared as gpu_solve

    problem = random_problem(np.random.default_rng(5), 3, 6)
    polyline_dp.release_workspace()  # nothing allocated yet: the memory check runs
    monkeypatch.setattr(polyline_dp, "free_bytes", lambda: 1024)
    with pytest.raises(GpuMemoryError, match="MiB"):
        gpu_solve(prepare(problem), "window")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        solution = solve(problem, "window", "gpu")
    assert solution.backend == "cpu"
    assert any("CPU" in str(w.message) for w in caught)
    assert solution.score == solve(problem, "window", "cpu").score


@kernels
def test_the_workspace_keeps_a_clicks_shapes_and_frees_past_its_byte_limit(monkeypatch):
    from gpu.polyline import dp as polyline_dp

    polyline_dp.release_workspace()
    shapes = [(6, 1, 1, 1), (8, 9, 3, 3), (5, 7, 4, 4)]  # an adaptive click's course, refinement and segment
    first = [polyline_dp.workspace_problem(*shape) for shape in shapes]
    for _ in range(2):  # solved in turn, click after click: every shape is found again, nothing reallocated
        assert [polyline_dp.workspace_problem(*shape) for shape in shapes] == first
    kept = polyline_dp._workspace_bytes()
    assert kept == sum(polyline_dp._problem_bytes(problem) for problem in first) > 0

    monkeypatch.setattr(polyline_dp, "WORKSPACE_BYTES", kept - 1)  # over the limit: the oldest go first
    newest = polyline_dp.workspace_problem(7, 5, 2, 2)
    assert list(polyline_dp._workspace.values())[-1] is newest
    assert first[0] not in polyline_dp._workspace.values()
    assert polyline_dp._workspace_bytes() - polyline_dp._problem_bytes(newest) <= kept - 1

    monkeypatch.setattr(polyline_dp, "WORKSPACE_SHAPES", 2)
    polyline_dp.workspace_problem(4, 4, 1, 1)
    assert len(polyline_dp._workspace) == 2
    polyline_dp.release_workspace()


@kernels
@pytest.mark.parametrize("size", [1, 7, 150])  # one thread, a partial block, several blocks of a grid stride
def test_the_device_finiteness_flag_matches_the_host_check(size):
    from core.polyline.tables import all_finite
    from gpu.polyline.kernels_dp import flag_nonfinite

    rng = np.random.default_rng(size)
    for bad in (None, np.inf, -np.inf, np.nan, np.finfo(np.float32).max):
        values = rng.normal(size=size).astype(np.float32)
        if bad is not None:
            values[rng.integers(size)] = bad
        flags = cuda.to_device(np.zeros(2, np.int32))
        flag_nonfinite[2, 4](cuda.to_device(values), flags, 1)
        assert flags.copy_to_host().tolist() == [0, 0 if all_finite(values) else 1]


@kernels
def test_non_finite_tables_are_refused_on_the_device():
    # solve() leaves the check to the GPU (no host pass over the tables); the message is the host's
    problem = random_problem(np.random.default_rng(2), 3, 5)
    for field, shape in (("start_scores", (1, 5)), ("link_scores", (2, 5, 5)), ("end_scores", (5, 1))):
        table = np.ones(shape, np.float32)
        table.flat[-1] = np.nan
        spoilt = PolylineProblem(**{**vars(problem), field: table})
        assert not prepare(spoilt, check_finite=False).finite_checked
        for method in ("window", "mitm"):
            with pytest.raises(ValueError, match=f"{field} must be finite"):
                solve(spoilt, method, "gpu")


@kernels
def test_a_refused_table_leaves_no_stale_flag_for_the_next_solve():
    # the flags live in the workspace between solves: a finite problem of the same shape after a
    # refused one (and one of a single guide, whose link table is never uploaded) solve as on the CPU
    rng = np.random.default_rng(5)
    for n_guides in (3, 1):
        problem = random_problem(rng, n_guides, 6, max_turn_deg=90.0)
        spoilt = np.array(problem.link_scores if n_guides > 1 else problem.end_scores, np.float32)
        spoilt.flat[0] = np.inf
        field = "link_scores" if n_guides > 1 else "end_scores"
        with pytest.raises(ValueError, match=f"{field} must be finite"):
            solve(PolylineProblem(**{**vars(problem), field: spoilt}), "window", "gpu")
        for method in ("window", "mitm"):
            assert solve(problem, method, "gpu").score == pytest.approx(solve(problem, "window", "cpu").score, rel=1e-5)


@kernels
def test_brute_force_is_refused_on_the_gpu():
    from gpu.polyline.solve import solve_prepared as gpu_solve

    with pytest.raises(ValueError, match="CPU only"):
        gpu_solve(prepare(random_problem(np.random.default_rng(1), 2, 3)), "brute")


@pytest.mark.skipif(KERNELS_RUN_HERE, reason="a GPU (or the simulator) is present")
def test_without_cuda_the_gpu_functions_raise_a_clear_error():
    import gpu.polyline

    problem = random_problem(np.random.default_rng(0), 2, 3)
    with pytest.raises(BackendUnavailableError, match="GPU"):
        gpu.polyline.solve_prepared(prepare(problem), "window")
    with pytest.raises(BackendUnavailableError):
        solve(problem, "window", "gpu")
    assert solve(problem, "window", "auto").backend == "cpu"


def test_importing_gpu_loads_no_cuda():
    code = "import sys, gpu, gpu.polyline.solve; print(any(m.startswith('numba.cuda') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_only_the_low_occupancy_warning_is_silenced():
    code = ("import warnings, gpu; "
            "warnings.warn('\\x1b[1mGrid size 22 will likely result in GPU under-utilization due to low occupancy.'); "
            "warnings.warn('Host array used in CUDA kernel will incur copy overhead')")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert "Grid size" not in out.stderr and "Host array used" in out.stderr


@pytest.mark.gpu
def test_a_small_gpu_extraction_prints_no_warnings():
    # a short span launches grids of a few dozen blocks, which numba-cuda warns of at every launch
    code = ("import numpy as np; from core.extraction import extract; "
            "image = np.random.default_rng(0).random((120, 120)); "
            "[extract(image, (10, 10), (100, 90), backend='gpu', snap_endpoints=s) for s in (False, True)]")
    out = subprocess.run([sys.executable, "-W", "default", "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    assert out.stderr == ""


def test_kernels_under_cuda_simulator():
    run_kernels_under_simulator(__file__)


@pytest.mark.gpu
@pytest.mark.parametrize("nodes, points", [(5, 256), (8, 1024)])
def test_full_size_random_problems_match_the_cpu(nodes, points):
    seed = secrets.randbits(32)
    rng = np.random.default_rng(seed)
    for snapped in (False, True):
        problem = random_problem(rng, nodes - 2, points, snapped, max_turn_deg=float(rng.uniform(15, 60)))
        problem = PolylineProblem(
            problem.start_scores, problem.link_scores, problem.end_scores,
            np.linspace(-40, 40, points), 90.0, problem.max_turn_deg, problem.start_offsets, problem.end_offsets,
        )
        try:
            check_against_cpu(problem, reference="window")
        except AssertionError as exc:
            raise AssertionError(f"seed {seed}, snapped {snapped}: {exc}") from exc
