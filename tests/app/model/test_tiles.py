"""Tile pyramid arithmetic, the LRU cache, the stretch and the view transform (no Qt)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model.tiles import (
    TILE_PX,
    Stretch,
    TileCache,
    TileKey,
    compute_stretch,
    level_for_scale,
    max_level,
    stretch_to_rgba,
    tile_window,
    visible_tiles,
)
from app.model.viewmath import ViewTransform


def test_levels():
    assert max_level(256, 100) == 0
    assert max_level(257, 10) == 1
    assert max_level(20000, 20000) == 7  # 256 * 2**7 = 32768 >= 20000
    assert level_for_scale(2.0, 7) == 0
    assert level_for_scale(1.0, 7) == 0
    assert level_for_scale(0.5, 7) == 1
    assert level_for_scale(0.3, 7) == 1
    assert level_for_scale(0.25, 7) == 2
    assert level_for_scale(1e-4, 7) == 7
    with pytest.raises(ValueError, match="scale"):
        level_for_scale(0.0, 3)


def test_tile_window_edges():
    assert tile_window(TileKey(0, 0, 0), 1000, 600) == (0, 0, 256, 256, 256, 256)
    assert tile_window(TileKey(0, 2, 3), 1000, 600) == (768, 512, 232, 88, 232, 88)
    assert tile_window(TileKey(2, 0, 0), 1000, 600) == (0, 0, 1000, 600, 250, 150)
    with pytest.raises(ValueError, match="outside"):
        tile_window(TileKey(0, 0, 4), 1000, 600)


@settings(max_examples=60, deadline=None)
@given(width=st.integers(1, 30000), height=st.integers(1, 30000), level=st.integers(0, 8),
       x0=st.floats(-5000, 30000), y0=st.floats(-5000, 30000), w=st.floats(1, 20000), h=st.floats(1, 20000))
def test_visible_tiles_cover_exactly_the_part_of_the_view_on_the_raster(width, height, level, x0, y0, w, h):
    rect = (x0, y0, x0 + w, y0 + h)
    tiles = visible_tiles(level, rect, width, height)
    assert len(set(tiles)) == len(tiles)
    span = TILE_PX * 2**level
    # Reference: every tile of the raster that intersects the rectangle.
    n_cols, n_rows = math.ceil(width / span), math.ceil(height / span)
    expected = {(r, c) for r in range(n_rows) for c in range(n_cols)
                if c * span < rect[2] and (c + 1) * span > rect[0] and r * span < rect[3] and (r + 1) * span > rect[1]}
    assert set(tiles) == expected
    for row, col in tiles:
        _, _, win_w, win_h, out_w, out_h = tile_window(TileKey(level, row, col), width, height)
        assert 1 <= out_w <= TILE_PX and 1 <= out_h <= TILE_PX  # never more than one tile's pixels per read


def test_visible_tiles_start_at_the_centre():
    tiles = visible_tiles(0, (0, 0, 5 * TILE_PX, 5 * TILE_PX), 10_000, 10_000)
    assert tiles[0] == (2, 2)


def test_cache_evicts_least_recently_used_by_bytes():
    cache = TileCache(max_bytes=100)
    cache.put("a", 1, 40)
    cache.put("b", 2, 40)
    assert cache.get("a") == 1  # "a" is now the most recent
    cache.put("c", 3, 40)
    assert "b" not in cache and "a" in cache and "c" in cache
    assert cache.total_bytes == 80
    cache.put("a", 4, 10)
    assert cache.get("a") == 4 and cache.total_bytes == 50
    cache.clear()
    assert len(cache) == 0 and cache.total_bytes == 0
    with pytest.raises(ValueError):
        TileCache(0)


def test_stretch_percentiles_and_rendering():
    data = np.arange(101, dtype=np.float32).reshape(1, 101)
    stretch = compute_stretch(data, 10, 90)
    assert (stretch.low, stretch.high) == (10.0, 90.0)
    grey = np.array([[np.nan, 10.0, 50.0, 90.0, 200.0]], dtype=np.float32)
    rgba = stretch_to_rgba(grey, stretch)
    assert rgba.shape == (1, 5, 4) and rgba.dtype == np.uint8
    np.testing.assert_array_equal(rgba[0, :, 3], [0, 255, 255, 255, 255])
    np.testing.assert_array_equal(rgba[0, :, 0], [0, 0, 127, 255, 255])
    rgb = np.zeros((1, 1, 3), np.float32)
    rgb[0, 0] = (90.0, 50.0, 10.0)  # R, G, B
    np.testing.assert_array_equal(stretch_to_rgba(rgb, stretch)[0, 0], [0, 127, 255, 255])  # B, G, R, A
    assert compute_stretch(np.full((3, 3), np.nan)) == Stretch(0.0, 1.0)
    assert Stretch(5.0, 5.0).high == 6.0  # a flat image still maps to a valid range
    with pytest.raises(ValueError, match="percentiles"):
        compute_stretch(data, 60, 40)


def test_view_transform_round_trip_zoom_and_fit():
    t = ViewTransform(2.0, 10.0, 20.0)
    assert t.image_to_view(15.0, 25.0) == (10.0, 10.0)
    assert t.view_to_image(10.0, 10.0) == (15.0, 25.0)
    zoomed = t.zoomed(3.0, 100.0, 50.0)
    assert zoomed.scale == 6.0
    assert zoomed.view_to_image(100.0, 50.0) == pytest.approx(t.view_to_image(100.0, 50.0))
    panned = t.panned(20.0, -10.0)
    assert panned.image_to_view(15.0, 25.0) == pytest.approx((30.0, 0.0))
    fit = ViewTransform.fitting((0, 0, 1000, 500), 800, 600, margin=0.0)
    assert fit.scale == pytest.approx(0.8)
    assert fit.image_to_view(500, 250) == pytest.approx((400, 300))
    with pytest.raises(ValueError, match="scale"):
        ViewTransform(-1.0)


def test_a_stretch_per_band_maps_each_bands_own_percentiles_to_black_and_white():
    rng = np.random.default_rng(0)
    ranges = [(300.0, 600.0), (250.0, 1100.0), (150.0, 900.0)]  # a multispectral composite's uint16 bands
    sample = np.stack([rng.uniform(lo, hi, (40, 40)) for lo, hi in ranges], axis=2)
    sample[0, 0, 1] = np.nan
    stretch = compute_stretch(sample, 1, 99, per_band=True)
    for k, (lo, hi) in enumerate(ranges):
        band = sample[:, :, k][np.isfinite(sample[:, :, k])]
        assert (stretch.low[k], stretch.high[k]) == tuple(np.percentile(band, [1, 99]))
    low, high = np.array(stretch.low), np.array(stretch.high)
    rgba = stretch_to_rgba(np.array([[low - 1, (low + high) / 2, high + 1]], np.float32), stretch)
    np.testing.assert_array_equal(rgba[0, :, :3], [[0, 0, 0], [127, 127, 127], [255, 255, 255]])  # each band alike
    shared = compute_stretch(sample, 1, 99)
    assert np.ndim(shared.low) == 0 and min(stretch.low) <= shared.low <= max(stretch.low)
    assert compute_stretch(sample[:, :, 0], 1, 99, per_band=True) == compute_stretch(sample[:, :, 0], 1, 99)
    assert Stretch((1.0, 2.0), (1.0, 5.0)).high == (2.0, 5.0)  # a flat band too
    with pytest.raises(ValueError, match="as many"):
        Stretch((1.0, 2.0), (3.0,))
    with pytest.raises(ValueError, match="a stretch of 2 bands for data of 3"):
        stretch_to_rgba(sample, Stretch((1.0, 2.0), (3.0, 4.0)))
