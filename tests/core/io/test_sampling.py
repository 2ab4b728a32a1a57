"""Whole-raster samples for statistics: a decimated read where it is cheap, spread windows where it is not."""

from __future__ import annotations

import numpy as np
import pytest
import rasterio
from rasterio.windows import Window

from core.io.raster import open_raster
from core.io.sampling import GRID, SMALL_PIXELS, spread_windows
from tests.core.io.test_raster import TRANSFORM, UTM33, write_tif

pytestmark = pytest.mark.filterwarnings("ignore::rasterio.errors.NotGeoreferencedWarning")

#: A tiled raster just past SMALL_PIXELS (256 px tiles: 17 x 16 of them).
HEIGHT, WIDTH, TILE = 4096, 4352, 256


def test_cheap_decimated_reads_are_kept():
    assert HEIGHT * WIDTH > SMALL_PIXELS
    assert spread_windows(4000, 4000, (256, 256), 512, []) is None  # small
    assert spread_windows(20000, 20000, (256, 256), 512, [2, 4, 8, 16]) is None  # an overview 16 >= 39 / 4
    assert spread_windows(20000, 20000, (1, 20000), 512, []) is None  # one-row strips: only sampled rows read
    assert spread_windows(20000, 20000, (256, 256), 512, [2, 4]) is not None
    assert spread_windows(20000, 20000, (512, 20000), 512, []) is not None  # strips of 512 rows


@pytest.mark.parametrize("height, width, block", [(20000, 20000, (256, 256)), (HEIGHT, WIDTH, (TILE, TILE)),
                                                  (30001, 5003, (512, 128)), (6000, 90000, (16, 16))])
def test_spread_windows_lie_in_blocks_and_strata_over_the_raster(height, width, block):
    side = 512
    windows = spread_windows(height, width, block, side, [])
    assert len(windows) == GRID * GRID
    size = side // GRID
    for r, c, h, w in windows:
        assert 0 <= r and r + h <= height and 0 <= c and c + w <= width and (h, w) == (size, size)
        for start, b, extent in ((r, block[0], height), (c, block[1], width)):
            if b >= size:  # within one block
                assert start // b == (start + size - 1) // b
            else:  # at a block's start, or at the end
                assert start % b == 0 or start + size == extent
    count = GRID * GRID
    for axis, extent in ((0, height), (1, width)):
        strata = sorted(min(count - 1, int((win[axis] + size / 2) / extent * count)) for win in windows)
        assert strata[0] <= 1 and strata[-1] >= count - 2  # both ends of the rows and of the columns sampled
        assert len(set(strata)) >= count * 3 // 4  # hardly two in one stratum (blocks move them a little)


