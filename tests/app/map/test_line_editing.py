"""Snapping and vertex editing with real mouse events on the sample scene (straight pieces: no extraction)."""

from __future__ import annotations

import numpy as np
import pyogrio.raw
import pytest
from PySide6.QtCore import QPoint, Qt

from app.map.line_editing import SNAP_MARKER
from app.map.style import FEATURE
from app.model.viewmath import ViewTransform
from core.vector import read_lines

SHIFT = Qt.KeyboardModifier.ShiftModifier


@pytest.fixture
def window(qtbot, make_window):
    window = make_window()
    window.open_image(None)
    window.tool.add_features([("road", np.array([[100.0, 300.0], [250.0, 300.0], [400.0, 300.0]]), {"lanes": 2})])
    window.viewer.set_transform(ViewTransform(2.0).centred_on(250.0, 300.0, window.viewer.width(),
                                                              window.viewer.height()))
    return window


def view_point(window, xy, dx=0, dy=0) -> QPoint:
    """The view position of raster point ``xy``, moved by (dx, dy) screen pixels."""
    point = window.viewer.image_to_view(*xy).toPoint()
    return QPoint(point.x() + dx, point.y() + dy)


def shift_click(qtbot, window, point: QPoint):
    qtbot.mouseMove(window.viewer, point)
    qtbot.mouseClick(window.viewer, Qt.MouseButton.LeftButton, SHIFT, point)


@pytest.mark.parametrize("scale", [2.0, 0.5])
def test_a_click_snaps_within_the_tolerance_in_screen_pixels(qtbot, window, scale):
    viewer, tool, editing = window.viewer, window.tool, window.controller.editing
    viewer.set_transform(ViewTransform(scale).centred_on(250.0, 300.0, viewer.width(), viewer.height()))
    assert editing.tolerance_px == 10.0
    for offset, snapped in ((6, True), (9, True), (12, False)):
        shift_click(qtbot, window, view_point(window, (400.0, 300.0), dy=offset))
        start = tool.current.start_xy
        assert (start == (400.0, 300.0)) is snapped, (offset, start)
        tool.cancel()
    shift_click(qtbot, window, view_point(window, (175.0, 300.0), dy=-7))  # mid-segment: onto the segment
    x, y = tool.current.start_xy
    assert y == pytest.approx(300.0) and abs(x - 175.0) < 1.0 / window.viewer.transform.scale
    tool.cancel()


def test_the_marker_shows_where_the_cursor_snaps(qtbot, window):
    editing = window.controller.editing
    end = view_point(window, (400.0, 300.0))
    qtbot.mouseMove(window.viewer, view_point(window, (400.0, 300.0), dx=5, dy=-4))
    assert editing.snap_target.kind == "end" and editing.snap_target.xy == (400.0, 300.0)
    image = window.viewer.grab().toImage()
    edge = [image.pixelColor(end.x() + 3, end.y() + dy) for dy in range(-9, -4)]  # the square's top side
    assert any(c.red() > 200 and c.green() < 80 and c.blue() > 200 for c in edge), [c.name() for c in edge]
    assert SNAP_MARKER.name() == "#ff00ff"
    qtbot.mouseMove(window.viewer, view_point(window, (400.0, 300.0), dx=60, dy=60))
    assert editing.snap_target is None
    editing.snapping = False
    qtbot.mouseMove(window.viewer, view_point(window, (400.0, 300.0), dx=3))
    assert editing.snap_target is None


def test_a_new_line_starts_on_the_end_of_the_previous_one(qtbot, window):
    tool = window.tool
    shift_click(qtbot, window, view_point(window, (400.0, 300.0), dx=4, dy=3))
    shift_click(qtbot, window, view_point(window, (450.0, 350.0)))
    qtbot.mouseClick(window.viewer, Qt.MouseButton.RightButton, pos=view_point(window, (450.0, 350.0)))
    first = tool.features[-1]
    end = tuple(tool.feature_vertices(first)[-1])
    shift_click(qtbot, window, view_point(window, end, dx=-5, dy=2))
    assert tool.current.start_xy == end and tool.features[0].name == "road"


