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
    """The polyline through the points (``xs[i]``, ``ys[i]``) as a painter path."""
    path = QPainterPath(QPointF(float(xs[0]), float(ys[0])))
    for x, y in zip(np.asarray(xs)[1:].tolist(), np.asarray(ys)[1:].tolist()):
        path.lineTo(x, y)
    return path


def polygon_of(vertices: np.ndarray) -> QPolygonF:
    """(k, 2) vertices as an open polygon, for ``QPainter.drawPolyline``."""
    return QPolygonF([QPointF(x, y) for x, y in np.asarray(vertices, dtype=np.float64).tolist()])
