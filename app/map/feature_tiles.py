"""The finished features drawn in cached tiles, redrawn only where something changed.

Qt strokes an antialiased, cased polyline in some 40 µs (about 4 µs for a
thin one), so thousands of features cannot be stroked at every repaint, nor
even on every edit.  The features are drawn instead into square tiles of
:data:`TILE_PX` view pixels, laid on the raster at the current zoom and kept
while the zoom stays:

- panning draws the cached tiles and renders only the tiles that came into
  view;
- a finished (or imported, or redone) feature is painted onto the cached
  tiles it touches, above the others as a full redraw would put it;
- a removed or changed feature (undo, delete, a late result) drops the tiles
  its old box touched, to be rendered again from the spatial index
  (:class:`app.model.feature_index.FeatureIndex`), which gives each tile just
  the features that meet it;
- a new zoom renders its tiles at most :data:`RENDER_BUDGET_MS` per repaint,
  nearest to the centre first, and shows the previous zoom's tiles, scaled,
  where its own are not ready: the window keeps answering while tens of
  thousands of lines are drawn.

Level of detail: with more than :data:`LIGHT_STYLE_FEATURES` features in view
(a zoomed-out view of a large import), lines are drawn thin without casing or
dashes, some ten times cheaper and easier to read at that density.
"""

from __future__ import annotations

import math
import time

from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QImage, QPainter, QRegion, QTransform

from app.map import style
from app.model.estimates import is_low, ribbon_edges
from app.model.pieces import confidence_runs

__all__ = ["FeatureTiles", "TILE_PX", "RENDER_BUDGET_MS", "LIGHT_STYLE_FEATURES"]

TILE_PX = 128
#: A repaint renders missing tiles until this much time (ms) went, then asks for another repaint.
RENDER_BUDGET_MS = 12.0
#: More features in view than this: thin lines, no casing (the light style).
LIGHT_STYLE_FEATURES = 2500
#: Tiles kept at most (64 kB each).
MAX_TILES = 1600
#: Widths (view px) of the finished features' lines in the full and the light style.
FULL_WIDTH_PX = 2.0
LIGHT_WIDTH_PX = 1.0