def drag(qtbot, viewer, start: QPoint, end: QPoint):
    qtbot.mousePress(viewer, Qt.MouseButton.LeftButton, pos=start)
    middle = QPoint((start.x() + end.x()) // 2, (start.y() + end.y()) // 2)
    for point in (middle, end):
        qtbot.mouseMove(viewer, point)
    qtbot.mouseRelease(viewer, Qt.MouseButton.LeftButton, pos=end)


def test_move_insert_and_delete_vertices_with_the_mouse_then_undo(qtbot, window):
    viewer, tool = window.viewer, window.tool
    road = tool.features[0]
    original = tool.feature_vertices(road).copy()
    tool.select(road.id)
    transform = viewer.transform
    old_place = view_point(window, (175.0, 300.0))
    tool.select(None)
    assert is_feature_colour(viewer.grab().toImage().pixelColor(old_place))  # the tiles show the road there
    tool.select(road.id)
    release = view_point(window, (250.0, 300.0), dx=30, dy=40)
    drag(qtbot, viewer, view_point(window, (250.0, 300.0)), release)
    moved = tool.feature_vertices(tool.feature(road.id))
    np.testing.assert_allclose(moved[1], view_to_image(viewer, release))
    np.testing.assert_allclose(moved[1], (250.0 + 30 / transform.scale, 300.0 + 40 / transform.scale), atol=0.5)
    assert len(moved) == 3 and viewer.transform == transform  # the drag moved the vertex, not the map
    assert not is_feature_colour(viewer.grab().toImage().pixelColor(old_place))  # the tiles followed the edit
    midpoint = (moved[1] + moved[2]) / 2
    drag(qtbot, viewer, view_point(window, midpoint), view_point(window, midpoint, dx=0, dy=-50))
    inserted = tool.feature_vertices(tool.feature(road.id))
    assert len(inserted) == 4
    np.testing.assert_allclose(inserted[2], view_to_image(viewer, view_point(window, midpoint, dy=-50)))
    qtbot.mouseClick(viewer, Qt.MouseButton.RightButton, pos=view_point(window, inserted[1]))
    deleted = tool.feature_vertices(tool.feature(road.id))
    np.testing.assert_array_equal(deleted, np.delete(inserted, 1, axis=0))
    assert tool.current is None and tool.feature(road.id).name == "road"
    for _ in range(3):
        tool.undo()
    np.testing.assert_array_equal(tool.feature_vertices(tool.feature(road.id)), original)
    tool.redo()
    np.testing.assert_array_equal(tool.feature_vertices(tool.feature(road.id)), moved)


def is_feature_colour(colour) -> bool:
    return abs(colour.red() - FEATURE.red()) + abs(colour.green() - FEATURE.green()) < 40 and colour.blue() < 80


def view_to_image(viewer, point: QPoint):
    from PySide6.QtCore import QPointF
    return viewer.view_to_image(QPointF(point))


def test_a_dragged_vertex_snaps_to_another_line(qtbot, window):
    viewer, tool = window.viewer, window.tool
    tool.add_features([("track", np.array([[250.0, 360.0], [330.0, 420.0]]), {})])
    road = tool.features[0]
    tool.select(road.id)
    drag(qtbot, viewer, view_point(window, (250.0, 300.0)), view_point(window, (250.0, 360.0), dx=4, dy=-5))
    assert tuple(tool.feature_vertices(tool.feature(road.id))[1]) == (250.0, 360.0)


def test_split_merge_reverse_and_continue_from_the_menus(qtbot, window, tmp_path):
    viewer, tool, editing = window.viewer, window.tool, window.controller.editing
    road = tool.features[0]
    tool.select(road.id)
    qtbot.mouseMove(viewer, view_point(window, (250.0, 300.0), dx=2))
    qtbot.keyClick(viewer, Qt.Key.Key_X)  # split at the vertex under the cursor
    assert [len(tool.feature_vertices(f)) for f in tool.features] == [2, 2]
    tool.select(tool.features[1].id)
    editing.reverse_selected()
    assert tuple(tool.feature_vertices(tool.features[1])[0]) == (400.0, 300.0)
    editing.merge_selected()
    assert len(tool.features) == 1
    np.testing.assert_array_equal(tool.feature_vertices(tool.features[0]), [[400, 300], [250, 300], [100, 300]])
    tool.select(tool.features[0].id)
    editing.continue_selected(at_start=True)
    assert tool.anchor_start() == (400.0, 300.0)
    shift_click(qtbot, window, view_point(window, (450.0, 250.0)))
    tool.finish()
    merged = tool.features[0]
    window.feature_io.export_geojson(tmp_path / "roads.gpkg")  # kept on export, attributes too
    meta, _, geometry, fields = pyogrio.raw.read(tmp_path / "roads.gpkg")
    assert len(geometry) == 1 and fields[list(meta["fields"]).index("lanes")].tolist() == [2]
    (line,) = read_lines(tmp_path / "roads.gpkg", window.document.raster)
    np.testing.assert_allclose(line.vertices_px, tool.feature_vertices(merged), atol=1e-6)
    assert len(line.vertices_px) == 4


def test_an_edit_that_cannot_be_made_says_why(qtbot, window):
    messages = []
    window.controller.message.connect(messages.append)
    window.controller.editing.merge_selected()
    tool = window.tool
    tool.select(tool.features[0].id)
    window.controller.editing.merge_selected()
    assert messages == ["select a line first (Ctrl+click on it)",
                        "merge: no other line ends where this one ends (snap an end onto it first)"]


def test_the_tiles_follow_an_edit_when_a_snap_query_comes_before_the_paint(qtbot, window):
    from app.model import line_edits

    viewer, tool = window.viewer, window.tool
    old_place = view_point(window, (175.0, 300.0))
    assert is_feature_colour(viewer.grab().toImage().pixelColor(old_place))
    tool.apply_edit(line_edits.moved_vertex, tool.features[0].id, 1, (250.0, 340.0))
    window.controller.editing.snapped(300.0, 350.0)  # a hover's snap between the edit and the paint
    assert not is_feature_colour(viewer.grab().toImage().pixelColor(old_place))


class _CountingPainter:
    """Counts the handles a paint draws, and where."""

    def __init__(self):
        self.squares, self.dots = [], []

    def setPen(self, *_):
        pass

    def setBrush(self, *_):
        pass

    def drawRect(self, rect):
        self.squares.append((rect.center().x(), rect.center().y()))

    def drawEllipse(self, centre, *_):
        self.dots.append((centre.x(), centre.y()))


def test_a_selected_line_draws_the_handles_in_view_and_none_past_their_limit(qtbot, window):
    # every vertex's handle was drawn on every repaint, in view or not: 2 s a frame with 100,000 vertices
    from app.map.line_editing import HANDLE_PX, MAX_HANDLES

    viewer, editing = window.viewer, window.controller.editing
    t = viewer.transform
    x0, y0, x1, y1 = t.visible_rect(viewer.width(), viewer.height())
    xs = np.linspace(x0 - 3 * (x1 - x0), x1 + 3 * (x1 - x0), 701)  # a line seven views long across the view
    line = np.column_stack([xs, np.full_like(xs, (y0 + y1) / 2)])
    painter = _CountingPainter()
    editing._paint_handles(painter, viewer, line)
    in_view = [v for v in line if -HANDLE_PX < (v[0] - t.origin_x) * t.scale < viewer.width() + HANDLE_PX]
    assert len(painter.squares) == len(in_view) and 90 <= len(in_view) <= 110
    assert abs(len(painter.dots) - len(in_view)) <= 1
    assert all(-HANDLE_PX < x < viewer.width() + HANDLE_PX for x, _ in painter.squares + painter.dots)
    dense = np.column_stack([np.linspace(x0, x1, MAX_HANDLES + 1), np.full(MAX_HANDLES + 1, (y0 + y1) / 2)])
    painter = _CountingPainter()
    editing._paint_handles(painter, viewer, dense)  # a solid band at this zoom: none
    assert painter.squares == painter.dots == []
