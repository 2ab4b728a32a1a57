"""GPU link scores, turn ranges and score_and_solve (gpu/polyline/scores.py, gpu/polyline/solve.py) against the CPU.

``kernels`` tests run on a GPU or in the CUDA-simulator child pytest of
:func:`test_kernels_under_cuda_simulator`; ``gpu`` tests need a real GPU.
"""

from __future__ import annotations

import secrets
import warnings

import numpy as np
import pytest

from core.extraction import ExtractionSettings
from core.extraction.gradient import GradientWindow
from core.extraction.guides import build_guides
from core.extraction.options import ScoringOptions
from core.extraction.scores import excluded_link_score, link_score_tables
from core.extraction.solving import score_and_solve_on
from core.polyline import NoFeasiblePolylineError, PolylineProblem, path_score, prepare, solve_prepared
from core.polyline.turns import feasible_ranges, link_angles
from tests.gpu.conftest import run_kernels_under_simulator
from tests.naive_scores import link_score

kernels = pytest.mark.kernels


def scored_settings(**fields) -> ExtractionSettings:
    """Settings of a gradient mode: the fields given, else ribbon 24 px wide, any polarity (not 'auto')."""
    return ExtractionSettings(**{"mode": "ribbon", "ribbon_width_px": 24.0, "polarity": "any", **fields})


def random_gradient(rng, height, width, col_off, row_off):
    """A random gradient window (float32, with a zero-free spread of signs)."""
    gx = rng.normal(size=(height, width)).astype(np.float32)
    gy = rng.normal(size=(height, width)).astype(np.float32)
    return GradientWindow(gx, gy, col_off, row_off)


def device_tables(gradient, guides, mode, ribbon_width_px, polarity, ribbon_combine="mean", excluded=None):
    """The GPU's (first, links, last) score tables, copied back for comparison."""
    from gpu.polyline import dp
    from gpu.polyline import solve as gpu_polyline
    from gpu.polyline.scores import score_on_device

    options = ScoringOptions(mode=mode, ribbon_width_px=ribbon_width_px, polarity=polarity,
                             ribbon_combine=ribbon_combine)
    with dp.LOCK:
        grad = gpu_polyline._device_gradient(gradient, dp)
        problem = score_on_device(grad, gradient, guides, options, excluded)
        links = problem.links.copy_to_host()[: guides.n_guides - 1]
        first_t = problem.first_t.copy_to_host()
        return problem.first.copy_to_host(), links, problem.last.copy_to_host(), first_t


def assert_tables_close(got, expected):
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == np.float32
        np.testing.assert_allclose(g, e, rtol=2e-5, atol=2e-5 * max(1.0, float(np.abs(e).max(initial=0))))


SCORE_CASES = [
    ("edge", 0.0, "any", False),
    ("ribbon", 5.0, "any", True),
    ("ribbon", 4.0, "bright", False),
    ("ribbon", 6.5, "dark", True),
]


@kernels
@pytest.mark.parametrize("mode, ribbon_width_px, polarity, snapped", SCORE_CASES)
def test_link_scores_match_the_cpu_scores(mode, ribbon_width_px, polarity, snapped):
    rng = np.random.default_rng(len(mode) + int(ribbon_width_px * 10))
    # The window (col 10..34, row 20..39) leaves some samples outside: their
    # neighbours count 0 on both sides.
    gradient = random_gradient(rng, 20, 25, 10, 20)
    guides = build_guides((12.3, 25.1), (33.7, 36.2), nodes=5, points=5, half_width_px=4.0,
                          snap_endpoints=snapped, snap_half_width_px=3.0)
    first, links, last, first_t = device_tables(gradient, guides, mode, ribbon_width_px, polarity)
    expected = link_score_tables(gradient, guides, ScoringOptions(mode, ribbon_width_px, polarity))
    assert_tables_close((first, links, last), expected)
    np.testing.assert_array_equal(first_t, first.T)


