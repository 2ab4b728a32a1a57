"""GPU map link scores of the adaptive mode (gpu.polyline.map_link_tables) against the CPU twin.

``kernels`` tests run on a GPU or in the CUDA-simulator child pytest of
:func:`test_kernels_under_cuda_simulator` (launches patched to 8 threads a
block, so the tables below span several blocks and end in a partial one);
``gpu`` tests need a real GPU.
"""

from __future__ import annotations

import dataclasses
import math
import secrets
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import engine
from core.cancel import Cancelled, CancelToken
from core.engine import BackendUnavailableError
from core.extraction.appearance import LikelihoodWindow
from core.extraction.guides import build_guides, guides_with_offsets
from core.extraction.map_scores import EXCLUDED_SCORE, corner_path_means, map_link_tables
from tests.gpu.conftest import KERNELS_RUN_HERE, run_kernels_under_simulator

kernels = pytest.mark.kernels


def random_window(rng, height, width, col_off, row_off):
    """A random road-likeness map in [0, 1) (float32)."""
    return LikelihoodWindow(rng.random((height, width), dtype=np.float32), col_off, row_off)


def n_points(guides) -> int:
    return sum(len(layer) for layer in guides.layer_points())


def gpu_tables(*args, **kwargs):
    import gpu.polyline

    return gpu.polyline.map_link_tables(*args, **kwargs)


def assert_tables_close(got, expected):
    assert len(got) == 3
    for g, e in zip(got, expected):
        assert isinstance(g, np.ndarray) and g.shape == e.shape and g.dtype == np.float32
        np.testing.assert_allclose(g, e, rtol=2e-5, atol=2e-5 * max(1.0, float(np.abs(e).max(initial=0))))


def naive_map_score(values, col_off, row_off, p, q, base, normal, lateral_penalty, sample_step=1.0):
    """The map score of the link ``p -> q`` from its formula, one sample and one neighbour at a time."""
    (px, py), (qx, qy) = p, q
    length = math.hypot(qx - px, qy - py)
    if length == 0.0:
        return 0.0
    n_samples = max(2, math.ceil(length / sample_step))
    total = 0.0
    for k in range(n_samples):
        x = px + (k + 0.5) / n_samples * (qx - px)
        y = py + (k + 0.5) / n_samples * (qy - py)
        u, v = x - col_off - 0.5, y - row_off - 0.5
        j0, i0 = math.floor(u), math.floor(v)
        value = 0.0
        for i, wi in ((i0, 1.0 - (v - i0)), (i0 + 1, v - i0)):
            for j, wj in ((j0, 1.0 - (u - j0)), (j0 + 1, u - j0)):
                if 0 <= i < len(values) and 0 <= j < len(values[0]):
                    value += wi * wj * float(values[i][j])
        total += value - base
    sideways = abs((qx - px) * normal[0] + (qy - py) * normal[1])
    return total * length / n_samples - lateral_penalty * sideways


def course_like(start, end, nodes, reach, step, end_px, end_step):
    """Guides laid out as the adaptive mode's course (offsets across the corridor, sliding ends)."""
    offsets = np.arange(-reach, reach + 1e-9, step)
    offsets -= offsets[np.argmin(np.abs(offsets))]
    return guides_with_offsets(start, end, nodes, offsets, np.arange(-end_px, end_px + 1e-9, end_step))


LAYOUTS = {
    # (start, end, nodes, points, half width, snapping): links 5*1 + 2*25 + 5*1 = 60, ... (odd counts too)
    "fixed ends": lambda: build_guides((12.3, 25.1), (33.7, 36.2), nodes=5, points=5, half_width_px=4.0),
    "snapping ends": lambda: build_guides((12.3, 25.1), (33.7, 36.2), nodes=5, points=7, half_width_px=4.0,
                                          snap_endpoints=True, snap_half_width_px=3.0),
    "one guide": lambda: build_guides((14.0, 22.0), (30.5, 31.0), nodes=3, points=3, half_width_px=2.5),
    "two points": lambda: build_guides((11.0, 38.0), (34.0, 21.0), nodes=4, points=2, half_width_px=1.0),
    "course": lambda: course_like((13.0, 24.0), (36.0, 37.0), 6, 7.0, 3.0, 2.0, 2.0),
    "start != end": lambda: dataclasses.replace(
        build_guides((12.0, 24.0), (32.0, 38.0), nodes=4, points=5, half_width_px=3.0, snap_endpoints=True,
                     snap_half_width_px=2.0), end_offsets=np.array([-1.0, 0.5, 2.0])),
}


