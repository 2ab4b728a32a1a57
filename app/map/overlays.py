"""Drawing the tool's state over the raster: features, the piece in progress, the preview, guides, ribbons.

Called by :class:`app.map.viewer.RasterViewer` at the end of every paint with the
painter and the viewer (for its raster -> view mapping).  The finished features
come from cached tiles (:class:`app.map.feature_tiles.FeatureTiles`), so an
edit, a selection or a pan costs what changed, not the whole drawing; the
selected feature, the piece in progress and the preview are stroked at every
repaint, on top.  Pieces of low confidence
(:data:`app.model.estimates.LOW_CONFIDENCE`) are dashed; the estimated ribbon
is the road's width, as each extraction estimated it, along its piece.
Colours and strokes: :mod:`app.map.style`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor, QPainterPath, QPen

from app.map.feature_tiles import FeatureTiles
from app.map.line_chunks import ChunkCache, is_long
from app.map.style import (  # noqa: F401  (the colours are this module's public names too)
    CANDIDATE,
    CASING,
    CASING_EXTRA_PX,
    CHOSEN,
    CURRENT,
    FAILED,
    FEATURE,
    GUIDE,
    PREVIEW,
    RIBBON,
    SELECTED,
    path_of,
    pen,
    polygon_of,
)
from app.map.style import stroke as _stroke
from app.model.estimates import is_low
from app.model.feature_index import FeatureIndex
from app.model.pieces import confidence_runs, feature_ribbon_edges, piece_vertices

__all__ = ["OverlayOptions", "ToolOverlay", "FEATURE", "SELECTED", "CURRENT", "PREVIEW", "FAILED", "RIBBON"]

#: Candidate points are thinned so that at most this many per guide are drawn.
MAX_CANDIDATES_DRAWN = 64


@dataclass
class OverlayOptions:
    """What to draw besides the features.

    ``show_guides``: the guides and candidate points of the latest extraction;
    ``show_ribbon``: the two edges of the estimated ribbon along every piece
    whose estimate has a width.
    """

    show_guides: bool = False
    show_ribbon: bool = False


def _path(viewer, vertices: np.ndarray) -> QPainterPath:
    """The polyline as a painter path in view coordinates."""
    t = viewer.transform
    return path_of((vertices[:, 0] - t.origin_x) * t.scale, (vertices[:, 1] - t.origin_y) * t.scale)


def _in_view(viewer, vertices: np.ndarray, margin: float) -> bool:
    """True when the polyline's bounding box meets the visible raster rectangle (grown by ``margin``)."""
    x0, y0, x1, y1 = viewer.transform.visible_rect(viewer.width(), viewer.height())
    (bx0, by0), (bx1, by1) = vertices.min(axis=0), vertices.max(axis=0)
    return bx1 >= x0 - margin and bx0 <= x1 + margin and by1 >= y0 - margin and by0 <= y1 + margin


#: A long line's view points are kept one per cell of this side (view px) in a row (:func:`_thinned`).
THIN_CELL_PX = 0.5


def _thinned(points: np.ndarray) -> np.ndarray:
    """View points without those in the same :data:`THIN_CELL_PX` cell as the point before them (the ends
    kept): a zoomed-out line of 10^5 vertices is stroked through the few thousand it shows, moved by at most
    a cell's diagonal (0.7 px)."""
    cells = np.floor(points / THIN_CELL_PX)
    keep = np.ones(len(points), bool)
    keep[1:] = (cells[1:] != cells[:-1]).any(axis=1)
    keep[-1] = True
    return points[keep]


def _dot(painter, viewer, xy, colour: QColor, radius: float = 4.0) -> None:
    painter.setPen(QPen(CASING, 1.5))
    painter.setBrush(colour)
    painter.drawEllipse(viewer.image_to_view(float(xy[0]), float(xy[1])), radius, radius)


