"""Reduced reads cell by cell: each cell the mean of the raster's pixels under it, wherever the window lies.

A window reduced ``factor`` times is cut, along each axis, into runs of cells
that cover the same number of the raster's pixels: whole cells, and the
partial cells where the raster's edge crosses a cell.  Each run is one
averaging read of exactly its pixels, so a cell's value depends on its own
pixels only, and a window read in strips of whole cells gives what one read
gives.  (One read of the raster's part into the window's cells would spread
a partial cell's pixels over all the cells of the read.)
"""

from __future__ import annotations

import numpy as np

__all__ = ["cell_runs", "read_cells"]


def cell_runs(offset: int, cells: int, factor: int, size: int) -> list[tuple[int, int, int, int]]:
    """The runs of cells of one axis whose cells cover equally many of the raster's pixels.

    Parameters
    ----------
    offset : int
        The window's first pixel (may be negative: off the raster).
    cells : int
        Cells of ``factor`` pixels in the window.
    factor : int
        Pixels per cell (>= 1).
    size : int
        The raster's pixels along the axis: ``[0, size)``.

    Returns
    -------
    list of (first pixel, end pixel, first cell, end cell)
        Ascending, ends exclusive; cells not listed lie off the raster.

    Examples
    --------
    >>> cell_runs(-3, 4, 4, 10)  # cells [-3, 1) [1, 5) [5, 9) [9, 13) over pixels [0, 10)
    [(0, 1, 0, 1), (1, 9, 1, 3), (9, 10, 3, 4)]
    """
    lo, hi = max(offset, 0), min(offset + cells * factor, size)
    if lo >= hi:
        return []
    first_whole = -(-(lo - offset) // factor)  # the first cell that starts on the raster
    end_whole = (hi - offset) // factor  # one past the last cell that ends on it
    if first_whole > end_whole:  # the raster's part lies within one cell
        return [(lo, hi, end_whole, end_whole + 1)]
    runs = []
    if (lo - offset) % factor:
        runs.append((lo, offset + first_whole * factor, first_whole - 1, first_whole))
    if first_whole < end_whole:
        runs.append((offset + first_whole * factor, offset + end_whole * factor, first_whole, end_whole))
    if (hi - offset) % factor:
        runs.append((offset + end_whole * factor, hi, end_whole, end_whole + 1))
    return runs


def read_cells(read, band_count: int, box, factor: int, size) -> np.ndarray:
    """A window of whole cells, each the mean of the pixels under it, NaN off the raster.

    Parameters
    ----------
    read : callable
        ``read((r0, r1, c0, c1), out_shape)``: the (k, *out_shape) float32
        averaging read of those pixels (each cell the mean of the valid ones).
    band_count : int
        ``k``.
    box : (col_off, row_off, width, height)
        The window; ``width`` and ``height`` are multiples of ``factor``.
    factor : int
    size : (width, height)
        The raster's.

    Returns
    -------
    (k, height / factor, width / factor) float32 ndarray
    """
    col_off, row_off, width, height = box
    out = np.full((band_count, height // factor, width // factor), np.nan, np.float32)
    for r0, r1, i0, i1 in cell_runs(row_off, height // factor, factor, size[1]):
        for c0, c1, j0, j1 in cell_runs(col_off, width // factor, factor, size[0]):
            out[:, i0:i1, j0:j1] = read((r0, r1, c0, c1), (i1 - i0, j1 - j0))
    return out