class FeatureTiles:
    """Paints a tool's finished features through cached tiles (see the module's docstring).

    Parameters
    ----------
    tool : app.model.tool.ExtractionTool
    index : app.model.feature_index.FeatureIndex
        Of the same tool.
    options : app.map.overlays.OverlayOptions
        ``show_ribbon`` draws the ribbons under the features.
    """

    def __init__(self, tool, index, options):
        self.tool, self.index, self.options = tool, index, options
        self._key = None  # (scale, ratio, light, show_ribbon) of the tiles in self._tiles
        self._tiles: dict[tuple[int, int], QImage] = {}
        self._stand_ins: tuple = (None, {})  # an earlier key and its tiles
        self._light = False
        self._polygons: dict[int, tuple] = {}  # id -> (vertices, QPolygonF)
        self.rendered = 0  # tiles rendered so far (tests and benchmarks read it)
        self.complete = False  # whether the last paint drew every tile in view

    # ------------------------------------------------------------- painting
    def paint(self, painter, viewer) -> bool:
        """Draw the features in view; False when some tiles are still to come (repaint soon)."""
        change = self.index.sync()
        key = self._key_for(viewer, bool(change))
        if key != self._key:
            if self._tiles:
                self._stand_ins = (self._key, self._tiles)
            self._key, self._tiles = key, {}
        elif change:
            self._apply(change)
        return self._draw_tiles(painter, viewer)

    def _key_for(self, viewer, changed: bool) -> tuple:
        scale, ratio = viewer.transform.scale, viewer.devicePixelRatioF()
        if changed or self._key is None or self._key[:2] != (scale, ratio):
            rect = viewer.transform.visible_rect(viewer.width(), viewer.height())
            self._light = self.index.count(rect) > LIGHT_STYLE_FEATURES
        return (scale, ratio, self._light, self.options.show_ribbon)

    def _apply(self, change) -> None:
        """Follow an edit on the cached tiles: paint the added features, drop the tiles of the removed."""
        self._stand_ins = (None, {})
        if change.everything:
            self._tiles = {}
            return
        for feature_id, bbox in change.removed:
            self._polygons.pop(feature_id, None)
            for cell in [c for c in self._tiles if self._tile_meets(c, bbox)]:
                del self._tiles[cell]
        for feature_id in change.added:
            bbox = self.index.bbox(feature_id)
            for cell, image in self._tiles.items():
                if self._tile_meets(cell, bbox):
                    painter = QPainter(image)
                    try:
                        self._begin(painter, cell)
                        self._draw_feature(painter, feature_id)
                    finally:
                        painter.end()

    def _draw_tiles(self, painter, viewer) -> bool:
        deadline = time.perf_counter() + RENDER_BUDGET_MS / 1e3
        missing, rendered = [], 0
        for cell in self._visible_cells(viewer):
            image = self._tiles.get(cell)
            if image is None and (rendered == 0 or time.perf_counter() < deadline):  # one at least: progress
                image = self._tiles[cell] = self._render(cell)
                rendered += 1
            if image is None:
                missing.append(cell)
            else:
                painter.drawImage(self._view_point(viewer, cell), image)
        if missing:
            self._draw_stand_ins(painter, viewer, missing)
        self._evict(viewer)
        self.complete = not missing
        return self.complete

    def _visible_cells(self, viewer) -> list[tuple[int, int]]:
        """Tiles in view, nearest to the view's centre first."""
        t = viewer.transform
        x0, y0 = t.origin_x * t.scale / TILE_PX, t.origin_y * t.scale / TILE_PX
        x1, y1 = x0 + viewer.width() / TILE_PX, y0 + viewer.height() / TILE_PX
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        cells = [(c, r) for c in range(math.floor(x0), math.ceil(x1)) for r in range(math.floor(y0), math.ceil(y1))]
        return sorted(cells, key=lambda cell: (cell[0] + 0.5 - cx) ** 2 + (cell[1] + 0.5 - cy) ** 2)

    def _view_point(self, viewer, cell) -> QPointF:
        t = viewer.transform
        return QPointF(cell[0] * TILE_PX - t.origin_x * t.scale, cell[1] * TILE_PX - t.origin_y * t.scale)

    def _draw_stand_ins(self, painter, viewer, missing) -> None:
        """The previous zoom's tiles, scaled, where this zoom's are not ready."""
        key, tiles = self._stand_ins
        if key is None or not tiles:
            return
        painter.save()
        region = QRegion()
        for cell in missing:
            point = self._view_point(viewer, cell)
            region += QRect(round(point.x()), round(point.y()), TILE_PX, TILE_PX)
        painter.setClipRegion(region)
        t, size = viewer.transform, TILE_PX / key[0]  # a stand-in tile's side in raster px
        for (col, row), image in tiles.items():
            top_left = QPointF((col * size - t.origin_x) * t.scale, (row * size - t.origin_y) * t.scale)
            painter.drawImage(QRectF(top_left.x(), top_left.y(), size * t.scale, size * t.scale), image)
        painter.restore()

    def _evict(self, viewer) -> None:
        if len(self._tiles) > MAX_TILES:
            visible = set(self._visible_cells(viewer))
            for cell in [c for c in self._tiles if c not in visible][:len(self._tiles) - MAX_TILES]:
                del self._tiles[cell]

    # ------------------------------------------------------------ one tile
    def _tile_rect(self, cell, margin_px: float = 0.0) -> tuple[float, float, float, float]:
        """Raster rectangle (x0, y0, x1, y1) px of a tile, grown by ``margin_px`` view px."""
        scale = self._key[0]
        size, margin = TILE_PX / scale, margin_px / scale
        return (cell[0] * size - margin, cell[1] * size - margin,
                (cell[0] + 1) * size + margin, (cell[1] + 1) * size + margin)

    def _tile_meets(self, cell, bbox) -> bool:
        x0, y0, x1, y1 = self._tile_rect(cell, self._margin_px())
        return bbox[2] >= x0 and bbox[0] <= x1 and bbox[3] >= y0 and bbox[1] <= y1

    def _margin_px(self) -> float:
        """How far (view px) a line's drawing reaches beyond its vertices: the casing, or a ribbon."""
        reach = FULL_WIDTH_PX + style.CASING_EXTRA_PX + 2.0
        if self.options.show_ribbon:
            reach += 64.0 * self._key[0]  # ribbons up to 128 px wide
        return reach

    def _render(self, cell) -> QImage:
        ratio = self._key[1]
        image = QImage(round(TILE_PX * ratio), round(TILE_PX * ratio), QImage.Format.Format_ARGB32_Premultiplied)
        image.setDevicePixelRatio(ratio)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        try:
            self._begin(painter, cell)
            for feature_id in self.index.query(self._tile_rect(cell, self._margin_px())):
                self._draw_feature(painter, feature_id)
        finally:
            painter.end()
        self.rendered += 1
        return image

    def _begin(self, painter, cell) -> None:
        """Raster pixels -> the tile's pixels; pens are cosmetic (widths in view pixels)."""
        scale = self._key[0]
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setTransform(QTransform(scale, 0, 0, scale, -cell[0] * TILE_PX, -cell[1] * TILE_PX))

    def _draw_feature(self, painter, feature_id: int) -> None:
        feature, vertices = self.index.entry(feature_id)
        if len(vertices) < 2:
            return
        if self._light:
            painter.setPen(style.pen(style.FEATURE, LIGHT_WIDTH_PX, cosmetic=True))
            painter.drawPolyline(self._polygon(feature_id, vertices))
            return
        if self.options.show_ribbon:
            self._draw_ribbons(painter, feature)
        outcomes = self.tool.outcomes
        if any(p.id in outcomes and is_low(outcomes[p.id].confidence) for p in feature.pieces):
            for run, low in confidence_runs(feature, outcomes):
                if len(run) >= 2:
                    style.stroke(painter, style.path_of(run[:, 0], run[:, 1]), style.FEATURE, FULL_WIDTH_PX,
                                 dashed=low, cosmetic=True)
            return
        polygon = self._polygon(feature_id, vertices)
        painter.setPen(style.pen(style.CASING, FULL_WIDTH_PX + style.CASING_EXTRA_PX, cosmetic=True))
        painter.drawPolyline(polygon)
        painter.setPen(style.pen(style.FEATURE, FULL_WIDTH_PX, cosmetic=True))
        painter.drawPolyline(polygon)

    def _draw_ribbons(self, painter, feature) -> None:
        for piece in feature.pieces:
            outcome = self.tool.outcomes.get(piece.id)
            estimate = outcome.estimate if outcome is not None else None
            if estimate is None or not estimate.width_px:
                continue
            for edge in ribbon_edges(outcome.vertices_px, estimate.width_px):
                if len(edge) >= 2:
                    style.stroke(painter, style.path_of(edge[:, 0], edge[:, 1]), style.RIBBON, 1.25, cosmetic=True)

    def _polygon(self, feature_id: int, vertices):
        cached = self._polygons.get(feature_id)
        if cached is None or cached[0] is not vertices:
            cached = self._polygons[feature_id] = (vertices, style.polygon_of(vertices))
        return cached[1]