class ToolOverlay:
    """Paints an :class:`app.model.tool.ExtractionTool` (a callable for ``viewer.overlay_painters``)."""

    def __init__(self, tool, options: OverlayOptions | None = None):
        self.tool = tool
        self.options = options or OverlayOptions()
        self.index = FeatureIndex(tool)
        self.tiles = FeatureTiles(tool, self.index, self.options)
        self._chunks = ChunkCache()  # of the selected feature when it is long

    def __call__(self, painter, viewer) -> None:
        tool = self.tool
        if not self.tiles.paint(painter, viewer):
            QTimer.singleShot(0, viewer.update)  # tiles still to render: the next repaint draws more
        self._paint_selected(painter, viewer)
        if tool.current is not None:
            self._paint_current(painter, viewer)
        if tool.preview is not None and len(tool.preview.vertices_px) >= 2:
            _stroke(painter, _path(viewer, tool.preview.vertices_px), PREVIEW, 2.0, dashed=True)
        if self.options.show_guides:
            self._paint_guides(painter, viewer)

    def _paint_selected(self, painter, viewer) -> None:
        """The selected feature, wider and in its own colour, over the tiles."""
        if self.tool.selected_id is None:
            return
        try:  # the index is in step: the tiles were just drawn
            feature, vertices = self.index.entry(self.tool.selected_id)
        except KeyError:
            return
        if len(vertices) >= 2 and _in_view(viewer, vertices, 10.0 / viewer.transform.scale):
            if self.options.show_ribbon:
                self._paint_ribbons(painter, viewer, feature)
            self._stroke_feature(painter, viewer, feature, SELECTED, 3.5)

    def _stroke_feature(self, painter, viewer, feature, colour: QColor, width: float) -> None:
        """One feature: dashed along its runs of low-confidence pieces, one solid line where there are none (of a
        long line, its parts in view, as polylines: stroking a path of 10^5 vertices took 0.3-0.9 s a repaint)."""
        outcomes = self.tool.outcomes
        if not any(p.id in outcomes and is_low(outcomes[p.id].confidence) for p in feature.pieces):
            vertices = self.tool.feature_vertices(feature)
            if not is_long(vertices):
                _stroke(painter, _path(viewer, vertices), colour, width)
                return
            x0, y0, x1, y1 = viewer.transform.visible_rect(viewer.width(), viewer.height())
            reach = (width + CASING_EXTRA_PX) / viewer.transform.scale
            t = viewer.transform
            polygons = [polygon_of(_thinned((part - (t.origin_x, t.origin_y)) * t.scale))
                        for part in self._chunks.parts(vertices, (x0 - reach, y0 - reach, x1 + reach, y1 + reach))]
            for line_pen in (pen(CASING, width + CASING_EXTRA_PX), pen(colour, width)):
                painter.setPen(line_pen)
                for polygon in polygons:
                    painter.drawPolyline(polygon)
            return
        for vertices, low in confidence_runs(feature, outcomes):
            if len(vertices) >= 2:
                _stroke(painter, _path(viewer, vertices), colour, width, dashed=low)

    def _paint_ribbons(self, painter, viewer, feature) -> None:
        """The estimated ribbon's two edges along each piece whose estimate has a width."""
        for edge in feature_ribbon_edges(feature, self.tool.outcomes):
            _stroke(painter, _path(viewer, edge), RIBBON, 1.25)

    def _paint_current(self, painter, viewer) -> None:
        tool, current = self.tool, self.tool.current
        if self.options.show_ribbon:
            self._paint_ribbons(painter, viewer, current)
        for index, piece in enumerate(current.pieces):
            outcome = tool.outcomes.get(piece.id)
            vertices = piece_vertices(current, index, tool.outcomes)
            if outcome is None:
                _stroke(painter, _path(viewer, vertices), CURRENT, 1.5, dashed=True)
            elif outcome.status == "failed":
                _stroke(painter, _path(viewer, vertices), FAILED, 2.0, dashed=True)
            else:
                _stroke(painter, _path(viewer, vertices), CURRENT, 2.5, dashed=is_low(outcome.confidence))
        _dot(painter, viewer, current.start_xy, CURRENT)
        for piece in current.pieces:
            _dot(painter, viewer, piece.click_end, CURRENT, 3.0)

    def guides_outcome(self):
        """The outcome whose guides are shown: the preview, else the latest extracted piece."""
        tool = self.tool
        if tool.preview is not None and "guides" in tool.preview.details:
            return tool.preview
        features = ([tool.current] if tool.current is not None else []) + list(reversed(tool.features))
        for feature in features:
            for piece in reversed(feature.pieces):
                outcome = tool.outcomes.get(piece.id)
                if outcome is not None and outcome.details.get("guides") is not None:
                    return outcome
        return None

    def _paint_guides(self, painter, viewer) -> None:
        outcome = self.guides_outcome()
        if outcome is None:
            return
        layers = outcome.details["guides"].layer_points()
        pen = QPen(GUIDE, 1.0)
        for points in layers:
            if len(points) >= 2:
                painter.setPen(pen)
                painter.drawLine(viewer.image_to_view(*points[0]), viewer.image_to_view(*points[-1]))
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(CANDIDATE)
        for points in layers:
            step = max(1, int(np.ceil(len(points) / MAX_CANDIDATES_DRAWN)))
            for x, y in points[::step].tolist():
                painter.drawEllipse(viewer.image_to_view(x, y), 1.6, 1.6)
        for xy in outcome.vertices_px:
            _dot(painter, viewer, xy, CHOSEN, 2.5)