@kernels
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("lateral_penalty", [0.0, 1.5])
@pytest.mark.parametrize("with_excluded", [False, True])
def test_map_tables_match_the_cpu_tables(layout, lateral_penalty, with_excluded):
    rng = np.random.default_rng(sorted(LAYOUTS).index(layout) + int(10 * lateral_penalty) + 100 * with_excluded)
    # The map (cols 10..34, rows 20..38) leaves some samples of every layout outside: they count 0.
    window = random_window(rng, 19, 25, 10, 20)
    guides = LAYOUTS[layout]()
    excluded = None
    if with_excluded:
        excluded = rng.random(n_points(guides)) < 0.25
        excluded[rng.integers(excluded.size)] = True
    got = gpu_tables(window, guides, 0.5, lateral_penalty, excluded)
    expected = map_link_tables(window, guides, 0.5, lateral_penalty, excluded)
    assert_tables_close(got, expected)
    if with_excluded:
        assert any((table == np.float32(EXCLUDED_SCORE)).any() for table in got)


@kernels
def test_map_tables_match_the_naive_formula():
    rng = np.random.default_rng(4)
    window = random_window(rng, 6, 7, -2, 3)
    guides = build_guides((0.2, 4.9), (3.1, 7.7), nodes=4, points=3, half_width_px=1.5, snap_endpoints=True)
    first, links, last = gpu_tables(window, guides, 0.3, 0.7)
    layers = guides.layer_points()
    for table, src, dst in ((first, layers[0], layers[1]), (links[0], layers[1], layers[2]),
                            (last, layers[2], layers[3])):
        for i, p in enumerate(src):
            for j, q in enumerate(dst):
                expected = naive_map_score(window.values, -2, 3, p, q, 0.3, guides.normal, 0.7)
                assert table[i, j] == pytest.approx(expected, rel=1e-5, abs=1e-6)


@kernels
@pytest.mark.parametrize("where", ["far away", "one pixel", "empty"])
def test_a_map_that_misses_the_guides_counts_zero(where):
    height, width, col_off, row_off = {"far away": (5, 6, 500, -300), "one pixel": (1, 1, 20, 30),
                                       "empty": (0, 4, 0, 0)}[where]
    window = random_window(np.random.default_rng(5), height, width, col_off, row_off)
    guides = build_guides((12.0, 25.0), (33.0, 36.0), nodes=5, points=3, half_width_px=4.0, snap_endpoints=True)
    got = gpu_tables(window, guides, 0.25, 1.0)
    assert_tables_close(got, map_link_tables(window, guides, 0.25, 1.0))
    if where != "one pixel":  # nothing read: -base per px of length, -penalty per px across
        layers = guides.layer_points()
        step = layers[2][:, None, :] - layers[1][None, :, :]
        expected = -0.25 * np.hypot(step[..., 0], step[..., 1]) - np.abs(step @ guides.normal)
        np.testing.assert_allclose(got[1][0], expected.T, rtol=1e-6)


