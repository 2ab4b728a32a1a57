"""Long spans run coarse-to-fine: a reduced read, the extraction there, full-resolution pieces along it."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest
import rasterio
from hypothesis import given, settings
from hypothesis import strategies as st
from rasterio.enums import Resampling
from rasterio.transform import from_origin

from core.cli.extract import extract_main
from core.extraction import ExtractionSettings, extract
from core.extraction.coarse import PIECE_SPAN_PX, STAGE_SHARE, coarse_factor, piece_ends
from core.extraction.cost import check_extraction_cost
from core.io.raster import open_raster
from core.memory import HostMemoryError

pytestmark = pytest.mark.filterwarnings("ignore::rasterio.errors.NotGeoreferencedWarning")

SIZE = 6000
ROAD_HALF_WIDTH_PX = 7.0
#: Clicks on the road's centre line, about 4700 px apart: a direct extraction reads ~13 Mpx.
START_X, END_X = 800.0, 4400.0
BUDGET_BYTES = 64 * 2**20


def road_y(x):
    """Centre line of the synthetic road: a diagonal that bows 250 px to either side."""
    return 400.0 + 0.8 * x + 250.0 * np.sin(2 * np.pi * x / 4000.0)


def road_slope(x):
    return 0.8 + 250.0 * 2 * np.pi / 4000.0 * np.cos(2 * np.pi * x / 4000.0)


def distance_to_road(points):
    """Distance (px) of ``(x, y)`` points to the centre line (first order in the offset: exact to ~0.01 px here)."""
    x, y = points[:, 0], points[:, 1]
    return np.abs(y - road_y(x)) / np.sqrt(1.0 + road_slope(x) ** 2)


@pytest.fixture(scope="module")
def long_road_tif(tmp_path_factory):
    """A 6000 x 6000 uint8 GeoTIFF (UTM, 0.5 m, tiled) of a bright road 14 px wide in noise, with overviews."""
    path = tmp_path_factory.mktemp("c2f") / "long_road.tif"
    profile = dict(driver="GTiff", width=SIZE, height=SIZE, count=1, dtype="uint8", tiled=True, blockxsize=512,
                   blockysize=512, compress="deflate", crs="EPSG:32611",
                   transform=from_origin(500000.0, 4000000.0, 0.5, 0.5))
    rng = np.random.default_rng(16)
    xs = np.arange(SIZE) + 0.5
    with rasterio.open(path, "w", **profile) as ds:
        for row in range(0, SIZE, 500):
            ys = np.arange(row, row + 500)[:, None] + 0.5
            inside = distance_to_road(np.stack(np.broadcast_arrays(xs[None, :], ys), -1).reshape(-1, 2))
            strip = rng.normal(60.0, 12.0, (500, SIZE)) + 90.0 * (inside.reshape(500, SIZE) < ROAD_HALF_WIDTH_PX)
            ds.write(np.clip(strip, 0, 255).astype(np.uint8), 1, window=((row, row + 500), (0, SIZE)))
        ds.build_overviews([2, 4, 8, 16, 32], Resampling.average)
    return path


def on_road(x):
    return (x, float(road_y(x)))


def densified(vertices, step_px=1.0):
    """Points every ``step_px`` along a polyline."""
    out = [vertices[:1]]
    for a, b in zip(vertices[:-1], vertices[1:]):
        n = max(1, int(np.ceil(np.hypot(*(b - a)) / step_px)))
        out.append(a + np.linspace(0, 1, n + 1)[1:, None] * (b - a))
    return np.concatenate(out)


def test_long_span_runs_coarse_to_fine_within_the_budget_and_follows_the_road(long_road_tif):
    start, end = on_road(START_X), on_road(END_X)
    with pytest.raises(HostMemoryError):  # the direct extraction does not fit this budget
        check_extraction_cost(ExtractionSettings(), start, end, 1, "cpu", budget_bytes=BUDGET_BYTES)
    with open_raster(long_road_tif) as raster:
        extract(raster, on_road(1000.0), on_road(1200.0), backend="cpu")  # compiled before memory is traced
        tracemalloc.start()
        try:
            result = extract(raster, start, end, backend="cpu", memory_budget_bytes=BUDGET_BYTES)
            _, peak_bytes = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert result.strategy == "coarse-to-fine" and result.coarse_factor in (2, 4, 8, 16, 32)
    assert result.pieces >= np.hypot(*np.subtract(end, start)) / PIECE_SPAN_PX
    assert {"coarse", "refine", "total"} <= set(result.timings_ms)
    assert peak_bytes < BUDGET_BYTES, f"{peak_bytes / 2**20:.0f} MiB"
    errors = distance_to_road(densified(result.vertices_px))
    assert errors.mean() < 1.5 and errors.max() < 4.0, (errors.mean(), errors.max())
    assert np.hypot(*(result.vertices_px[0] - start)) < 8.5 and np.hypot(*(result.vertices_px[-1] - end)) < 8.5
    assert result.estimate.polarity == "bright" and abs(result.estimate.width_px - 14.0) <= 2.0
    assert max_turn_deg(result.vertices_px) < 45.0  # no jog out and back where one piece meets the next


def max_turn_deg(vertices):
    """The largest change of direction (degrees) at a vertex of a polyline."""
    links = np.diff(vertices, axis=0)
    heading = np.degrees(np.arctan2(links[:, 1], links[:, 0]))
    return float(np.max(np.abs((np.diff(heading) + 180.0) % 360.0 - 180.0)))


def test_short_spans_stay_direct(long_road_tif):
    result = extract(long_road_tif, on_road(1000.0), on_road(1200.0), backend="cpu",
                     memory_budget_bytes=BUDGET_BYTES)
    assert (result.strategy, result.coarse_factor, result.pieces) == ("direct", 1, 1)
    assert result.guides is not None


def test_cli_prints_a_result_for_a_long_span(capsys, long_road_tif):
    """At the default budget: the window of this span is past core.extraction.coarse.DIRECT_LIMIT_BYTES."""
    start, end = on_road(START_X), on_road(END_X)
    status = extract_main([str(long_road_tif), "--start", f"{start[0]},{start[1]}", "--end", f"{end[0]},{end[1]}",
                           "--backend", "cpu"])
    out, err = capsys.readouterr()
    assert status == 0 and err == ""
    feature = json.loads(out)["features"][0]
    assert feature["properties"]["coarse_to_fine"]["factor"] >= 2
    pixels = np.array(feature["properties"]["pixel_coordinates"]) if "pixel_coordinates" in feature["properties"] \
        else None
    if pixels is not None:
        assert distance_to_road(densified(pixels)).mean() < 1.5


def test_coarse_factor_is_one_for_what_fits_and_the_least_power_of_two_otherwise():
    options = ExtractionSettings()
    assert coarse_factor(options, (0.0, 0.0), (200.0, 0.0), budget_bytes=BUDGET_BYTES) == 1
    factor = coarse_factor(options, (0.0, 0.0), (20000.0, 20000.0), budget_bytes=BUDGET_BYTES)
    assert factor in {2 ** k for k in range(1, 13)}
    stage_bytes = int(STAGE_SHARE * BUDGET_BYTES)
    check_extraction_cost(options, (0.0, 0.0), (20000.0 / factor,) * 2, budget_bytes=stage_bytes)
    with pytest.raises(HostMemoryError):
        check_extraction_cost(options, (0.0, 0.0), (20000.0 / (factor // 2),) * 2, budget_bytes=stage_bytes)
    # link tables beyond the budget whatever the span: no reduction helps, the cost check refuses
    assert coarse_factor(ExtractionSettings(nodes=40, points=400), (0.0, 0.0), (9000.0, 0.0),
                         budget_bytes=2**20) == 1


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(-1e4, 1e4), st.floats(-1e4, 1e4)), min_size=2, max_size=12),
       st.floats(10.0, 1000.0))
def test_pieces_cut_the_course_into_equal_arcs_no_longer_than_asked(points, span_px):
    course = np.array(points)
    steps = np.hypot(*np.diff(course, axis=0).T)
    if steps.sum() < 1.0:
        return
    ends = piece_ends(course, span_px)
    assert np.array_equal(ends[-1], course[-1])
    assert len(ends) == max(1, int(np.ceil(steps.sum() / span_px - 1e-9)))
    # every end lies on the course
    from tests.core.cli.test_extract_cli import distance_to_polyline

    distinct = course[np.concatenate([[True], steps > 0])]
    assert distance_to_polyline(ends, distinct).max() < 1e-6 * max(1.0, np.abs(course).max())
    assert (np.hypot(*np.diff(np.vstack([course[:1], ends]), axis=0).T) <= span_px + 1e-6).all()


@pytest.mark.parametrize("overviews", [False, True])
def test_reduced_reads_are_block_means(tmp_path, overviews):
    values = np.random.default_rng(1).integers(0, 255, (64, 96)).astype(np.uint8)
    path = tmp_path / "small.tif"
    with rasterio.open(path, "w", driver="GTiff", width=96, height=64, count=1, dtype="uint8") as ds:
        ds.write(values, 1)
        if overviews:
            ds.build_overviews([4], Resampling.average)
    means = values.reshape(16, 4, 24, 4).mean(axis=(1, 3))
    for source in (path, values):
        with open_raster(source) as raster:
            reduced = raster.read_reduced(0, 0, 96, 64, 4)
        assert reduced.shape == (16, 24, 1)
        np.testing.assert_allclose(reduced[:, :, 0], means, atol=0.51)  # GDAL rounds uint8 averages


def test_reduced_reads_skip_nodata_and_pad_outside_with_nan():
    values = np.arange(64, dtype=np.float32).reshape(8, 8)
    values[0, 0] = np.nan
    with open_raster(values) as raster:
        reduced = raster.read_reduced(-2, 0, 10, 8, 2)[:, :, 0]
    assert reduced.shape == (4, 5)
    assert np.isnan(reduced[:, 0]).all()
    assert reduced[0, 1] == pytest.approx(np.mean([1.0, 8.0, 9.0]))
    assert reduced[3, 4] == pytest.approx(values[6:8, 6:8].mean())
