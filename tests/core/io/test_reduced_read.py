"""Raster.read_reduced in strips: the same values as one read, and a cancel stops it between strips."""

from __future__ import annotations

import pathlib
import tempfile
import threading

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

rasterio = pytest.importorskip("rasterio")

from core.cancel import Cancelled, CancelToken  # noqa: E402
from core.io import raster as raster_module  # noqa: E402
from core.io.raster import open_raster  # noqa: E402
from tests.core.io.test_raster import write_tif  # noqa: E402

TILED = dict(tiled=True, blockxsize=256, blockysize=256, compress="deflate")
ONE_READ = 2**62  # REDUCED_STRIP_PIXELS that makes every reduced read one strip: the read as it was


@pytest.fixture
def image(tmp_path):
    rng = np.random.default_rng(5)
    data = rng.integers(0, 256, (3, 768, 1024), dtype=np.uint8)
    data[:, 100:180, 200:420] = 0  # no data
    return write_tif(tmp_path / "r.tif", data, nodata=0, **TILED)


def reduced(raster, monkeypatch, strip_pixels, *args, **kwargs):
    monkeypatch.setattr(raster_module, "REDUCED_STRIP_PIXELS", strip_pixels)
    return raster.read_reduced(*args, **kwargs)


@pytest.mark.parametrize("box", [(0, 0, 1024, 768), (64, 32, 512, 640), (-64, -32, 512, 400), (256, 128, 768, 640)])
@pytest.mark.parametrize("factor", [1, 2, 4, 8])
@pytest.mark.parametrize("overviews", [False, True])
def test_strips_give_what_one_read_gave(image, monkeypatch, box, factor, overviews):
    if overviews:
        with rasterio.open(image, "r+") as ds:
            ds.build_overviews([2, 4], rasterio.enums.Resampling.average)
    raster = open_raster(image)
    whole = reduced(raster, monkeypatch, ONE_READ, *box, factor)
    for strip_pixels in (1, 3 * factor * factor * 64, 2**16):
        np.testing.assert_array_equal(reduced(raster, monkeypatch, strip_pixels, *box, factor), whole)


def test_an_array_in_strips_gives_what_one_read_gave(monkeypatch):
    data = np.random.default_rng(2).random((300, 200, 2)).astype(np.float32)
    data[10:40, 5:60, 0] = np.nan
    raster = open_raster(data)
    whole = reduced(raster, monkeypatch, ONE_READ, -6, 4, 180, 290, 3)
    np.testing.assert_array_equal(reduced(raster, monkeypatch, 1, -6, 4, 180, 290, 3), whole)


def counting_reads(raster, monkeypatch, on_read):
    """Count the reader's reads; ``on_read(n)`` runs during the n-th."""
    reads = []
    real = raster._reader.read

    def read(*args, **kwargs):
        reads.append(1)
        on_read(len(reads))
        return real(*args, **kwargs)

    monkeypatch.setattr(raster._reader, "read", read)
    return reads


def test_a_cancel_from_another_thread_stops_it_after_the_strip_in_progress(image, monkeypatch):
    raster, token = open_raster(image), CancelToken()

    def cancel_elsewhere(n):
        if n == 1:
            other = threading.Thread(target=token.cancel)
            other.start()
            other.join()

    reads = counting_reads(raster, monkeypatch, cancel_elsewhere)
    monkeypatch.setattr(raster_module, "REDUCED_STRIP_PIXELS", 2**14)  # 16 strips of 4 x 4 cells
    with pytest.raises(Cancelled):
        raster.read_reduced(0, 0, 1024, 768, 4, cancel=token)
    assert len(reads) == 1


def test_an_uncancelled_token_reads_it_all(image, monkeypatch):
    raster = open_raster(image)
    whole = reduced(raster, monkeypatch, ONE_READ, 0, 0, 1024, 768, 4)
    reads = counting_reads(raster, monkeypatch, lambda n: None)
    np.testing.assert_array_equal(reduced(raster, monkeypatch, 2**14, 0, 0, 1024, 768, 4, cancel=CancelToken()),
                                  whole)
    assert len(reads) > 1


