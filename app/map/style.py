"""How the map draws lines: the colours, dashes and the cased stroke shared by every overlay.

Colours are chosen to stay visible on grey, colour, bright and dark imagery:
every line is drawn over a darker, wider casing.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QPainterPath, QPen, QPolygonF

__all__ = ["FEATURE", "SELECTED", "CURRENT", "PREVIEW", "FAILED", "CASING", "GUIDE", "CANDIDATE", "CHOSEN", "RIBBON",
           "DASHES", "CASING_EXTRA_PX", "pen", "stroke", "path_of", "polygon_of"]

FEATURE = QColor(255, 214, 10)
SELECTED = QColor(0, 229, 255)
CURRENT = QColor(255, 120, 30)
PREVIEW = QColor(255, 80, 200)
FAILED = QColor(255, 40, 40)
CASING = QColor(0, 0, 0, 150)
GUIDE = QColor(120, 200, 255, 150)
CANDIDATE = QColor(120, 200, 255, 220)
CHOSEN = QColor(255, 255, 255)
RIBBON = QColor(60, 255, 160)

#: Dash and gap lengths of dashed lines, in line widths.
DASHES = [3.0, 2.0]
#: The casing is this much wider than its line (view px).
CASING_EXTRA_PX = 2.5


def pen(colour: QColor, width: float, dashed: bool = False, cosmetic: bool = False) -> QPen:
    """A round-capped pen; ``cosmetic``: ``width`` in view pixels whatever the painter's transform."""
    result = QPen(colour, width)
    result.setCapStyle(Qt.PenCapStyle.RoundCap)
    result.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    result.setCosmetic(cosmetic)
    if dashed:  # flat caps: round ones would close most of each gap
        result.setCapStyle(Qt.PenCapStyle.FlatCap)
        result.setDashPattern(DASHES)
    return result


def stroke(painter, path: QPainterPath, colour: QColor, width: float, dashed: bool = False,
           cosmetic: bool = False) -> None:
    """``path`` as a ``width`` line of ``colour`` over its casing."""
    painter.strokePath(path, pen(CASING, width + CASING_EXTRA_PX, cosmetic=cosmetic))
    painter.strokePath(path, pen(colour, width, dashed, cosmetic))


def path_of(xs, ys) -> QPainterPath:
    """The polyline through the points (``xs[i]``, ``ys[i]``) as a painter path (one open subpath)."""
    path = QPainterPath()
    path.addPolygon(polygon_of(np.column_stack([np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64)])))
    return path


def polygon_of(vertices: np.ndarray) -> QPolygonF:
    """(k, 2) vertices as an open polygon, for ``QPainter.drawPolyline``.

    Written into the polygon's own storage through a buffer where this Qt binding allows it (checked once):
    a Python ``QPointF`` per vertex took 0.11 s for 100,000 vertices, and a selected line of as many was
    built again at every repaint (0.8 s with a painter path's ``lineTo`` per vertex).
    """
    points = np.asarray(vertices, dtype=np.float64).reshape(-1, 2)
    if len(points) >= _BUFFER_FROM and _buffer_works():
        return _buffered(points)
    return QPolygonF([QPointF(x, y) for x, y in points.tolist()])


#: Polygons of at least this many vertices are written through a buffer (below it, building one costs more).
_BUFFER_FROM = 8
_buffer_ok: bool | None = None


def _buffered(points: np.ndarray) -> QPolygonF:
    """A polygon of ``points`` written through a buffer over its storage (two float64 per QPointF)."""
    import shiboken6

    polygon = QPolygonF()
    polygon.resize(len(points))
    storage = np.frombuffer(shiboken6.VoidPtr(polygon.data(), points.size * 8, True), np.float64)
    storage[:] = points.ravel()
    return polygon


def _buffer_works() -> bool:
    """Whether :func:`_buffered` builds the polygon it should here (its first use checks a known one)."""
    global _buffer_ok
    if _buffer_ok is None:
        try:
            known = np.arange(2.0 * _BUFFER_FROM).reshape(-1, 2) * 1.5 - 7.25
            polygon = _buffered(known)
            _buffer_ok = [(p.x(), p.y()) for p in polygon] == [tuple(row) for row in known.tolist()]
        except Exception:  # (another binding or layout: the QPointF list below always works)
            _buffer_ok = False
    return _buffer_ok
