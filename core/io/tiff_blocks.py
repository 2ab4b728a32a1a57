"""Where a TIFF file keeps its blocks: each image's block offsets and byte counts, read from the file itself.

GDAL gives a block's place one block at a time (the ``BLOCK_OFFSET_x_y`` and ``BLOCK_SIZE_x_y`` items of the
``TIFF`` metadata domain): 7 ms for the 4800 blocks of the first level of a 20000 x 20000 RGB image's ``.ovr``
(benchmark VM).  The tables themselves are a few reads.  Only what
:func:`core.io.overviews.overview_damage` needs is read: each image's size, block layout, compression and its
two tables, in classic TIFF and BigTIFF, either byte order.  Nothing here trusts the file: every count and
offset is checked against its size before anything is read or allocated.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

import numpy as np

__all__ = ["MAX_IMAGES", "BlockTable", "block_tables"]

#: More images than this in one file is taken for a damaged chain of directories (an .ovr has a dozen or so).
MAX_IMAGES = 256
#: More tags than this in one directory is taken for a damaged one (GDAL writes about twenty).
_MAX_TAGS = 4096
_HEADERS = {b"II*\0": ("<", False), b"MM\0*": (">", False), b"II+\0": ("<", True), b"MM\0+": (">", True)}
_INTEGER_TYPES = {1: "u1", 3: "u2", 4: "u4", 16: "u8"}  # BYTE, SHORT, LONG, LONG8 (the types of sizes and offsets)
_WIDTH, _HEIGHT, _COMPRESSION, _SAMPLES, _ROWS_PER_STRIP, _PLANAR = 256, 257, 259, 277, 278, 284
_STRIP_OFFSETS, _STRIP_BYTE_COUNTS = 273, 279
_TILE_WIDTH, _TILE_LENGTH, _TILE_OFFSETS, _TILE_BYTE_COUNTS = 322, 323, 324, 325
_WANTED = {_WIDTH, _HEIGHT, _COMPRESSION, _SAMPLES, _ROWS_PER_STRIP, _PLANAR, _STRIP_OFFSETS, _STRIP_BYTE_COUNTS,
           _TILE_WIDTH, _TILE_LENGTH, _TILE_OFFSETS, _TILE_BYTE_COUNTS}


@dataclass(frozen=True)
class BlockTable:
    """One image (directory) of a TIFF file: its size and where each of its blocks lies.

    Attributes
    ----------
    width, height : int
        The image's size (px).
    block_count : int
        How many blocks its layout takes: blocks across x blocks down (x bands where bands are stored apart).
    compression : int
        The TIFF compression code (1 none, 8 and 32946 DEFLATE, ...).
    offsets, byte_counts : (n,) uint64 ndarray
        Each block's first byte in the file and its length as the directory lists them (0 and 0: never
        written); ``n`` is ``block_count`` in a sound file.
    """

    width: int
    height: int
    block_count: int
    compression: int
    offsets: np.ndarray
    byte_counts: np.ndarray


def block_tables(path) -> list[BlockTable]:
    """Every image of the TIFF file at ``path``, in the order of its chain of directories.

    Parameters
    ----------
    path : str or os.PathLike
        A local file.

    Returns
    -------
    list of BlockTable
        One per directory (the image, then its overviews and masks in an .ovr or a GeoTIFF); never empty.

    Raises
    ------
    ValueError
        ``path`` is not a TIFF file, or its directories are damaged: cut short, looping, more than
        :data:`MAX_IMAGES`, or without the tags that place the blocks.
    """
    with open(path, "rb") as stream:
        tiff = _Tiff(stream)
        tables, seen, offset = [], set(), tiff.first_directory
        while offset:
            if offset in seen or len(tables) == MAX_IMAGES:
                raise ValueError(f"its chain of directories {'loops' if offset in seen else 'does not end'}")
            seen.add(offset)
            tags, offset = tiff.directory(offset)
            tables.append(_table(tags))
    if not tables:
        raise ValueError("it holds no image")
    return tables


class _Tiff:
    """A TIFF file's header and its directories' tags (those in :data:`_WANTED`)."""

    def __init__(self, stream):
        self._stream, self.size = stream, os.fstat(stream.fileno()).st_size
        header = self._read(0, 8) if self.size >= 8 else b""
        if header[:4] not in _HEADERS:
            raise ValueError("it is not a TIFF file")
        self._order, self._big = _HEADERS[header[:4]]
        if self._big:
            self.first_directory = self._unpack("Q", self._read(8, 8))
        else:
            self.first_directory = self._unpack("I", header[4:])

    def directory(self, offset: int) -> tuple[dict[int, np.ndarray], int]:
        """The wanted tags of the directory at ``offset`` (tag -> values) and the next directory's offset."""
        count_size, entry_size, value_size = (8, 20, 8) if self._big else (2, 12, 4)
        count = self._unpack("Q" if self._big else "H", self._read(offset, count_size))
        if count > _MAX_TAGS:
            raise ValueError(f"a directory lists {count} tags")
        entries = self._read(offset + count_size, count * entry_size + value_size)
        tags = {}
        for start in range(0, count * entry_size, entry_size):
            tag, kind, n = struct.unpack_from(self._order + ("HHQ" if self._big else "HHI"), entries, start)
            if tag in _WANTED:
                field = entries[start + entry_size - value_size: start + entry_size]
                tags[tag] = self._values(tag, kind, n, field)
        return tags, self._unpack("Q" if self._big else "I", entries[-value_size:])

    def _values(self, tag: int, kind: int, n: int, field: bytes) -> np.ndarray:
        """Tag ``tag``'s ``n`` integers of TIFF type ``kind``: in ``field`` itself when they fit, else where it
        points."""
        if kind not in _INTEGER_TYPES:
            raise ValueError(f"its tag {tag} has values of type {kind}, not integers")
        dtype = np.dtype(_INTEGER_TYPES[kind]).newbyteorder(self._order)
        length = n * dtype.itemsize
        data = field[:length] if length <= len(field) else self._read(self._unpack("Q" if self._big else "I", field),
                                                                       length)
        return np.frombuffer(data, dtype).astype(np.uint64)

    def _unpack(self, code: str, data: bytes) -> int:
        return struct.unpack(self._order + code, data)[0]

    def _read(self, offset: int, length: int) -> bytes:
        if offset + length > self.size:
            raise ValueError(f"it is cut short: its directories reach past its {self.size} bytes")
        self._stream.seek(offset)
        return self._stream.read(length)


