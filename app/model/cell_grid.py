"""Ids by the square grid cells their bounding boxes touch: the spatial indices' common part (no Qt).

A query costs what lies near it, whatever the size of the boxes or of the
query: a box spanning more than :data:`LARGE_CELLS` cells (a long river of a
reference layer, thousands of cells) is kept apart in a short list that every
query checks box by box, and a query spanning more cells than are occupied (a
tile at a far zoom, a window around the whole map) visits the occupied cells
instead of every cell it spans.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["CellGrid", "LARGE_CELLS", "meets"]

#: A box spanning more cells than this is kept in the list of large boxes.
LARGE_CELLS = 64

_NONE: frozenset = frozenset()
#: Cell numbers below this are exact in a float64 and fit an int64 (beyond, a box is filed alone, by Python ints).
_EXACT = 2.0**52


class CellGrid:
    """Ids of boxes ``(x0, y0, x1, y1)`` by the cells of side ``cell_px`` they touch.

    Parameters
    ----------
    cell_px : float
        Side of a cell, in the boxes' unit (raster pixels).
    """

    def __init__(self, cell_px: float):
        self.cell_px = float(cell_px)
        self._cells: dict[tuple[int, int], set[int]] = {}
        self._large: dict[int, tuple] = {}  # id -> box

    def add(self, item_id: int, bbox) -> None:
        """File ``item_id`` under its box (a box given again later to :meth:`remove` it)."""
        span = self._span(bbox)
        if _count(span) > LARGE_CELLS:
            self._large[item_id] = tuple(bbox)
            return
        self._file(item_id, *span)

    def _file(self, item_id: int, c0: int, r0: int, c1: int, r1: int) -> None:
        for c in range(c0, c1 + 1):
            for r in range(r0, r1 + 1):
                members = self._cells.get((c, r))
                if members is None:
                    self._cells[(c, r)] = {item_id}
                else:
                    members.add(item_id)

    def add_many(self, boxes, ids=None) -> None:
        """File ``ids`` (default ``0, 1, ...``) under the rows ``(x0, y0, x1, y1)`` of ``boxes`` (an index built
        whole, an import's tens of thousands of lines): as :meth:`add` of each, each cell's set updated once."""
        for cell, cell_ids in self._by_cell(boxes, ids, self.add):
            self._cells.setdefault(cell, set()).update(cell_ids)

    def remove_many(self, boxes, ids) -> None:
        """Take ``ids`` out, ``boxes`` (rows) being those they were added with: as :meth:`remove` of each."""
        for cell, cell_ids in self._by_cell(boxes, ids, self.remove):
            members = self._cells.get(cell)
            if members is not None:
                members.difference_update(cell_ids)
                if not members:
                    del self._cells[cell]

    def _by_cell(self, boxes, ids, one_by_one):
        """``(cell, ids)`` of the small boxes in ``boxes`` (rows), the ids of each cell together, found with numpy;
        the large boxes (and any whose cells an int64 cannot number) are passed to ``one_by_one(id, box)``."""
        boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
        ids = range(len(boxes)) if ids is None else list(ids)
        spans = np.floor(boxes / self.cell_px)  # (as _span: the same float quotient, floored)
        counts = (spans[:, 2] - spans[:, 0] + 1) * (spans[:, 3] - spans[:, 1] + 1)
        small = (counts >= 1) & (counts <= LARGE_CELLS) & np.all(np.abs(spans) < _EXACT, axis=1)  # (NaN: not small)
        for k in np.flatnonzero(~small).tolist():
            one_by_one(ids[k], tuple(boxes[k].tolist()))
        rows = np.flatnonzero(small)
        spans, counts = spans[rows].astype(np.int64), counts[rows].astype(np.int64)
        owners = np.repeat(rows, counts)  # one entry per (box, cell it touches)
        if not len(owners):
            return
        step = np.arange(len(owners)) - np.repeat(np.cumsum(counts) - counts, counts)
        height = np.repeat(spans[:, 3] - spans[:, 1] + 1, counts)
        columns = np.repeat(spans[:, 0], counts) + step // height
        cell_rows = np.repeat(spans[:, 1], counts) + step % height
        order = np.lexsort((cell_rows, columns))
        columns, cell_rows, owners = columns[order], cell_rows[order], owners[order]
        firsts = np.flatnonzero(np.r_[True, (columns[1:] != columns[:-1]) | (cell_rows[1:] != cell_rows[:-1])])
        ends = np.r_[firsts[1:], len(owners)].tolist()
        cells = zip(columns[firsts].tolist(), cell_rows[firsts].tolist())
        for cell, first, end in zip(cells, firsts.tolist(), ends):
            yield cell, map(ids.__getitem__, owners[first:end].tolist())

    def remove(self, item_id: int, bbox) -> None:
        """Take ``item_id`` out; ``bbox`` is the box it was added with."""
        span = self._span(bbox)
        if _count(span) > LARGE_CELLS:
            self._large.pop(item_id, None)
            return
        c0, r0, c1, r1 = span
        for c in range(c0, c1 + 1):
            for r in range(r0, r1 + 1):
                members = self._cells.get((c, r))
                if members is not None:
                    members.discard(item_id)
                    if not members:
                        del self._cells[(c, r)]

    def candidates(self, rect) -> set[int]:
        """Ids filed in the cells ``rect`` touches, and the large boxes that meet it (a superset of the ids
        whose box meets ``rect``)."""
        c0, r0, c1, r1 = span = self._span(rect)
        found: set[int] = set()
        if _count(span) > len(self._cells):
            for (c, r), members in self._cells.items():
                if c0 <= c <= c1 and r0 <= r <= r1:
                    found |= members
        else:
            for c in range(c0, c1 + 1):
                for r in range(r0, r1 + 1):
                    found |= self._cells.get((c, r), _NONE)
        x0, y0, x1, y1 = rect
        found.update(i for i, box in self._large.items() if meets(box, x0, y0, x1, y1))
        return found

    def _span(self, bbox) -> tuple[int, int, int, int]:
        return tuple(math.floor(v / self.cell_px) for v in bbox)  # (Python ints: no overflow)


def meets(bbox, x0, y0, x1, y1) -> bool:
    """Whether the box ``bbox`` meets the rectangle ``(x0, y0, x1, y1)`` (touching counts)."""
    return bbox[2] >= x0 and bbox[0] <= x1 and bbox[3] >= y0 and bbox[1] <= y1


def _count(span) -> int:
    c0, r0, c1, r1 = span
    return (c1 - c0 + 1) * (r1 - r0 + 1)
