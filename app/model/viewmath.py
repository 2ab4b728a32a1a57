"""The viewer's mapping between raster pixels and view pixels (no Qt).

``view = (image - origin) * scale``: ``scale`` is view pixels per raster pixel
and ``origin`` the raster position (x, y) shown at the view's top-left corner.
Raster positions follow DESIGN.md: ``(x, y) = (col, row)`` with pixel
``[r, c]`` covering ``[c, c+1) x [r, r+1)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

__all__ = ["ViewTransform", "MIN_SCALE", "MAX_SCALE"]

MIN_SCALE = 1e-4
MAX_SCALE = 64.0


@dataclass(frozen=True)
class ViewTransform:
    """An immutable zoom and pan state.

    Attributes
    ----------
    scale : float
        View pixels per raster pixel, in [MIN_SCALE, MAX_SCALE].
    origin_x, origin_y : float
        Raster position (px) at the view's top-left corner.
    """

    scale: float = 1.0
    origin_x: float = 0.0
    origin_y: float = 0.0

    def __post_init__(self):
        if not (math.isfinite(self.scale) and self.scale > 0):
            raise ValueError(f"scale must be a positive finite number; got {self.scale}")
        if not (math.isfinite(self.origin_x) and math.isfinite(self.origin_y)):
            raise ValueError(f"origin must be finite; got ({self.origin_x}, {self.origin_y})")
        object.__setattr__(self, "scale", float(min(MAX_SCALE, max(MIN_SCALE, self.scale))))
        object.__setattr__(self, "origin_x", float(self.origin_x))
        object.__setattr__(self, "origin_y", float(self.origin_y))

    def image_to_view(self, x: float, y: float) -> tuple[float, float]:
        """View position (px) of raster position (x, y)."""
        return (x - self.origin_x) * self.scale, (y - self.origin_y) * self.scale

    def view_to_image(self, vx: float, vy: float) -> tuple[float, float]:
        """Raster position (x, y) shown at view position (vx, vy)."""
        return self.origin_x + vx / self.scale, self.origin_y + vy / self.scale

    def visible_rect(self, view_width: float, view_height: float) -> tuple[float, float, float, float]:
        """(x0, y0, x1, y1): the raster rectangle a view of that size shows."""
        x1, y1 = self.view_to_image(view_width, view_height)
        return self.origin_x, self.origin_y, x1, y1

    def panned(self, dx_view: float, dy_view: float) -> ViewTransform:
        """The content moved by (dx, dy) view pixels (a drag to the right moves it right)."""
        return replace(self, origin_x=self.origin_x - dx_view / self.scale,
                       origin_y=self.origin_y - dy_view / self.scale)

    def zoomed(self, factor: float, vx: float, vy: float) -> ViewTransform:
        """Scale multiplied by ``factor`` keeping the raster point under view (vx, vy) in place."""
        x, y = self.view_to_image(vx, vy)
        scale = min(MAX_SCALE, max(MIN_SCALE, self.scale * factor))
        return ViewTransform(scale, x - vx / scale, y - vy / scale)

    def centred_on(self, x: float, y: float, view_width: float, view_height: float) -> ViewTransform:
        """The same scale with raster point (x, y) at the view's centre."""
        return replace(self, origin_x=x - view_width / 2 / self.scale, origin_y=y - view_height / 2 / self.scale)

    @classmethod
    def fitting(cls, rect: tuple[float, float, float, float], view_width: float, view_height: float,
                margin: float = 0.02) -> ViewTransform:
        """The transform that shows raster rectangle ``rect`` = (x0, y0, x1, y1) whole and centred."""
        x0, y0, x1, y1 = rect
        w, h = max(x1 - x0, 1e-9), max(y1 - y0, 1e-9)
        scale = min(view_width / w, view_height / h) * (1.0 - 2 * margin)
        t = cls(scale)
        return t.centred_on((x0 + x1) / 2, (y0 + y1) / 2, view_width, view_height)