@kernels
@pytest.mark.parametrize("mode, ribbon_width_px, polarity, snapped", SCORE_CASES[:2])
def test_link_scores_with_points_off_the_raster_match_the_cpu_scores(mode, ribbon_width_px, polarity, snapped):
    """Links from or to a candidate off the raster score excluded_link_score on both backends."""
    gradient = random_gradient(np.random.default_rng(9), 20, 25, -3, -4)
    guides = build_guides((0.5, 1.0), (20.0, 2.5), nodes=5, points=5, half_width_px=4.0,
                          snap_endpoints=snapped, snap_half_width_px=3.0)
    excluded = guides.off_raster((30, 30))
    assert excluded.any() and not excluded.all()
    first, links, last, first_t = device_tables(gradient, guides, mode, ribbon_width_px, polarity,
                                                excluded=excluded)
    options = ScoringOptions(mode, ribbon_width_px, polarity)
    expected = link_score_tables(gradient, guides, options, excluded=excluded)
    assert_tables_close((first, links, last), expected)
    np.testing.assert_array_equal(first_t, first.T)
    assert (first == np.float32(excluded_link_score(gradient, guides))).any()


@kernels
@pytest.mark.parametrize("mode, ribbon_width_px, polarity, ribbon_combine", [
    ("edge", 0.0, "any", "mean"), ("ribbon", 5.0, "dark", "mean"), ("ribbon", 5.0, "any", "geometric"),
    ("ribbon", 3.5, "bright", "geometric"), ("ribbon", 0.0, "bright", "geometric"),  # width 0: the edge mode
])
def test_link_scores_on_the_half_pixel_grid_match_the_cpu_scores(mode, ribbon_width_px, polarity, ribbon_combine):
    rng = np.random.default_rng(7)
    # step 0.5: element [i, j] at (10.5 + j / 2, 20.5 + i / 2), the same area as above
    gx, gy = (rng.normal(size=(39, 49)).astype(np.float32) for _ in range(2))
    gradient = GradientWindow(gx, gy, 10, 20, step_px=0.5)
    guides = build_guides((12.3, 25.1), (33.7, 36.2), nodes=5, points=5, half_width_px=4.0,
                          snap_endpoints=True, snap_half_width_px=3.0)
    first, links, last, _ = device_tables(gradient, guides, mode, ribbon_width_px, polarity, ribbon_combine)
    expected = link_score_tables(gradient, guides, ScoringOptions(mode, ribbon_width_px, polarity, ribbon_combine))
    assert_tables_close((first, links, last), expected)


@kernels
def test_link_scores_match_the_naive_formula():
    rng = np.random.default_rng(4)
    gradient = random_gradient(rng, 6, 7, -2, 3)
    guides = build_guides((0.2, 4.9), (3.1, 7.7), nodes=3, points=2, half_width_px=1.5)
    first, _, last, _ = device_tables(gradient, guides, "ribbon", 1.2, "bright")
    layers = guides.layer_points()
    for (table, src, dst) in ((first, layers[0], layers[1]), (last, layers[1], layers[2])):
        for i, p in enumerate(src):
            for j, q in enumerate(dst):
                expected = link_score(gradient.gx, gradient.gy, -2, 3, p, q, "ribbon", 1.2, "bright")
                assert table[i, j] == pytest.approx(expected, rel=1e-5, abs=1e-6)


@kernels
@pytest.mark.parametrize("m, snapped", [(1, False), (1, True), (3, False), (4, True)])
def test_turn_ranges_on_the_device_equal_core_turns(m, snapped):
    from gpu.polyline.dp import LOCK, DeviceProblem
    from gpu.polyline.scores import turn_ranges_on_device

    guides = build_guides((0.0, 0.0), (40.0, 9.0), nodes=m + 2, points=9, half_width_px=6.0,
                          snap_endpoints=snapped, snap_half_width_px=4.0)
    with LOCK:
        problem = DeviceProblem.allocate(m, 9, guides.start_offsets.size, guides.end_offsets.size)
        turn_ranges_on_device(problem, guides, 23.0)
    layers = [guides.start_offsets] + [guides.offsets] * m + [guides.end_offsets]
    for k in range(1, m + 1):
        angles_in = link_angles(layers[k - 1], layers[k], guides.spacing)
        angles_out = link_angles(layers[k], layers[k + 1], guides.spacing)
        lo, hi = feasible_ranges(angles_in, angles_out, 23.0)
        np.testing.assert_array_equal(problem.ranges[k - 1][0].copy_to_host(), lo)
        np.testing.assert_array_equal(problem.ranges[k - 1][1].copy_to_host(), hi)


