"""Drawing the reference layers: solid lines in each layer's colour, thinner than the work layer and under it.

Installed first in ``RasterViewer.overlay_painters`` so that the features, the
piece in progress and the preview are drawn over it.  Lines outside the view
are skipped by their bounding boxes (``ReferenceLayer.line_boxes_px``, computed once); a visible line
is a thin stroke (about 4 µs in Qt), so layers of a few thousand lines repaint
at interactive rates.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QColor

from app.map.style import path_of, stroke

__all__ = ["ReferenceOverlay", "REFERENCE_WIDTH_PX"]

#: Width of a reference line (view pixels), thinner than the work layer's 2.5 px.
REFERENCE_WIDTH_PX = 2.0


class ReferenceOverlay:
    """Paints an :class:`app.model.reference.ReferenceLayers` (a callable for ``viewer.overlay_painters``)."""

    def __init__(self, layers):
        self.layers = layers

    def __call__(self, painter, viewer) -> None:
        t = viewer.transform
        x0, y0, x1, y1 = t.visible_rect(viewer.width(), viewer.height())
        for layer in self.layers.layers:
            if not layer.visible or not layer.lines_px:
                continue
            boxes = layer.line_boxes_px
            shown = np.flatnonzero((boxes[:, 2] >= x0) & (boxes[:, 0] <= x1)
                                   & (boxes[:, 3] >= y0) & (boxes[:, 1] <= y1))
            colour = QColor(layer.colour)
            for k in shown.tolist():
                line = layer.lines_px[k]
                path = path_of((line[:, 0] - t.origin_x) * t.scale, (line[:, 1] - t.origin_y) * t.scale)
                stroke(painter, path, colour, REFERENCE_WIDTH_PX)
