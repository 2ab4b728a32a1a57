"""Long lines drawn into a tile only where they meet it.

A tile gets every line whose box meets it (:mod:`app.map.line_tiles`), and a
long line (a GPS track, a river of 10^5 vertices) meets most of the tiles its
box spans: Qt stroked it whole into each of them, 0.2-0.5 s a tile, so a view
took 13-34 s to fill and every repaint overran its budget.  :class:`LineChunks`
keeps the boxes of a long line's runs of :data:`CHUNK_VERTICES` vertices, and
:meth:`LineChunks.runs` gives the parts of the line whose runs meet a
rectangle: consecutive runs are joined, so a part is stroked as one polyline,
with the same joins as the whole line; a run that does not meet the tile grown
by the drawing's reach puts no ink in it.
"""

from __future__ import annotations

import weakref

import numpy as np

__all__ = ["CHUNK_VERTICES", "ChunkCache", "LineChunks", "is_long"]

#: Vertices per run; lines of more than twice as many are drawn by runs.
CHUNK_VERTICES = 256


def is_long(vertices) -> bool:
    """Whether a line is drawn by its runs (more than twice :data:`CHUNK_VERTICES` vertices)."""
    return len(vertices) > 2 * CHUNK_VERTICES


class LineChunks:
    """The runs of a (k, 2) line: run ``i`` holds vertices ``starts[i]`` to ``starts[i] + CHUNK_VERTICES`` (the
    last to the line's end), sharing its last vertex with the next run, and its box."""

    def __init__(self, vertices: np.ndarray):
        n = len(vertices)
        self.starts = np.arange(0, max(n - 1, 1), CHUNK_VERTICES)
        self.ends = np.minimum(self.starts + CHUNK_VERTICES, n - 1)
        points = np.asarray(vertices, dtype=np.float64)
        self.lows = np.minimum.reduceat(points, self.starts, axis=0)  # over [start, next start)
        self.highs = np.maximum.reduceat(points, self.starts, axis=0)
        if len(self.starts) > 1:  # ... and the next run's first vertex, which the run ends at
            self.lows[:-1] = np.minimum(self.lows[:-1], points[self.starts[1:]])
            self.highs[:-1] = np.maximum(self.highs[:-1], points[self.starts[1:]])

    def runs(self, vertices: np.ndarray, rect) -> list[np.ndarray]:
        """The parts of ``vertices`` (the line these runs were made of; views, in order) made of the runs that
        meet ``rect`` ``(x0, y0, x1, y1)``: consecutive runs joined into one part."""
        x0, y0, x1, y1 = rect
        meets = np.flatnonzero((self.highs[:, 0] >= x0) & (self.lows[:, 0] <= x1)
                               & (self.highs[:, 1] >= y0) & (self.lows[:, 1] <= y1))
        if not len(meets):
            return []
        gaps = np.flatnonzero(np.diff(meets) > 1)
        firsts, lasts = meets[np.r_[0, gaps + 1]], meets[np.r_[gaps, len(meets) - 1]]
        return [vertices[self.starts[a] : self.ends[b] + 1] for a, b in zip(firsts.tolist(), lasts.tolist())]


class ChunkCache:
    """The :class:`LineChunks` of long lines, by their vertex arrays (built on first use, dropped with the
    array: a line edited, removed or in a layer closed leaves nothing behind)."""

    def __init__(self):
        self._chunks: dict[int, tuple] = {}  # id(vertices) -> (weak reference to them, LineChunks)

    def __len__(self) -> int:
        return len(self._chunks)

    def parts(self, vertices: np.ndarray, rect) -> list[np.ndarray]:
        """What of a line to stroke into ``rect``: the whole line where it is short, else its parts that meet
        ``rect`` (:meth:`LineChunks.runs`)."""
        if not is_long(vertices):
            return [vertices]
        key = id(vertices)
        entry = self._chunks.get(key)
        if entry is None or entry[0]() is not vertices:
            entry = self._chunks[key] = (weakref.ref(vertices, lambda _, key=key: self._chunks.pop(key, None)),
                                         LineChunks(vertices))
        return entry[1].runs(vertices, rect)