@kernels
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1), nodes=st.integers(3, 6), points=st.integers(2, 6), snapped=st.booleans(),
    size=st.tuples(st.integers(1, 14), st.integers(1, 14)), base=st.floats(-1.0, 1.0),
    lateral_penalty=st.sampled_from([0.0, 0.1, 2.0]), exclude=st.sampled_from([0.0, 0.3, 1.0]),
)
def test_random_map_tables_match_the_cpu_tables(seed, nodes, points, snapped, size, base, lateral_penalty, exclude):
    rng = np.random.default_rng(seed)
    start, end = rng.uniform(0, 16, 2), rng.uniform(0, 16, 2)
    guides = build_guides(start, end + (0.5, 0.0), nodes=nodes, points=points,
                          half_width_px=float(rng.uniform(0.5, 5)), snap_endpoints=snapped)
    window = random_window(rng, *size, int(rng.integers(-4, 8)), int(rng.integers(-4, 8)))
    excluded = rng.random(n_points(guides)) < exclude
    assert_tables_close(gpu_tables(window, guides, base, lateral_penalty, excluded),
                        map_link_tables(window, guides, base, lateral_penalty, excluded))


@kernels
def test_excluded_points_and_their_check():
    window = random_window(np.random.default_rng(6), 30, 30, 0, 0)
    guides = build_guides((3.0, 5.0), (26.0, 24.0), nodes=6, points=4, half_width_px=3.0)
    excluded = np.zeros(n_points(guides), bool)
    excluded[1 + 4 : 1 + 8] = True  # every point of guide 2
    first, links, last = gpu_tables(window, guides, 0.5, 1.0, excluded.tolist())
    assert (links[0] == np.float32(EXCLUDED_SCORE)).all() and (links[1] == np.float32(EXCLUDED_SCORE)).all()
    assert (first > EXCLUDED_SCORE).all() and (links[2] > EXCLUDED_SCORE).all() and (last > EXCLUDED_SCORE).all()
    with pytest.raises(ValueError, match=r"one flag per candidate point \(18\); got \(17,\)"):
        gpu_tables(window, guides, 0.5, 1.0, excluded[:-1])


@kernels
def test_the_same_map_is_uploaded_once(monkeypatch):
    from gpu.polyline import scores

    uploads = []
    real_buffer = scores.buffer
    monkeypatch.setattr(scores, "buffer", lambda name, *rest: uploads.append(name) or real_buffer(name, *rest))
    rng = np.random.default_rng(2)
    window, other = random_window(rng, 20, 20, 0, 0), random_window(rng, 20, 20, 0, 0)
    guides = build_guides((2.0, 3.0), (17.0, 15.0), nodes=4, points=4, half_width_px=3.0)
    gpu_tables(window, guides, 0.5, 1.0)
    again = gpu_tables(window, guides, 0.2, 0.0)
    assert uploads.count("map") == 1
    assert_tables_close(again, map_link_tables(window, guides, 0.2, 0.0))
    assert_tables_close(gpu_tables(other, guides, 0.5, 1.0), map_link_tables(other, guides, 0.5, 1.0))
    assert uploads.count("map") == 2


@kernels
def test_cancel_is_checked_before_the_device_work(monkeypatch):
    from gpu.polyline import scores

    monkeypatch.setattr(scores, "map_scores_on_device", lambda *args: pytest.fail("the device ran"))
    token = CancelToken()
    token.cancel()
    guides = build_guides((2.0, 3.0), (17.0, 15.0), nodes=4, points=4, half_width_px=3.0)
    with pytest.raises(Cancelled):
        gpu_tables(random_window(np.random.default_rng(1), 9, 9, 0, 0), guides, 0.5, 1.0, cancel=token)


