"""core.extraction: settings, inputs, windowed reads, timings and errors of extract()."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.engine import BackendUnavailableError, gpu_available
from core.extraction import ExtractionResult, ExtractionSettings, extract, gradient_step_px, window_margin_px
from core.extraction.pipeline import FINE_GRID_BELOW_SIGMA_PX
from core.extraction.scores import link_score_tables
from core.io.raster import RasterError, open_raster
from core.polyline import PolylineProblem, path_score, prepare

#: The ribbon mode as the defaults were before the adaptive mode: a 24 px ribbon, either polarity.
OLD_DEFAULT_RIBBON = dict(mode="ribbon", ribbon_width_px=24.0, polarity="any")

TIMING_KEYS = {"read", "appearance", "gradient", "scoring", "dp", "backtrack", "total"}
FAST = dict(nodes=5, points=25, half_width_px=12.0, sigma_px=1.5, backend="cpu", mode="ribbon",
            ribbon_width_px=10.0, polarity="dark")


def _band_image(height=120, width=200, centre_y=60.5, half_width=5, seed=0):
    """A dark horizontal band (a road) on bright, noisy ground; float32."""
    rng = np.random.default_rng(seed)
    image = np.full((height, width), 200.0, np.float32) + rng.normal(0, 3, (height, width)).astype(np.float32)
    rows = np.arange(height) + 0.5
    image[np.abs(rows - centre_y) < half_width] -= 120.0
    return image


def _write_geotiff(path, image):
    import rasterio
    from affine import Affine

    profile = dict(driver="GTiff", width=image.shape[1], height=image.shape[0], count=1, dtype="float32",
                   crs="EPSG:32633", transform=Affine(0.5, 0.0, 500000.0, 0.0, -0.5, 4000000.0))
    with rasterio.open(path, "w", **profile) as ds:
        ds.write(image, 1)
    return path


def test_path_raster_and_array_give_the_same_result(tmp_path):
    image = _band_image()
    path = _write_geotiff(tmp_path / "band.tif", image)
    start, end = (20.0, 57.0), (180.0, 64.0)
    from_array = extract(image, start, end, **FAST)
    from_path = extract(str(path), start, end, **FAST)
    with open_raster(path) as raster:
        from_raster = extract(raster, start, end, **FAST)
        again = extract(raster, start, end, **FAST)  # the raster stays open for repeated use
        assert not raster.closed
    for other in (from_path, from_raster, again):
        np.testing.assert_array_equal(other.vertices_px, from_array.vertices_px)
        assert other.score == from_array.score
        np.testing.assert_array_equal(other.indices, from_array.indices)


def test_result_fields_and_timings():
    image = _band_image()
    result = extract(image, (20.0, 57.0), (180.0, 64.0), snap_endpoints=True, **FAST)
    assert isinstance(result, ExtractionResult)
    assert set(result.timings_ms) == TIMING_KEYS
    assert all(v >= 0 for v in result.timings_ms.values())
    parts = sum(v for k, v in result.timings_ms.items() if k != "total")
    assert result.timings_ms["total"] >= 0.99 * parts
    assert result.backend == "cpu" and result.method == "window"
    assert result.vertices_px.shape == (5, 2) and result.vertices_px.dtype == np.float64
    assert result.indices.shape == (3,)
    np.testing.assert_array_equal(
        result.vertices_px, result.guides.vertices(result.start_index, result.indices, result.end_index)
    )
    # the road centre line is y = 60.5; snapping lets both ends reach it
    np.testing.assert_allclose(result.vertices_px[:, 1], 60.5, atol=1.5)


def test_score_is_the_path_score_of_the_link_tables():
    image = _band_image(seed=4)
    settings = ExtractionSettings(**FAST)
    result = extract(image, (15.0, 55.0), (185.0, 66.0), settings)
    from core.extraction.gradient import gradient_window

    box = result.guides.bounds_px(window_margin_px(settings))
    with open_raster(image) as raster:
        gradient = gradient_window(raster.read_window(*box), settings.sigma_px, box[0], box[1],
                                   step_px=gradient_step_px(settings))
    tables = link_score_tables(gradient, result.guides, settings.scoring)
    prepared = prepare(PolylineProblem(*tables, result.guides.offsets, result.guides.spacing, settings.max_turn_deg,
                                       result.guides.start_offsets, result.guides.end_offsets))
    assert result.score == pytest.approx(path_score(prepared, result.start_index, result.indices, result.end_index))


def test_small_smoothing_uses_the_half_pixel_gradient_grid():
    assert gradient_step_px(ExtractionSettings(sigma_px=0.5)) == 0.5
    assert gradient_step_px(ExtractionSettings(sigma_px=FINE_GRID_BELOW_SIGMA_PX)) == 1.0
    assert gradient_step_px(ExtractionSettings()) == 1.0  # the defaults (sigma 4.5)


def test_fixed_endpoints_stay_where_clicked():
    image = _band_image()
    result = extract(image, (20.0, 57.0), (180.0, 64.0), snap_endpoints=False, **FAST)
    np.testing.assert_array_equal(result.vertices_px[0], [20.0, 57.0])
    np.testing.assert_array_equal(result.vertices_px[-1], [180.0, 64.0])
    assert result.start_index == result.end_index == 0


def test_only_the_guides_window_is_read():
    image = np.tile(_band_image(), (20, 20))  # 2400 x 4000
    calls = []
    with open_raster(image) as raster:
        original = raster.read_window

        def spy(*box):
            calls.append(box)
            return original(*box)

        raster.read_window = spy
        result = extract(raster, (1020.0, 657.0), (1180.0, 664.0), **FAST)
    assert len(calls) == 1
    assert calls[0] == result.guides.bounds_px(window_margin_px(result.settings))
    col_off, row_off, width, height = calls[0]
    assert width * height < 0.01 * image.size


def test_window_overhanging_the_raster_edge_works():
    image = _band_image()
    result = extract(image, (0.0, 58.0), (200.0, 63.0), **FAST)
    np.testing.assert_allclose(result.vertices_px[1:-1, 1], 60.5, atol=1.5)


@pytest.mark.parametrize("mode", ["auto", "ribbon", "edge"])
def test_snapped_ends_stay_on_the_raster(mode):
    # A road along the image's top edge, clicked on the edge and in the corners: snapping would move the ends
    # up to 8 px across the chord, off the image (they came back at y = -4.5 and x = 163.6 on 160 x 80)
    rng = np.random.default_rng(0)
    image = rng.normal(0, 0.05, (80, 160)).astype(np.float32)
    image[:6] += 1.0
    image[36:44] += 1.0
    for start, end in (((0.0, 0.0), (160.0, 80.0)), ((10.0, 0.0), (150.0, 0.0)), ((0.0, 2.0), (160.0, 3.0)),
                       ((160.0, 38.0), (0.0, 43.0))):
        vertices = extract(image, start, end, backend="cpu", mode=mode).vertices_px
        assert (vertices >= 0).all() and (vertices <= [160, 80]).all(), (start, end, vertices)
    result = extract(image, (20.0, 36.0), (140.0, 37.0), backend="cpu", mode="ribbon")  # away from the edges
    assert result.guides.start_offsets.size == result.guides.end_offsets.size == result.settings.points


@pytest.mark.parametrize("mode", ["auto", "ribbon", "edge"])
@pytest.mark.parametrize("value", [0.0, 7.0, 1000.0])
def test_a_blank_image_gives_the_straight_segment(mode, value):
    # a constant but non-zero window's smoothed gradient is float32 rounding (1e-8), not 0: the ribbon and edge
    # modes bowed the line the whole half-width off the chord on it
    image = np.full((80, 160), value, np.float32)
    image[:, :3] = np.nan  # no data beside it changes nothing
    result = extract(image, (10.0, 40.0), (150.0, 44.0), backend="cpu", mode=mode)
    chord = np.interp(result.vertices_px[:, 0], [10.0, 150.0], [40.0, 44.0])
    np.testing.assert_allclose(result.vertices_px[:, 1], chord, atol=1e-9)
    np.testing.assert_allclose(result.vertices_px[[0, -1]], [[10.0, 40.0], [150.0, 44.0]], atol=1e-9)


@pytest.mark.parametrize("mode", ["auto", "ribbon", "edge"])
def test_clicks_along_each_border_extract(mode):
    # the data then ends at the polyline: the road estimate's edge pair had no side beyond it, and auto mode
    # failed with "attempt to get argmax of an empty sequence" on a road along the image's edge
    image = np.random.default_rng(3).normal(100.0, 8.0, (120, 200)).astype(np.float32)
    for start, end in (((20.0, 0.0), (150.0, 1.0)), ((0.0, 20.0), (1.0, 100.0)), ((200.0, 10.0), (199.0, 110.0)),
                       ((30.0, 120.0), (180.0, 120.0))):
        ends = extract(image, start, end, backend="cpu", mode=mode).vertices_px[[0, -1]]
        assert (ends >= 0).all() and (ends <= [200, 120]).all(), (start, end)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("mode", ["auto", "ribbon", "edge"])
def test_float16_and_huge_integer_images_raise_no_numpy_warnings(mode):
    rng = np.random.default_rng(0)
    small = (rng.random((80, 160)) * 100).astype(np.float16)
    small[36:44] += 200
    huge = np.full((80, 160), 2**63 - 5, np.uint64)
    huge[36:44] = 2**62
    for image in (small, huge):  # (a float16 clip overflowed its cast; a float32 spread of 9e18 its sum)
        assert extract(image, (10.0, 40.0), (150.0, 41.0), backend="cpu", mode=mode).vertices_px.shape[1] == 2


def test_settings_round_trip_and_overrides():
    settings = ExtractionSettings(nodes=6, points=33, mode="edge", polarity="dark", band=2, snap_half_width_px=3.0)
    data = json.loads(json.dumps(settings.to_dict()))
    assert ExtractionSettings.from_dict(data) == settings
    assert ExtractionSettings.from_dict({}) == ExtractionSettings()
    assert settings.replace(nodes=7).nodes == 7 and settings.nodes == 6
    image = _band_image()
    result = extract(image, (20.0, 57.0), (180.0, 64.0), ExtractionSettings(**FAST), nodes=4)
    assert result.settings.nodes == 4 and result.indices.shape == (2,)


def test_settings_normalise_numpy_numbers():
    settings = ExtractionSettings(nodes=np.int64(6), half_width_px=np.float32(10.0), sigma_px=2)
    assert type(settings.nodes) is int and type(settings.half_width_px) is float
    assert type(settings.sigma_px) is float


@pytest.mark.parametrize(
    "changes, error, match",
    [
        (dict(nodes=2), ValueError, "nodes must be an integer >= 3"),
        (dict(nodes=5.5), TypeError, "nodes"),
        (dict(points=1), ValueError, "points must be an integer >= 2"),
        (dict(half_width_px=0.0), ValueError, "half_width_px"),
        (dict(max_turn_deg=0.0), ValueError, r"max_turn_deg .* in \(0, 180\]"),
        (dict(max_turn_deg=180.5), ValueError, "max_turn_deg"),
        (dict(sigma_px=-1.0), ValueError, "sigma_px"),
        (dict(ribbon_width_px=-2.0), ValueError, "ribbon_width_px"),
        (dict(mode="ridge"), ValueError, "mode must be one of auto, ribbon, edge"),
        (dict(polarity="grey"), ValueError, "polarity"),
        (dict(ribbon_combine="max"), ValueError, "ribbon_combine"),
        (dict(solver="dijkstra"), ValueError, "solver"),
        (dict(backend="tpu"), ValueError, "backend"),
        (dict(band=0), ValueError, "band"),
        (dict(snap_endpoints="yes"), TypeError, "snap_endpoints"),
        (dict(snap_half_width_px=0.0), ValueError, "snap_half_width_px"),
        (dict(sigma_px=float("nan")), ValueError, "sigma_px"),
    ],
)
def test_settings_validation(changes, error, match):
    with pytest.raises(error, match=match):
        ExtractionSettings(**changes)


def test_unknown_settings_are_refused():
    with pytest.raises(ValueError, match="unknown extraction setting.*colour"):
        ExtractionSettings.from_dict({"colour": "red"})
    with pytest.raises(TypeError, match="unknown extraction setting"):
        extract(_band_image(), (20, 57), (180, 64), colour="red")


@pytest.mark.parametrize(
    "start, end, match",
    [
        ((-1.0, 50.0), (100.0, 50.0), r"start \(-1, 50\) lies outside the raster of 200 x 120"),
        ((10.0, 50.0), (100.0, 121.0), r"end \(100, 121\) lies outside the raster of 200 x 120"),
        ((10.0, np.nan), (100.0, 50.0), "start"),
        ((30.0, 40.0), (30.0, 40.0), "must differ"),
    ],
)
def test_bad_endpoints(start, end, match):
    with pytest.raises(ValueError, match=match):
        extract(_band_image(), start, end, **FAST)


def test_endpoint_that_is_not_a_pair():
    with pytest.raises(TypeError, match="start must be a pair"):
        extract(_band_image(), (1, 2, 3), (50, 50), **FAST)
    for bad in ((True, 40), np.array([True, False]), ("10", 40), {0: 10, 1: 40}):  # (True, 40) read as x = 1
        with pytest.raises(TypeError, match="end must be a pair"):
            extract(_band_image(), (50, 50), bad, **FAST)
    result = extract(_band_image(), (np.float32(20), np.int64(57)), np.array([180, 64], np.uint16), **FAST)
    assert result.vertices_px.shape[1] == 2  # numpy numbers are numbers


def test_all_nodata_window():
    image = _band_image()
    image[:, :100] = np.nan
    with pytest.raises(ValueError, match="no valid pixel"):
        extract(image, (10.0, 20.0), (60.0, 30.0), **FAST)


def test_absurd_sizes_fail_before_allocating():
    with pytest.raises(ValueError, match=r"need [\d.]+ [GT]iB"):
        extract(_band_image(), (20, 57), (180, 64), nodes=100, points=200_000, backend="cpu")


def test_band_of_an_open_raster_must_match():
    rgb = np.dstack([_band_image()] * 3)
    with open_raster(rgb, band=2) as raster:
        assert extract(raster, (20, 57), (180, 64), band=2, **FAST).vertices_px.shape == (5, 2)
        with pytest.raises(ValueError, match="band"):
            extract(raster, (20, 57), (180, 64), band=1, **FAST)


def test_missing_file_is_a_raster_error(tmp_path):
    with pytest.raises(RasterError):
        extract(tmp_path / "missing.tif", (1, 1), (5, 5))


@pytest.mark.skipif(gpu_available(), reason="a GPU is present here")
def test_gpu_backend_without_a_gpu():
    with pytest.raises(BackendUnavailableError):
        extract(_band_image(), (20, 57), (180, 64), backend="gpu")


def test_numba_kernels_are_cached_on_disk():
    from numba.core.dispatcher import Dispatcher

    import core.extraction.scores

    kernels = [obj for obj in vars(core.extraction.scores).values() if isinstance(obj, Dispatcher)]
    assert kernels
    assert all(type(k._cache).__name__ != "NullCache" for k in kernels)


def test_every_solver_finds_the_same_optimum():
    image = _band_image(seed=7)
    small = dict(FAST, nodes=4, points=7, half_width_px=6.0)
    scores = {solver: extract(image, (20.0, 58.0), (180.0, 63.0), solver=solver, **small).score
              for solver in ("window", "mitm", "brute")}
    assert scores["mitm"] == pytest.approx(scores["window"], rel=1e-6)
    assert scores["brute"] == pytest.approx(scores["window"], rel=1e-6)


def test_brute_with_auto_backend_runs_on_the_cpu():
    image = _band_image()
    settings = ExtractionSettings(**dict(FAST, nodes=3, points=5, backend="auto", solver="brute"))
    assert extract(image, (20.0, 58.0), (180.0, 63.0), settings).backend == "cpu"


@pytest.mark.parametrize("points, snap", [(25, False), (24, True), (33, True)])
def test_nothing_to_follow_gives_the_straight_segment(points, snap):
    # a blank image (or nodata, whose gradient counts 0): every polyline scores 0, and the
    # solver's tie-break would zigzag at random
    flat = np.zeros((80, 120), np.float32)
    result = extract(flat, (10.0, 40.0), (110.0, 52.0), nodes=6, points=points, half_width_px=10.0,
                     snap_endpoints=snap, backend="cpu", **OLD_DEFAULT_RIBBON)
    assert result.score == 0.0
    # every vertex on the clicks' chord; with an even number of points the candidates nearest it
    # lie half a step off
    a, b = np.array([10.0, 40.0]), np.array([110.0, 52.0])
    u = (b - a) / np.hypot(*(b - a))
    across = np.abs((result.vertices_px - a) @ np.array([-u[1], u[0]]))
    assert across.max() <= (0.0 if points % 2 else 10.0 / (points - 1)) + 1e-9
    along = (result.vertices_px - a) @ u
    np.testing.assert_allclose(np.diff(along), np.diff(along)[0], atol=0.1)  # and evenly spaced along it


def test_a_ribbon_along_the_image_border_stays_on_the_image():
    # one side of every ribbon sample lies beyond the border: all links score 0 (geometric mean)
    rng = np.random.default_rng(5)
    image = rng.normal(100, 10, (300, 200)).astype(np.float32)
    result = extract(image, (200.0, 40.0), (200.0, 260.0), backend="cpu", **OLD_DEFAULT_RIBBON)
    assert result.score == 0.0
    assert (result.vertices_px[:, 0] == 200.0).all()
