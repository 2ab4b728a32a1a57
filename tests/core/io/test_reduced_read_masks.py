"""Raster.read_reduced of files with no data (a nodata value, an internal mask, an alpha band): each cell the
mean of its valid pixels, NaN only where it has none, against numpy's cell means."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

rasterio = pytest.importorskip("rasterio")

from core.io import raster as raster_module  # noqa: E402
from core.io.raster import open_raster  # noqa: E402
from tests.core.io.test_raster import write_tif  # noqa: E402
from tests.core.io.test_reduced_read import cell_means  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::rasterio.errors.NotGeoreferencedWarning")

KINDS = ["nodata 0 uint8", "nodata -9999 int16", "nodata -9999 float32", "nodata -9999 float64", "nodata nan float32",
         "internal mask", "alpha band", "NaN pixels float32", "NaN pixels and nodata -9999 float32"]
#: What a masked pixel holds in the mask and alpha kinds: it would pull every cell it was averaged into up.
UNDER_MASK = 255


def valid_pixels(height, width, seed=0):
    """(H, W) bool: no-data borders (left, bottom), a hole, a hole with one valid pixel, scattered no data."""
    valid = np.random.default_rng(seed).random((height, width)) > 0.15
    valid[:, :3] = valid[-5:, :] = False
    valid[6:17, 9:30] = False
    valid[20:28, 32:48] = False
    valid[23, 41] = True
    return valid


def masked_file(path, kind, values, valid):
    """A GeoTIFF of ``values`` (k, H, W) where ``valid``, the rest no data as ``kind`` marks it."""
    if kind.startswith("NaN pixels"):  # no data that GDAL does not mask: NaN says it (half of it, or all)
        nodata = -9999.0 if kind.endswith("-9999 float32") else None
        fill = np.where(np.indices(valid.shape).sum(axis=0) % 2, np.nan, -9999.0 if nodata else np.nan)
        return write_tif(path, np.where(valid, values, fill).astype(np.float32), nodata=nodata)
    if kind.startswith("nodata"):
        _, nodata, dtype = kind.split()
        return write_tif(path, np.where(valid, values, float(nodata)).astype(dtype), nodata=float(nodata))
    under = np.where(valid, values, UNDER_MASK).astype(np.uint8)
    if kind == "alpha band":
        alpha = (valid * 255).astype(np.uint8)[np.newaxis]
        return write_tif(path, np.concatenate([under, alpha]), photometric="RGB", alpha="YES")
    with rasterio.Env(GDAL_TIFF_INTERNAL_MASK=True):
        write_tif(path, under)
        with rasterio.open(path, "r+") as ds:
            ds.write_mask((valid * 255).astype(np.uint8))
    return path


def values_of(kind, shape, seed=0):
    """Random (k, H, W) values of ``kind``'s type, none of them its no-data value."""
    rng = np.random.default_rng(seed)
    if kind.endswith("int16"):
        return rng.integers(-500, 500, shape)
    if "float" in kind:
        return rng.normal(0.0, 100.0, shape).astype(np.float32)
    return rng.integers(1, 250, shape)


@pytest.fixture(scope="module", params=KINDS)
def case(request, tmp_path_factory):
    """``(kind, raster, data)``: 3 bands of 40 x 56 pixels; ``data`` (H, W, 3) float64, NaN where no data."""
    kind, valid = request.param, valid_pixels(40, 56)
    values = values_of(kind, (3, 40, 56))
    path = masked_file(tmp_path_factory.mktemp("masks") / "r.tif", kind, values, valid)
    with open_raster(path) as raster:
        yield kind, raster, np.where(valid, values, np.nan).transpose(1, 2, 0).astype(np.float64)


def assert_cell_means(reduced, data, box, factor, kind):
    expected = cell_means(data, box, factor)
    assert reduced.shape == expected.shape
    np.testing.assert_array_equal(np.isnan(reduced), np.isnan(expected), err_msg="cells read as no data")
    # GDAL rounds an integer file's averages to its integers
    tolerance = dict(rtol=1e-5, atol=1e-4) if "float" in kind else dict(atol=0.5)
    np.testing.assert_allclose(reduced, expected, equal_nan=True, **tolerance)


@pytest.mark.parametrize("factor", [2, 3, 4, 5, 8])
@pytest.mark.parametrize("box", [(0, 0, 56, 40), (-5, -3, 63, 45), (7, 2, 33, 29)])
def test_each_cell_is_the_mean_of_its_valid_pixels(case, box, factor):
    kind, raster, data = case
    assert_cell_means(raster.read_reduced(*box, factor), data, box, factor, kind)


@pytest.mark.parametrize("factor", [3, 4])
def test_strips_give_what_one_read_gave(case, monkeypatch, factor):
    raster = case[1]
    whole = raster.read_reduced(-5, -3, 63, 45, factor)
    monkeypatch.setattr(raster_module, "REDUCED_STRIP_PIXELS", 1)  # a strip of one row of cells each
    np.testing.assert_array_equal(raster.read_reduced(-5, -3, 63, 45, factor), whole)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("factor", [16, 32])
def test_one_valid_pixel_keeps_a_large_cell(tmp_path, kind, factor):
    # (the mean of a 0 / 255 mask over 32 x 32 pixels with one valid pixel is 0.25: it rounds to no data)
    valid = np.zeros((2 * factor, 2 * factor), bool)
    valid[3, 5] = valid[factor + 1, factor - 2] = True
    valid[factor:, factor:] = True
    values = values_of(kind, (3,) + valid.shape, seed=1)
    path = masked_file(tmp_path / "sparse.tif", kind, values, valid)
    with open_raster(path) as raster:
        reduced = raster.read_reduced(0, 0, 2 * factor, 2 * factor, factor)
    data = np.where(valid, values, np.nan).transpose(1, 2, 0).astype(np.float64)
    assert_cell_means(reduced, data, (0, 0, 2 * factor, 2 * factor), factor, kind)
    assert np.isnan(reduced[0, 1]).all() and np.isfinite(reduced[[0, 1, 1], [0, 0, 1]]).all()


@pytest.mark.parametrize("kind", ["nodata 0 uint8", "internal mask", "alpha band", "NaN pixels float32"])
def test_overviews_leave_out_no_data_too(tmp_path, kind):
    """Where the file's overviews serve, a cell is GDAL's overview average: within its valid pixels' range, never
    pulled towards a no-data value, and NaN only where none of its pixels is valid."""
    valid = valid_pixels(64, 96, seed=3)
    values = values_of(kind, (3, 64, 96), seed=3)
    path = masked_file(tmp_path / "ovr.tif", kind, values, valid)
    with rasterio.open(path, "r+") as ds:
        ds.build_overviews([2, 4], rasterio.enums.Resampling.average)
    data = np.where(valid, values, np.nan).transpose(1, 2, 0).astype(np.float64)
    with open_raster(path) as raster:
        for factor in (2, 4, 8):
            reduced = raster.read_reduced(0, 0, 96, 64, factor)
            cells = data.reshape(64 // factor, factor, 96 // factor, factor, 3)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # (all-NaN cells)
                low, high = np.nanmin(cells, axis=(1, 3)), np.nanmax(cells, axis=(1, 3))
            np.testing.assert_array_equal(np.isnan(reduced), np.isnan(low), err_msg=f"factor {factor}")
            inside = np.isfinite(low)
            assert (reduced[inside] >= low[inside] - 0.5).all() and (reduced[inside] <= high[inside] + 0.5).all()