def cpu_pipeline(gradient, guides, settings):
    """The CPU extraction's tables and optimum (the reference of score_and_solve)."""
    tables = link_score_tables(gradient, guides, settings.scoring)
    prepared = prepare(PolylineProblem(*tables, guides.offsets, guides.spacing, settings.max_turn_deg,
                                       guides.start_offsets, guides.end_offsets))
    return prepared, solve_prepared(prepared, "window", "cpu")


def gpu_score_and_solve(gradient, guides, settings):
    """gpu.polyline.score_and_solve with the scoring options, method and angle limit of ``settings``."""
    from gpu.polyline.solve import score_and_solve

    return score_and_solve(gradient, guides, settings.scoring, settings.solver, settings.max_turn_deg)


def check_score_and_solve(gradient, guides, settings):
    prepared, expected = cpu_pipeline(gradient, guides, settings)
    solution = gpu_score_and_solve(gradient, guides, settings)
    timings = solution.timings_ms
    assert solution.backend == "gpu" and solution.method == settings.solver
    assert set(timings) == {"scoring", "dp", "backtrack"} and all(v >= 0 for v in timings.values())
    tolerance = 1e-4 * max(1.0, abs(expected.score))
    assert solution.score == pytest.approx(expected.score, abs=tolerance)
    # The GPU path is optimal on the CPU's tables too (float32 tolerance).
    on_cpu_tables = path_score(prepared, solution.start_index, solution.indices, solution.end_index)
    assert on_cpu_tables == pytest.approx(expected.score, abs=tolerance)
    return solution


@kernels
@pytest.mark.parametrize("solver", ["window", "mitm"])
@pytest.mark.parametrize("snapped", [False, True])
def test_score_and_solve_matches_the_cpu_pipeline(solver, snapped):
    gradient = random_gradient(np.random.default_rng(9), 30, 40, 0, 0)
    guides = build_guides((5.0, 8.0), (35.0, 21.0), nodes=5, points=6, half_width_px=5.0,
                          snap_endpoints=snapped, snap_half_width_px=3.0)
    settings = scored_settings(solver=solver, max_turn_deg=35.0, mode="ribbon", ribbon_width_px=3.0)
    check_score_and_solve(gradient, guides, settings)


@kernels
def test_the_same_gradient_window_is_uploaded_once(monkeypatch):
    from gpu.polyline import solve as gpu_polyline

    uploads = []
    real_upload = gpu_polyline._upload_gradient
    monkeypatch.setattr(gpu_polyline, "_upload_gradient", lambda g, *rest: uploads.append(g) or real_upload(g, *rest))
    rng = np.random.default_rng(2)
    gradient = random_gradient(rng, 20, 20, 0, 0)
    guides = build_guides((2.0, 3.0), (17.0, 15.0), nodes=4, points=4, half_width_px=3.0)
    settings = scored_settings(solver="window", mode="edge")
    first = gpu_score_and_solve(gradient, guides, settings)
    again = gpu_score_and_solve(gradient, guides, settings.replace(max_turn_deg=60.0))
    assert len(uploads) == 1 and again.score >= first.score
    other = random_gradient(rng, 20, 20, 0, 0)
    check_score_and_solve(other, guides, settings)
    assert len(uploads) == 2


@kernels
def test_score_and_solve_falls_back_to_the_cpu_when_out_of_memory(monkeypatch):
    from gpu.polyline import dp as polyline_dp
    from gpu.polyline.solve import GpuMemoryError

    gradient = random_gradient(np.random.default_rng(6), 20, 30, 0, 0)
    guides = build_guides((3.0, 4.0), (25.0, 14.0), nodes=4, points=5, half_width_px=4.0)
    settings = scored_settings(solver="window", max_turn_deg=40.0)
    polyline_dp.release_workspace()  # nothing allocated yet: the memory check runs
    monkeypatch.setattr(polyline_dp, "free_bytes", lambda: 0)
    with pytest.raises(GpuMemoryError, match="MiB"):  # the GPU twin refuses; core decides to use the CPU
        gpu_score_and_solve(gradient, guides, settings)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        solution = score_and_solve_on("gpu", gradient, guides, settings.scoring, settings.solver,
                                      settings.max_turn_deg)
    timings = solution.timings_ms
    assert solution.backend == "cpu" and any("on the CPU" in str(w.message) for w in caught)
    assert solution.score == cpu_pipeline(gradient, guides, settings)[1].score
    assert {"scoring", "dp", "backtrack"} <= set(timings)


