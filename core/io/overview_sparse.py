"""Blocks of an .ovr left unwritten on purpose (GDAL's sparse overviews), told from those of a killed build.

GDAL's sparse option (``gdaladdo --config SPARSE_OK_OVERVIEW ON``, the creation option ``SPARSE_OK``) writes
no block that would hold only the nodata value (0 where the image has none) in every band it holds: the
level's tables list it at offset 0 with 0 bytes, as they list the blocks that a build killed midway never
wrote, and GDAL reads it as nodata.  That is right only where the image is empty.  So an unwritten block is
sound where the next finer level is empty over the block's footprint; the finest level is held against the
image itself, opened without its overviews.  The finer image is empty there where its blocks under the
footprint are (:func:`_empty_blocks`): unwritten (a finer level's in turn checked against the level finer
still; the image's own, where it is a sparse TIFF), or written with the same bytes as a block that a read found
empty (an image's blocks of nodata are alike: one is read for thousands).  Elsewhere the finer pixels under the
footprint are read, and those that a nearest neighbour reduction takes (:func:`_taken`) must all be nodata: an
average (LineSnap's resampling) is nodata only where every pixel under it is, a nearest neighbour level
(gdaladdo's default) where the pixels it took are.

A killed build is told at the first unwritten block over pixels that such a read meets; the coarse levels,
which cost least, are looked at first.  Not told apart: a level that came out empty over features one pixel
wide that the finer image holds where it is sampled (cubic or mode resampling, or nearest neighbour from the
image at a ratio that is not a whole number): its .ovr is taken for damaged (read without, rebuilt on demand).
Unwritten blocks of a mask are never sound here (GDAL writes none sparse into an .ovr).
"""

from __future__ import annotations

import contextlib
import functools

import numpy as np

__all__ = ["check_unwritten_blocks"]

#: The most bytes of a finer image's blocks of one size compared at once (blocks stored uncompressed are all of
#: one size: those of a 20000^2 RGB image would be 1.2 GB); beyond it, their footprints are read.
_COMPARED_BYTES = 64 * 2**20


def check_unwritten_blocks(path, ovr, levels, base_table=None) -> None:
    """ValueError where a block that one of ``levels`` lists as never written lies where the image has pixels.

    Parameters
    ----------
    path : str or os.PathLike
        The image (GDAL opens it without its overviews).
    ovr : pathlib.Path
        Its ``.ovr``, whose images ``levels`` describe (``core.io.overviews._Level``, in the chain's order):
        their sizes, blocks (``block_px``, ``planes``), which were written (``unwritten``), and masks.
    base_table : core.io.overviews._Level, optional
        The image's own blocks where it is a TIFF: unwritten ones are empty, alike ones are read once.
    """
    for level in levels:
        if level.is_mask and level.unwritten.any():
            raise ValueError(_lacking(level))
    data = [level for level in levels if not level.is_mask]
    finest_first = sorted(data, key=lambda level: level.width * level.height, reverse=True)
    with _Sources(path, ovr, data, base_table) as sources:
        for finer, level in reversed(list(zip([None, *finest_first], finest_first))):  # (coarse first)
            if level.unwritten.any():
                _check_level(level, sources.of(finer))


def _lacking(level) -> str:
    name, count = f"its {level.width} x {level.height} level", int(level.unwritten.sum())
    return f"{name} was never written" if count == level.block_count else \
        f"{name} lacks {count} of its {level.block_count} blocks"


