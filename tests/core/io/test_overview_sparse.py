"""GDAL's sparse .ovr (blocks where the image is empty left unwritten on purpose): sound; a killed build's not."""

from __future__ import annotations

import re
import struct

import numpy as np
import pytest

rasterio = pytest.importorskip("rasterio")
tifffile = pytest.importorskip("tifffile")

from rasterio.enums import Resampling  # noqa: E402

from core.io import overview_sparse  # noqa: E402
from core.io.overviews import _levels, overview_damage, overview_path  # noqa: E402
from core.io.raster import open_raster  # noqa: E402
from tests.core.io.test_raster import TRANSFORM, UTM33  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::rasterio.errors.NotGeoreferencedWarning")


def scene(bands=3, height=1500, width=2600, dtype=np.uint8):
    """A scene on a field of 0: a tilted square of values 1-250 over a third of the image (a warped image's
    corners of nodata)."""
    rows, cols = np.mgrid[0:height, 0:width]
    u, v = (rows - height / 2 + cols - width / 2) / 2**0.5, (rows - height / 2 - cols + width / 2) / 2**0.5
    inside = (np.abs(u) < height * 0.4) & (np.abs(v) < height * 0.4)
    values = np.stack([(rows // 3 + cols // 7 + 40 * band) % 250 + 1 for band in range(bands)])
    return np.where(inside, values, 0).astype(dtype)


def write(path, data, nodata=0, **layout):
    profile = dict(driver="GTiff", width=data.shape[2], height=data.shape[1], count=data.shape[0],
                   dtype=data.dtype.name, crs=UTM33, transform=TRANSFORM, nodata=nodata, tiled=True,
                   blockxsize=256, blockysize=256, compress="deflate")
    with rasterio.open(path, "w", **{**profile, **layout}) as ds:
        ds.write(data)
    return path


def sparse_ovr(image, factors=(2, 4, 8, 16), resampling=Resampling.average, **options):
    """GDAL's own .ovr of ``image``, built sparse (``gdaladdo -ro --config SPARSE_OK_OVERVIEW ON``); its levels."""
    with rasterio.Env(TIFF_USE_OVR=True, SPARSE_OK_OVERVIEW=True, **options), rasterio.open(image, "r+") as ds:
        ds.build_overviews(list(factors), resampling)
    levels = _levels(overview_path(image))
    assert any(level.unwritten.any() for level in levels)  # (sparse indeed: blocks at offset 0)
    return levels


def lines(height=1500, width=2600):
    """Lines one pixel wide on a field of 0, in the second band only, on odd rows and columns: GDAL's nearest
    neighbour overviews (the finer pixel at each pixel's top left) miss them all."""
    data = np.zeros((3, height, width), np.uint8)
    data[1, 301::400, :] = 200
    data[1, :, 151::500] = 120
    return data


SPARSE = {
    "average, nodata 0": (lambda: scene(), {}, {}),
    "nearest (gdaladdo's default), no nodata": (lambda: scene(), {"nodata": None}, {"resampling": Resampling.nearest}),
    "lines missed by nearest neighbour": (lines, {}, {"resampling": Resampling.nearest}),
    "DEFLATE, bands interleaved": (lambda: scene(), {},
                                   {"COMPRESS_OVERVIEW": "DEFLATE", "INTERLEAVE_OVERVIEW": "PIXEL"}),
    "float, NaN nodata": (lambda: np.where(scene(2) > 0, scene(2), np.nan).astype(np.float32),
                          {"nodata": float("nan")}, {}),
    "image in strips": (lambda: scene(1), {"tiled": False, "blockysize": 16}, {}),
    "sparse image": (lambda: scene(), {"SPARSE_OK": True}, {}),
    "image blocks of 512, odd sizes": (lambda: scene(height=1333, width=2777), {"blockxsize": 512, "blockysize": 512},
                                       {"factors": (2, 4, 8, 16, 32)}),
}


@pytest.mark.parametrize("kind", SPARSE)
def test_gdals_sparse_ovrs_are_sound_and_used(tmp_path, kind):
    make, layout, build = SPARSE[kind]
    image = write(tmp_path / "scene.tif", make(), **layout)
    sparse_ovr(image, **build)
    assert overview_damage(image) is None
    raster = open_raster(image)
    assert raster.notices == [] and raster._reader._ds.overviews(1) == list(build.get("factors", (2, 4, 8, 16)))


def unwrite(ovr, level, blocks):
    """``blocks`` of image ``level`` of ``ovr`` listed as never written (offset 0, 0 bytes): a build killed before
    writing them."""
    data = bytearray(ovr.read_bytes())
    with tifffile.TiffFile(ovr) as tiff:
        page = tiff.pages[level]
        for name in ("Offsets", "ByteCounts"):
            tag = page.tags[f"Tile{name}" if page.is_tiled else f"Strip{name}"]
            item = struct.calcsize(tiff.byteorder + tifffile.TIFF.DATA_FORMATS[tag.dtype][-1])
            for block in blocks:
                data[tag.valueoffset + block * item: tag.valueoffset + (block + 1) * item] = bytes(item)
    ovr.write_bytes(bytes(data))


@pytest.mark.parametrize("layout", [{}, {"SPARSE_OK": True}], ids=["image dense", "image sparse"])
@pytest.mark.parametrize("where", ["a block of 1:2 over the scene", "the coarsest level over the scene",
                                   "every level after 1:2"])
def test_a_sparse_ovr_half_written_where_the_image_has_pixels_is_damaged(tmp_path, layout, where):
    image = write(tmp_path / "scene.tif", scene(), **layout)
    levels = sparse_ovr(image)
    written = [np.flatnonzero(~level.unwritten) for level in levels]
    killed = {"a block of 1:2 over the scene": {0: [written[0][len(written[0]) // 2]]},
              "the coarsest level over the scene": {3: written[3][:2]},
              "every level after 1:2": {i: range(levels[i].block_count) for i in (1, 2, 3)}}[where]
    for level, blocks in killed.items():
        unwrite(overview_path(image), level, blocks)
    notice = overview_damage(image)
    assert notice is not None and notice.startswith("scene.tif.ovr beside the image is damaged (")
    assert re.search(r"level (lacks \d+ of its \d+ blocks|was never written)\)", notice)
    assert open_raster(image).notices == [notice]


def test_a_block_unwritten_over_the_empty_field_of_a_dense_ovr_is_sound(tmp_path):
    image = write(tmp_path / "scene.tif", scene())
    with rasterio.Env(TIFF_USE_OVR=True), rasterio.open(image, "r+") as ds:
        ds.build_overviews([2, 4], Resampling.average)
    unwrite(overview_path(image), 0, [0, 18, 36])  # (the top left corner of each band: 0 there)
    assert overview_damage(image) is None
    unwrite(overview_path(image), 0, [18 + 8])  # (the second band's block in the second row, third column: the scene)
    assert "1300 x 750 level lacks 4 of its 54 blocks" in overview_damage(image)


def counted_reads(monkeypatch):
    """The reads of the finer images' pixels that the check makes: "footprint" under an unwritten block, "block"
    a whole block (whose bytes others have too)."""
    reads = []
    for kind, name in (("footprint", "nearest_empty"), ("block", "block_empty")):
        def counted(self, *args, read=getattr(overview_sparse._Source, name), kind=kind):
            reads.append(kind)
            return read(self, *args)

        monkeypatch.setattr(overview_sparse._Source, name, counted)
    return reads


@pytest.mark.parametrize("layout, expected", [({"SPARSE_OK": True}, []), ({}, ["block"])],
                         ids=["sparse", "dense"])
def test_the_tables_spare_reads(tmp_path, monkeypatch, layout, expected):
    """Sizes that halve evenly: each unwritten block lies over blocks unwritten in the finer level, and over the
    image's blocks of nodata: unwritten (a sparse image), or all alike, of which one is read."""
    image = write(tmp_path / "scene.tif", scene(height=2048, width=4096), **layout)
    sparse_ovr(image)
    reads = counted_reads(monkeypatch)
    assert overview_damage(image) is None
    assert reads == expected


def test_a_mask_never_written_is_damage(tmp_path):
    image = write(tmp_path / "scene.tif", scene())
    ovr = overview_path(image)
    with rasterio.Env(GDAL_TIFF_INTERNAL_MASK=True), rasterio.open(
            ovr, "w", driver="GTiff", width=1300, height=750, count=3, dtype="uint8", tiled=True, blockxsize=256,
            blockysize=256) as ds:
        ds.write(scene(height=750, width=1300))
        ds.write_mask(np.full((750, 1300), 255, np.uint8))
    with tifffile.TiffFile(ovr) as tiff:
        assert [bool(page.subfiletype & 4) for page in tiff.pages] == [False, True]
    assert overview_damage(image) is None
    unwrite(ovr, 1, [0])  # (where the mask says valid: GDAL would read it as masked)
    assert overview_damage(image) is not None
