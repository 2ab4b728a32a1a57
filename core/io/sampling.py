"""Where to read a sample of a whole raster for statistics (the display's stretch, the float scale).

A decimated read of the whole raster is what a sample should be, and it is
cheap where the file has overviews or small strips: GDAL then reads a few
rows or a small overview.  A large tiled file without overviews is the
exception: nearest resampling at a factor of 40 still meets every tile, and
GDAL decodes each whole (3 s for a 20000 x 20000 RGB GeoTIFF of 256 px tiles
on the benchmark VM, 7.6 s in 16 bits).  There :func:`spread_windows` picks
64 small windows spread over the raster, each within one tile: the
percentiles of a few hundred thousand pixels from 64 places are as good a
stretch as those of a decimated read (38 ms for that RGB file).
"""

from __future__ import annotations

__all__ = ["GRID", "SMALL_PIXELS", "spread_windows"]

#: Rasters of at most this many pixels are sampled by a decimated read whatever their layout (it decodes at
#: most this many pixels: about 0.1 s).
SMALL_PIXELS = 2**24
#: The windows form a ``GRID`` x ``GRID`` grid.
GRID = 8


def spread_windows(height: int, width: int, block_shape: tuple[int, int], side: int,
                   overview_factors: list[int]) -> list[tuple[int, int, int, int]] | None:
    """The windows ``(row, col, rows, cols)`` of a spread sample of about ``side`` x ``side`` pixels, or None
    where a decimated read of the whole raster is cheap.

    Cheap: the raster is small (:data:`SMALL_PIXELS`), an overview at least a quarter as coarse as the sample
    exists (GDAL reads that overview), or the blocks are strips of a few rows (GDAL reads only the strips
    under the sampled rows).  Otherwise :data:`GRID` x :data:`GRID` windows of ``side // GRID`` pixels, one
    in each of as many strata of the rows and, in another order, of the columns (a smooth ramp's extremes are
    sampled too), each within one block where blocks are at least that large; none reaches past the raster.
    """
    factor = max(height, width) / side
    block_rows, block_cols = block_shape
    if (height * width <= SMALL_PIXELS or any(f >= factor / 4 for f in overview_factors)
            or (block_cols >= width and block_rows <= 16)):
        return None
    size = max(1, side // GRID)
    count = GRID * GRID
    windows = []
    for k in range(count):  # stratified in rows and in columns (a lattice: column stratum k * _STEP mod count)
        row = _within_block((k + 0.5) / count, height, block_rows, size)
        col = _within_block(((k * _STEP) % count + 0.5) / count, width, block_cols, size)
        windows.append((row, col, min(size, height - row), min(size, width - col)))
    return windows


#: The column strata's step through the windows: odd (coprime to GRID^2) and near GRID^2 / golden ratio, so
#: that windows close in rows lie far apart in columns.
_STEP = 39


def _within_block(fraction: float, extent: int, block: int, size: int) -> int:
    """The start of a window of ``size`` centred at ``fraction`` of ``extent``, moved back into the block its
    start lies in where blocks are at least as large (one block decoded), else to that block's start, and
    never past the end."""
    start = max(0, min(int(fraction * extent - size / 2), extent - size))
    first = start // block * block
    start = min(start, first + block - size) if block >= size else first
    return max(0, min(start, extent - size))
