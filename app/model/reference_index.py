"""The lines of the visible reference layers in a grid of cells: the source of their tiles (no Qt).

Reference layers are read-only, so the index is built again, whole, whenever
the layers change (one added, removed, hidden, shown or recoloured); the
tiles are then drawn again.  Between changes a tile asks for the lines that
meet it, a query that costs what lies near it, as in
:class:`app.model.feature_index.FeatureIndex`.
"""

from __future__ import annotations

import numpy as np

from app.model.cell_grid import CellGrid
from app.model.feature_index import CELL_PX, IndexChange

__all__ = ["ReferenceIndex"]


class ReferenceIndex:
    """Bounding boxes of the visible reference lines in a grid of ``cell_px`` cells.

    Ids are positions in the drawing order: the bottom layer's lines first.

    Parameters
    ----------
    layers : app.model.reference.ReferenceLayers
    cell_px : float
        Side of a grid cell (raster pixels).
    """

    def __init__(self, layers, cell_px: float = CELL_PX):
        self.layers = layers
        self.cell_px = float(cell_px)
        self._seen = None  # the layers tuple indexed
        self._lines: list[np.ndarray] = []
        self._colours: list[str] = []  # one per id
        self._boxes = np.empty((0, 4))
        self._grid = CellGrid(cell_px)
        self._shown_lines: tuple = ()  # the lines_px tuples of the layers shown, when the grid was built

    def __len__(self) -> int:
        return len(self._lines)

    def sync(self) -> IndexChange:
        """Catch up with the layers; ``everything`` when they changed since the last call."""
        layers = self.layers.layers
        if layers is self._seen:
            return IndexChange()
        self._seen = layers
        shown = [layer for layer in layers if layer.visible and layer.lines_px]
        self._colours = [layer.colour for layer in shown for _ in layer.lines_px]
        lines = tuple(layer.lines_px for layer in shown)
        if len(lines) != len(self._shown_lines) or any(a is not b for a, b in zip(lines, self._shown_lines)):
            # the lines shown changed (not only a colour, whose change keeps the grid: 5 s with 50,000 lines)
            self._shown_lines = lines
            self._lines = [line for layer in shown for line in layer.lines_px]
            boxes = [layer.line_boxes_px for layer in shown]
            self._boxes = np.concatenate(boxes) if boxes else np.empty((0, 4))
            self._grid = CellGrid(self.cell_px)
            self._grid.add_many(self._boxes)
        return IndexChange(everything=True)

    def _candidates(self, rect) -> np.ndarray:
        return np.array(sorted(self._grid.candidates(rect)), dtype=np.int64)

    def query(self, rect) -> list[int]:
        """Ids of the lines whose bounding box meets ``rect`` = (x0, y0, x1, y1) px, in drawing order."""
        x0, y0, x1, y1 = rect
        ids = self._candidates(rect)
        b = self._boxes[ids]
        meets = (b[:, 2] >= x0) & (b[:, 0] <= x1) & (b[:, 3] >= y0) & (b[:, 1] <= y1)
        return ids[meets].tolist()

    def count(self, rect) -> int:
        """How many lines lie in the cells ``rect`` touches (an upper bound of those meeting it)."""
        return len(self._candidates(rect))

    def bbox(self, line_id: int) -> tuple[float, float, float, float]:
        """``(x0, y0, x1, y1)`` px of a line."""
        return tuple(self._boxes[line_id].tolist())

    def entry(self, line_id: int) -> tuple[np.ndarray, str]:
        """``(vertices (k, 2) px, colour "#rrggbb")`` of a line."""
        return self._lines[line_id], self._colours[line_id]
