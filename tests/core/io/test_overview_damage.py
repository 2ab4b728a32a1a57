"""A damaged IMAGE.ovr (a build killed midway, a file cut short, not a TIFF): told, set aside, replaced."""

from __future__ import annotations

import re
import shutil
import struct
import warnings

import numpy as np
import pytest

rasterio = pytest.importorskip("rasterio")

from rasterio.errors import NotGeoreferencedWarning  # noqa: E402
from rasterio.windows import Window  # noqa: E402

from core.io.overviews import build_overviews, needs_overviews, overview_damage, overview_path  # noqa: E402
from core.io.raster import open_raster  # noqa: E402
from tests.core.io.test_overviews import tiled_tif  # noqa: E402


@pytest.fixture
def image(tmp_path):
    """A 5000 x 400 GeoTIFF (large: longer than LARGE_SIDE_PX) that is never 0."""
    rows, cols = np.mgrid[0:400, 0:5000]
    return tiled_tif(tmp_path / "big.tif", ((rows // 3 + cols // 7) % 250 + 1).astype(np.uint8)[None])


def whole_view(raster):
    """The whole image at 1:8, as the fit view reads it (through overviews where there are any)."""
    return raster.read_decimated(0, 0, raster.width, raster.height, raster.width // 8, raster.height // 8)


def gdal_ovr(image, folder, **options):
    """The bytes of a sound .ovr of ``image`` (GDAL's own build, in-process, of a copy in ``folder``)."""
    copy = shutil.copy(image, folder / "copy.tif")
    with rasterio.Env(TIFF_USE_OVR=True, **options), rasterio.open(copy, "r+") as ds:
        ds.build_overviews([2, 4, 8, 16, 32], rasterio.enums.Resampling.average)
    return overview_path(copy).read_bytes()


def never_written(image, folder):
    """What a build killed midway leaves: the level 1:2 declared, none of its blocks written (read as 0)."""
    ovr = folder / "sparse.tif"
    with rasterio.open(ovr, "w", driver="GTiff", width=2500, height=200, count=1, dtype="uint8", tiled=True,
                       blockxsize=128, blockysize=128, SPARSE_OK=True, crs="EPSG:3857",
                       transform=rasterio.Affine(2, 0, 0, 0, -2, 0)):
        pass
    return ovr.read_bytes()


def partly_written(image, folder):
    """A level whose first and last blocks were written, but not the two between them of its 11th column (read
    as 0)."""
    ovr = folder / "partly.tif"
    with rasterio.open(ovr, "w", driver="GTiff", width=2500, height=200, count=1, dtype="uint8", tiled=True,
                       blockxsize=128, blockysize=128, SPARSE_OK=True, crs="EPSG:3857",
                       transform=rasterio.Affine(2, 0, 0, 0, -2, 0)) as ds:
        for left, right in ((0, 1280), (1408, 2500)):
            ds.write(np.full((1, 200, right - left), 7, np.uint8), window=Window(left, 0, right - left, 200))
    with rasterio.open(ovr) as ds:
        assert int(ds.get_tag_item("BLOCK_OFFSET_19_1", "TIFF", bidx=1)) > 0
        assert not int(ds.get_tag_item("BLOCK_OFFSET_10_0", "TIFF", bidx=1) or 0)
    return ovr.read_bytes()


def block_past_the_end(image, folder):
    """A sound .ovr but for the entry of its level 1:2's table of blocks that places the 6th of its 10 blocks:
    past the end of the file (the table overwritten; GDAL's reads of that block fail)."""
    data = bytearray(gdal_ovr(image, folder))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotGeoreferencedWarning)  # (an .ovr has no georeference of its own)
        with rasterio.open(folder / "copy.tif.ovr") as ds:
            entry = struct.pack("<I", int(ds.get_tag_item("BLOCK_OFFSET_5_0", "TIFF", bidx=1)))
    assert data.count(entry) == 1  # (the pixels are never 0, the offset's last byte is)
    at = data.find(entry)
    data[at: at + 4] = struct.pack("<I", len(data) + 4096)
    return bytes(data)


def overwritten(image, folder, garbage):
    """A sound DEFLATE .ovr but for the bytes of the 4th to the 7th of the 10 blocks of its level 1:2, overwritten
    with ``garbage`` (a crash that left a range unwritten, a download not filled in, a bad copy)."""
    data = bytearray(gdal_ovr(image, folder, COMPRESS_OVERVIEW="DEFLATE"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotGeoreferencedWarning)
        with rasterio.open(folder / "copy.tif.ovr") as ds:
            start = int(ds.get_tag_item("BLOCK_OFFSET_3_0", "TIFF", bidx=1))
            end = int(ds.get_tag_item("BLOCK_OFFSET_6_0", "TIFF", bidx=1)) + int(
                ds.get_tag_item("BLOCK_SIZE_6_0", "TIFF", bidx=1))
    data[start:end] = garbage(end - start)
    return bytes(data)


DAMAGE = {
    "never written": (never_written, "level was never written"),
    "a block never written": (partly_written, "2500 x 200 level lacks 2 of its 40 blocks"),
    "a block past the end": (block_past_the_end, "cut short: blocks of its 2500 x 200 level lie past the end"),
    "cut short": (lambda image, folder: gdal_ovr(image, folder)[:5000], "cut short|TIFF"),
    "cut in a level": (lambda image, folder: gdal_ovr(image, folder)[:330_000], "cut short"),
    "zeroed in a level": (lambda image, folder: overwritten(image, folder, bytes), "2500 x 200 level are zeroed"),
    "garbled in a level": (lambda image, folder: overwritten(image, folder, np.random.default_rng(1).bytes),
                           "2500 x 200 level are zeroed or garbled"),
    "not a TIFF": (lambda image, folder: b"<html>Not Found</html>" * 100, "not recognized|TIFF|not a"),
    "empty": (lambda image, folder: b"", ""),
}


@pytest.mark.parametrize("kind", DAMAGE)
def test_an_image_beside_a_damaged_ovr_opens_and_reads_right(image, tmp_path, kind):
    expected = whole_view(open_raster(image))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    make, reason = DAMAGE[kind]
    overview_path(image).write_bytes(make(image, scratch))
    raster = open_raster(image)
    assert len(raster.notices) == 1 and raster.notices == [overview_damage(image)]
    assert raster.notices[0].startswith("big.tif.ovr beside the image is damaged (")
    assert raster.notices[0].endswith(") and not used; File > Build Overviews... replaces it")
    assert str(tmp_path) not in raster.notices[0] and len(raster.notices[0]) <= 170  # (the status bar's room)
    assert re.search(reason, raster.notices[0])
    np.testing.assert_array_equal(whole_view(raster), expected)  # (not the zeros or errors of the damaged levels)
    assert needs_overviews(raster)


def test_a_sound_ovr_is_used_without_notice(image, tmp_path):
    overview_path(image).write_bytes(gdal_ovr(image, tmp_path))
    raster = open_raster(image)
    assert overview_damage(image) is None and raster.notices == []
    assert raster._reader._ds.overviews(1) == [2, 4, 8, 16, 32] and not needs_overviews(raster)


@pytest.mark.parametrize("compress", ["NONE", "DEFLATE", "LZW", "JPEG"])
def test_sound_ovrs_with_blank_blocks_are_used(tmp_path, compress):
    """Blocks of zeros (nodata around a scene) compress to little, but start as any other."""
    data = np.zeros((3, 400, 5000), np.uint8)
    data[:, 100:300, 1000:2000] = 90
    image = tiled_tif(tmp_path / "blank.tif", data, nodata=0)
    overview_path(image).write_bytes(gdal_ovr(image, tmp_path, COMPRESS_OVERVIEW=compress))
    assert overview_damage(image) is None


def test_linesnaps_own_ovr_of_a_blank_image_is_used(tmp_path):
    image = tiled_tif(tmp_path / "blank.tif", np.zeros((1, 400, 5000), np.uint8), nodata=0)
    build_overviews(image)
    assert overview_damage(image) is None and open_raster(image).notices == []


def test_a_build_replaces_a_damaged_ovr(image, tmp_path):
    overview_path(image).write_bytes(never_written(image, tmp_path))
    raster = open_raster(image)
    assert raster.notices
    assert build_overviews(image) == [2, 4, 8, 16, 32]
    raster.reopen()
    assert raster.notices == [] and raster.ovr_damage is None and raster._reader._ds.overviews(1) == [2, 4, 8, 16, 32]
    assert not list(tmp_path.glob(".big.tif.ovr-*"))


@pytest.mark.parametrize("kind", ["sound", "never written"])
def test_opening_an_image_and_offering_overviews_checks_its_ovr_once(image, tmp_path, monkeypatch, kind):
    # the open (core.io.readers) and the offer (needs_overviews, app.overviews) each checked a sound .ovr: 2 x 9 ms
    from core.io import overviews, readers

    overview_path(image).write_bytes(gdal_ovr(image, tmp_path) if kind == "sound" else never_written(image, tmp_path))
    checks = []

    def counted(path):
        checks.append(path)
        return overview_damage(path)

    monkeypatch.setattr(readers, "overview_damage", counted)
    monkeypatch.setattr(overviews, "overview_damage", counted)
    raster = open_raster(image)
    assert needs_overviews(raster) == (kind != "sound")
    assert len(checks) == 1 and (raster.ovr_damage is None) == (kind == "sound")
