"""The tables of blocks that overview_damage reads through tifffile: GDAL's own, and damaged files told."""

from __future__ import annotations

import logging
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

rasterio = pytest.importorskip("rasterio")

from rasterio.enums import Interleaving, Resampling  # noqa: E402

from core.io.overviews import MAX_OVR_IMAGES, _levels, overview_damage, overview_path  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::rasterio.errors.NotGeoreferencedWarning")

LAYOUTS = {
    "tiled": dict(tiled=True, blockxsize=256, blockysize=256, compress="deflate"),
    "BigTIFF": dict(tiled=True, blockxsize=128, blockysize=128, BIGTIFF="YES"),
    "big-endian": dict(tiled=True, blockxsize=256, blockysize=256, ENDIANNESS="BIG", compress="lzw"),
    "strips": dict(tiled=False, blockysize=16),
    "bands apart": dict(tiled=True, blockxsize=128, blockysize=128, interleave="band"),
    "strips of bands apart": dict(tiled=False, blockysize=100, interleave="band", compress="deflate"),
}


def write(path, layout, bands=3, overviews=()):
    data = (np.arange(bands * 500 * 600).reshape(bands, 500, 600) % 251).astype(np.uint8)
    with rasterio.open(path, "w", driver="GTiff", width=600, height=500, count=bands, dtype="uint8",
                       **LAYOUTS[layout]) as ds:
        ds.write(data)
        if overviews:
            ds.build_overviews(list(overviews), Resampling.average)
    return path


