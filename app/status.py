"""The status bar: position under the cursor (pixel, map, lon/lat) and the last extraction and its estimate."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QLabel, QStatusBar

from app.model.estimates import LOW_CONFIDENCE, is_low

__all__ = ["PositionText", "describe_position", "describe_run", "describe_estimate", "crs_label", "StatusBar"]

#: Longer CRS names are cut: a status bar label never shrinks, so it would widen the window.
MAX_CRS_NAME = 40
#: Room (px) around each read-out and a message: the status bar's spacing and the labels' margins.
MESSAGE_MARGIN_PX = 12
#: The estimate's label shrinks down to this width (px), its text cut with an ellipsis.
MIN_ESTIMATE_WIDTH_PX = 120


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


def describe_estimate(result) -> str:
    """One line about what an extraction estimated of the road; empty without an estimate.

    E.g. ``auto · bent course · width 14 px · bright · confidence 0.82``.  The
    course is named in ``auto`` mode only (the other modes do not choose one).
    """
    estimate = getattr(result, "estimate", None)
    if estimate is None:
        return ""
    mode = result.settings.mode
    parts = [mode] + ([f"{estimate.course} course"] if mode == "auto" else [])
    parts.append(f"width {estimate.width_px:.0f} px" if estimate.width_px else "width unknown")
    parts.append("no clear polarity" if estimate.polarity == "any" else estimate.polarity)
    parts.append(f"confidence {estimate.confidence:.2f}")
    if is_low(estimate.confidence):
        parts[-1] += " (low: dashed)"
    return " · ".join(parts)


class ElidedLabel(QLabel):
    """A label that may shrink below its text's width, the text then cut with an ellipsis.

    The estimate's line is long: beside the position read-outs of a
    georeferenced image it would widen the window beyond a 1280 px screen.
    """

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(min(hint.width(), MIN_ESTIMATE_WIDTH_PX), hint.height())

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        rect = self.contentsRect()
        text = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, rect.width())
        painter.drawText(rect, int(self.alignment()), text)
        painter.end()


class StatusBar(QStatusBar):
    """QStatusBar with permanent read-outs: pixel, map, lon/lat, the last run and its estimate."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.pixel_label, self.map_label, self.lonlat_label, self.run_label = (QLabel() for _ in range(4))
        self.estimate_label = ElidedLabel()
        for label in (self.pixel_label, self.map_label, self.lonlat_label, self.run_label, self.estimate_label):
            self.addPermanentWidget(label)
        self.run_label.setText("no extraction yet")
        self.estimate_label.hide()
        self._yielding: list[QLabel] = []  # read-outs hidden while a message needs their room
        self.messageChanged.connect(self._make_room)

    def show_position(self, text: PositionText) -> None:
        """Show the read-outs (hiding the empty ones, and those that leave a message its room)."""
        appeared = False
        for label, value in ((self.pixel_label, text.pixel), (self.map_label, text.map),
                             (self.lonlat_label, text.lonlat)):
            label.setText(value)
            visible = bool(value) and label not in self._yielding
            appeared = appeared or (visible and not label.isVisibleTo(self))
            label.setVisible(visible)
        if appeared and self.currentMessage():  # (read-outs empty when the message came took none of its room)
            self._make_room(self.currentMessage())

    def show_map_readouts(self, shown: bool) -> None:
        """The map's read-outs (position, last run, estimate) shown, or hidden and the position cleared while
        another tab (the knapsack panel) is in front."""
        if not shown:
            self.show_position(PositionText())
        self.run_label.setVisible(shown)
        self.estimate_label.setVisible(shown and bool(self.estimate_label.text()))

    def _make_room(self, message: str) -> None:
        """A message is never cut off by the read-outs: the estimate, lon/lat, map and pixel ones give way to it."""
        for label in self._yielding:
            label.setVisible(bool(label.text()))
        self._yielding = []
        if not message:
            return
        needed = self.fontMetrics().horizontalAdvance(message) + MESSAGE_MARGIN_PX
        permanent = [self.pixel_label, self.map_label, self.lonlat_label, self.run_label, self.estimate_label]
        used = sum(label.sizeHint().width() + MESSAGE_MARGIN_PX for label in permanent if label.isVisibleTo(self))
        for label in (self.estimate_label, self.lonlat_label, self.map_label, self.pixel_label):
            if self.width() - used >= needed:
                break
            if label.isVisibleTo(self):
                used -= label.sizeHint().width() + MESSAGE_MARGIN_PX
                label.hide()
                self._yielding.append(label)

    def message_room_px(self) -> int:
        """Width (px) left to a message beside the read-outs shown now."""
        permanent = [self.pixel_label, self.map_label, self.lonlat_label, self.run_label, self.estimate_label]
        return self.width() - sum(label.sizeHint().width() + MESSAGE_MARGIN_PX for label in permanent
                                  if label.isVisibleTo(self))

    def show_run(self, result) -> None:
        """Show the last extraction's time and backend, and its estimate."""
        self.run_label.setText(describe_run(result))
        self.show_estimate(result)

    def show_estimate(self, result) -> None:
        """Show what an extraction estimated (``result`` None: nothing)."""
        text = describe_estimate(result) if result is not None else ""
        self.estimate_label.setText(text)
        self.estimate_label.setVisible(bool(text))
        estimate = getattr(result, "estimate", None)
        if estimate is not None:
            note = f"; pieces below {LOW_CONFIDENCE:g} are drawn dashed" if is_low(estimate.confidence) else ""
            self.estimate_label.setToolTip(
                f"What the last extraction estimated of the road under it:\n{text}\n"
                f"contrast {estimate.contrast:.2f} (in units of the intensity spread around it){note}")
        self._make_room(self.currentMessage())  # (a wider read-out must not run into the message shown)
