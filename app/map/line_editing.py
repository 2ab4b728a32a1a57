"""Snapping and vertex editing on the map: the mouse side of :mod:`app.model.snapping` and :mod:`app.model.line_edits`.

- Clicks and the cursor snap, within :attr:`LineEditing.tolerance_px` screen
  pixels, to the finished lines' vertices, ends and segments; a marker shows
  where (a square on a vertex or an end, a ring on a segment).
- The selected line (Ctrl+click), while no line is being drawn, shows its
  vertices as handles and its segments' midpoints as smaller ones: drag a
  vertex to move it, drag a midpoint to insert a vertex there, right-click a
  vertex to delete it; a plain click on a handle is an ordinary click.
  Dragged vertices snap to the other lines.
- Menu commands: reverse the selected line, split it at the vertex under the
  cursor, merge it with a line that shares an end, continue it from either end.

The map's own mouse handling (clicks, pans) never sees the presses this takes:
it filters the viewer's events.  Every edit is one undoable step of the tool.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QApplication

from app.map.style import CASING, SELECTED, path_of, stroke
from app.model import line_edits
from app.model.snapping import DEFAULT_SNAP_TOLERANCE_PX, find_reference_snap, find_snap, handle_at, touching_lines

__all__ = ["LineEditing", "SNAP_MARKER"]

SNAP_MARKER = QColor(255, 0, 255)
HANDLE_PX = 4.0
#: More vertices in view than this and the selected line shows no handles (they would cover it; each costs a
#: draw on every repaint: 100,000 took 2 s a frame).
MAX_HANDLES = 2000


class LineEditing(QObject):
    """Snapping and vertex editing for a tool drawn on a viewer.

    Parameters
    ----------
    tool : app.model.tool.ExtractionTool
    viewer : app.map.viewer.RasterViewer
    index : app.model.feature_index.FeatureIndex
        Of the same tool (the overlay's), used for every snap and hit test.

    Signals
    -------
    message(text)
        An edit that could not be made, and why (for the status bar).
    """

    message = Signal(str)

    def __init__(self, tool, viewer, index, parent=None):
        super().__init__(parent)
        self.tool, self.viewer, self.index = tool, viewer, index
        #: Snapping distance in screen pixels; snapping is off when ``snapping`` is False.
        self.tolerance_px = DEFAULT_SNAP_TOLERANCE_PX
        self.snapping = True
        self.snap_target = None  # where the cursor snaps now (drawn as the marker)
        #: ``() -> (vertices (n, 2), segments (m, 2, 2))`` px of the visible reference layers, snapped to after
        #: the work layer (set by the window's project actions); None: no reference layers.
        self.reference_targets = None
        self._cursor_xy = None
        self._drag = None  # {"feature", "handle", "press", "xy", "moved"} while a handle is dragged
        self._delete = None  # (feature id, vertex) of a right press on a vertex
        viewer.installEventFilter(self)
        viewer.overlay_painters.append(self.paint)

    # ------------------------------------------------------------- snapping
    def _raster_tolerance(self) -> float:
        return self.tolerance_px / self.viewer.transform.scale

    def snapped(self, x: float, y: float, exclude=()) -> tuple[float, float]:
        """Raster point (x, y) snapped to the nearest line within the tolerance; updates the marker."""
        self._cursor_xy = (x, y)
        self.index.catch_up()
        tolerance = self._raster_tolerance() if self.snapping else 0.0
        target = find_snap(self.index, (x, y), tolerance, exclude)
        if target is None and self.reference_targets is not None:
            vertices, segments, near = self.reference_targets()
            target = find_reference_snap(vertices, segments, (x, y), tolerance, near)
        if target != self.snap_target:
            self.snap_target = target
            self.viewer.update()
        return target.xy if target is not None else (x, y)

    def clear_marker(self) -> None:
        """The cursor left the map: no marker."""
        self._cursor_xy = None
        if self.snap_target is not None:
            self.snap_target = None
            self.viewer.update()

    # ------------------------------------------------------------- handles
    def _editable_vertices(self):
        """(feature id, vertices) of the selected line when its handles are live, else None."""
        if self.tool.current is not None or self.tool.selected_id is None:
            return None
        self.index.catch_up()
        try:
            return self.tool.selected_id, self.index.entry(self.tool.selected_id)[1]
        except KeyError:
            return None

    def handle_under(self, x: float, y: float):
        """``(feature id, ("vertex" | "midpoint", i))`` of the selected line's handle at raster (x, y), or None."""
        editable = self._editable_vertices()
        if editable is None:
            return None
        handle = handle_at(editable[1], (x, y), (HANDLE_PX + 3.0) / self.viewer.transform.scale)
        return None if handle is None else (editable[0], handle)

    def eventFilter(self, watched, event) -> bool:
        kind = event.type()
        if kind == QEvent.Type.MouseButtonPress:
            return self._press(event)
        if kind == QEvent.Type.MouseMove and self._drag is not None:
            return self._move(event)
        if kind == QEvent.Type.MouseButtonRelease and (self._drag is not None or self._delete is not None):
            return self._release(event)
        return False

    def _press(self, event) -> bool:
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            return False
        x, y = self.viewer.view_to_image(event.position())
        hit = self.handle_under(x, y)
        if hit is None:
            return False
        feature_id, handle = hit
        self.viewer.setFocus(Qt.FocusReason.MouseFocusReason)
        if event.button() == Qt.MouseButton.LeftButton:
            self._drag = {"feature": feature_id, "handle": handle, "press": event.position(), "xy": (x, y),
                          "moved": False}
            return True
        if event.button() == Qt.MouseButton.RightButton and handle[0] == "vertex":
            self._delete = (feature_id, handle[1])
            return True
        return False

    def _move(self, event) -> bool:
        drag = self._drag
        if (event.position() - drag["press"]).manhattanLength() >= QApplication.startDragDistance():
            drag["moved"] = True
        x, y = self.viewer.view_to_image(event.position())
        drag["xy"] = self.snapped(x, y, exclude={drag["feature"]})
        self.viewer.update()
        return True

    def _release(self, event) -> bool:
        drag, self._drag = self._drag, None
        delete, self._delete = self._delete, None
        if drag is not None and drag["moved"]:
            kind, i = drag["handle"]
            edit = line_edits.moved_vertex if kind == "vertex" else line_edits.inserted_vertex
            self._apply(edit, drag["feature"], i, drag["xy"])
        elif delete is not None and event.button() == Qt.MouseButton.RightButton:
            self._apply(line_edits.deleted_vertex, *delete)
        elif drag is not None:  # a plain click on a handle: an ordinary click (it starts a line there)
            x, y = self.viewer.view_to_image(event.position())
            self.viewer.clicked.emit(x, y, bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier))
        self.viewer.update()
        return True

    def _apply(self, edit, *args) -> bool:
        try:
            self.tool.apply_edit(edit, *args)
        except (line_edits.LineEditError, KeyError) as err:
            self.message.emit(str(err).strip("'\""))
            return False
        return True

    # ------------------------------------------------------------- commands
    def _selected(self) -> int | None:
        if self.tool.selected_id is None:
            self.message.emit("select a line first (Ctrl+click on it)")
        return self.tool.selected_id

    def reverse_selected(self) -> None:
        """Edit > Reverse Line."""
        if (feature_id := self._selected()) is not None:
            self._apply(line_edits.reversed_line, feature_id)

    def split_at_cursor(self) -> None:
        """Edit > Split Line at Vertex: the selected line, at its vertex under the cursor."""
        hit = self.handle_under(*self._cursor_xy) if self._cursor_xy is not None else None
        if hit is None or hit[1][0] != "vertex":
            self.message.emit("split: select a line and point at one of its inner vertices")
            return
        self._apply(line_edits.split_line, hit[0], hit[1][1])

    def merge_selected(self) -> None:
        """Edit > Merge Lines: the selected line with the (first) other line that shares one of its ends."""
        if (feature_id := self._selected()) is None:
            return
        self.index.catch_up()
        others = touching_lines(self.index, feature_id, line_edits.ENDS_MEET_PX)
        if not others:
            self.message.emit("merge: no other line ends where this one ends (snap an end onto it first)")
            return
        self._apply(line_edits.merged_lines, feature_id, others[0])

    def continue_selected(self, at_start: bool) -> None:
        """Edit > Continue from Start / End: the selected line becomes the line in progress again."""
        if (feature_id := self._selected()) is None:
            return
        try:
            self.tool.reopen(feature_id, at_start=at_start)
        except line_edits.LineEditError as err:
            self.message.emit(str(err))

    # ------------------------------------------------------------- drawing
    def paint(self, painter, viewer) -> None:
        """The selected line's handles, a dragged vertex's new segments and the snap marker."""
        editable = self._editable_vertices()
        if editable is not None:
            self._paint_handles(painter, viewer, editable[1])
        if self.snap_target is not None:
            centre = viewer.image_to_view(*self.snap_target.xy)
            painter.setPen(QPen(SNAP_MARKER, 2.0))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            if self.snap_target.kind == "segment":
                painter.drawEllipse(centre, 7.0, 7.0)
            else:
                painter.drawRect(QRectF(centre.x() - 7.0, centre.y() - 7.0, 14.0, 14.0))

    def _paint_handles(self, painter, viewer, vertices) -> None:
        if self._drag is not None and self._drag["moved"]:
            kind, i = self._drag["handle"]
            before, after = (i - 1, i + 1) if kind == "vertex" else (i, i + 1)
            ends = [vertices[k] for k in (before, after) if 0 <= k < len(vertices)]
            for end in ends:
                a, b = viewer.image_to_view(*end), viewer.image_to_view(*self._drag["xy"])
                stroke(painter, path_of([a.x(), b.x()], [a.y(), b.y()]), SELECTED, 1.5, dashed=True)
        t = viewer.transform
        midpoints = (vertices[:-1] + vertices[1:]) / 2
        in_view = [(points - (t.origin_x, t.origin_y)) * t.scale for points in (vertices, midpoints)]
        in_view = [p[(p[:, 0] > -HANDLE_PX) & (p[:, 0] < viewer.width() + HANDLE_PX) & (p[:, 1] > -HANDLE_PX)
                     & (p[:, 1] < viewer.height() + HANDLE_PX)] for p in in_view]  # only the handles in view
        if len(in_view[0]) > MAX_HANDLES:  # a solid band at this zoom (a long line's every vertex): zoom in to edit
            return
        painter.setPen(QPen(CASING, 1.5))
        painter.setBrush(QColor(255, 255, 255))
        for x, y in in_view[0].tolist():
            painter.drawRect(QRectF(x - HANDLE_PX, y - HANDLE_PX, 2 * HANDLE_PX, 2 * HANDLE_PX))
        painter.setBrush(SELECTED)
        for x, y in in_view[1].tolist():
            painter.drawEllipse(QPointF(x, y), HANDLE_PX - 1.5, HANDLE_PX - 1.5)