def _grid(table) -> tuple[int, int] | None:
    """The rows and columns of blocks of each plane of ``table``; None where its tables list another count."""
    rows, cols = -(-table.height // table.block_px[1]), -(-table.width // table.block_px[0])
    return (rows, cols) if table.planes * rows * cols == table.block_count == len(table.offsets) else None


def _check_level(level, source) -> None:
    """ValueError unless the image is empty, as ``source`` (the next finer image) has it, under every unwritten
    block of ``level``."""
    grid = _grid(level)
    if grid is None:
        raise ValueError(_lacking(level))
    unwritten = level.unwritten.reshape(level.planes, *grid)
    spans = [_spans(level.block_px[1], level.height, source.height),
             _spans(level.block_px[0], level.width, source.width)]
    open_ = unwritten & ~_settled(unwritten, spans, source)
    separate = level.planes > 1
    (width, height), size = level.block_px, (level.height, level.width)
    for plane, row, col in zip(*np.nonzero(open_)):
        rows = (row * height, min((row + 1) * height, level.height))
        cols = (col * width, min((col + 1) * width, level.width))
        if not source.nearest_empty([int(plane) + 1] if separate else None, rows, cols, size):
            raise ValueError(_lacking(level))


def _spans(block: int, size: int, finer: int) -> np.ndarray:
    """(2, n) int64: for each of the n blocks of ``block`` px along a side of ``size`` px, the first pixel and
    the end of its footprint along the finer image's ``finer`` px (GDAL's overview pixel i covers the finer
    pixels from i * finer / size to (i + 1) * finer / size)."""
    starts = np.arange(0, size, block, dtype=np.int64)
    ends = np.minimum(starts + block, size)
    return np.stack([starts * finer // size, -(-ends * finer // size)])


def _taken(span, size: int, finer: int) -> tuple[np.ndarray, np.ndarray]:
    """The finer pixels that GDAL's nearest neighbour takes for pixels ``span`` (start, end) of a side of
    ``size`` px, from one of ``finer`` px: for an overview (``int(0.5 + i * ratio)``: the finer pixel at each
    pixel's top left corner, as GDAL 3.10 builds them) and for a reduced read (``(i + 0.5) * ratio``: the one
    under its centre)."""
    pixels, ratio = np.arange(*span, dtype=np.float64), finer / size
    return (np.minimum((pixels * ratio + 0.5).astype(np.int64), finer - 1),
            np.minimum(((pixels + 0.5) * ratio).astype(np.int64), finer - 1))


def _settled(unwritten, spans, source) -> np.ndarray:
    """(planes, rows, cols) bool: the blocks of the level under which ``source``'s table (if any) shows blocks
    that are all empty (:func:`_empty_blocks`)."""
    table = source.table
    grid = None if table is None else _grid(table)
    if grid is None:
        return np.zeros(unwritten.shape, bool)
    height, width = table.block_px[1], table.block_px[0]
    rows = [spans[0][0] // height, -(-spans[0][1] // height)]  # (the finer blocks under each row of blocks)
    cols = [spans[1][0] // width, -(-spans[1][1] // width)]
    same_plane = table.planes == unwritten.shape[0]
    needed = _under(unwritten if same_plane else unwritten.any(axis=0, keepdims=True), rows, cols, grid)
    full = _empty_blocks(source, table, needed if same_plane else np.broadcast_to(needed, (table.planes, *grid)))
    if not same_plane:
        full = full.all(axis=0, keepdims=True)
    counts = np.zeros((full.shape[0], grid[0] + 1, grid[1] + 1), np.int64)  # (not empty, summed from the corner)
    counts[:, 1:, 1:] = (~full).cumsum(axis=1).cumsum(axis=2)
    r0, r1, c0, c1 = rows[0][:, None], rows[1][:, None], cols[0][None, :], cols[1][None, :]
    inside = counts[:, r1, c1] - counts[:, r0, c1] - counts[:, r1, c0] + counts[:, r0, c0]
    return np.broadcast_to(inside == 0, unwritten.shape)


def _under(marked, rows, cols, grid) -> np.ndarray:
    """(planes, *grid) bool: the finer blocks under the ``marked`` (planes, rows, cols) blocks of the level."""
    planes, row, col = np.nonzero(marked)
    edges = np.zeros((marked.shape[0], grid[0] + 1, grid[1] + 1), np.int64)
    for sign, r, c in ((1, rows[0][row], cols[0][col]), (-1, rows[0][row], cols[1][col]),
                       (-1, rows[1][row], cols[0][col]), (1, rows[1][row], cols[1][col])):
        np.add.at(edges, (planes, r, c), sign)
    return edges.cumsum(axis=1).cumsum(axis=2)[:, :-1, :-1] > 0


def _empty_blocks(source, table, needed) -> np.ndarray:
    """(planes, rows, cols) bool: the blocks of ``table`` (the finer image's) known to hold only nodata: the
    unwritten ones, and, among the ``needed`` ones written, those whose bytes are those of another block that a
    read of one of them found empty."""
    empty = table.unwritten.copy()
    wanted = np.flatnonzero(needed.reshape(-1) & ~empty)
    sizes, counts = np.unique(table.byte_counts[wanted], return_counts=True)
    data = np.memmap(source.file, np.uint8, "r") if np.any(counts > 1) else None
    for size, count in zip(sizes[counts > 1], counts[counts > 1]):  # (a block of a size no other has: read)
        group = wanted[table.byte_counts[wanted] == size]
        if int(count) * int(size) > _COMPARED_BYTES or len(data) < int(table.offsets[group].max()) + int(size):
            continue
        blocks = data[table.offsets[group][:, None] + np.arange(size, dtype=np.uint64)]  # (one a row)
        keys, which, repeats = np.unique(_keys(blocks), return_inverse=True, return_counts=True)
        for key in np.flatnonzero(repeats > 1):
            alike = np.flatnonzero(which.reshape(-1) == key)
            alike = alike[(blocks[alike] == blocks[alike[0]]).all(axis=1)]  # (the same key, other bytes: read)
            if len(alike) > 1:
                empty[group[alike]] = source.block_empty(table, int(group[alike[0]]))
    return empty.reshape(table.planes, *_grid(table))


def _keys(rows) -> np.ndarray:
    """(k,) uint64: a key of each row of ``rows`` (k, n) uint8, the same for the same bytes (a weighted sum of
    its 8-byte words, wrapping around: numpy sorts these at once, not the rows themselves)."""
    words = np.zeros((rows.shape[0], -(-rows.shape[1] // 8) * 8), np.uint8)
    words[:, : rows.shape[1]] = rows
    words = words.view(np.uint64)
    weights = np.random.default_rng(0).integers(1, 2**63, words.shape[1], dtype=np.uint64) | np.uint64(1)
    return (words * weights).sum(axis=1, dtype=np.uint64)


class _Sources:
    """The finer images that :func:`check_unwritten_blocks` holds levels against, each opened once."""

    def __init__(self, path, ovr, data_levels, base_table):
        self._path, self._ovr, self._data, self._base_table = path, ovr, data_levels, base_table
        self._stack = contextlib.ExitStack()
        self._sources = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self._stack.close()

    def of(self, level) -> _Source:
        """The :class:`_Source` of ``level`` of the .ovr (None: of the image, without its overviews)."""
        if id(level) not in self._sources:
            self._sources[id(level)] = self._open(level)
        return self._sources[id(level)]

    def _open(self, level) -> _Source:
        if level is not None:
            return _Source(level, level, self._ovr, lambda: self._open_level(level))
        if self._base_table is not None:  # (its size is its table's: GDAL opens it only to read it)
            return _Source(self._base_table, self._base_table, self._path, self._open_image)
        dataset = self._open_image()
        return _Source(dataset, None, self._path, lambda: dataset)

    def _open_image(self):
        """GDAL's dataset of the image, without its overviews (the .ovr looked at)."""
        import rasterio

        return self._stack.enter_context(rasterio.open(self._path, OVERVIEW_LEVEL="NONE"))

    def _open_level(self, level):
        """GDAL's dataset of ``level`` of the .ovr: one of its overviews, the further images of the chain in
        order (the guess, checked)."""
        import rasterio

        index = next(i for i, image in enumerate(self._data) if image is level)
        for overview in [index - 1] + [k for k in range(len(self._data) - 1) if k != index - 1]:
            dataset = self._stack.enter_context(
                rasterio.open(self._ovr, **({} if overview < 0 else {"overview_level": overview})))
            if (dataset.width, dataset.height) == (level.width, level.height):
                return dataset
        raise ValueError(f"GDAL finds no {level.width} x {level.height} level in it")


class _Source:
    """A finer image: its ``width`` and ``height`` (``sized``'s), its ``table`` of blocks (a ``_Level``; None:
    unknown), its ``file``, and its GDAL ``dataset``, opened by ``open_dataset`` when first read."""

    def __init__(self, sized, table, file, open_dataset):
        self.width, self.height, self.table, self.file = sized.width, sized.height, table, file
        self._open_dataset = open_dataset

    @functools.cached_property
    def dataset(self):
        dataset = self._open_dataset()
        if (dataset.width, dataset.height) != (self.width, self.height):
            raise ValueError(f"GDAL reads a {dataset.width} x {dataset.height} image where its tables tell "
                             f"{self.width} x {self.height}")
        return dataset

    def nearest_empty(self, bands: list[int] | None, rows, cols, size: tuple[int, int]) -> bool:
        """Whether ``bands`` (None: all) hold only nodata (0 where the image has none) at the pixels that a
        nearest neighbour reduction to ``size`` (height, width) takes for its ``rows`` and ``cols`` (start, end)
        in either of GDAL's ways (:func:`_taken`), read whole (a reduced read would use the finer image's own
        overviews: the levels checked)."""
        takes = [_taken(rows, size[0], self.height), _taken(cols, size[1], self.width)]
        (y0, y1), (x0, x1) = [(min(a[0], b[0]), max(a[-1], b[-1]) + 1) for a, b in takes]
        values = self._read(bands, (x0, y0, x1, y1))
        return any(self._empty(values[:, taken_rows - y0][:, :, taken_cols - x0])
                   for taken_rows, taken_cols in zip(*takes))

    def block_empty(self, table, block: int) -> bool:
        """Whether block ``block`` of ``table`` (this image's) holds only nodata, read whole."""
        rows, cols = _grid(table)
        plane, at = divmod(block, rows * cols)
        row, col = divmod(at, cols)
        (width, height), x0, y0 = table.block_px, col * table.block_px[0], row * table.block_px[1]
        window = (x0, y0, min(x0 + width, table.width), min(y0 + height, table.height))
        return self._empty(self._read([plane + 1] if table.planes > 1 else None, window))

    def _read(self, bands, window) -> np.ndarray:
        """(bands, rows, cols): ``bands`` (None: all) over ``window`` (x0, y0, x1, y1 px)."""
        from rasterio.windows import Window

        x0, y0, x1, y1 = (int(v) for v in window)
        return self.dataset.read(bands or list(range(1, self.dataset.count + 1)),
                                 window=Window(x0, y0, x1 - x0, y1 - y0))

    def _empty(self, values) -> bool:
        nodata = self.dataset.nodata if self.dataset.nodata is not None else 0
        return bool(np.isnan(values).all()) if np.isnan(nodata) else not np.any(values != nodata)
