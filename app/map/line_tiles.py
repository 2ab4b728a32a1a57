"""Lines drawn in cached tiles, redrawn only where something changed.

Qt strokes an antialiased, cased polyline in some 40 µs (about 4 µs for a
thin one), so thousands of lines cannot be stroked at every repaint, nor
even on every edit.  The lines are drawn instead into square tiles of
:data:`TILE_PX` view pixels, laid on the raster at the current zoom and kept
while the zoom stays:

- panning draws the cached tiles and renders only the tiles that came into
  view;
- an added line (a finished, imported or redone feature) is painted onto the
  cached tiles it touches, above the others as a full redraw would put it;
- a removed or changed line drops the tiles its old box touched, to be
  rendered again from the spatial index, which gives each tile just the lines
  that meet it;
- a new zoom renders its tiles at most :data:`RENDER_BUDGET_MS` per repaint,
  nearest to the centre first, and shows the previous zoom's tiles, scaled,
  where its own are not ready: the window keeps answering while tens of
  thousands of lines are drawn.

:class:`LineTiles` takes the lines from a *source* and draws them with a
*style*, so the work layer (``app.map.feature_tiles``) and the reference
layers (``app.map.reference_overlay``) share it:

- source: ``sync() -> IndexChange`` (what changed since the last call, see
  :class:`app.model.feature_index.IndexChange`), ``query(rect)`` (ids meeting
  a raster rectangle, in drawing order), ``count(rect)`` and ``bbox(id)``;
- style: ``key()`` (what else the tiles depend on), ``margin_px(scale)`` (how
  far, in view px, a drawing reaches beyond its vertices),
  ``draw(painter, id, light, rect)`` (one line in raster pixels, cosmetic pens,
  of which only what meets ``rect``, the tile grown by that reach, shows: a
  long line may draw only its parts there, :mod:`app.map.line_chunks`) and
  ``forget(id)`` (a line left the source: drop what was cached for it).

Level of detail: with more than :data:`LIGHT_STYLE_FEATURES` lines in view
(a zoomed-out view of a large layer), the style is asked for its light look
(thin lines without casing or dashes), some ten times cheaper and easier to
read at that density.
"""

from __future__ import annotations

import math
import time

from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QImage, QPainter, QRegion, QTransform

__all__ = ["LineTiles", "TILE_PX", "RENDER_BUDGET_MS", "LIGHT_STYLE_FEATURES"]

TILE_PX = 128
#: A repaint renders missing tiles until this much time (ms) went, then asks for another repaint.
RENDER_BUDGET_MS = 12.0
#: More lines in view than this: thin lines, no casing (the light style).
LIGHT_STYLE_FEATURES = 2500
#: Tiles kept at most (64 kB each).
MAX_TILES = 1600
#: An edit of more lines times cached tiles than this drops the cache instead of testing every line against
#: every tile (2,000 lines added with 1,360 tiles cached took 3.2 s; the tiles in view are drawn again in
#: their budget instead).
MAX_EDIT_TESTS = 100_000


class LineTiles:
    """Paints the lines of a source in a style through cached tiles (see the module's docstring).

    Parameters
    ----------
    source : app.model.feature_index.FeatureIndex or app.model.reference.ReferenceIndex
        ``sync``, ``query``, ``count`` and ``bbox`` (raster pixels).
    line_style : object
        ``key()``, ``margin_px(scale)``, ``draw(painter, id, light, rect)`` and ``forget(id)``.
    """

    def __init__(self, source, line_style):
        self.source, self.style = source, line_style
        self._key = None  # (scale, ratio, light, style key) of the tiles in self._tiles
        self._tiles: dict[tuple[int, int], QImage] = {}
        self._stand_ins: tuple = (None, {})  # an earlier key and its tiles
        self._light = False
        self.rendered = 0  # tiles rendered so far (tests and benchmarks read it)
        self.complete = False  # whether the last paint drew every tile in view

    # ------------------------------------------------------------- painting
    def paint(self, painter, viewer) -> bool:
        """Draw the lines in view; False when some tiles are still to come (repaint soon)."""
        change = self.source.sync()
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
            self._light = self.source.count(rect) > LIGHT_STYLE_FEATURES
        return (scale, ratio, self._light, self.style.key())

    def _apply(self, change) -> None:
        """Follow an edit on the cached tiles: paint the added lines, drop the tiles of the removed."""
        self._stand_ins = (None, {})
        for line_id, _ in change.removed:
            self.style.forget(line_id)
        if change.everything or (len(change.added) + len(change.removed)) * len(self._tiles) > MAX_EDIT_TESTS:
            self._tiles = {}
            return
        for _, bbox in change.removed:
            for cell in [c for c in self._tiles if self._tile_meets(c, bbox)]:
                del self._tiles[cell]
        for line_id in change.added:
            bbox = self.source.bbox(line_id)
            for cell, image in self._tiles.items():
                if self._tile_meets(cell, bbox):
                    painter = QPainter(image)
                    try:
                        self._begin(painter, cell)
                        self.style.draw(painter, line_id, self._light, self._tile_rect(cell, self._margin_px()))
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
        """How far (view px) a line's drawing reaches beyond its vertices."""
        return self.style.margin_px(self._key[0])

    def _render(self, cell) -> QImage:
        ratio = self._key[1]
        image = QImage(round(TILE_PX * ratio), round(TILE_PX * ratio), QImage.Format.Format_ARGB32_Premultiplied)
        image.setDevicePixelRatio(ratio)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        try:
            self._begin(painter, cell)
            rect = self._tile_rect(cell, self._margin_px())
            for line_id in self.source.query(rect):
                self.style.draw(painter, line_id, self._light, rect)
        finally:
            painter.end()
        self.rendered += 1
        return image

    def _begin(self, painter, cell) -> None:
        """Raster pixels -> the tile's pixels; pens are cosmetic (widths in view pixels)."""
        scale = self._key[0]
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setTransform(QTransform(scale, 0, 0, scale, -cell[0] * TILE_PX, -cell[1] * TILE_PX))
