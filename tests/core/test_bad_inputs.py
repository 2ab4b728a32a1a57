"""Bad inputs: each a clear error from the Python API and from ``linesnap extract``.

Broken files (missing, corrupt, truncated, empty, unsupported), windows without
valid pixels, endpoints outside the raster or equal, out-of-range settings and
absurd sizes.  The CLI must exit non-zero with one line on stderr and write nothing.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import rasterio
from rasterio.transform import Affine

from core.cli.extract import extract_main
from core.extraction import extract
from core.io.raster import RasterError, open_raster

pytestmark = pytest.mark.filterwarnings("ignore::rasterio.errors.NotGeoreferencedWarning")

SIZE = 160
GOOD_POINTS = ("20,30", "140,90")  # the CLI's --start, --end on a good image


def write_image(path, driver="GTiff", data=None, nodata=None, **profile):
    data = np.random.default_rng(0).integers(1, 255, (3, SIZE, SIZE), dtype=np.uint8) if data is None else data
    options = dict(driver=driver, width=data.shape[2], height=data.shape[1], count=data.shape[0], dtype=data.dtype)
    if driver == "GTiff":
        options.update(crs="EPSG:32633", transform=Affine(0.5, 0, 455000, 0, -0.5, 5300000), tiled=True,
                       blockxsize=64, blockysize=64, compress="deflate", nodata=nodata)
    with rasterio.open(path, "w", **options, **profile) as ds:
        ds.write(data)
    return path


def cut(path, keep):
    """Truncate a file to its first ``keep`` bytes (a fraction when < 1)."""
    raw = path.read_bytes()
    path.write_bytes(raw[: int(len(raw) * keep) if keep < 1 else keep])
    return path


def write_bytes(path, data):
    path.write_bytes(data)
    return path


BROKEN_FILES = {
    "missing": (lambda d: d / "missing.tif", "does not exist"),
    "folder": (lambda d: d, "is a folder"),
    "empty": (lambda d: cut(write_image(d / "empty.tif"), 0), "is empty (0 bytes)"),
    "corrupt": (lambda d: write_bytes(d / "junk.tif", b"II*\x00" + bytes(range(256)) * 40), "not a readable image"),
    "text": (lambda d: write_bytes(d / "notes.png", b"not an image"), "not a readable image"),
    "truncated_tiff": (lambda d: cut(write_image(d / "half.tif"), 0.5), "corrupt or truncated"),
    "truncated_header": (lambda d: cut(write_image(d / "head.tif"), 64), "not a readable image"),
    "truncated_png": (lambda d: cut(write_image(d / "half.png", "PNG"), 0.5), "corrupt or truncated"),
    "truncated_jpeg": (lambda d: cut(write_image(d / "half.jpg", "JPEG"), 0.5), "corrupt or truncated"),
    "complex_pixels": (lambda d: write_image(d / "c.tif", data=np.zeros((1, 8, 8), np.complex64)),
                       "only integer and float images"),
}


@pytest.mark.parametrize("case", sorted(BROKEN_FILES))
def test_broken_files(case, tmp_path, capsys):
    make, message = BROKEN_FILES[case]
    path = make(tmp_path)
    with pytest.raises(RasterError, match=re.escape(message)):
        open_raster(path)
    with pytest.raises(RasterError, match=re.escape(message)):
        extract(path, (20.0, 30.0), (140.0, 90.0), backend="cpu")
    assert_cli_fails(capsys, tmp_path, [path, "--start", GOOD_POINTS[0], "--end", GOOD_POINTS[1]], message)


def assert_cli_fails(capsys, tmp_path, args, message):
    out_path = tmp_path / "never.geojson"
    before = sorted(tmp_path.iterdir())
    status = extract_main([str(a) for a in args] + ["--backend", "cpu", "-o", str(out_path)])
    out, err = capsys.readouterr()
    assert status != 0 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("linesnap: error: "), err
    assert message in err, err
    assert sorted(tmp_path.iterdir()) == before  # nothing written, no temporary file


# --- windows without data ---------------------------------------------------------------------


def test_all_nodata_window(tmp_path, capsys):
    data = np.zeros((1, SIZE, SIZE), np.uint16)
    data[0, :, 120:] = 900  # valid only on the right
    path = write_image(tmp_path / "nodata.tif", data=data, nodata=0)
    with open_raster(path) as raster:
        assert np.isnan(raster.read_window(0, 0, 100, SIZE)).all()
        assert not np.isnan(raster.read_window(120, 0, 40, SIZE)).any()
    with pytest.raises(ValueError, match="no valid pixel"):
        extract(path, (10.0, 20.0), (60.0, 140.0), backend="cpu", half_width_px=8.0, snap_endpoints=False)
    args = [path, "--start", "10,20", "--end", "60,140", "--half-width", 8, "--no-snap-endpoints"]
    assert_cli_fails(capsys, tmp_path, args, "no valid pixel")


def test_window_outside_reads_as_nan_not_an_error():
    raster = open_raster(np.ones((10, 10), np.float32))
    assert np.isnan(raster.read_window(50, 50, 8, 8)).all()


# --- geometry and settings --------------------------------------------------------------------

SETTINGS_CASES = {
    # name: (start, end, settings overrides, CLI options, message)
    "start_outside": ((-1.0, 30.0), (140.0, 90.0), {}, [], "start (-1, 30) lies outside the raster of 160 x 160"),
    "end_outside": ((20.0, 30.0), (140.0, 160.5), {}, [], "end (140, 160.5) lies outside the raster"),
    "same_points": ((20.0, 30.0), (20.0, 30.0), {}, [], "start and end must differ"),
    "nodes_2": (None, None, {"nodes": 2}, ["--nodes", 2], "nodes must be an integer >= 3; got 2"),
    "points_1": (None, None, {"points": 1}, ["--points", 1], "points must be an integer >= 2; got 1"),
    "angle_0": (None, None, {"max_turn_deg": 0.0}, ["--max-turn", 0],
                "max_turn_deg must be a finite number in (0, 180]"),
    "angle_negative": (None, None, {"max_turn_deg": -5.0}, ["--max-turn", -5], "in (0, 180]; got -5"),
    "angle_181": (None, None, {"max_turn_deg": 181.0}, ["--max-turn", 181], "in (0, 180]; got 181"),
    "half_width_0": (None, None, {"half_width_px": 0.0}, ["--half-width", 0], "half_width_px must be"),
    "absurd_points": (None, None, {"points": 200_000}, ["--points", 200_000], "GiB of memory"),
    "absurd_window": (None, None, {"half_width_px": 3e6, "points": 3}, ["--half-width", 3e6, "--points", 3], "GiB"),
    # refused from the settings alone, before the guides' points are allocated
    "points_beyond_memory": (None, None, {"points": 10**19}, ["--points", 10**19], "(8 nodes x 10000000000000000000 "),
    "snapped_points_beyond_memory": (None, None, {"points": 10**9, "snap_endpoints": True},
                                     ["--points", 10**9, "--snap-endpoints"], "GiB of memory"),
    "half_width_1e200": (None, None, {"half_width_px": 1e200}, ["--half-width", 1e200], "half_width_px must be"),
    "sigma_1e19": (None, None, {"sigma_px": 1e19}, ["--sigma", 1e19], "sigma_px must be a finite number in (0, 1e+09]"),
    "ribbon_1e20": (None, None, {"ribbon_width_px": 1e20}, ["--ribbon-width", 1e20], "ribbon_width_px must be"),
    "snap_1e308": (None, None, {"snap_endpoints": True, "snap_half_width_px": 1e308},
                   ["--snap-endpoints", "--snap-half-width", 1e308], "snap_half_width_px must be"),
    "no_feasible_polyline": (None, None, {"mode": "ribbon", "points": 2, "max_turn_deg": 0.001,
                                          "snap_endpoints": False},
                             ["--mode", "ribbon", "--points", 2, "--max-turn", 0.001, "--no-snap-endpoints"],
                             "no polyline satisfies"),
}


#: The command names a setting by its flag where the API names the field.
FLAG_OF = {"max_turn_deg": "--max-turn", "half_width_px": "--half-width", "sigma_px": "--sigma",
           "ribbon_width_px": "--ribbon-width", "snap_half_width_px": "--snap-half-width"}


@pytest.mark.parametrize("case", sorted(SETTINGS_CASES))
def test_bad_geometry_and_settings(case, tmp_path, capsys):
    start, end, overrides, options, message = SETTINGS_CASES[case]
    start, end = start or (20.0, 30.0), end or (140.0, 90.0)
    path = write_image(tmp_path / "good.tif")
    with pytest.raises(ValueError, match=re.escape(message)):
        extract(path, start, end, backend="cpu", **overrides)
    points = ["--start", "{:g},{:g}".format(*start), "--end", "{:g},{:g}".format(*end)]
    for field, flag in sorted(FLAG_OF.items(), key=lambda item: -len(item[0])):  # (snap_half_width_px first)
        message = message.replace(field, flag)
    assert_cli_fails(capsys, tmp_path, [path, *points, *options], message)


def test_absurd_window_read_is_refused_before_allocating(tmp_path):
    raster = open_raster(write_image(tmp_path / "good.tif"))
    with pytest.raises(RasterError, match="more than the .* GiB of memory of this machine"):
        raster.read_window(0, 0, 10**6, 10**6)
    with pytest.raises(RasterError, match="GiB"):
        raster.read_decimated(0, 0, 10, 10, 10**6, 10**6, bands=[1, 2, 3])


def test_empty_arrays_and_bad_bands(tmp_path):
    with pytest.raises(RasterError, match=r"empty \(shape \(0, 5\)\)"):
        open_raster(np.zeros((0, 5)))
    path = write_image(tmp_path / "good.tif")
    for band in (0, 4):
        with pytest.raises(RasterError, match=f"band {band} is out of range: the image has bands 1..3"):
            open_raster(path, band=band)
