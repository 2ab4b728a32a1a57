"""The raster viewer: tiled drawing, pan and zoom, mouse input for the tool, overlays.

Painting never reads the raster: it draws the cached tiles of the pyramid level
that matches the zoom, fills the gaps with cached tiles of neighbouring levels
(so panning and zooming stay fluid), and asks the :class:`app.map.tile_loader.TileLoader`
for the missing tiles, which arrive later through a signal.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPixmap
from PySide6.QtWidgets import QApplication, QWidget

from app.map.qtutil import editing_an_item, qimage
from app.model.tiles import (
    Stretch,
    TileCache,
    TileKey,
    level_for_scale,
    max_level,
    stretch_to_rgba,
    tile_window,
    visible_tiles,
)
from app.model.viewmath import ViewTransform

log = logging.getLogger("linesnap")

__all__ = ["RasterViewer"]

WHEEL_ZOOM_PER_DEGREE = 1.0025
KEY_ZOOM = 1.25
_COMMAND_MODIFIERS = (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
                      | Qt.KeyboardModifier.MetaModifier)
RAW_CACHE_BYTES = 192 * 2**20
IMAGE_CACHE_BYTES = 96 * 2**20


class RasterViewer(QWidget):
    """Shows one raster; maps mouse input to raster positions (x, y) in pixels.

    Signals
    -------
    clicked(x, y, straight)
        A left click (press and release without dragging); ``straight`` is
        True while Shift is held.
    picked(x, y)
        A left click with Ctrl held: pick (select) what lies there.
    double_clicked(x, y)
    right_clicked(x, y)
        A right click without dragging (finishes the line, as in QGIS).
    hovered(x, y, straight)
        The cursor moved over the view (also when Shift is pressed or released).
    left()
        The cursor left the view.
    view_changed()
        Zoom or pan changed.
    painted()
        A paint finished (benchmarks and tests time the drawing with it).
    """

    clicked = Signal(float, float, bool)
    picked = Signal(float, float)
    double_clicked = Signal(float, float)
    right_clicked = Signal(float, float)
    hovered = Signal(float, float, bool)
    left = Signal()
    view_changed = Signal()
    painted = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setCursor(Qt.CursorShape.CrossCursor)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.setMinimumSize(200, 150)
        self.transform = ViewTransform()
        self.overlay_painters: list = []
        self._loader = None
        self._size = (0, 0)
        self._bands = None
        self._stretch: Stretch | None = None
        self._raw = TileCache(RAW_CACHE_BYTES)
        self._images = TileCache(IMAGE_CACHE_BYTES)
        # The tiles as last drawn: repaints that only change overlays (the tool's
        # lines, the preview) reuse it instead of drawing every tile again.
        self._layer: QPixmap | None = None
        self._layer_key = None
        self._tiles_version = 0
        self._press = None  # (view position, button) of the pressed button
        self._panning = False
        self._swallow_release = False
        self._cursor_view: QPointF | None = None

    # ------------------------------------------------------------ the raster
    def set_loader(self, loader) -> None:
        """Show the raster that ``loader`` (a TileLoader, or None) reads; fits it in the view."""
        if self._loader is not None:
            self._loader.loaded.disconnect(self._on_loaded)
        self._loader = loader
        self._raw.clear()
        self._images.clear()
        self._stretch = None
        self._size = (loader.width, loader.height) if loader is not None else (0, 0)
        if loader is not None:
            loader.loaded.connect(self._on_loaded)
            self.fit()
        self._tiles_version += 1
        self.update()

    def reload_tiles(self) -> None:
        """Drop every cached tile, to read the visible ones again (overviews were built); the view stays."""
        self._raw.clear()
        self._images.clear()
        self._tiles_version += 1
        self.update()

    @property
    def raster_size(self) -> tuple[int, int]:
        """(width, height) of the raster shown, (0, 0) without one."""
        return self._size

    def set_display(self, bands: tuple[int, ...] | None, stretch: Stretch | None) -> None:
        """Draw ``bands`` (None: the intensity band) with ``stretch`` (None: draw nothing yet)."""
        if bands != self._bands:
            self._raw.clear()
        self._bands = bands
        self._stretch = stretch
        self._images.clear()
        self._tiles_version += 1
        self.update()

    def _on_loaded(self, job, data) -> None:
        if isinstance(job, TileKey) and job.bands == self._bands:
            self._raw.put(job, data, data.nbytes)
            self._tiles_version += 1
            self.update()

    # --------------------------------------------------------- coordinates
    def image_to_view(self, x: float, y: float) -> QPointF:
        """View position of raster position (x, y) px."""
        return QPointF(*self.transform.image_to_view(x, y))

    def view_to_image(self, point: QPointF) -> tuple[float, float]:
        """Raster position (x, y) px under a view position."""
        return self.transform.view_to_image(point.x(), point.y())

    def contains_image_point(self, x: float, y: float) -> bool:
        """True when (x, y) lies on the raster."""
        return 0 <= x <= self._size[0] and 0 <= y <= self._size[1]

    def set_transform(self, transform: ViewTransform) -> None:
        """Zoom and pan to ``transform``."""
        if transform != self.transform:
            self.transform = transform
            self.view_changed.emit()
            self.update()

    def fit(self) -> None:
        """Show the whole raster."""
        if self._size != (0, 0):
            self.zoom_to_rect((0, 0, self._size[0], self._size[1]))

    def zoom_to_rect(self, rect: tuple[float, float, float, float], margin: float = 0.02) -> None:
        """Show raster rectangle (x0, y0, x1, y1) px whole."""
        self.set_transform(ViewTransform.fitting(rect, max(self.width(), 1), max(self.height(), 1), margin))

    def centre_on(self, xy: tuple[float, float], scale: float | None = None) -> None:
        """Put raster point ``xy`` at the view's centre, at ``scale`` (default: the current one)."""
        transform = self.transform if scale is None else ViewTransform(scale)
        self.set_transform(transform.centred_on(xy[0], xy[1], self.width(), self.height()))

    def one_to_one(self) -> None:
        """One raster pixel per screen pixel, keeping the view's centre."""
        self.zoom_by(1.0 / self.transform.scale)

    def zoom_by(self, factor: float, anchor: QPointF | None = None) -> None:
        """Multiply the zoom by ``factor`` about view position ``anchor`` (default: the centre)."""
        anchor = anchor or QPointF(self.width() / 2, self.height() / 2)
        self.set_transform(self.transform.zoomed(factor, anchor.x(), anchor.y()))

    def pan_by(self, dx: float, dy: float) -> None:
        """Move the content by (dx, dy) view pixels."""
        self.set_transform(self.transform.panned(dx, dy))

    # ------------------------------------------------------------- painting
    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        try:
            painter.drawPixmap(0, 0, self._tile_layer())
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            for paint_overlay in self.overlay_painters:
                painter.save()
                try:
                    paint_overlay(painter, self)
                except Exception:  # a broken overlay must not stop the map from drawing
                    log.exception("overlay painter %r failed", paint_overlay)
                painter.restore()
        finally:
            painter.end()
        self.painted.emit()

    def _tile_layer(self) -> QPixmap:
        """The tiles drawn for the current view (redrawn only when the view or the tiles changed)."""
        ratio = self.devicePixelRatioF()
        key = (self.transform, self.width(), self.height(), ratio, self._tiles_version)
        if self._layer is None or key != self._layer_key:
            layer = QPixmap(max(1, round(self.width() * ratio)), max(1, round(self.height() * ratio)))
            layer.setDevicePixelRatio(ratio)
            layer.fill(QColor(40, 40, 44))
            if self._loader is not None and self._stretch is not None:
                painter = QPainter(layer)
                try:
                    self._paint_tiles(painter)
                finally:
                    painter.end()
            self._layer, self._layer_key = layer, key
        return self._layer

    def _paint_tiles(self, painter: QPainter) -> None:
        width, height = self._size
        top = max_level(width, height)
        level = level_for_scale(self.transform.scale, top)
        smooth = self.transform.scale < 1.0
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, smooth)
        rect = self.transform.visible_rect(self.width(), self.height())
        missing = []
        for row, col in visible_tiles(level, rect, width, height):
            key = TileKey(level, row, col, self._bands)
            image = self._tile_image(key)
            if image is None:
                missing.append(key)
                self._paint_stand_in(painter, key, top)
            else:
                self._draw(painter, key, image)
        if missing:
            self._loader.request(missing)

    def _tile_image(self, key: TileKey) -> QImage | None:
        image = self._images.get(key)
        if image is None:
            data = self._raw.get(key)
            if data is None:
                return None
            image = qimage(stretch_to_rgba(data, self._stretch))
            self._images.put(key, image, image.sizeInBytes())
        return image

    def _draw(self, painter: QPainter, key: TileKey, image: QImage, source: QRectF | None = None,
              target_key: TileKey | None = None) -> None:
        col_off, row_off, win_w, win_h, _, _ = tile_window(target_key or key, *self._size)
        target = self._device_aligned(self.image_to_view(col_off, row_off),
                                      self.image_to_view(col_off + win_w, row_off + win_h))
        painter.drawImage(target, image, source or QRectF(image.rect()))

    def _device_aligned(self, top_left: QPointF, bottom_right: QPointF) -> QRectF:
        """The tile's target rectangle with its edges on whole device pixels (shared edges round alike).

        Fractional edges (after a sub-pixel pan, or at a fractional device pixel
        ratio) could leave a line of background between neighbouring tiles.
        """
        ratio = self.devicePixelRatioF()
        x0, y0, x1, y1 = (round(v * ratio) / ratio for v in (top_left.x(), top_left.y(),
                                                             bottom_right.x(), bottom_right.y()))
        return QRectF(x0, y0, x1 - x0, y1 - y0)

    def _paint_stand_in(self, painter: QPainter, key: TileKey, top: int) -> None:
        """Fill a missing tile from a cached coarser tile, else from cached finer ones."""
        for up in range(1, top - key.level + 1):
            parent = TileKey(key.level + up, key.row >> up, key.col >> up, key.bands)
            image = self._tile_image(parent) if parent in self._raw else None
            if image is not None:
                self._draw(painter, parent, image, self._part_of_parent(key, parent, image), key)
                return
        if key.level == 0:
            return
        for dr in (0, 1):
            for dc in (0, 1):
                child = TileKey(key.level - 1, 2 * key.row + dr, 2 * key.col + dc, key.bands)
                image = self._tile_image(child) if child in self._raw else None
                if image is not None:
                    self._draw(painter, child, image)

    def _part_of_parent(self, key: TileKey, parent: TileKey, image: QImage) -> QRectF:
        """The rectangle of ``parent``'s image (output pixels) that covers tile ``key``."""
        c0, r0, w, h, _, _ = tile_window(key, *self._size)
        pc0, pr0, pw, ph, _, _ = tile_window(parent, *self._size)
        sx, sy = image.width() / pw, image.height() / ph
        return QRectF((c0 - pc0) * sx, (r0 - pr0) * sy, w * sx, h * sy)

    # ---------------------------------------------------------------- input
    def mousePressEvent(self, event) -> None:
        self.setFocus(Qt.FocusReason.MouseFocusReason)
        self._press = (event.position(), event.button())
        self._panning = event.button() == Qt.MouseButton.MiddleButton

    def mouseMoveEvent(self, event) -> None:
        position = event.position()
        if self._press is not None:
            start, _ = self._press
            moved = (position - start).manhattanLength()
            if not self._panning and moved >= QApplication.startDragDistance():
                self._panning = True
            if self._panning:
                delta = position - start
                self._press = (position, self._press[1])
                self.pan_by(delta.x(), delta.y())
                return
        self._cursor_view = position
        self._take_keys()
        self._emit_hover(event.modifiers())

    def mouseReleaseEvent(self, event) -> None:
        press, self._press = self._press, None
        was_panning, self._panning = self._panning, False
        if self._swallow_release:
            self._swallow_release = False
            return
        if press is None or was_panning:
            return
        x, y = self.view_to_image(event.position())
        if event.button() == Qt.MouseButton.RightButton:
            self.right_clicked.emit(x, y)
            return
        if event.button() != Qt.MouseButton.LeftButton:
            return
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.picked.emit(x, y)
            return
        straight = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        self.clicked.emit(x, y, straight)

    def mouseDoubleClickEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._swallow_release = True  # the second release of a double-click is no click
            self._press = None
            x, y = self.view_to_image(event.position())
            self.double_clicked.emit(x, y)

    def wheelEvent(self, event) -> None:
        degrees = event.angleDelta().y() / 8.0
        if degrees:
            self.zoom_by(WHEEL_ZOOM_PER_DEGREE ** (degrees * 4), event.position())
        event.accept()

    def _take_keys(self) -> None:
        """The map takes the keys (Enter, Esc, Backspace) once the cursor moves over it, without a click.

        Not while a name is being typed in a table (that edit keeps the focus),
        and not on a mere enter event: a window that opens under a resting cursor
        leaves the focus where the keyboard put it.
        """
        if not self.hasFocus() and self.isActiveWindow() and not editing_an_item(QApplication.focusWidget()):
            self.setFocus(Qt.FocusReason.MouseFocusReason)

    def leaveEvent(self, event) -> None:
        self._cursor_view = None
        self.left.emit()

    def keyPressEvent(self, event) -> None:
        step = max(40.0, self.width() / 8)
        moves = {Qt.Key.Key_Left: (step, 0), Qt.Key.Key_Right: (-step, 0),
                 Qt.Key.Key_Up: (0, step), Qt.Key.Key_Down: (0, -step)}
        zooms = {Qt.Key.Key_Plus: lambda: self.zoom_by(KEY_ZOOM), Qt.Key.Key_Equal: lambda: self.zoom_by(KEY_ZOOM),
                 Qt.Key.Key_Minus: lambda: self.zoom_by(1 / KEY_ZOOM), Qt.Key.Key_F: self.fit,
                 Qt.Key.Key_1: self.one_to_one}
        if event.key() in moves:
            self.pan_by(*moves[event.key()])
        elif event.key() in zooms and not event.modifiers() & _COMMAND_MODIFIERS:
            zooms[event.key()]()
        elif event.key() == Qt.Key.Key_Shift:
            self._emit_hover(event.modifiers() | Qt.KeyboardModifier.ShiftModifier)
        else:
            super().keyPressEvent(event)

    def keyReleaseEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Shift:
            self._emit_hover(event.modifiers() & ~Qt.KeyboardModifier.ShiftModifier)
        super().keyReleaseEvent(event)

    def _emit_hover(self, modifiers) -> None:
        if self._cursor_view is not None:
            x, y = self.view_to_image(self._cursor_view)
            self.hovered.emit(x, y, bool(modifiers & Qt.KeyboardModifier.ShiftModifier))

    def resizeEvent(self, event) -> None:
        old, new = event.oldSize(), event.size()
        if old.width() > 0 and old.height() > 0:
            # Keep the raster point at the centre where it was.
            cx, cy = self.transform.view_to_image(old.width() / 2, old.height() / 2)
            self.transform = self.transform.centred_on(cx, cy, new.width(), new.height())
        elif self._size != (0, 0):
            self.fit()
        super().resizeEvent(event)
