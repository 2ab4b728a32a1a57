"""The overlay: low-confidence pieces dashed, the estimated ribbon on demand; the switches that show it."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from app.map.overlays import CURRENT, FEATURE, RIBBON, ToolOverlay
from app.map.viewer import RasterViewer
from app.model.pieces import PieceOutcome
from app.model.tool import ExtractionTool
from core.extraction.estimate import RoadEstimate

Y = 60.5  # the lines run along the middle of pixel row 60, from x = 20 to x = 180


def estimate(confidence, width_px=14.0):
    return RoadEstimate(width_px, "bright", 1.0, "straight", confidence)


def draw(tool, clicks, confidences, finish=True):
    """A feature through ``clicks`` along y = Y, one extracted piece per confidence."""
    tool.click((clicks[0], Y))
    for x, confidence in zip(clicks[1:], confidences):
        tool.click((x, Y))
        piece = tool.current.pieces[-1]
        start = tool.piece_start(tool.current, len(tool.current.pieces) - 1)
        tool.complete_piece(piece.id, PieceOutcome(np.array([start, (x, Y)]), score=1.0,
                                                   estimate=estimate(confidence), confidence=confidence))
    if finish:
        tool.finish()


@pytest.fixture
def scene(qtbot):
    tool = ExtractionTool(settings=None)
    viewer = RasterViewer()
    viewer.resize(200, 120)
    qtbot.addWidget(viewer)
    overlay = ToolOverlay(tool)
    viewer.overlay_painters.append(overlay)
    return tool, viewer, overlay


def colours_along(viewer, y, xs):
    image = settled(viewer, viewer.overlay_painters[0])
    return [image.pixelColor(x, y) for x in xs]


def near(colour, target, tolerance=40) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(colour.getRgb()[:3], target.getRgb()[:3]))


def share(colours, target) -> float:
    return float(np.mean([near(c, target) for c in colours]))


def test_a_low_confidence_piece_is_dashed_and_a_confident_one_solid(scene):
    tool, viewer, _ = scene
    draw(tool, [20, 100, 180], [0.9, 0.2])
    along = colours_along(viewer, int(Y), range(100, 180))
    assert share(colours_along(viewer, int(Y), range(25, 95)), FEATURE) > 0.95  # solid
    assert 0.3 < share(along, FEATURE) < 0.8  # dashes, the dark casing between them
    tool.click((20, Y + 30))  # and the piece in progress
    tool.click((100, Y + 30))
    tool.complete_piece(tool.current.pieces[0].id, PieceOutcome(np.array([(20, Y + 30), (100, Y + 30)]),
                                                                confidence=0.1))
    assert 0.3 < share(colours_along(viewer, int(Y) + 30, range(25, 95)), CURRENT) < 0.8


def test_the_estimated_ribbon_is_drawn_on_demand(scene):
    tool, viewer, overlay = scene
    draw(tool, [20, 180], [0.9])  # a finished feature, 14 px wide
    tool.click((20, Y + 40))  # and one in progress, 10 px wide
    tool.click((180, Y + 40))
    piece = tool.current.pieces[0]
    tool.complete_piece(piece.id, PieceOutcome(np.array([(20, Y + 40), (180, Y + 40)]),
                                               estimate=estimate(0.9, 10.0), confidence=0.9))
    edges = [int(Y) - 7, int(Y) + 7, int(Y) + 35, int(Y) + 45]
    assert not any(share(colours_along(viewer, y, range(40, 160)), RIBBON) > 0.5 for y in edges)
    overlay.options.show_ribbon = True
    viewer.update()
    assert all(share(colours_along(viewer, y, range(40, 160)), RIBBON) > 0.9 for y in edges)


def test_no_ribbon_where_the_estimate_has_no_width(scene):
    tool, viewer, overlay = scene
    tool.click((20, Y))
    tool.click((180, Y))
    tool.complete_piece(tool.current.pieces[0].id, PieceOutcome(np.array([(20, Y), (180, Y)]),
                                                                estimate=estimate(0.9, None), confidence=0.9))
    overlay.options.show_ribbon = True
    for y in range(int(Y) - 20, int(Y) + 20):
        if abs(y - Y) > 4:
            assert share(colours_along(viewer, y, range(40, 160)), RIBBON) < 0.1


def test_the_ribbon_switches_of_the_view_menu_the_display_panel_and_r_agree(qtbot, make_window):
    window = make_window()
    options = window.controller.overlay.options
    checkbox, action = window.display_panel.ribbon, window.ribbon_action
    assert not options.show_ribbon and not checkbox.isChecked() and not action.isChecked()
    assert action.shortcut().toString() == "R" and action in window.menuBar().actions()[2].menu().actions()
    checkbox.setChecked(True)
    assert options.show_ribbon and action.isChecked()
    action.trigger()
    assert not options.show_ribbon and not checkbox.isChecked()
    window.activateWindow()
    window.viewer.setFocus()
    qtbot.waitUntil(window.viewer.hasFocus)
    qtbot.keyClick(window.viewer, Qt.Key.Key_R)
    assert options.show_ribbon and checkbox.isChecked() and action.isChecked()


def test_ctrl_click_selects_the_line_under_the_cursor(qtbot, make_window):
    window = make_window()
    window.open_image(None)
    tool = window.tool
    tool.add_features([("a", np.array([[100.0, 100.0], [400.0, 100.0]]), {}),
                       ("b", np.array([[100.0, 300.0], [400.0, 300.0]]), {})])
    viewer = window.viewer
    viewer.centre_on((250.0, 200.0), scale=1.0)
    for y, name in ((302.0, "b"), (99.0, "a")):
        qtbot.mouseClick(viewer, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier,
                         viewer.image_to_view(250.0, y).toPoint())
        assert tool.feature(tool.selected_id).name == name and tool.current is None  # no feature started
    qtbot.mouseClick(viewer, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier,
                     viewer.image_to_view(250.0, 200.0).toPoint())
    assert tool.selected_id is None


def test_tiles_follow_finish_undo_and_delete_without_redrawing_everything(scene):
    tool, viewer, overlay = scene
    viewer.resize(600, 400)
    rng = np.random.default_rng(1)
    tool.add_features([("", np.cumsum(rng.normal(0, 5, (6, 2)), axis=0) + rng.uniform(0, 600, 2), {})
                       for _ in range(300)])
    settled(viewer, overlay)
    rendered = overlay.tiles.rendered
    draw(tool, [30, 90], [0.9])  # a new feature at y = 60: painted onto the cached tiles
    image = settled(viewer, overlay)
    assert overlay.tiles.rendered == rendered and near(image.pixelColor(60, int(Y)), FEATURE)
    tool.undo()  # re-renders only the tiles it touched
    image = settled(viewer, overlay)
    assert 0 < overlay.tiles.rendered - rendered <= 2
    fresh, expected = RasterViewer(), ToolOverlay(tool)  # the same features drawn from scratch
    fresh.resize(600, 400)
    fresh.overlay_painters.append(expected)
    assert settled(fresh, expected) == image


def settled(viewer, overlay):
    """The view once every tile is drawn (a repaint renders tiles for a limited time)."""
    for _ in range(100):
        image = viewer.grab().toImage()
        if overlay.tiles.complete:
            return image
    raise AssertionError("the tiles never completed")


def test_many_lines_added_over_many_cached_tiles_drop_the_cache_and_are_drawn(scene, monkeypatch):
    # each added line was tested against every cached tile: 2,000 lines over 1,360 tiles took 3.2 s
    from app.map import line_tiles

    tool, viewer, overlay = scene
    draw(tool, [20, 180], [0.9])
    settled(viewer, overlay)
    cached = dict(overlay.tiles._tiles)
    assert cached
    monkeypatch.setattr(line_tiles, "MAX_EDIT_TESTS", len(cached) * 2)  # three lines past the limit
    tested = []
    monkeypatch.setattr(type(overlay.tiles), "_tile_meets", lambda self, cell, bbox: tested.append(cell) or True)
    tool.add_features([("", np.array([[20.0, y], [180.0, y]]), {}) for y in (20.0, 30.0, 100.0)])
    viewer.grab()
    assert tested == []  # no line tested against the tiles: they were dropped
    monkeypatch.undo()
    along = colours_along(viewer, 100, range(40, 160))
    assert share(along, FEATURE) > 0.8  # the new line is drawn on the new tiles
