"""Defects an analyst hit while digitizing (issue 13): sessions, keys, status bar, export and import, docks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyogrio
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication

from app import dialogs
from app.model.document import sample_scene_path
from tests.app.conftest import move_to_image, wait_idle, wait_pieces


def _draw_straight_lines(window, count=2):
    for k in range(count):
        window.tool.click((300.0 + 40 * k, 300.0))
        window.tool.click((420.0 + 40 * k, 330.0), straight=True)
        window.tool.click((500.0 + 40 * k, 420.0), straight=True)
        window.tool.finish()


def test_the_session_stores_the_image_path_absolute(make_window, tmp_path, monkeypatch):
    shutil.copy(sample_scene_path(), tmp_path / "scene.tif")
    monkeypatch.chdir(tmp_path)
    window = make_window()
    assert window.open_image("scene.tif")  # as typed on the command line, relative to the folder
    _draw_straight_lines(window, 1)
    window.autosave()
    saved = json.loads(window.session.path.read_text())
    assert saved["image"] == str(tmp_path / "scene.tif")


def test_the_map_takes_the_keys_when_the_cursor_moves_over_it(qtbot, make_window):
    window = make_window()
    window.open_image(None)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    window.settings_panel.setFocus()
    spin = window.settings_panel.focusWidget() or window.settings_panel
    spin.setFocus()
    assert not window.viewer.hasFocus()
    qtbot.mouseMove(window.viewer, QPoint(window.viewer.width() // 2 + 7, window.viewer.height() // 2 + 5))
    assert window.viewer.hasFocus()


def test_right_click_finishes_the_line(qtbot, make_window):
    window = make_window()
    window.open_image(None)
    window.tool.click((300.0, 300.0))
    window.tool.click((420.0, 330.0), straight=True)
    where = window.viewer.image_to_view(600, 600).toPoint()
    qtbot.mouseClick(window.viewer, Qt.MouseButton.RightButton, Qt.KeyboardModifier.NoModifier, where)
    assert window.tool.current is None and len(window.tool.features) == 1


def test_reimport_offers_to_skip_the_lines_already_here(qtbot, make_window, tmp_path, monkeypatch):
    window = make_window()
    window.open_image(None)
    _draw_straight_lines(window, 2)
    out = tmp_path / "lines.geojson"
    window.feature_io.export_geojson(out)
    asked = []
    monkeypatch.setattr(dialogs, "ask_skip_duplicates", lambda parent, n, total: asked.append((n, total)) or "skip")
    assert window.feature_io.import_geojson(out) == []
    assert asked == [(2, 2)] and len(window.tool.features) == 2
    assert "2 already here skipped" in window.status.currentMessage()
    monkeypatch.setattr(dialogs, "ask_skip_duplicates", lambda parent, n, total: "add")
    assert len(window.feature_io.import_geojson(out)) == 2


def test_a_status_message_is_not_cut_off_by_the_position_read_outs(qtbot, make_window):
    window = make_window()  # 1200 px wide
    window.open_image(None)  # georeferenced: pixel, map and lon/lat read-outs
    wait_idle(qtbot, window)
    window.status.clearMessage()  # (the image's own message would keep them hidden)
    move_to_image(qtbot, window, 700, 700)
    assert window.status.lonlat_label.isVisibleTo(window.status)
    message = "imported 9 features from some_long_file_name_of_roads.geojson; 3 of them lie outside the image"
    window.status.showMessage(message, 5000)
    assert window.status.message_room_px() >= window.status.fontMetrics().horizontalAdvance(message)
    window.status.clearMessage()
    assert window.status.lonlat_label.isVisibleTo(window.status)  # back once the message is gone
    window.open_image(None)  # the read-outs empty, then a message, then the cursor comes onto the image
    wait_idle(qtbot, window)
    window.status.showMessage(message, 5000)
    move_to_image(qtbot, window, 650, 650)
    assert window.status.pixel_label.isVisibleTo(window.status)
    assert window.status.message_room_px() >= window.status.fontMetrics().horizontalAdvance(message)


def test_the_status_bar_forgets_the_previous_images_position(qtbot, make_window, tmp_path):
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    move_to_image(qtbot, window, 640, 655)  # not where the previous test left the cursor
    assert window.status.pixel_label.text()
    knapsack = next(i for i in range(window.tabs.count()) if window.tabs.tabText(i) == "Knapsack")
    window.tabs.setCurrentIndex(knapsack)
    assert not window.status.pixel_label.isVisibleTo(window.status)
    window.tabs.setCurrentIndex(0)
    move_to_image(qtbot, window, 600, 600)
    shutil.copy(sample_scene_path(), tmp_path / "other.tif")
    window.open_image(str(tmp_path / "other.tif"))
    assert not window.status.pixel_label.isVisibleTo(window.status) and not window.status.lonlat_label.text()


def test_the_export_dialog_proposes_a_folder_and_name_for_this_image(make_window, tmp_path, monkeypatch):
    window = make_window()
    window.open_image(None)
    _draw_straight_lines(window, 1)
    proposals = []
    monkeypatch.setattr(dialogs, "ask_export_path", lambda parent, suggestion: proposals.append(suggestion))
    window.feature_io.export_dialog()
    assert Path(proposals[-1]) == Path.home() / "sample_scene.geojson"  # not the package's resources folder
    (tmp_path / "exports").mkdir()
    window.feature_io.export_geojson(tmp_path / "exports" / "roads.gpkg")
    window.feature_io.export_dialog()
    assert Path(proposals[-1]) == tmp_path / "exports" / "roads.gpkg"  # this image's last export
    shutil.copy(sample_scene_path(), tmp_path / "other.tif")
    window.open_image(str(tmp_path / "other.tif"))
    window.feature_io.export_dialog()
    assert Path(proposals[-1]) == tmp_path / "exports" / "other.gpkg"  # not the previous image's name


def test_a_geopackage_goes_through_import_and_every_format_reads_back(make_window, tmp_path):
    window = make_window()
    window.open_image(None)
    _draw_straight_lines(window, 2)
    before = [window.tool.feature_vertices(f) for f in window.tool.features]
    for extension in (".gpkg", ".shp", ".fgb"):
        out = tmp_path / f"lines{extension}"
        window.feature_io.export_geojson(out)
        info = pyogrio.read_info(out)
        assert info["crs"] == "EPSG:32633" and "name" in info["fields"]
        other = make_window(config_dir=tmp_path / f"other{extension}")
        other.open_image(None)
        added = other.feature_io.import_geojson(out)
        assert [f.name for f in added] == ["Line 1", "Line 2"]
        for feature, vertices in zip(added, before):
            np.testing.assert_allclose(other.tool.feature_vertices(feature), vertices, atol=1e-6)


def test_length_header_and_settings_dock_at_1400_by_900(make_window):
    window = make_window()
    window.resize(1400, 900)
    window.open_image(None)
    QApplication.processEvents()
    model = window.features_panel.model
    assert model.headerData(1, Qt.Orientation.Horizontal) == "Length"  # units are in the values
    scroll = window.settings_dock.widget()
    assert scroll.verticalScrollBar().maximum() == 0  # every setting whole, none cut in half
    assert window.features_panel.table.height() >= 80


def test_escape_twice_drops_the_unfinished_line_from_the_keyboard(qtbot, make_window):
    window = make_window()
    window.open_image(None)
    window.tool.click((300.0, 300.0))
    window.tool.click((420.0, 330.0), straight=True)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    window.viewer.setFocus()
    qtbot.keyClick(window.viewer, Qt.Key.Key_Escape)
    assert window.tool.current is None and window.tool.features == ()


def test_the_status_bar_keeps_describing_the_last_piece_while_the_preview_runs(qtbot, make_window):
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    window.tool.click((600.0, 740.0))
    window.tool.click((800.0, 748.0))
    wait_pieces(qtbot, window)
    piece_text = window.status.estimate_label.text()
    assert piece_text.startswith("auto")
    shown = []
    window.controller.extraction_finished.connect(shown.append)
    window.tool.move_cursor((860.0, 700.0))  # the preview from the piece's end: another estimate, of its own span
    qtbot.waitUntil(lambda: window.tool.preview is not None and window.tool.preview.estimate is not None,
                    timeout=60_000)
    assert shown == [] and window.status.estimate_label.text() == piece_text


def test_a_preview_failure_is_cleared_by_the_next_preview_and_read_outs_leave_it_room(qtbot, make_window):
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    move_to_image(qtbot, window, 700, 700)
    results = []
    window.controller.extraction_finished.connect(results.append)
    window.tool.click((600.0, 740.0))
    window.tool.click((800.0, 748.0))
    wait_pieces(qtbot, window)
    window.status.show_estimate(None)
    failure = type("Report", (), {"message": "no feasible polyline within the corridor of its course between "
                                             "these two points; click closer to the line"})()
    window.controller._on_preview_failed(1, failure)
    message = window.status.currentMessage()
    assert message.startswith("preview: ")
    window.status.show_run(results[-1])  # the estimate's read-out comes back while the message shows
    assert window.status.message_room_px() >= window.status.fontMetrics().horizontalAdvance(message)
    earlier = window.tool.preview  # (a preview shown before the failure: the wait below is for the next one)
    window.tool.move_cursor((860.0, 700.0))
    qtbot.waitUntil(lambda: window.tool.preview is not None and window.tool.preview is not earlier
                    and window.tool.preview.estimate is not None, timeout=60_000)
    assert window.status.currentMessage() == ""
