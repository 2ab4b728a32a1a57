"""Drawing the reference layers: lines in each layer's colour, thinner than the work layer and under it.

Installed first in ``RasterViewer.overlay_painters`` so that the features, the
piece in progress and the preview are drawn over it.  The lines are drawn
through cached tiles (:class:`app.map.line_tiles.LineTiles`, as the work
layer): a pan renders only the tiles that came into view, so layers of tens of
thousands of lines pan as smoothly as a few.  A change of the layers (one
added, removed, hidden, shown or recoloured) draws the tiles again.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtGui import QColor

from app.map import style
from app.map.line_chunks import ChunkCache
from app.map.line_tiles import LineTiles
from app.model.reference_index import ReferenceIndex

__all__ = ["ReferenceOverlay", "ReferenceStyle", "REFERENCE_WIDTH_PX", "LIGHT_WIDTH_PX"]

#: Width of a reference line (view pixels), thinner than the work layer's 2.5 px.
REFERENCE_WIDTH_PX = 2.0
#: Width in the light style (many lines in view): no casing.
LIGHT_WIDTH_PX = 1.0


class ReferenceStyle:
    """How reference lines look in the tiles (a style for :class:`LineTiles`): cased, in their layer's colour."""

    def __init__(self, index: ReferenceIndex):
        self.index = index
        self._colours: dict[str, QColor] = {}
        self._chunks = ChunkCache()  # of the long lines

    def key(self) -> None:
        return None

    def margin_px(self, scale: float) -> float:
        return REFERENCE_WIDTH_PX + style.CASING_EXTRA_PX + 2.0

    def forget(self, line_id: int) -> None:
        pass  # nothing is cached per line id (the long lines' runs go with their vertices)

    def draw(self, painter, line_id: int, light: bool, rect) -> None:
        """One line, in raster pixels (cosmetic pens); of a long one, its parts that meet ``rect``."""
        vertices, colour = self.index.entry(line_id)
        colour = self._colours.setdefault(colour, QColor(colour))
        polygons = [style.polygon_of(part) for part in self._chunks.parts(vertices, rect)]
        if not light:
            painter.setPen(style.pen(style.CASING, REFERENCE_WIDTH_PX + style.CASING_EXTRA_PX, cosmetic=True))
            for polygon in polygons:
                painter.drawPolyline(polygon)
        painter.setPen(style.pen(colour, LIGHT_WIDTH_PX if light else REFERENCE_WIDTH_PX, cosmetic=True))
        for polygon in polygons:
            painter.drawPolyline(polygon)


class ReferenceOverlay:
    """Paints an :class:`app.model.reference.ReferenceLayers` (a callable for ``viewer.overlay_painters``)."""

    def __init__(self, layers):
        self.layers = layers
        self.index = ReferenceIndex(layers)
        self.tiles = LineTiles(self.index, ReferenceStyle(self.index))

    def __call__(self, painter, viewer) -> None:
        if not any(layer.visible and layer.lines_px for layer in self.layers.layers):
            return  # no tiles to fill with nothing
        if not self.tiles.paint(painter, viewer):
            QTimer.singleShot(0, viewer.update)  # tiles still to render: the next repaint draws more
