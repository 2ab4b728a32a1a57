"""The finished features (the work layer) drawn through cached tiles (:mod:`app.map.line_tiles`).

The style draws each feature cased, dashed along its runs of low-confidence
pieces, with the estimated ribbons when they are shown; in the light style
(many features in view) thin lines only.
"""

from __future__ import annotations

from app.map import line_chunks, style
from app.map.line_chunks import ChunkCache
from app.map.line_tiles import LIGHT_STYLE_FEATURES, RENDER_BUDGET_MS, TILE_PX, LineTiles
from app.model.estimates import is_low
from app.model.pieces import confidence_runs, feature_ribbon_edges

__all__ = ["FeatureTiles", "FeatureStyle", "TILE_PX", "RENDER_BUDGET_MS", "LIGHT_STYLE_FEATURES"]

#: Widths (view px) of the finished features' lines in the full and the light style.
FULL_WIDTH_PX = 2.0
LIGHT_WIDTH_PX = 1.0


class FeatureStyle:
    """How a tool's finished features look in the tiles (a style for :class:`LineTiles`).

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
        self._polygons: dict[int, tuple] = {}  # id -> (vertices, QPolygonF) of a short line
        self._chunks = ChunkCache()  # of the long ones

    def key(self) -> bool:
        return self.options.show_ribbon

    def margin_px(self, scale: float) -> float:
        """How far (view px) a line's drawing reaches beyond its vertices: the casing, or a ribbon."""
        reach = FULL_WIDTH_PX + style.CASING_EXTRA_PX + 2.0
        if self.options.show_ribbon:
            reach += 64.0 * scale  # ribbons up to 128 px wide
        return reach

    def forget(self, feature_id: int) -> None:
        self._polygons.pop(feature_id, None)

    def draw(self, painter, feature_id: int, light: bool, rect) -> None:
        """One feature, in raster pixels (cosmetic pens); of a long one, its parts that meet ``rect``."""
        feature, vertices = self.index.entry(feature_id)
        if len(vertices) < 2:
            return
        if light:
            painter.setPen(style.pen(style.FEATURE, LIGHT_WIDTH_PX, cosmetic=True))
            for polygon in self._polygons_in(feature_id, vertices, rect):
                painter.drawPolyline(polygon)
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
        polygons = self._polygons_in(feature_id, vertices, rect)
        painter.setPen(style.pen(style.CASING, FULL_WIDTH_PX + style.CASING_EXTRA_PX, cosmetic=True))
        for polygon in polygons:
            painter.drawPolyline(polygon)
        painter.setPen(style.pen(style.FEATURE, FULL_WIDTH_PX, cosmetic=True))
        for polygon in polygons:
            painter.drawPolyline(polygon)

    def _draw_ribbons(self, painter, feature) -> None:
        for edge in feature_ribbon_edges(feature, self.tool.outcomes):
            style.stroke(painter, style.path_of(edge[:, 0], edge[:, 1]), style.RIBBON, 1.25, cosmetic=True)

    def _polygons_in(self, feature_id: int, vertices, rect) -> list:
        """The polylines to stroke into ``rect``: a short line's whole (cached), a long line's parts there."""
        if not line_chunks.is_long(vertices):
            return [self._polygon(feature_id, vertices)]
        return [style.polygon_of(part) for part in self._chunks.parts(vertices, rect)]

    def _polygon(self, feature_id: int, vertices):
        cached = self._polygons.get(feature_id)
        if cached is None or cached[0] is not vertices:
            cached = self._polygons[feature_id] = (vertices, style.polygon_of(vertices))
        return cached[1]


class FeatureTiles(LineTiles):
    """Paints a tool's finished features through cached tiles: a :class:`LineTiles` of its index in a
    :class:`FeatureStyle`."""

    def __init__(self, tool, index, options):
        super().__init__(index, FeatureStyle(tool, index, options))
        self.tool, self.index, self.options = tool, index, options
