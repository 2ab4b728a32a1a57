"""Small Qt helpers of the map view."""

from __future__ import annotations

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QAbstractItemView

__all__ = ["editing_an_item", "qimage"]


def qimage(rgba) -> QImage:
    """A QImage owning a copy of (h, w, 4) B, G, R, A bytes."""
    h, w = rgba.shape[:2]
    return QImage(rgba.data, w, h, 4 * w, QImage.Format.Format_ARGB32_Premultiplied).copy()


def editing_an_item(widget) -> bool:
    """Whether ``widget`` is an open cell editor of a table or list (a name being typed)."""
    parent = widget.parentWidget() if widget is not None else None
    while parent is not None:
        if isinstance(parent, QAbstractItemView):
            return True
        parent = parent.parentWidget()
    return False