def _garble_tiles_except(path, windows, tile):
    """Overwrite every tile of ``path`` that no window meets (but the last, which opening checks)."""
    keep = {(HEIGHT // tile - 1, WIDTH // tile - 1)}
    for r, c, h, w in windows:
        keep |= {(i, j) for i in range(r // tile, (r + h - 1) // tile + 1)
                 for j in range(c // tile, (c + w - 1) // tile + 1)}
    with rasterio.open(path) as ds:
        blocks = [(int(ds.get_tag_item(f"BLOCK_OFFSET_{j}_{i}", "TIFF", bidx=1)),
                   int(ds.get_tag_item(f"BLOCK_SIZE_{j}_{i}", "TIFF", bidx=1)))
                  for i in range(HEIGHT // tile) for j in range(WIDTH // tile) if (i, j) not in keep]
    raw = bytearray(path.read_bytes())
    for offset, nbytes in blocks:
        raw[offset : offset + nbytes] = b"\xa5" * nbytes
    path.write_bytes(bytes(raw))
    return len(blocks)


def _tiled(path, dtype, value_of_row):
    """A tiled HEIGHT x WIDTH GeoTIFF, written a tile row at a time: row values ``value_of_row(rows)``."""
    profile = dict(driver="GTiff", width=WIDTH, height=HEIGHT, count=1, dtype=dtype, crs=UTM33,
                   transform=TRANSFORM, tiled=True, blockxsize=TILE, blockysize=TILE, compress="deflate")
    cols = np.arange(WIDTH)
    with rasterio.open(path, "w", **profile) as ds:
        for r in range(0, HEIGHT, TILE):
            rows = np.arange(r, r + TILE)[:, None]
            ds.write(value_of_row(rows, cols).astype(dtype), 1, window=Window(0, r, WIDTH, TILE))
    return path


def test_a_large_tiled_file_without_overviews_is_sampled_from_its_windows_tiles_only(tmp_path):
    def values(rows, cols):
        return (rows // 7 + cols // 5) % 250 + 1

    path = _tiled(tmp_path / "big.tif", np.uint8, values)
    side = 512
    windows = spread_windows(HEIGHT, WIDTH, (TILE, TILE), side, [])
    garbled = _garble_tiles_except(path, windows, TILE)
    assert garbled > 150  # of 272 tiles: the decimated read would decode every one and fail
    sample = open_raster(path).read_sample(side, bands=[1])
    size = side // GRID
    expected = np.full((side, side), np.nan, np.float32)
    for k, (r, c, h, w) in enumerate(windows):
        i, j = divmod(k, GRID)
        rr, cc = np.meshgrid(np.arange(r, r + h), np.arange(c, c + w), indexing="ij")
        expected[i * size : i * size + h, j * size : j * size + w] = values(rr, cc)
    assert sample.shape == (side, side, 1)
    np.testing.assert_array_equal(sample[:, :, 0], expected)
    np.testing.assert_array_equal(open_raster(path).read_sample(side), expected)  # the intensity


def test_the_spread_sample_stretches_like_the_whole_image(tmp_path):
    path = _tiled(tmp_path / "ramp.tif", np.uint16, lambda rows, cols: rows * 3 + (cols * 7919) % 1000)
    raster = open_raster(path)
    sample = raster.read_sample(512)
    whole = raster.read_decimated(0, 0, WIDTH, HEIGHT, WIDTH // 4, HEIGHT // 4)
    for q in (1, 2, 50, 98, 99):
        spread = np.percentile(sample[np.isfinite(sample)], q)
        assert abs(spread - np.percentile(whole, q)) < 0.03 * (whole.max() - whole.min())


def test_a_small_raster_is_sampled_by_the_decimated_read(tmp_path):
    data = np.random.default_rng(3).integers(0, 255, (3, 300, 700)).astype(np.uint8)
    raster = open_raster(write_tif(tmp_path / "s.tif", data, tiled=True, blockxsize=64, blockysize=64))
    np.testing.assert_array_equal(raster.read_sample(100, bands=[3, 1]),
                                  raster.read_decimated(0, 0, 700, 300, 100, 43, bands=[3, 1]))
    array = open_raster(np.moveaxis(data, 0, -1))
    np.testing.assert_array_equal(array.read_sample(100), array.read_decimated(0, 0, 700, 300, 100, 43))
    with pytest.raises(ValueError, match="at least one band"):
        raster.read_sample(100, bands=[])


def test_opening_a_large_tiled_float_file_reads_only_the_windows_for_its_scale(tmp_path):
    path = _tiled(tmp_path / "huge_values.tif", np.float64, lambda rows, cols: 1e300 + 0.0 * (rows + cols))
    garbled = _garble_tiles_except(path, spread_windows(HEIGHT, WIDTH, (TILE, TILE), 256, []), TILE)
    assert garbled > 150
    raster = open_raster(path)  # the float scale's sample: no garbled tile decoded
    assert raster._reader.value_scale < 1e-200
    sample = raster.read_sample(256)
    assert np.isfinite(sample[np.isfinite(sample)]).all() and np.isfinite(sample).any()
