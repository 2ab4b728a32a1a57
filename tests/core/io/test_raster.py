"""core.io.raster: intensity bands, dtypes, masks, windows, decimated reads and coordinates."""

from __future__ import annotations

import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest
import rasterio
from rasterio.crs import CRS
from rasterio.transform import Affine
from rasterio.windows import Window

from core.io.raster import LUMINANCE_WEIGHTS, RasterError, open_raster
from tests.shared_data import PROJECT_ROOT, shared_file

pytestmark = pytest.mark.filterwarnings("ignore::rasterio.errors.NotGeoreferencedWarning")

UTM33 = CRS.from_epsg(32633)
TRANSFORM = Affine(0.5, 0.0, 455000.0, 0.0, -0.5, 5300000.0)


def write_tif(path, bands, crs=UTM33, transform=TRANSFORM, **profile):
    """Write a (k, H, W) array as a GeoTIFF; returns the path."""
    bands = np.asarray(bands)
    if bands.ndim == 2:
        bands = bands[np.newaxis]
    options = dict(driver="GTiff", count=bands.shape[0], height=bands.shape[1], width=bands.shape[2])
    options.update(dtype=bands.dtype, crs=crs, transform=transform, **profile)
    with rasterio.open(path, "w", **options) as ds:
        ds.write(bands)
    return path


def random_bands(seed, shape, dtype=np.uint8, high=255):
    return np.random.default_rng(seed).integers(1, high, size=shape, endpoint=True).astype(dtype)


# --- intensity bands -------------------------------------------------------------------------


def test_landsat_luminance_and_nodata():
    path = shared_file("landsat_rgb_300m.tif")
    with rasterio.open(path) as ds:
        raw = ds.read().astype(np.float64)
    expected = sum(w * raw[k] for k, w in enumerate(LUMINANCE_WEIGHTS))
    expected[(raw == 0).any(axis=0)] = np.nan  # nodata 0 in any band
    with open_raster(path) as raster:
        assert (raster.width, raster.height, raster.band_count) == (791, 718, 3)
        assert raster.dtype == np.uint8 and raster.nodata == 0 and raster.georeferenced
        window = raster.read_window(0, 0, raster.width, raster.height)
    assert window.dtype == np.float32 and window.shape == (718, 791)
    np.testing.assert_allclose(window, expected, rtol=1e-6, equal_nan=True)
    assert 0 < np.isnan(window).mean() < 0.5  # the scene's corners are nodata


@pytest.mark.parametrize("band", [1, 2, 3])
def test_landsat_chosen_band(band):
    path = shared_file("landsat_rgb_300m.tif")
    with rasterio.open(path) as ds:
        expected = ds.read(band).astype(np.float32)
    expected[expected == 0] = np.nan
    with open_raster(path, band=band) as raster:
        assert raster.band == band
        np.testing.assert_array_equal(raster.read_window(100, 200, 300, 250), expected[200:450, 100:400])