@kernels
def test_score_and_solve_refuses_brute_and_reports_infeasible():
    gradient = random_gradient(np.random.default_rng(8), 20, 20, 0, 0)
    guides = build_guides((2.0, 2.0), (4.0, 18.0), nodes=5, points=2, half_width_px=30.0)
    with pytest.raises(ValueError, match="CPU only"):
        gpu_score_and_solve(gradient, guides, scored_settings(solver="brute"))
    # Guides 4 px apart with points at offsets -30 and 30 only: the fixed start
    # (offset 0) reaches them at 82 degrees, so every path turns by 82 degrees or more.
    with pytest.raises(NoFeasiblePolylineError):
        gpu_score_and_solve(gradient, guides, scored_settings(solver="window", max_turn_deg=1.0))


@kernels
def test_extract_runs_end_to_end_on_the_gpu():
    import core

    rng = np.random.default_rng(12)
    image = rng.normal(100, 5, size=(48, 64)).astype(np.float32)
    image[20:26, :] += 80.0  # a bright horizontal road
    options = dict(mode="ribbon", nodes=5, points=8, half_width_px=8.0, ribbon_width_px=6.0, polarity="bright")
    on_gpu = core.extract(image, (6.0, 20.0), (58.0, 25.0), backend="gpu", **options)
    on_cpu = core.extract(image, (6.0, 20.0), (58.0, 25.0), backend="cpu", **options)
    assert on_gpu.backend == "gpu" and on_cpu.backend == "cpu"
    assert on_gpu.score == pytest.approx(on_cpu.score, rel=1e-4)
    assert set(on_gpu.timings_ms) >= {"scoring", "dp", "backtrack", "total"}


@kernels
def test_nothing_to_follow_gives_the_straight_segment_on_the_gpu_too():
    import core

    blank = np.zeros((40, 60), np.float32)
    options = dict(mode="ribbon", ribbon_width_px=24.0, polarity="any", nodes=5, points=7, half_width_px=6.0,
                   snap_endpoints=True, snap_half_width_px=3.0)
    on_gpu = core.extract(blank, (5.0, 10.0), (55.0, 30.0), backend="gpu", **options)
    on_cpu = core.extract(blank, (5.0, 10.0), (55.0, 30.0), backend="cpu", **options)
    assert on_gpu.backend == "gpu" and on_gpu.score == on_cpu.score == 0.0
    np.testing.assert_allclose(on_gpu.vertices_px, np.linspace((5.0, 10.0), (55.0, 30.0), 5), atol=1e-9)
    np.testing.assert_array_equal(on_gpu.vertices_px, on_cpu.vertices_px)


@kernels
def test_linesnap_extract_backend_gpu(capsys):
    pytest.importorskip("rasterio")  # the demo scene is a GeoTIFF
    import json

    from app.cli import main

    def run(backend):
        argv = ["extract", "--demo", "--backend", backend, "--mode", "edge", "--nodes", "5", "--points", "8",
                "--solver", "mitm"]
        assert main(argv) == 0
        return json.loads(capsys.readouterr().out)["features"][0]["properties"]

    on_gpu, on_cpu = run("gpu"), run("cpu")
    assert on_gpu["backend"] == "gpu" and on_cpu["backend"] == "cpu"
    assert on_gpu["score"] == pytest.approx(on_cpu["score"], rel=1e-4)


def test_kernels_under_cuda_simulator():
    run_kernels_under_simulator(__file__)


@pytest.mark.gpu
@pytest.mark.parametrize("solver", ["window", "mitm"])
def test_full_size_score_and_solve_matches_the_cpu(solver):
    seed = secrets.randbits(32)
    rng = np.random.default_rng(seed)
    gradient = random_gradient(rng, 160, 720, 0, 0)
    start = (20.0, float(rng.uniform(60, 100)))
    guides = build_guides(start, (700.0, float(rng.uniform(60, 100))), nodes=8, points=1024, half_width_px=40.0,
                          snap_endpoints=bool(rng.integers(2)), snap_half_width_px=8.0)
    settings = scored_settings(solver=solver, max_turn_deg=float(rng.uniform(10, 45)), mode="ribbon",
                                  ribbon_width_px=12.0, polarity=str(rng.choice(["any", "bright", "dark"])))
    try:
        check_score_and_solve(gradient, guides, settings)
    except AssertionError as exc:
        raise AssertionError(f"seed {seed}: {exc}") from exc
