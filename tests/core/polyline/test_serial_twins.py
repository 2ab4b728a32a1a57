"""The serial twins of the ``parallel=True`` kernels (small stages) give the parallel kernels' exact results."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.extraction import ExtractionSettings, extract
from core.io.raster import open_raster
from core.polyline import stages, window
from tests.core.extraction.test_sample_scene import SCENE, TRUTH


def _stage_inputs(rng, n_prev: int, d: int, n_next: int):
    """Random stage inputs; ``n_prev == n_next`` so that they also serve as the start stage's reach (d, n_prev)."""
    values = rng.normal(size=(n_prev, d))
    table = rng.normal(size=(d, n_next)).astype(np.float32)
    # feasible p of (q, r): a window [lo, hi] whose ends fall as r grows (as turn ranges do)
    ends = np.sort(rng.integers(0, n_prev, size=(2, d, n_next)), axis=0)
    lo, hi = (-np.sort(-end, axis=1) for end in ends)
    return values, table, lo.astype(np.int32), hi.astype(np.int32)


@pytest.mark.parametrize("kernel", ["_window_stage", "_few_previous_stage", "_start_stage", "_few_next_stage"])
def test_each_stage_twin_writes_what_its_parallel_kernel_writes(kernel):
    parallel = getattr(window, kernel)
    serial = window._SERIAL[parallel]
    assert serial is not parallel and not serial.targetoptions.get("parallel")
    values, table, lo, hi = _stage_inputs(np.random.default_rng(7), 29, 45, 29)
    results = []
    for run in (parallel, serial):
        out, exponents = np.full((45, 29), np.nan), np.zeros(45, np.uint32)
        run(values, table, lo, hi, out, exponents)
        results.append((out, exponents))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert np.isfinite(results[0][0]).any()


def _demo_extraction(**overrides):
    demo = json.loads(TRUTH.read_text(encoding="utf-8"))["demo"]
    with open_raster(SCENE) as raster:
        return extract(raster, tuple(demo["start"]), tuple(demo["end"]), ExtractionSettings(**overrides))


@pytest.mark.parametrize("points", [33, 160])
def test_an_extraction_all_serial_equals_it_all_parallel(monkeypatch, points):
    # 33 points: small DP stages; 160: the diagonal stage too.  Scoring kernels (likeness, link
    # scores, corner means) are all covered by the adaptive mode of the sample scene.
    monkeypatch.setattr(stages, "PARALLEL_MIN_STEPS", 0)
    every_parallel = _demo_extraction(points=points)
    monkeypatch.setattr(stages, "PARALLEL_MIN_STEPS", 2**62)
    every_serial = _demo_extraction(points=points)
    np.testing.assert_array_equal(every_parallel.vertices_px, every_serial.vertices_px)
    np.testing.assert_array_equal(every_parallel.indices, every_serial.indices)
    assert every_parallel.score == every_serial.score


def test_the_twin_has_its_own_name_in_numba_cache():
    twin = window._SERIAL[window._window_stage]
    assert twin.py_func.__qualname__ == "_window_stage_serial"
    assert twin.py_func.__module__ == "core.polyline.window"
    assert twin._cache._cache_file._index_path != window._window_stage._cache._cache_file._index_path