def gdal_table(ds):
    """GDAL's offsets and byte counts of the blocks of ``ds``, in the TIFF's order (by band where apart)."""
    rows, cols = ds.block_shapes[0]
    bands = range(1, ds.count + 1) if ds.count > 1 and ds.interleaving == Interleaving.band else [1]
    places = [(band, x, y) for band in bands for y in range(-(-ds.height // rows)) for x in range(-(-ds.width // cols))]
    return [[int(ds.get_tag_item(f"BLOCK_{item}_{x}_{y}", "TIFF", bidx=band) or 0) for band, x, y in places]
            for item in ("OFFSET", "SIZE")]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_tables_are_gdals(tmp_path, layout):
    path = write(tmp_path / "image.tif", layout)
    [level] = _levels(path)
    with rasterio.open(path) as ds:
        offsets, sizes = gdal_table(ds)
    assert (level.width, level.height, level.block_count) == (600, 500, len(offsets))
    assert level.offsets.tolist() == offsets and level.byte_counts.tolist() == sizes and min(offsets) > 0
    assert level.offsets.dtype == level.byte_counts.dtype == np.uint64


def test_every_image_of_the_chain_is_read(tmp_path):
    path = write(tmp_path / "image.tif", "tiled", bands=1, overviews=(2, 4))
    levels = _levels(path)
    assert [(t.width, t.height, t.compression) for t in levels] == [(600, 500, 8), (300, 250, 8), (150, 125, 8)]
    for overview, level in zip([None, 0, 1], levels):
        with rasterio.open(path, **({} if overview is None else {"overview_level": overview})) as ds:
            assert [level.offsets.tolist(), level.byte_counts.tolist()] == gdal_table(ds)


def directory(entries, next_directory=0):
    """A classic little-endian TIFF whose one directory (at byte 8) has ``entries``: (tag, type, count, value)
    with LONG values in place, then one byte of pixels."""
    head = b"II*\0" + struct.pack("<I", 8)
    body = struct.pack("<H", len(entries)) + b"".join(struct.pack("<HHII", *entry) for entry in entries)
    return head + body + struct.pack("<I", next_directory) + b"\x07"


#: Where :func:`one_pixel`'s pixel lies: after the header (8 bytes) and the directory of 6 tags.
PIXEL_AT = 8 + 2 + 6 * 12 + 4


def one_pixel(next_directory=0, offsets=(273, 4, 1, PIXEL_AT)):
    """A 1 x 1 image of 8 bits in one strip."""
    return directory([(256, 4, 1, 1), (257, 4, 1, 1), (258, 4, 1, 8), (262, 4, 1, 1), offsets, (279, 4, 1, 1)],
                     next_directory)


def chain(count, back_to=None):
    """``count`` 1 x 1 images, each directory pointing to the next, the last to none or to image ``back_to``."""
    size = 2 + 4 * 12 + 4
    data = bytearray(b"II*\0" + struct.pack("<I", 8))
    for i in range(count):
        following = i + 1 if i + 1 < count else back_to
        next_directory = 0 if following is None else 8 + following * size
        entries = [(256, 4, 1, 1), (257, 4, 1, 1), (273, 4, 1, 8), (279, 4, 1, 1)]
        data += struct.pack("<H", 4) + b"".join(struct.pack("<HHII", *e) for e in entries)
        data += struct.pack("<I", next_directory)
    return bytes(data)


def test_a_hand_made_ovr_is_read_and_sound(tmp_path):
    overview_path(tmp_path / "image.tif").write_bytes(one_pixel())
    [level] = _levels(overview_path(tmp_path / "image.tif"))
    assert (level.width, level.height, level.block_count, level.compression) == (1, 1, 1, 1)
    assert level.offsets.tolist() == [PIXEL_AT] and level.byte_counts.tolist() == [1]
    assert overview_damage(tmp_path / "image.tif") is None


#: Damaged .ovrs: what tifffile says of each (a reason overview_damage gives where GDAL opens the file).
DAMAGED = {
    "empty": (b"", "not a TIFF"),
    "not a TIFF": (b"<html>Not Found</html>", "not a TIFF"),
    "cut in its header": (b"II+\0\x08\0\0\0", "unpack requires a buffer"),
    "cut in its directory": (one_pixel()[:30], "corrupted IFD structure"),
    "looping directories": (one_pixel(next_directory=8), "its chain of directories loops"),
    "a long loop": (chain(150, back_to=3), "its chain of directories loops"),
    "a chain without end": (chain(MAX_OVR_IMAGES + 1), "its chain of directories does not end"),
    "a directory past the end": (one_pixel(next_directory=10**6), "invalid page offset 1000000"),
    "too many tags": (b"II*\0\x08\0\0\0\xff\xff" + b"\0" * 64, "suspicious number of tags 65535"),
    "a table past the end": (one_pixel(offsets=(273, 4, 1000, 10**6)), "invalid value offset 1000000"),
    "a table of text": (one_pixel(offsets=(273, 2, 1, PIXEL_AT)), "a table of blocks of str32, not integers"),
    "no table": (directory([(256, 4, 1, 1), (257, 4, 1, 1)]), "missing data offset tag"),
    "no rows": (directory([(256, 4, 1, 1), (257, 4, 1, 1), (278, 4, 1, 0), (273, 4, 1, 8), (279, 4, 1, 1)]),
                "blocks of 1 x 0 px"),
    "no tile height": (directory([(256, 4, 1, 1), (257, 4, 1, 1), (322, 4, 1, 16), (323, 4, 1, 0), (324, 4, 1, 8),
                                  (325, 4, 1, 1)]), "blocks of 16 x 0 px"),
}


@pytest.mark.parametrize("kind", DAMAGED)
def test_damaged_files_are_told(tmp_path, kind, caplog):
    data, reason = DAMAGED[kind]
    ovr = overview_path(tmp_path / "image.tif")
    ovr.write_bytes(data)
    with pytest.raises(Exception, match=reason):  # (tifffile's own classes, or ValueError)
        _levels(ovr)
    notice = overview_damage(tmp_path / "image.tif")
    assert notice is not None and notice.startswith("image.tif.ovr beside the image is damaged (")
    assert not [record for record in caplog.records if record.name == "tifffile"]  # (said in the notice instead)


def test_tifffile_logs_as_before_outside_the_check(tmp_path, caplog):
    overview_path(tmp_path / "image.tif").write_bytes(one_pixel(next_directory=10**6))
    assert overview_damage(tmp_path / "image.tif") is not None
    logging.getLogger("tifffile").error("outside the check")
    assert [record.getMessage() for record in caplog.records if record.name == "tifffile"] == ["outside the check"]


@pytest.fixture(scope="module")
def sound_bytes(tmp_path_factory):
    """A small tiled TIFF with two levels of internal overviews: the .ovr that the fuzzing below damages."""
    return write(tmp_path_factory.mktemp("fuzz") / "sound.tif", "tiled", bands=2, overviews=(2, 4)).read_bytes()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.lists(st.tuples(st.integers(0, 1023), st.integers(0, 255)), min_size=1, max_size=6),
       cut=st.none() | st.integers(0, 4096))
def test_damaged_structures_are_read_or_told(tmp_path, sound_bytes, caplog, changes, cut):
    data = bytearray(sound_bytes)
    for position, value in changes:  # (the first KiB: the header, the directories and their tables)
        data[position] = value
    overview_path(tmp_path / "image.tif").write_bytes(bytes(data[:cut]))
    notice = overview_damage(tmp_path / "image.tif")
    assert notice is None or notice.startswith("image.tif.ovr beside the image is damaged (")
    assert not [record for record in caplog.records if record.name == "tifffile"]