def test_a_cancelled_token_reads_nothing_and_a_bad_one_is_refused(image):
    raster, token = open_raster(image), CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        raster.read_reduced(0, 0, 1024, 768, 4, cancel=token)
    with pytest.raises(TypeError, match="cancel"):
        raster.read_reduced(0, 0, 1024, 768, 4, cancel=True)


# --- windows that overhang the raster by part of a cell ----------------------------------------


def cell_means(data, box, factor):
    """The reference of read_reduced: (rows, cols, k) means of the valid pixels of ``data`` (H, W, k) under
    each cell of ``box``, NaN where none is (and off the raster)."""
    col_off, row_off, width, height = box
    rows, cols = -(-height // factor), -(-width // factor)
    padded = np.full((rows * factor, cols * factor, data.shape[2]), np.nan)
    r0, c0 = max(row_off, 0), max(col_off, 0)
    r1, c1 = min(row_off + rows * factor, data.shape[0]), min(col_off + cols * factor, data.shape[1])
    if r0 < r1 and c0 < c1:
        padded[r0 - row_off:r1 - row_off, c0 - col_off:c1 - col_off] = data[r0:r1, c0:c1]
    cells = padded.reshape(rows, factor, cols, factor, -1)
    valid = np.isfinite(cells)
    counts = valid.sum(axis=(1, 3))
    with np.errstate(invalid="ignore"):
        return np.where(counts > 0, np.where(valid, cells, 0).sum(axis=(1, 3)) / counts, np.nan)


def odd_raster(seed, height, width, as_file, tmp_dir):
    """``(raster, data)``: a random 2-band raster of that size with a hole of no data (NaN in ``data``), as a
    GeoTIFF (nodata 0) or as an array."""
    rng = np.random.default_rng(seed)
    data = rng.integers(1, 250, (height, width, 2)).astype(np.float64)
    data[height // 3: height // 2, width // 4: width // 2 + 1] = np.nan
    if as_file:
        values = np.moveaxis(np.nan_to_num(data, nan=0.0), -1, 0).astype(np.uint8)
        return open_raster(write_tif(tmp_dir / f"odd_{seed}_{height}_{width}.tif", values, nodata=0)), data
    return open_raster(data.astype(np.float32)), data


box_and_factor = st.tuples(
    st.integers(1, 23), st.integers(1, 23),  # the raster's height and width
    st.integers(-9, 20), st.integers(-9, 20), st.integers(1, 30), st.integers(1, 30),  # the window
    st.integers(1, 5),  # the factor
)


@given(case=box_and_factor, as_file=st.booleans(), seed=st.integers(0, 3))
@example(case=(17, 13, 0, 0, 13, 17, 4), as_file=True, seed=0)  # ends mid-cell on the raster's edge
@example(case=(17, 13, -3, -2, 19, 21, 4), as_file=True, seed=1)  # overhangs both sides by part of a cell
@example(case=(9, 7, 5, 6, 30, 30, 5), as_file=False, seed=2)  # one partial cell in each direction
@example(case=(23, 19, -9, 20, 12, 9, 3), as_file=False, seed=3)  # wholly off the raster
@settings(max_examples=60, deadline=None)
def test_strips_one_read_and_the_cell_means_agree_on_odd_rasters(case, as_file, seed):
    height, width, *box, factor = case
    with tempfile.TemporaryDirectory() as tmp_dir:
        raster, data = odd_raster(seed, height, width, as_file, pathlib.Path(tmp_dir))
        with raster, pytest.MonkeyPatch.context() as monkeypatch:
            whole = reduced(raster, monkeypatch, ONE_READ, *box, factor)
            strips = reduced(raster, monkeypatch, 1, *box, factor)
    np.testing.assert_array_equal(strips, whole)
    expected = cell_means(data, box, factor)
    assert whole.shape == expected.shape
    np.testing.assert_array_equal(np.isnan(whole), np.isnan(expected))
    # GDAL rounds a file's averages to its integers; the array's are float32
    np.testing.assert_allclose(whole, expected, atol=0.5 if as_file else 1e-4, equal_nan=True)
