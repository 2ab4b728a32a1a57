"""Drawing the tool's state over the raster: features, the piece in progress, the preview, guides, ribbons.

Called by :class:`app.map.viewer.RasterViewer` at the end of every paint with the
painter and the viewer (for its raster -> view mapping).  Colours are chosen
to stay visible on grey, colour, bright and dark imagery: every line is drawn
over a darker, wider casing.  Pieces of low confidence
(:data:`app.model.estimates.LOW_CONFIDENCE`) are dashed; the estimated ribbon
is the road's width, as each extraction estimated it, along its piece.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen, QPixmap

from app.model.estimates import is_low, ribbon_edges
from app.model.pieces import confidence_runs, piece_vertices

__all__ = ["OverlayOptions", "ToolOverlay"]

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
    xs = (vertices[:, 0] - t.origin_x) * t.scale
    ys = (vertices[:, 1] - t.origin_y) * t.scale
    path = QPainterPath(QPointF(xs[0], ys[0]))
    for x, y in zip(xs[1:].tolist(), ys[1:].tolist()):
        path.lineTo(x, y)
    return path


def _stroke(painter, path: QPainterPath, colour: QColor, width: float, dashed: bool = False) -> None:
    casing = QPen(CASING, width + 2.5)
    casing.setCapStyle(Qt.PenCapStyle.RoundCap)
    casing.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    painter.strokePath(path, casing)
    pen = QPen(colour, width)
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    if dashed:  # flat caps: round ones would close most of each gap
        pen.setCapStyle(Qt.PenCapStyle.FlatCap)
        pen.setDashPattern(DASHES)
    painter.strokePath(path, pen)


def _in_view(viewer, vertices: np.ndarray, margin: float) -> bool:
    """True when the polyline's bounding box meets the visible raster rectangle (grown by ``margin``)."""
    x0, y0, x1, y1 = viewer.transform.visible_rect(viewer.width(), viewer.height())
    (bx0, by0), (bx1, by1) = vertices.min(axis=0), vertices.max(axis=0)
    return bx1 >= x0 - margin and bx0 <= x1 + margin and by1 >= y0 - margin and by0 <= y1 + margin


def _dot(painter, viewer, xy, colour: QColor, radius: float = 4.0) -> None:
    painter.setPen(QPen(CASING, 1.5))
    painter.setBrush(colour)
    painter.drawEllipse(viewer.image_to_view(float(xy[0]), float(xy[1])), radius, radius)


class ToolOverlay:
    """Paints an :class:`app.model.tool.ExtractionTool` (a callable for ``viewer.overlay_painters``)."""

    def __init__(self, tool, options: OverlayOptions | None = None):
        self.tool = tool
        self.options = options or OverlayOptions()
        # The finished features as last drawn: the preview and the piece in
        # progress repaint often, the finished features rarely change.
        self._layer: QPixmap | None = None
        self._layer_key: tuple = ()

    def __call__(self, painter, viewer) -> None:
        tool = self.tool
        painter.drawPixmap(0, 0, self._features_layer(viewer))
        if tool.current is not None:
            self._paint_current(painter, viewer)
        if tool.preview is not None and len(tool.preview.vertices_px) >= 2:
            _stroke(painter, _path(viewer, tool.preview.vertices_px), PREVIEW, 2.0, dashed=True)
        if self.options.show_guides:
            self._paint_guides(painter, viewer)

    def _features_layer(self, viewer) -> QPixmap:
        tool, ratio = self.tool, viewer.devicePixelRatioF()
        # Outcomes never change once there, so the pieces still pending say which ones arrived.
        pending = tuple(p.id for f in tool.features for p in f.pieces if p.id not in tool.outcomes)
        key = (viewer.transform, viewer.width(), viewer.height(), ratio, tool.selected_id, pending,
               self.options.show_ribbon)
        if self._layer is None or key != self._layer_key[1:] or tool.state.features is not self._layer_key[0]:
            layer = QPixmap(max(1, round(viewer.width() * ratio)), max(1, round(viewer.height() * ratio)))
            layer.setDevicePixelRatio(ratio)
            layer.fill(Qt.GlobalColor.transparent)
            painter = QPainter(layer)
            try:
                painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
                self._paint_features(painter, viewer)
            finally:
                painter.end()
            self._layer, self._layer_key = layer, (tool.state.features,) + key
        return self._layer

    def _paint_features(self, painter, viewer) -> None:
        """The finished features in view (ribbons under them), the selected one last (on top)."""
        tool, margin = self.tool, 10.0 / viewer.transform.scale
        shown, selected = [], None
        for feature in tool.features:
            vertices = tool.feature_vertices(feature)
            if len(vertices) < 2 or not _in_view(viewer, vertices, margin):
                continue
            if self.options.show_ribbon:
                self._paint_ribbons(painter, viewer, feature.pieces)
            if feature.id == tool.selected_id:
                selected = feature
            else:
                shown.append(feature)
        for feature in shown:
            self._stroke_feature(painter, viewer, feature, FEATURE, 2.0)
        if selected is not None:
            self._stroke_feature(painter, viewer, selected, SELECTED, 3.5)

    def _stroke_feature(self, painter, viewer, feature, colour: QColor, width: float) -> None:
        """One feature: dashed along its runs of low-confidence pieces, one solid line where there are none."""
        outcomes = self.tool.outcomes
        if not any(p.id in outcomes and is_low(outcomes[p.id].confidence) for p in feature.pieces):
            _stroke(painter, _path(viewer, self.tool.feature_vertices(feature)), colour, width)
            return
        for vertices, low in confidence_runs(feature, outcomes):
            if len(vertices) >= 2:
                _stroke(painter, _path(viewer, vertices), colour, width, dashed=low)

    def _paint_ribbons(self, painter, viewer, pieces) -> None:
        """The estimated ribbon's two edges along each piece whose estimate has a width."""
        for piece in pieces:
            outcome = self.tool.outcomes.get(piece.id)
            estimate = outcome.estimate if outcome is not None else None
            if estimate is None or not estimate.width_px:
                continue
            for edge in ribbon_edges(outcome.vertices_px, estimate.width_px):
                if len(edge) >= 2:
                    _stroke(painter, _path(viewer, edge), RIBBON, 1.25)

    def _paint_current(self, painter, viewer) -> None:
        tool, current = self.tool, self.tool.current
        if self.options.show_ribbon:
            self._paint_ribbons(painter, viewer, current.pieces)
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
