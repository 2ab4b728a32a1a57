"""core.batch.shift: the symmetry curve against a loop, and known shifts found on drawn roads."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.batch.shift import cross_profile, estimate_shift, symmetry_curve, window_margin_px
from core.batch.work import refine_tile
from tests.core.batch.scene import ROAD_X_PX, ROAD_Y_PX, write_scene


def _symmetry_by_loop(profile, half_px):
    reach = (len(profile) - 1) // 2
    out = []
    for centre in range(-(reach - half_px), reach - half_px + 1):
        c = centre + reach
        out.append(-sum((profile[c - t] - profile[c + t]) ** 2 for t in range(1, half_px + 1)) / half_px)
    return np.array(out)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6).flatmap(lambda half: st.tuples(
    st.just(half), arrays(np.float64, st.integers(half + 1, 12).map(lambda r: 2 * r + 1),
                          elements=st.floats(-5, 5)))))
def test_symmetry_curve_matches_a_loop(case):
    half, profile = case
    np.testing.assert_allclose(symmetry_curve(profile, half), _symmetry_by_loop(profile, half), atol=1e-9)


def test_symmetry_curve_refuses_a_half_length_beyond_the_profile():
    with pytest.raises(ValueError, match="half_px 5 exceeds"):
        symmetry_curve(np.zeros(9), 5)


def _roads(size_px=240, width_px=10):
    """A horizontal, a vertical and a diagonal bright road on textured ground; their centre lines (px)."""
    rng = np.random.default_rng(3)
    rows, cols = np.mgrid[0:size_px, 0:size_px] + 0.5
    image = rng.normal(60, 8, (size_px, size_px))
    image += 40 * np.sin(cols / 7.0) * np.cos(rows / 11.0)  # ground that is not flat
    lines = [((0, 80), (size_px, 80)), ((150, 0), (150, size_px)), ((0, 20), (size_px, size_px + 20))]
    for (x0, y0), (x1, y1) in lines:
        direction = np.array([x1 - x0, y1 - y0], float) / np.hypot(x1 - x0, y1 - y0)
        across = np.abs((cols - x0) * -direction[1] + (rows - y0) * direction[0])
        image[across <= width_px / 2] = 180 + rng.normal(0, 4, int((across <= width_px / 2).sum()))
    return image.astype(np.float32), lines


@pytest.mark.parametrize("shift_xy", [(5.0, -3.0), (-6.0, -4.5), (0.0, 7.0)])
def test_a_known_shift_of_the_pieces_is_undone(shift_xy):
    image, lines = _roads()
    pieces = []
    for (x0, y0), (x1, y1) in lines:
        for t in (0.3, 0.5):  # two pieces of each road, well inside the image
            a = np.array([x0, y0]) + t * (np.array([x1, y1]) - [x0, y0])
            b = a + 60 * (np.array([x1, y1]) - [x0, y0]) / np.hypot(x1 - x0, y1 - y0)
            pieces.append([*(a + shift_xy), *(b + shift_xy)])
    found, used = estimate_shift(image, np.array(pieces))
    assert used == len(pieces)
    np.testing.assert_allclose(found, -np.asarray(shift_xy), atol=1.0)


def test_a_piece_off_the_data_gives_no_profile():
    image = np.full((50, 50), np.nan, np.float32)
    assert cross_profile(image, (10, 25), (40, 25), 8) is None
    shift_xy, used = estimate_shift(image, np.array([[10, 25, 40, 25]], float))
    assert used == 0 and shift_xy.tolist() == [0.0, 0.0]


def test_a_tile_task_moves_its_pieces_onto_the_roads(tmp_path):
    from core.extraction import ExtractionSettings

    path = write_scene(tmp_path / "scene.tif")
    shift = np.array([4.0, 6.0])  # displaced down and right: the horizontal road's pieces lie 6 px low
    rows = [[0, 20.0, ROAD_Y_PX, 100.0, ROAD_Y_PX], [1, ROAD_X_PX, 130.0, ROAD_X_PX, 210.0]]
    moved = [[k, x0 + shift[0], y0 + shift[1], x1 + shift[0], y1 + shift[1]] for k, x0, y0, x1, y1 in rows]
    task = {"source": path, "settings": ExtractionSettings(backend="cpu").to_dict(), "pieces": moved,
            "align": {"half_px": [12], "search_px": 10}}
    results = refine_tile(task)
    horizontal, vertical = (np.asarray(r["vertices"]) for r in results)
    assert np.abs(horizontal[:, 1] - (ROAD_Y_PX + 0.0)).max() <= 1.5
    assert np.abs(vertical[:, 0] - ROAD_X_PX).max() <= 1.5
    assert window_margin_px([12], 10) == pytest.approx(12 + 15 + 2)


def test_a_shift_never_pushes_a_piece_off_the_raster(tmp_path):
    from core.extraction import ExtractionSettings
    from tests.core.batch.scene import SIZE_PX

    path = write_scene(tmp_path / "scene.tif")
    # The horizontal road runs to the right edge; the layer lies 5 px left of and 6 px below the roads, so the
    # shift (+5, -6) would put the first piece's end 2 px beyond the edge.
    rows = [[0, 170.0, ROAD_Y_PX + 6, SIZE_PX - 3.0, ROAD_Y_PX + 6], [1, ROAD_X_PX - 5, 136.0, ROAD_X_PX - 5, 216.0]]
    task = {"source": path, "settings": ExtractionSettings(backend="cpu").to_dict(), "pieces": rows,
            "align": {"half_px": [12], "search_px": 10}}
    results = refine_tile(task)
    assert [r["status"] for r in results] == ["refined", "refined"]
    edge = np.asarray(results[0]["vertices"])
    assert edge[:, 0].max() <= SIZE_PX and np.abs(edge[:, 1] - ROAD_Y_PX).max() <= 1.5