@kernels
def test_out_of_memory_is_a_gpu_memory_error_and_the_cpu_takes_over(monkeypatch):
    from numba.cuda.cudadrv.driver import CudaAPIError

    from gpu.polyline import GpuMemoryError, scores

    def out_of_memory(*args):
        error = CudaAPIError(2, "CUDA_ERROR_OUT_OF_MEMORY")
        error.code = 2  # the simulator's CudaAPIError keeps no code
        raise error

    monkeypatch.setattr(scores, "map_scores_on_device", out_of_memory)
    window = random_window(np.random.default_rng(3), 20, 20, 0, 0)
    guides = build_guides((2.0, 3.0), (17.0, 15.0), nodes=4, points=4, half_width_px=3.0)
    with pytest.raises(GpuMemoryError, match="ran out of memory"):
        gpu_tables(window, guides, 0.5, 1.0)
    with warnings.catch_warnings(record=True) as caught:  # what core.extraction.adaptive does with it
        warnings.simplefilter("always")
        tables = engine.run_with_cpu_fallback("gpu", lambda: gpu_tables(window, guides, 0.5, 1.0),
                                              lambda: map_link_tables(window, guides, 0.5, 1.0))
    assert any("on the CPU" in str(w.message) for w in caught)
    assert_tables_close(tables, map_link_tables(window, guides, 0.5, 1.0))


def road_image(corners, shape=(80, 120), width_px=5.0, seed=3):
    """Noise around 60 with a road 90 brighter along the polyline ``corners`` ((x, y) px)."""
    image = np.random.default_rng(seed).normal(60.0, 6.0, size=shape).astype(np.float32)
    yy, xx = np.mgrid[: shape[0], : shape[1]]
    distance = np.full(shape, np.inf)
    for p, q in zip(np.asarray(corners[:-1], float), np.asarray(corners[1:], float)):
        v = q - p
        t = np.clip(((xx - p[0]) * v[0] + (yy - p[1]) * v[1]) / (v @ v), 0.0, 1.0)
        distance = np.minimum(distance, np.hypot(xx - p[0] - t * v[0], yy - p[1] - t * v[1]))
    image[distance <= width_px / 2] += 90.0
    return image


@kernels
@pytest.mark.parametrize("course, corners, start, end", [
    ("bent", [(10, 60), (60, 20), (110, 60)], (30, 44), (90, 44)),  # the clicks' segment misses the bend
    ("straight", [(10, 30), (50, 15), (110, 30)], (60, 17.5), (100, 27.5)),  # both clicks on one leg
    ("straight", [(0, 3), (120, 3)], (0, 2), (120, 4)),  # clicks on the border: ends' candidates cut there
])
def test_adaptive_extraction_on_the_gpu_matches_the_cpu(course, corners, start, end):
    import core

    image = road_image(corners)
    options = dict(mode="auto", nodes=4, points=7, half_width_px=4.0)
    on_gpu = core.extract(image, start, end, backend="gpu", **options)
    on_cpu = core.extract(image, start, end, backend="cpu", **options)
    assert on_gpu.backend == "gpu" and on_cpu.backend == "cpu"
    assert on_gpu.estimate.course == on_cpu.estimate.course == course
    assert on_gpu.score == pytest.approx(on_cpu.score, rel=1e-4, abs=1e-4)
    np.testing.assert_allclose(on_gpu.vertices_px, on_cpu.vertices_px, atol=1e-6)
    assert (on_gpu.vertices_px >= 0).all() and (on_gpu.vertices_px <= [120, 80]).all()
    for mode in ("ribbon", "edge"):  # the scored modes with the ends' candidates cut at the border too
        on_gpu = core.extract(image, start, end, backend="gpu", mode=mode, nodes=4, points=7, half_width_px=4.0)
        on_cpu = core.extract(image, start, end, backend="cpu", mode=mode, nodes=4, points=7, half_width_px=4.0)
        np.testing.assert_allclose(on_gpu.vertices_px, on_cpu.vertices_px, atol=1e-6)