def _table(tags: dict[int, np.ndarray]) -> BlockTable:
    """The :class:`BlockTable` of one directory's tags."""
    tiled = _TILE_OFFSETS in tags
    needed = (_WIDTH, _HEIGHT) + ((_TILE_WIDTH, _TILE_LENGTH, _TILE_BYTE_COUNTS) if tiled else
                                  (_STRIP_OFFSETS, _STRIP_BYTE_COUNTS))
    if any(_first(tags, tag) is None for tag in needed):
        raise ValueError("a directory lacks the tags that place its blocks")
    width, height = _first(tags, _WIDTH), _first(tags, _HEIGHT)
    if tiled:
        block_width, block_height = _first(tags, _TILE_WIDTH), _first(tags, _TILE_LENGTH)
    else:
        block_width, block_height = width, _first(tags, _ROWS_PER_STRIP, height)
    if min(block_width, block_height) < 1:
        raise ValueError(f"its {width} x {height} image has blocks of {block_width} x {block_height} px")
    bands = _first(tags, _SAMPLES, 1) if _first(tags, _PLANAR, 1) == 2 else 1
    count = -(-width // block_width) * -(-height // block_height) * bands
    return BlockTable(width, height, count, _first(tags, _COMPRESSION, 1),
                      tags[_TILE_OFFSETS if tiled else _STRIP_OFFSETS],
                      tags[_TILE_BYTE_COUNTS if tiled else _STRIP_BYTE_COUNTS])


def _first(tags: dict[int, np.ndarray], tag: int, default: int | None = None) -> int | None:
    """Tag ``tag``'s first value, ``default`` where the directory has none."""
    values = tags.get(tag)
    return default if values is None or len(values) == 0 else int(values[0])
