"""The tables of blocks read from TIFF files: GDAL's own view of each block, and damaged files refused."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

rasterio = pytest.importorskip("rasterio")

from rasterio.enums import Interleaving, Resampling  # noqa: E402

from core.io.tiff_blocks import MAX_IMAGES, block_tables  # noqa: E402

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
    [table] = block_tables(path)
    with rasterio.open(path) as ds:
        offsets, sizes = gdal_table(ds)
    assert (table.width, table.height, table.block_count) == (600, 500, len(offsets))
    assert table.offsets.tolist() == offsets and table.byte_counts.tolist() == sizes and min(offsets) > 0


def test_every_image_of_the_chain_is_read(tmp_path):
    path = write(tmp_path / "image.tif", "tiled", bands=1, overviews=(2, 4))
    tables = block_tables(path)
    assert [(t.width, t.height, t.compression) for t in tables] == [(600, 500, 8), (300, 250, 8), (150, 125, 8)]
    for level, table in zip([None, 0, 1], tables):
        with rasterio.open(path, **({} if level is None else {"overview_level": level})) as ds:
            assert [table.offsets.tolist(), table.byte_counts.tolist()] == gdal_table(ds)


def test_blocks_never_written_read_as_zero(tmp_path):
    path = tmp_path / "sparse.tif"
    with rasterio.open(path, "w", driver="GTiff", width=600, height=500, count=1, dtype="uint8", tiled=True,
                       blockxsize=256, blockysize=256, SPARSE_OK=True) as ds:
        ds.write(np.ones((1, 256, 256), np.uint8), window=((0, 256), (0, 256)))
    [table] = block_tables(path)
    assert table.block_count == 6 and table.offsets[0] > 0 and table.offsets[1:].tolist() == [0] * 5


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


def test_a_hand_made_tiff(tmp_path):
    (tmp_path / "one.tif").write_bytes(one_pixel())
    [table] = block_tables(tmp_path / "one.tif")
    assert (table.width, table.height, table.block_count, table.compression) == (1, 1, 1, 1)
    assert table.offsets.tolist() == [PIXEL_AT] and table.byte_counts.tolist() == [1]
    with rasterio.open(tmp_path / "one.tif") as ds:  # (GDAL reads it as such)
        assert ds.read().tolist() == [[[7]]]


DAMAGED = {
    "empty": (b"", "not a TIFF"),
    "not a TIFF": (b"<html>Not Found</html>", "not a TIFF"),
    "cut in its header": (b"II+\0\x08\0\0\0", "not a TIFF|cut short"),
    "cut in its directory": (one_pixel()[:30], "cut short"),
    "looping directories": (one_pixel(next_directory=8), "loops"),
    "a directory past the end": (one_pixel(next_directory=10**6), "cut short"),
    "too many tags": (b"II*\0\x08\0\0\0\xff\xff" + b"\0" * 64, "lists 65535 tags"),
    "a table past the end": (one_pixel(offsets=(273, 4, 1000, 10**6)), "cut short"),
    "a table of text": (one_pixel(offsets=(273, 2, 1, PIXEL_AT)), "tag 273 has values of type 2"),
    "no table": (directory([(256, 4, 1, 1), (257, 4, 1, 1)]), "lacks the tags"),
    "no rows": (directory([(256, 4, 1, 1), (257, 4, 1, 1), (278, 4, 1, 0), (273, 4, 1, 8), (279, 4, 1, 1)]),
                "blocks of 1 x 0 px"),
}


@pytest.mark.parametrize("kind", DAMAGED)
def test_damaged_files_are_refused(tmp_path, kind):
    data, reason = DAMAGED[kind]
    (tmp_path / "damaged.tif").write_bytes(data)
    with pytest.raises(ValueError, match=reason):
        block_tables(tmp_path / "damaged.tif")


def test_a_chain_without_end_is_refused(tmp_path):
    # Each directory points to the next, MAX_IMAGES + 1 of them.
    count = MAX_IMAGES + 1
    size = 2 + 4 * 12 + 4
    data = bytearray(b"II*\0" + struct.pack("<I", 8))
    for i in range(count):
        next_directory = 8 + (i + 1) * size if i + 1 < count else 0
        entries = [(256, 4, 1, 1), (257, 4, 1, 1), (273, 4, 1, 8), (279, 4, 1, 1)]
        data += struct.pack("<H", 4) + b"".join(struct.pack("<HHII", *e) for e in entries)
        data += struct.pack("<I", next_directory)
    (tmp_path / "long.tif").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="does not end"):
        block_tables(tmp_path / "long.tif")


@pytest.fixture(scope="module")
def sound_bytes(tmp_path_factory):
    """A small tiled TIFF with two levels of internal overviews: the file that the fuzzing below damages."""
    return write(tmp_path_factory.mktemp("fuzz") / "sound.tif", "tiled", bands=2, overviews=(2, 4)).read_bytes()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.lists(st.tuples(st.integers(0, 1023), st.integers(0, 255)), min_size=1, max_size=6),
       cut=st.none() | st.integers(0, 4096))
def test_damaged_structures_give_tables_or_value_errors(tmp_path, sound_bytes, changes, cut):
    data = bytearray(sound_bytes)
    for position, value in changes:  # (the first KiB: the header, the directories and their tables)
        data[position] = value
    (tmp_path / "fuzzed.tif").write_bytes(bytes(data[:cut]))
    try:
        tables = block_tables(tmp_path / "fuzzed.tif")
    except ValueError:
        return
    assert 1 <= len(tables) <= MAX_IMAGES
    for table in tables:
        assert table.offsets.dtype == table.byte_counts.dtype == np.uint64 and table.block_count >= 0