@kernels
@pytest.mark.parametrize("n_corners", [1, 7, 37])
def test_corner_path_means_match_the_cpu_and_the_naive_formula(n_corners):
    import gpu.polyline

    rng = np.random.default_rng(n_corners)
    window = random_window(rng, 40, 50, -3, 2)
    start, end = np.array([2.0, 10.0]), np.array([44.0, 30.0])
    corners = rng.uniform([-10.0, -5.0], [60.0, 50.0], (n_corners, 2))  # some beyond the map
    got = gpu.polyline.corner_path_means(window, start, end, corners)
    expected = corner_path_means(window, start, end, corners)
    assert got.shape == (n_corners,) and got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
    # the mean of the two segments' samples, from the map formula (base 0, no penalty: sum / count)
    for corner, value in zip(corners, got):
        sums, counts = [], []
        for p, q in ((start, corner), (corner, end)):
            k = max(2, math.ceil(math.hypot(*(q - p))))
            sums.append(naive_map_score(window.values, -3, 2, p, q, 0.0, (0.0, 1.0), 0.0) * k / math.hypot(*(q - p)))
            counts.append(k)
        assert value == pytest.approx(sum(sums) / sum(counts), rel=1e-9, abs=1e-9)


@pytest.mark.skipif(KERNELS_RUN_HERE, reason="a GPU (or the simulator) is present")
def test_without_cuda_map_link_tables_raises_a_clear_error():
    import gpu.polyline

    window = random_window(np.random.default_rng(0), 10, 10, 0, 0)
    guides = build_guides((1.0, 1.0), (8.0, 8.0), nodes=3, points=2, half_width_px=1.0)
    with pytest.raises(BackendUnavailableError, match="GPU"):
        gpu.polyline.map_link_tables(window, guides, 0.5, 1.0)


def test_kernels_under_cuda_simulator():
    run_kernels_under_simulator(__file__)


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["course", "refine"])
def test_full_size_map_tables_match_the_cpu(layout):
    seed = secrets.randbits(32)
    rng = np.random.default_rng(seed)
    # The map (x from 20..60 to 660..700) leaves both ends of the corridor partly uncovered (outside = 0).
    window = random_window(rng, 360, 640, int(rng.integers(20, 60)), int(rng.integers(0, 40)))
    start, end = (30.0, float(rng.uniform(150, 210))), (690.0, float(rng.uniform(150, 210)))
    if layout == "course":  # 24 nodes, 107 candidates a guide, sliding ends: 250k links
        guides, excluded = course_like(start, end, 24, 160.0, 3.0, 6.0, 2.0), None
    else:  # 45 nodes of 161 candidates within 8 px of a wandering reference: 1.1M links
        guides = guides_with_offsets(start, end, 45, np.arange(-40.0, 40.25, 0.5), np.linspace(-8, 8, 33))
        reference = np.cumsum(rng.normal(0.0, 2.0, guides.n_guides))
        far = np.abs(guides.offsets[None, :] - reference[:, None]) > 8.0
        excluded = np.concatenate([np.zeros(33, bool), far.ravel(), np.zeros(33, bool)])
    base, lateral_penalty = float(rng.uniform(0.2, 0.8)), float(rng.choice([0.0, 0.1, 1.0]))
    try:
        assert_tables_close(gpu_tables(window, guides, base, lateral_penalty, excluded),
                            map_link_tables(window, guides, base, lateral_penalty, excluded))
    except AssertionError as exc:
        raise AssertionError(f"seed {seed}: {exc}") from exc


@pytest.mark.gpu
@pytest.mark.parametrize("options", [dict(), dict(snap_endpoints=True, solver="mitm")])
def test_full_size_adaptive_extraction_on_the_gpu_matches_the_cpu(options):
    import core

    image = road_image([(20, 250), (250, 60), (480, 250)], shape=(300, 500), width_px=9.0, seed=11)
    start, end = (80.0, 250.0 - 190.0 / 230.0 * 60.0), (420.0, 250.0 - 190.0 / 230.0 * 60.0)  # both on the road
    on_gpu = core.extract(image, start, end, mode="auto", backend="gpu", **options)
    on_cpu = core.extract(image, start, end, mode="auto", backend="cpu", **options)
    assert on_gpu.backend == "gpu" and on_gpu.estimate.course == on_cpu.estimate.course == "bent"
    assert on_gpu.score == pytest.approx(on_cpu.score, rel=1e-4)
    np.testing.assert_allclose(on_gpu.vertices_px, on_cpu.vertices_px, atol=1e-6)
