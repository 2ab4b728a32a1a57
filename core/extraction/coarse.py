"""Coarse-to-fine extraction: long spans in bounded memory.

An extraction whose full-resolution window would need more than
:data:`DIRECT_LIMIT_BYTES` (or the memory budget, where that is less) runs in
two stages instead of being refused (core.extraction.pipeline drives them):

1. *Coarse*: the window reduced ``factor`` times, the smallest power of two
   whose reduced extraction fits (:func:`coarse_factor`), read as the mean of
   the pixels under each cell (``Raster.read_reduced``: the file's overviews
   where it has them), and the same extraction on it.
2. *Fine*: the coarse line, scaled back, is cut into pieces of at most
   :data:`PIECE_SPAN_PX` (:func:`piece_ends`); each is extracted at full
   resolution from where the previous piece ended (its snapped end) to the
   next point of the coarse line, and the pieces are chained.

Each stage reads one bounded window at a time, so the memory held does not grow
with the span.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from core.extraction.cost import extraction_cost, window_box
from core.extraction.estimate import RoadEstimate
from core.memory import resolve_budget

__all__ = ["DIRECT_LIMIT_BYTES", "MAX_FACTOR", "PIECE_SPAN_PX", "STAGE_SHARE", "coarse_box", "coarse_factor",
           "combined_estimate", "piece_ends"]

#: Extractions whose full-resolution window needs more than this run coarse-to-fine: with the
#: reduced read, the pieces and GDAL's block cache the process stays well under 1 GiB.
DIRECT_LIMIT_BYTES = 256 * 2**20
#: Share of that limit that the cost model may count for each stage: the rest is headroom for the coarse
#: line, the pieces, GDAL's block cache and what tracemalloc cannot see (numba's own arrays).
STAGE_SHARE = 0.25
#: Longest full-resolution piece (px) of the refinement: about the span the adaptive mode was tuned on.
PIECE_SPAN_PX = 250.0
#: The largest reduction tried (a 10^6 px span becomes ~250 coarse px).
MAX_FACTOR = 4096


def coarse_factor(settings, start_xy, end_xy, band_count: int = 1, backend: str = "cpu",
                  budget_bytes: int | None = None) -> int:
    """The reduction a coarse-to-fine extraction needs: 1 (run directly) or a power of two.

    1 when the full-resolution extraction fits ``min(budget, DIRECT_LIMIT_BYTES)``,
    and also when even one refinement piece or the most reduced extraction
    would not fit :data:`STAGE_SHARE` of it (then the caller's cost check refuses the request as it stands).
    """
    limit = min(resolve_budget(budget_bytes), DIRECT_LIMIT_BYTES)
    a, b = np.asarray(start_xy, np.float64), np.asarray(end_xy, np.float64)

    def fits(first, second, share=STAGE_SHARE) -> bool:
        return extraction_cost(settings, first, second, band_count, backend).memory_bytes <= share * limit

    diagonal_piece = np.full(2, PIECE_SPAN_PX / math.sqrt(2.0))
    if fits(a, b, 1.0) or not fits(np.zeros(2), diagonal_piece):
        return 1
    factor = 2
    while factor <= MAX_FACTOR:
        if fits(a / factor, b / factor):
            return factor
        factor *= 2
    return 1


def coarse_box(settings, start_xy, end_xy, factor: int, raster_size) -> tuple[int, int, int, int]:
    """``(col_off, row_off, width, height)`` in full-resolution pixels, multiples of ``factor``, to read reduced.

    The window the extraction between the reduced clicks reads, on the grid of
    ``factor`` x ``factor`` cells from the raster's origin, within the raster
    (``raster_size`` = ``(width, height)``) rounded up to whole cells.
    """
    a, b = np.asarray(start_xy, np.float64) / factor, np.asarray(end_xy, np.float64) / factor
    col, row, width, height = window_box(settings, a, b)
    cells = [-(-int(size) // factor) for size in raster_size]
    c0, r0 = max(col, 0), max(row, 0)
    c1, r1 = min(col + width, cells[0]), min(row + height, cells[1])
    return c0 * factor, r0 * factor, (c1 - c0) * factor, (r1 - r0) * factor


def piece_ends(course_px, max_span_px: float = PIECE_SPAN_PX) -> np.ndarray:
    """``(n, 2)`` ends of the refinement pieces along a course: equal arc lengths of at most ``max_span_px``.

    Parameters
    ----------
    course_px : (k, 2) float ndarray
        The coarse line in full-resolution pixels ``(x, y)``, its first and last
        vertices being the clicks.

    Returns
    -------
    (n, 2) float64 ndarray
        Where each piece ends; the last row is the course's last vertex.
    """
    course = np.asarray(course_px, np.float64)
    steps = np.hypot(*np.diff(course, axis=0).T)
    along = np.concatenate([[0.0], np.cumsum(steps)])
    count = max(1, math.ceil(along[-1] / max_span_px))
    targets = np.arange(1, count + 1) * along[-1] / count
    ends = np.stack([np.interp(targets, along, course[:, 0]), np.interp(targets, along, course[:, 1])], axis=1)
    ends[-1] = course[-1]
    return ends


def combined_estimate(coarse: RoadEstimate | None, pieces) -> RoadEstimate | None:
    """The object over the whole line from the pieces' estimates (and the coarse line's course).

    Width: the median of the pieces' widths; polarity: the most frequent;
    contrast and confidence: the means; course: bent where the coarse line or
    any piece is.
    """
    pieces = [p for p in pieces if p is not None]
    if not pieces:
        return coarse
    widths = [p.width_px for p in pieces if p.width_px is not None]
    polarity = Counter(p.polarity for p in pieces).most_common(1)[0][0]
    bent = any(p.course == "bent" for p in pieces) or (coarse is not None and coarse.course == "bent")
    return RoadEstimate(float(np.median(widths)) if widths else None, polarity,
                        float(np.mean([p.contrast for p in pieces])), "bent" if bent else "straight",
                        float(np.mean([p.confidence for p in pieces])))