def test_two_bands_mean_and_gray_alpha(tmp_path):
    data = random_bands(1, (2, 20, 30))
    raster = open_raster(write_tif(tmp_path / "two.tif", data))
    np.testing.assert_allclose(raster.read_window(0, 0, 30, 20), data.mean(axis=0), rtol=1e-6)
    gray, alpha = random_bands(2, (20, 30)), np.full((20, 30), 255, np.uint8)
    alpha[5:9, 10:20] = 0
    path = tmp_path / "gray_alpha.png"
    with rasterio.open(path, "w", driver="PNG", width=30, height=20, count=2, dtype="uint8") as ds:
        ds.write(np.stack([gray, alpha]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a plain PNG opens without NotGeoreferencedWarning
        raster = open_raster(path)
    expected = gray.astype(np.float32)
    expected[alpha == 0] = np.nan  # the alpha band masks and is not averaged in
    np.testing.assert_array_equal(raster.read_window(0, 0, 30, 20), expected)
    assert not raster.georeferenced and raster.crs is None and raster.transform == Affine.identity()


@pytest.mark.parametrize(
    "dtype, high", [(np.uint8, 255), (np.uint16, 65535), (np.int16, 30000), (np.float32, 1), (np.float64, 1)]
)
def test_dtypes_read_exactly(tmp_path, dtype, high):
    rng = np.random.default_rng(3)
    data = (rng.random((40, 50)) * high).astype(dtype)
    raster = open_raster(write_tif(tmp_path / "img.tif", data))
    assert raster.dtype == dtype
    window = raster.read_window(0, 0, 50, 40)
    assert window.dtype == np.float32
    np.testing.assert_array_equal(window, data.astype(np.float32))


def test_png_16_bit_and_jpeg(tmp_path):
    data = random_bands(4, (25, 35), np.uint16, 65535)
    path = tmp_path / "deep.png"
    with rasterio.open(path, "w", driver="PNG", width=35, height=25, count=1, dtype="uint16") as ds:
        ds.write(data, 1)
    np.testing.assert_array_equal(open_raster(path).read_window(0, 0, 35, 25), data.astype(np.float32))
    rgb = random_bands(5, (3, 24, 32))
    path = tmp_path / "photo.jpg"
    with rasterio.open(path, "w", driver="JPEG", width=32, height=24, count=3, dtype="uint8") as ds:
        ds.write(rgb)
    with rasterio.open(path) as ds:  # JPEG is lossy: compare with what the file holds
        decoded = ds.read().astype(np.float64)
    expected = sum(w * decoded[k] for k, w in enumerate(LUMINANCE_WEIGHTS))
    np.testing.assert_allclose(open_raster(path).read_window(0, 0, 32, 24), expected, rtol=1e-6)


# --- masks ------------------------------------------------------------------------------------


def test_nodata_nan_and_inf_are_masked(tmp_path):
    data = np.arange(48, dtype=np.float32).reshape(6, 8)
    data[1, 2], data[3, 4], data[4, 5], data[5, 0] = -9999, np.nan, np.inf, -np.inf
    window = open_raster(write_tif(tmp_path / "f.tif", data, nodata=-9999)).read_window(0, 0, 8, 6)
    invalid = np.zeros((6, 8), bool)
    invalid[1, 2] = invalid[3, 4] = invalid[4, 5] = invalid[5, 0] = True
    np.testing.assert_array_equal(np.isnan(window), invalid)
    np.testing.assert_array_equal(window[~invalid], data[~invalid])


def test_internal_mask_is_honoured(tmp_path):
    data = random_bands(6, (3, 16, 16))
    mask = np.full((16, 16), 255, np.uint8)
    mask[:4, :] = 0
    path = tmp_path / "masked.tif"
    with rasterio.Env(GDAL_TIFF_INTERNAL_MASK=True):
        with rasterio.open(path, "w", driver="GTiff", width=16, height=16, count=3, dtype="uint8") as ds:
            ds.write(data)
            ds.write_mask(mask)
    window = open_raster(path).read_window(0, 0, 16, 16)
    assert np.isnan(window[:4]).all() and not np.isnan(window[4:]).any()


# --- windows ----------------------------------------------------------------------------------


@pytest.mark.parametrize("col_off, row_off", [(-3, -2), (25, 15), (-4, 12), (28, -1), (-10, -10)])
def test_windows_overhanging_the_edges(tmp_path, col_off, row_off):
    data = random_bands(7, (20, 30)).astype(np.float32)
    raster = open_raster(write_tif(tmp_path / "w.tif", data))
    window = raster.read_window(col_off, row_off, 12, 9)
    padded = np.full((20 + 40, 30 + 40), np.nan, np.float32)
    padded[20:40, 20:50] = data
    np.testing.assert_array_equal(window, padded[row_off + 20 : row_off + 29, col_off + 20 : col_off + 32])


def test_window_entirely_outside_is_all_nan(tmp_path):
    raster = open_raster(write_tif(tmp_path / "w.tif", random_bands(8, (10, 10))))
    for box in [(10, 0, 5, 5), (-5, 0, 5, 5), (0, 10, 3, 3), (-100, -100, 4, 2)]:
        window = raster.read_window(*box)
        assert window.shape == (box[3], box[2]) and np.isnan(window).all()


def test_window_reads_only_its_own_tiles(tmp_path):
    # Every tile except those of the window (and the corner tile that open checks) is
    # overwritten with garbage: the read succeeds only if it never decodes them.
    size, tile = 1024, 128
    data = random_bands(9, (size, size))
    path = write_tif(tmp_path / "big.tif", data, tiled=True, blockxsize=tile, blockysize=tile, compress="deflate")
    keep = {(3, 2), (3, 3), (size // tile - 1, size // tile - 1)}  # (tile row, tile col)
    with rasterio.open(path) as ds:
        blocks = [
            (int(ds.get_tag_item(f"BLOCK_OFFSET_{j}_{i}", "TIFF", bidx=1)),
             int(ds.get_tag_item(f"BLOCK_SIZE_{j}_{i}", "TIFF", bidx=1)), (i, j))
            for i in range(size // tile) for j in range(size // tile)
        ]
    raw = bytearray(path.read_bytes())
    for offset, nbytes, ij in blocks:
        if ij not in keep:
            raw[offset : offset + nbytes] = b"\xa5" * nbytes
    path.write_bytes(bytes(raw))
    raster = open_raster(path)
    np.testing.assert_array_equal(raster.read_window(300, 400, 100, 90), data[400:490, 300:400])
    with pytest.raises(RasterError, match="corrupt or truncated"):
        raster.read_window(0, 0, 10, 10)


def test_a_failed_read_quotes_what_gdal_said_on_opening(tmp_path):
    # ExtraSamples given for one band of two makes libtiff warn on opening; the first tile is garbage.
    import struct

    data = random_bands(5, (3, 512, 512))
    path = write_tif(tmp_path / "odd.tif", data, tiled=True, blockxsize=256, blockysize=256, compress="deflate",
                     photometric="MINISBLACK")
    with rasterio.open(path) as ds:
        offset, nbytes = (int(ds.get_tag_item(f"BLOCK_{key}_0_0", "TIFF", bidx=1)) for key in ("OFFSET", "SIZE"))
    raw = bytearray(path.read_bytes())
    ifd = struct.unpack_from("<I", raw, 4)[0]
    entries = [ifd + 2 + 12 * k for k in range(struct.unpack_from("<H", raw, ifd)[0])]
    (extra_samples,) = [e for e in entries if struct.unpack_from("<H", raw, e)[0] == 338]
    struct.pack_into("<I", raw, extra_samples + 4, 1)
    raw[offset : offset + nbytes] = b"\xa5" * nbytes
    path.write_bytes(bytes(raw))
    raster = open_raster(path)  # the last tile, which open checks, is sound
    said_on_opening = r"corrupt or truncated.*; GDAL on opening: TIFFReadDirectory:.*ExtraSamples"
    with pytest.raises(RasterError, match=said_on_opening) as err:
        raster.read_window(0, 0, 10, 10)
    assert "\n" not in str(err.value)


def test_small_window_of_a_20000_px_sparse_geotiff(tmp_path):
    path = tmp_path / "huge.tif"
    profile = dict(driver="GTiff", width=20000, height=20000, count=1, dtype="uint8", crs=UTM33,
                   transform=TRANSFORM, tiled=True, blockxsize=256, blockysize=256, compress="deflate",
                   sparse_ok=True, nodata=0)
    patch = random_bands(10, (300, 300))
    with rasterio.open(path, "w", **profile) as ds:
        ds.write(patch, 1, window=Window(15000, 12000, 300, 300))
    assert path.stat().st_size < 1_000_000
    raster = open_raster(path)
    window = raster.read_window(14900, 11950, 300, 300)
    np.testing.assert_array_equal(window[50:, 100:], patch[:250, :200].astype(np.float32))
    assert np.isnan(window[:50]).all() and np.isnan(window[:, :100]).all()


# --- decimated reads --------------------------------------------------------------------------


def test_read_decimated(tmp_path):
    data = random_bands(11, (3, 64, 80))
    raster = open_raster(write_tif(tmp_path / "d.tif", data))
    same = raster.read_decimated(0, 0, 80, 64, 80, 64)
    np.testing.assert_array_equal(same, raster.read_window(0, 0, 80, 64))
    rgb = raster.read_decimated(0, 0, 80, 64, 20, 16, bands=[1, 2, 3])
    assert rgb.shape == (16, 20, 3) and rgb.dtype == np.float32
    np.testing.assert_array_equal(rgb[..., 0], data[0, 2::4, 2::4])  # nearest = cell centres
    # Overhanging by half the window on the left: the left half of the output is empty.
    half = raster.read_decimated(-80, 0, 160, 64, 40, 16, bands=[2])
    assert np.isnan(half[:, :20]).all() and not np.isnan(half[:, 20:]).any()


def test_read_decimated_uses_overviews(tmp_path):
    data = np.zeros((256, 256), np.uint8)
    path = write_tif(tmp_path / "o.tif", data, tiled=True, blockxsize=128, blockysize=128)
    with rasterio.open(path, "r+") as ds:
        ds.build_overviews([4])
    # Make the overview differ from the full resolution, so we can tell which one was read.
    with rasterio.open(path, "r+") as ds:
        ds.write(np.full((256, 256), 9, np.uint8), 1)
    raster = open_raster(path)
    assert np.all(raster.read_decimated(0, 0, 256, 256, 64, 64) == 0)
    assert np.all(raster.read_window(0, 0, 256, 256) == 9)


# --- arrays -----------------------------------------------------------------------------------


def test_array_source_matches_file(tmp_path):
    data = random_bands(12, (3, 30, 40))
    from_file = open_raster(write_tif(tmp_path / "a.tif", data, nodata=7))
    from_array = open_raster(np.moveaxis(data, 0, -1), nodata=7)
    assert from_array.path is None and not from_array.georeferenced and from_array.band_count == 3
    for box in [(0, 0, 40, 30), (-5, 3, 20, 40), (10, 10, 5, 5)]:
        np.testing.assert_array_equal(from_array.read_window(*box), from_file.read_window(*box))
    np.testing.assert_array_equal(
        from_array.read_decimated(0, 0, 40, 30, 10, 10, bands=[3]),
        from_file.read_decimated(0, 0, 40, 30, 10, 10, bands=[3]),
    )


def test_array_source_is_not_modified_and_nan_is_masked():
    data = np.array([[1.0, np.nan], [np.inf, 4.0]])
    before = data.copy()
    window = open_raster(data).read_window(0, 0, 2, 2)
    np.testing.assert_array_equal(window, [[1, np.nan], [np.nan, 4]])
    np.testing.assert_array_equal(data, before)


def test_a_masked_arrays_masked_pixels_are_no_data_and_its_fill_sets_no_scale():
    data = np.arange(24, dtype=np.float64).reshape(4, 6) + 1.0
    mask = np.zeros(data.shape, bool)
    mask[1, 2] = mask[3, 0] = True
    filled = data.copy()
    filled[mask] = 1e30  # what a masked array may hold under its mask
    raster = open_raster(np.ma.masked_array(filled, mask))
    expected = np.where(mask, np.nan, data)
    np.testing.assert_array_equal(raster.read_window(0, 0, 6, 4), expected)  # not scaled by the 1e30 fill
    rgb = np.ma.masked_array(np.stack([data] * 3, axis=-1).astype(np.uint16), np.stack([mask] * 3, axis=-1))
    bands = open_raster(rgb).read_bands(0, 0, 6, 4)
    assert bands.shape == (4, 6, 3)
    for k in range(3):
        np.testing.assert_array_equal(bands[:, :, k], expected)
    reduced = open_raster(np.ma.masked_array(filled, mask)).read_reduced(0, 0, 6, 4, 2)  # means of 2 x 2 cells
    np.testing.assert_allclose(reduced[0, 0], np.mean(data[:2, :2]))
    np.testing.assert_allclose(reduced[0, 1], np.mean([data[0, 2], data[0, 3], data[1, 3]]))  # (1, 2) left out


# --- coordinates ------------------------------------------------------------------------------


def test_pixel_map_and_lonlat_round_trip(tmp_path):
    transform = Affine(0.5, 0.1, 455000.0, -0.05, -0.5, 5300000.0)  # rotated and sheared
    raster = open_raster(write_tif(tmp_path / "c.tif", random_bands(13, (10, 10)), transform=transform))
    xs, ys = np.array([0.0, 10.0, 3.25]), np.array([0.0, 10.0, 7.5])
    mx, my = raster.pixel_to_map(xs, ys)
    np.testing.assert_allclose(mx, 0.5 * xs + 0.1 * ys + 455000.0, rtol=0, atol=1e-9)
    np.testing.assert_allclose(my, -0.05 * xs - 0.5 * ys + 5300000.0, rtol=0, atol=1e-9)
    back = raster.map_to_pixel(mx, my)
    np.testing.assert_allclose(back, (xs, ys), atol=1e-6)
    lon, lat = raster.pixel_to_lonlat(xs, ys)
    assert np.all((14 < lon) & (lon < 15)) and np.all((47 < lat) & (lat < 48))
    np.testing.assert_allclose(raster.lonlat_to_pixel(lon, lat), (xs, ys), atol=1e-6)


def test_lonlat_needs_a_crs():
    raster = open_raster(np.zeros((4, 4)))
    with pytest.raises(RasterError, match="not georeferenced"):
        raster.pixel_to_lonlat([1.0], [1.0])
    np.testing.assert_array_equal(raster.pixel_to_map([1.5], [2.5]), ([1.5], [2.5]))


def test_a_crs_that_proj_cannot_relate_to_wgs84_is_not_georeferenced(tmp_path):
    from rasterio.crs import CRS

    local = CRS.from_wkt('LOCAL_CS["arbitrary",UNIT["metre",1],AXIS["Easting",EAST],AXIS["Northing",NORTH]]')
    raster = open_raster(write_tif(tmp_path / "local.tif", random_bands(15, (8, 8)), crs=local))
    assert raster.crs is not None and not raster.georeferenced  # a drone or scanned-map grid: pixels only
    with pytest.raises(RasterError, match="no known relation to WGS84"):
        raster.pixel_to_lonlat([1.0], [1.0])
    # UTM far outside its zone's domain: PROJ refuses the centre too
    far = Affine(0.5, 0.0, 455000.0e3, 0.0, -0.5, 5300000.0e3)
    assert not open_raster(write_tif(tmp_path / "far.tif", random_bands(16, (8, 8)), transform=far)).georeferenced
    assert open_raster(write_tif(tmp_path / "utm.tif", random_bands(17, (8, 8)))).georeferenced


# --- lifecycle and threads --------------------------------------------------------------------


def test_closed_raster_refuses_reads(tmp_path):
    with open_raster(write_tif(tmp_path / "x.tif", random_bands(14, (8, 8)))) as raster:
        raster.read_window(0, 0, 2, 2)
    assert raster.closed
    for read in (lambda: raster.read_window(0, 0, 2, 2), lambda: raster.read_bands(0, 0, 2, 2),
                 lambda: raster.read_decimated(0, 0, 8, 8, 2, 2), lambda: raster.read_reduced(0, 0, 8, 8, 2)):
        with pytest.raises(RasterError, match="closed"):  # (not rasterio's own error, an OSError)
            read()
    from core.extraction import extract

    for mode in ("auto", "ribbon"):
        with pytest.raises(RasterError, match="closed"):
            extract(raster, (1, 1), (7, 6), backend="cpu", mode=mode, nodes=3)


def test_concurrent_reads_agree_with_sequential(tmp_path):
    data = random_bands(15, (3, 300, 300))
    path = write_tif(tmp_path / "t.tif", data, tiled=True, blockxsize=64, blockysize=64, compress="deflate")
    raster = open_raster(path)
    boxes = [(int(c), int(r), 50, 40) for c, r in np.random.default_rng(0).integers(-20, 280, (40, 2))]
    expected = [raster.read_window(*box) for box in boxes]
    results = [None] * len(boxes)

    def work(first):
        for k in range(first, len(boxes), 4):
            results[k] = raster.read_window(*boxes[k])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for got, want in zip(results, expected):
        np.testing.assert_array_equal(got, want)


# --- argument checks --------------------------------------------------------------------------


def test_argument_errors(tmp_path):
    raster = open_raster(write_tif(tmp_path / "e.tif", random_bands(16, (3, 8, 8))))
    with pytest.raises(ValueError, match="width must be >= 1"):
        raster.read_window(0, 0, 0, 4)
    with pytest.raises(TypeError, match="row_off must be an integer"):
        raster.read_window(0, 1.5, 4, 4)
    with pytest.raises(RasterError, match="band 4 is out of range: the image has bands 1..3"):
        open_raster(tmp_path / "e.tif", band=4)
    with pytest.raises(TypeError, match="band must be"):
        open_raster(tmp_path / "e.tif", band="red")
    with pytest.raises(RasterError, match="bands 0 is out of range"):
        raster.read_decimated(0, 0, 8, 8, 4, 4, bands=[0])
    with pytest.raises(TypeError, match="source must be"):
        open_raster(12)
    with pytest.raises(RasterError, match=r"shape \(H, W\) or \(H, W, C\)"):
        open_raster(np.zeros(5))
    with pytest.raises(TypeError, match="integers or floats"):
        open_raster(np.zeros((3, 3), bool))


def test_arrays_work_without_rasterio():
    # The GPU machine imports core without rasterio (nor affine): arrays must still open there.
    code = (
        "import sys\n"
        "sys.modules['rasterio'] = sys.modules['affine'] = None  # any import of them fails\n"
        "import numpy as np\n"
        "from core.io.raster import open_raster\n"
        "r = open_raster(np.arange(12.0).reshape(3, 4))\n"
        "print(r.read_window(1, 1, 2, 2).tolist(), r.pixel_to_map([1.5], [2.0]), r.map_to_pixel([3.0], [1.0]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[[5.0, 6.0], [9.0, 10.0]] (array([1.5]), array([2.])) (array([3.]), array([1.]))"
