"""The status bar: position under the cursor (pixel, map, lon/lat) and the last extraction."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from PySide6.QtWidgets import QLabel, QStatusBar

__all__ = ["PositionText", "describe_position", "describe_run", "crs_label", "StatusBar"]

#: Longer CRS names are cut: a status bar label never shrinks, so it would widen the window.
MAX_CRS_NAME = 40


@dataclass(frozen=True)
class PositionText:
    """The three position read-outs; empty strings where they do not apply."""

    pixel: str = ""
    map: str = ""
    lonlat: str = ""


def describe_position(raster, x: float, y: float) -> PositionText:
    """Read-outs of raster position (x, y) px.

    ``map`` is given in the raster's CRS (omitted when that CRS is longitude/
    latitude already); ``lonlat`` is WGS84 degrees.  Both are empty for a plain
    image.  Positions off the raster give empty read-outs.
    """
    if raster is None or not (0 <= x < raster.width and 0 <= y < raster.height):
        return PositionText()
    pixel = f"x {x:.1f}  y {y:.1f}  (col {int(x)}, row {int(y)})"
    if not raster.georeferenced:
        return PositionText(pixel)
    lon, lat = raster.pixel_to_lonlat([x], [y])
    lonlat = f"lon {float(lon[0]):.6f}°  lat {float(lat[0]):.6f}°"
    if raster.crs.is_geographic:
        return PositionText(pixel, "", lonlat)
    mx, my = raster.pixel_to_map([x], [y])
    return PositionText(pixel, f"E {float(mx[0]):.2f}  N {float(my[0]):.2f}  ({crs_label(raster.crs)})", lonlat)


@functools.lru_cache(maxsize=8)
def crs_label(crs) -> str:
    """A short name of a CRS: its authority code ("EPSG:32633"), else the name its WKT gives it.

    Not ``crs.to_string()``: for a CRS without an authority code (national
    grids written by some tools, local survey grids) that is the whole WKT,
    too long for the status bar and slow at every cursor move.
    """
    authority = crs.to_authority()
    if authority is not None:
        return ":".join(authority)
    match = re.match(r'\s*\w+\["([^"]*)"', crs.to_wkt())
    name = match.group(1).strip() if match else ""
    if not name or name.lower() == "unknown":
        return "custom CRS"
    return name if len(name) <= MAX_CRS_NAME else name[:MAX_CRS_NAME - 1] + "…"


def describe_run(result) -> str:
    """One line about an extraction result: total time, backend and solver."""
    total = result.timings_ms.get("total")
    time_text = f"{total:.1f} ms" if total is not None else "? ms"
    return f"last run {time_text} on {result.backend.upper()} ({result.method})"


class StatusBar(QStatusBar):
    """QStatusBar with permanent read-outs: pixel, map, lon/lat and the last run."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.pixel_label, self.map_label, self.lonlat_label, self.run_label = (QLabel() for _ in range(4))
        for label in (self.pixel_label, self.map_label, self.lonlat_label, self.run_label):
            self.addPermanentWidget(label)
        self.run_label.setText("no extraction yet")

    def show_position(self, text: PositionText) -> None:
        """Show the read-outs (hiding the empty ones)."""
        for label, value in ((self.pixel_label, text.pixel), (self.map_label, text.map),
                             (self.lonlat_label, text.lonlat)):
            label.setText(value)
            label.setVisible(bool(value))

    def show_run(self, result) -> None:
        """Show the last extraction's time and backend."""
        self.run_label.setText(describe_run(result))
