"""The window end to end: open, click, wait for the polyline, compare with core.extract; keys; errors."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableWidget

from app.model.document import sample_demo, sample_scene_path
from tests.app.conftest import click_image, move_to_image, wait_idle, wait_pieces
from tests.shared_data import shared_file


def cell(panel, row, column) -> str:
    """The text of a cell of the features table."""
    return panel.model.index(row, column).data()


def core_extract(image, start, end, settings):
    from core.extraction import extract

    return extract(str(image), start, end, settings)


def assert_piece_matches_core(window, feature, index, image):
    """The piece's vertices and score are exactly what core.extract gives for its clicks and settings."""
    piece = feature.pieces[index]
    start = window.tool.piece_start(feature, index)
    expected = core_extract(image, start, piece.click_end, piece.settings)
    outcome = window.tool.outcomes[piece.id]
    np.testing.assert_allclose(outcome.vertices_px, expected.vertices_px, atol=1e-9)
    assert outcome.score == pytest.approx(expected.score, rel=1e-6)
    return expected


def test_sample_two_clicks_give_the_core_polyline(qtbot, make_window, shown_errors):
    window = make_window()
    assert window.open_image(None)
    wait_idle(qtbot, window)
    demo = sample_demo()
    a = click_image(qtbot, window, *demo["start"])
    b = click_image(qtbot, window, *demo["end"])
    assert window.tool.current is not None and len(window.tool.current.pieces) == 1
    wait_pieces(qtbot, window)
    piece = window.tool.current.pieces[0]
    assert piece.click_start == pytest.approx(a) and piece.click_end == pytest.approx(b)
    expected = assert_piece_matches_core(window, window.tool.current, 0, sample_scene_path())
    assert len(expected.vertices_px) >= window.tool.settings.nodes  # auto refines a bent course on more guides
    assert "last run" in window.status.run_label.text()
    assert shown_errors == []


def test_vegas_chain_undo_redo_and_finish(qtbot, make_window, shown_errors):
    vegas = shared_file("vegas_pan_0.3m.tif")
    window = make_window()
    assert window.open_image(str(vegas))
    wait_idle(qtbot, window)
    assert window.document.raster.georeferenced
    # Along the east-west street of the tile (y ~ 725 in vegas_roads.geojson), then on along it.
    for x in (300, 560, 820):
        click_image(qtbot, window, x, 725)
    wait_pieces(qtbot, window)
    current = window.tool.current
    assert len(current.pieces) == 2
    for index in range(2):
        assert_piece_matches_core(window, current, index, vegas)
    viewer = window.viewer
    qtbot.keyClick(viewer, Qt.Key.Key_Backspace)
    assert len(window.tool.current.pieces) == 1
    qtbot.keyClick(viewer, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert len(window.tool.current.pieces) == 2
    qtbot.keyClick(viewer, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert len(window.tool.current.pieces) == 1
    qtbot.keyClick(viewer, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(viewer, Qt.Key.Key_Return)
    assert window.tool.current is None and len(window.tool.features) == 1
    assert window.features_panel.model.rowCount() == 1
    length_text = cell(window.features_panel, 0, 1)
    assert length_text.endswith(" m")  # 520 px at ~0.3 m: ~155 m, geodesic
    assert 120 < float(length_text.split()[0]) < 200
    assert shown_errors == []


def test_escape_cancels_and_double_click_finishes(qtbot, make_window):
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    click_image(qtbot, window, 600, 740)
    qtbot.keyClick(window.viewer, Qt.Key.Key_Escape)
    assert window.tool.current is None  # only the start click: the feature is cancelled
    click_image(qtbot, window, 600, 740)
    click_image(qtbot, window, 700, 745)
    wait_pieces(qtbot, window)
    click_image(qtbot, window, 800, 748)
    qtbot.keyClick(window.viewer, Qt.Key.Key_Escape)
    assert len(window.tool.current.pieces) == 1  # a finished piece survives the first Esc
    position = window.viewer.image_to_view(800, 748).toPoint()
    qtbot.mouseClick(window.viewer, Qt.MouseButton.LeftButton, pos=position)
    qtbot.mouseDClick(window.viewer, Qt.MouseButton.LeftButton, pos=position)
    assert window.tool.current is None
    assert len(window.tool.features) == 1 and len(window.tool.features[0].pieces) == 2


def test_shift_click_draws_a_straight_piece(qtbot, make_window):
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    a = click_image(qtbot, window, 600, 740)
    b = click_image(qtbot, window, 700, 760, Qt.KeyboardModifier.ShiftModifier)
    piece = window.tool.current.pieces[0]
    assert piece.kind == "straight" and not window.runner.busy
    np.testing.assert_allclose(window.tool.feature_vertices(window.tool.current), [a, b])


def test_live_preview_follows_the_cursor(qtbot, make_window):
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    demo = sample_demo()
    click_image(qtbot, window, *demo["start"])
    for dx in (-60, -30, 0):
        target = move_to_image(qtbot, window, demo["end"][0] + dx, demo["end"][1])
    qtbot.waitUntil(lambda: window.tool.preview is not None
                    and np.allclose(window.tool.preview.vertices_px[-1], target, atol=20), timeout=60_000)
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60_000)
    # The latest request is the one shown at the end, and it is core's answer.
    start = window.tool.anchor_start()
    expected = core_extract(sample_scene_path(), start, target, window.tool.settings)
    np.testing.assert_allclose(window.tool.preview.vertices_px, expected.vertices_px, atol=1e-9)
    # A click where the cursor rests reuses the preview's result.
    click_image(qtbot, window, *demo["end"])
    wait_pieces(qtbot, window)
    np.testing.assert_allclose(window.tool.feature_vertices(window.tool.current), expected.vertices_px, atol=1e-9)


def test_changing_a_setting_reruns_the_current_piece(qtbot, make_window):
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    click_image(qtbot, window, 600, 740)
    click_image(qtbot, window, 800, 748)
    wait_pieces(qtbot, window)
    old_id = window.tool.current.pieces[0].id
    window.settings_panel._widgets["nodes"].setValue(5)
    assert window.settings_panel.apply_now()
    assert window.tool.current.pieces[0].id != old_id
    wait_pieces(qtbot, window)
    assert window.tool.current.pieces[0].settings.nodes == 5
    assert_piece_matches_core(window, window.tool.current, 0, sample_scene_path())
    # Undo takes back the re-run and the panel's settings with it, also from the field just typed
    # in (whose text field claims Ctrl+Z for itself); choosing them again re-runs it.
    nodes = window.settings_panel._widgets["nodes"]
    window.activateWindow()
    nodes.setFocus()
    qtbot.waitUntil(nodes.hasFocus)
    qtbot.keyClick(nodes.lineEdit(), Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.tool.current.pieces[0].id == old_id
    assert window.settings_panel._widgets["nodes"].value() == window.tool.settings.nodes != 5
    window.settings_panel._widgets["nodes"].setValue(5)
    assert window.settings_panel.apply_now()
    assert window.tool.current.pieces[0].id != old_id and window.tool.current.pieces[0].settings.nodes == 5
    wait_pieces(qtbot, window)
    # Settings persist: a new window in the same config folder starts with them.
    again = make_window(config_dir=window.config_dir)
    assert again.settings_panel.settings.nodes == 5


def test_invalid_setting_combination_is_shown_in_the_panel(qtbot, make_window):
    window = make_window()
    panel = window.settings_panel
    panel._widgets["snap_endpoints"].setChecked(True)
    panel._widgets["snap_half_width_px"].setValue(0.0)  # "auto"
    assert panel.apply_now()
    assert panel.current_values()["snap_half_width_px"] is None


def test_unreadable_image_shows_a_dialog_and_keeps_the_old_one(qtbot, make_window, shown_errors, tmp_path):
    window = make_window()
    assert window.open_image(None)
    broken = tmp_path / "broken.tif"
    broken.write_bytes(b"II*\x00" + b"\x13" * 500)
    assert not window.open_image(str(broken))
    assert len(shown_errors) == 1 and "open" in shown_errors[0].title.lower()
    assert str(broken) in shown_errors[0].message and shown_errors[0].details
    assert window.document.path == str(sample_scene_path())
    assert not window.open_image(str(tmp_path / "missing.tif"))
    assert len(shown_errors) == 2 and "does not exist" in shown_errors[1].message


def test_gpu_backend_without_gpu_shows_a_dialog(qtbot, make_window, shown_errors):
    from core.engine import gpu_available

    if gpu_available():
        pytest.skip("a GPU is present here")
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    combo = window.settings_panel._widgets["backend"]
    assert not combo.model().item(combo.findText("gpu")).isEnabled()  # not offered here
    combo.setCurrentText("gpu")  # but settings stored on a GPU machine may still ask for it
    assert window.settings_panel.apply_now()
    assert "nothing" in window.settings_panel.backend_label.text()
    click_image(qtbot, window, 600, 740)
    click_image(qtbot, window, 800, 748)
    qtbot.waitUntil(lambda: len(shown_errors) == 1, timeout=60_000)
    assert "GPU" in shown_errors[0].message and shown_errors[0].kind == "BackendUnavailableError"
    outcome = window.tool.outcomes[window.tool.current.pieces[0].id]
    assert outcome.status == "failed"


def test_no_feasible_polyline_is_a_dialog_not_a_crash(qtbot, make_window, shown_errors):
    from core.polyline import NoFeasiblePolylineError

    def failing(document, start, end, settings, cancel=None):
        raise NoFeasiblePolylineError("no polyline satisfies max_turn_deg = 0.1")

    window = make_window(extract_fn=failing)
    window.open_image(None)
    wait_idle(qtbot, window)
    click_image(qtbot, window, 600, 740)
    click_image(qtbot, window, 800, 748)
    qtbot.waitUntil(lambda: bool(shown_errors), timeout=10_000)
    assert "max_turn_deg" in shown_errors[0].message
    qtbot.keyClick(window.viewer, Qt.Key.Key_Backspace)  # the user drops the failed piece and goes on
    assert window.tool.current.pieces == ()


def test_status_bar_shows_pixel_map_and_lonlat(qtbot, make_window):
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    x, y = move_to_image(qtbot, window, 100.5, 200.5)
    assert window.status.pixel_label.text().startswith(f"x {x:.1f}  y {y:.1f}  (col {int(x)}, row {int(y)})")
    assert "EPSG:32633" in window.status.map_label.text()
    assert "lon" in window.status.lonlat_label.text() and "lat" in window.status.lonlat_label.text()


def window_with_one_selected_feature(qtbot, make_window):
    """A window on the sample scene with one finished two-click feature, selected in the Features dock."""
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    for x, y in ((600, 740), (800, 748)):
        click_image(qtbot, window, x, y)
    qtbot.keyClick(window.viewer, Qt.Key.Key_Return)
    wait_pieces(qtbot, window)
    window.features_panel.table.selectRow(0)
    return window


def test_features_dock_select_rename_zoom_delete(qtbot, make_window):
    window = window_with_one_selected_feature(qtbot, make_window)
    panel = window.features_panel
    assert window.tool.selected_id == window.tool.features[0].id
    panel.model.setData(panel.model.index(0, 0), "Main road")
    assert window.tool.features[0].name == "Main road"
    panel.model.setData(panel.model.index(0, 0), "  ")  # a cleared name goes back, without an error
    assert window.tool.features[0].name == "Main road" and cell(panel, 0, 0) == "Main road"
    window.viewer.fit()
    before = window.viewer.transform.scale
    panel.zoom_to_selected()
    assert window.viewer.transform.scale > before
    panel.delete_selected()
    assert window.tool.features == () and panel.model.rowCount() == 0
    window.tool.undo()
    assert panel.model.rowCount() == 1 and cell(panel, 0, 0) == "Main road"
    panel.table.selectRow(0)
    panel.table.setFocus()
    panel.continue_button.click()  # the line is open for more pieces, and the map takes Enter again
    assert window.tool.current is not None and window.tool.current.name == "Main road"
    qtbot.waitUntil(window.viewer.hasFocus)
    qtbot.keyClick(window.viewer, Qt.Key.Key_Return)
    assert window.tool.current is None and window.tool.features[0].name == "Main road"


def test_delete_key_deletes_the_selected_feature_only_from_the_map_or_the_features_table(qtbot, make_window):
    window = window_with_one_selected_feature(qtbot, make_window)
    panel = window.features_panel
    # elsewhere in the window (the knapsack tab's table, a button) Delete deletes nothing
    knapsack_index = next(i for i in range(window.tabs.count()) if window.tabs.tabText(i) == "Knapsack")
    window.tabs.setCurrentIndex(knapsack_index)
    for widget in (window.tabs.currentWidget().findChild(QTableWidget), panel.zoom_button):
        qtbot.keyClick(widget, Qt.Key.Key_Delete)
    assert len(window.tool.features) == 1
    # nor does Undo there, which would take back map work out of sight
    qtbot.keyClick(window.tabs.currentWidget().findChild(QTableWidget), Qt.Key.Key_Z,
                   Qt.KeyboardModifier.ControlModifier)
    assert len(window.tool.features) == 1 and not window.undo_action.isEnabled()
    window.tabs.setCurrentIndex(0)
    assert window.undo_action.isEnabled()
    qtbot.keyClick(window.viewer, Qt.Key.Key_Delete)  # the map has the focus: the Edit menu's Delete
    assert window.tool.features == ()
    window.tool.undo()
    panel.table.selectRow(0)
    qtbot.keyClick(panel.table, Qt.Key.Key_Delete)  # the features table has the focus: its own Delete
    assert window.tool.features == ()


def test_unexpected_errors_in_slots_become_dialogs(qtbot, make_window, shown_errors, monkeypatch):
    import sys

    from app.main import install_excepthook

    window = make_window()
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # restored after the test
    install_excepthook(window)

    def broken(*args):
        raise RuntimeError("a bug in a slot")

    window.viewer.hovered.connect(broken)
    window.viewer.hovered.emit(1.0, 2.0, False)
    assert shown_errors and shown_errors[-1].title == "Unexpected error"
    assert "a bug in a slot" in shown_errors[-1].message and "broken" in shown_errors[-1].details


def test_the_window_fits_a_1280_px_screen(make_window):
    # the knapsack generator once needed 934 px in one row: the window could not shrink below 1341 px
    window = make_window()
    assert window.minimumSizeHint().width() <= 1200
    window.resize(1280, 720)
    assert window.width() <= 1280
    # half of a 1920 px screen, or a 1024 px one: the knapsack tab's rows scroll instead of widening the map's
    window.open_image(None)
    assert window.minimumSizeHint().width() <= 700  # (993 px: the knapsack tab's 580 px were the map's least)
    window.resize(960, 700)
    assert window.width() <= 960 and window.viewer.width() >= 300


def test_the_status_bar_says_when_the_solver_is_ready(qtbot, make_window):
    from app.main_window import PREPARING_TEXT

    window = make_window()
    window.open_image(None)
    assert window.status.run_label.text() == PREPARING_TEXT  # the warm-up extraction is running
    window._show_busy()  # the seconds so far follow the text while it runs
    assert window.status.run_label.text().startswith(PREPARING_TEXT)
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: window.status.run_label.text().startswith("ready"), timeout=60_000)


def test_the_map_docks_hide_on_other_tabs_and_come_back_as_they_were(make_window):
    window = make_window()
    knapsack = next(i for i in range(window.tabs.count()) if window.tabs.tabText(i) == "Knapsack")
    window.features_dock.hide()  # the user closed one dock
    window.tabs.setCurrentIndex(knapsack)
    assert not window.settings_dock.isVisible() and not window.features_dock.isVisible()
    assert not window.status.run_label.isVisible()  # (the knapsack tab said "no extraction yet")
    window.tabs.setCurrentIndex(0)
    assert window.settings_dock.isVisible() and not window.features_dock.isVisible()
    assert window.status.run_label.isVisible()


def test_a_long_extraction_shows_its_time_in_the_status_bar(qtbot, make_window):
    import time

    def slow(document, start, end, settings, cancel=None):  # as with thousands of points or dozens of nodes
        time.sleep(1.2)
        return core_extract(document.path, start, end, settings)

    window = make_window(extract_fn=slow)
    window.open_image(None)
    wait_idle(qtbot, window)
    click_image(qtbot, window, 600, 740)
    click_image(qtbot, window, 800, 748)
    qtbot.waitUntil(lambda: window.status.run_label.text().startswith("computing the "), timeout=5_000)
    wait_pieces(qtbot, window)
    qtbot.waitUntil(lambda: not window.status.run_label.text().startswith("computing"), timeout=5_000)


HEAVY = dict(points=1024, nodes=20, half_width_px=40.0)  # scoring alone takes 6 s on 2 cores


def start_heavy_piece(qtbot, window):
    window.open_image(None)
    wait_idle(qtbot, window)
    for name, value in HEAVY.items():
        window.settings_panel._widgets[name].setValue(value)
    assert window.settings_panel.apply_now()
    click_image(qtbot, window, 600, 740)
    click_image(qtbot, window, 800, 748)
    qtbot.waitUntil(lambda: "Esc stops it" in window.status.run_label.text(), timeout=5_000)


def test_escape_stops_a_long_extraction(qtbot, make_window, shown_errors):
    import time

    window = make_window()
    start_heavy_piece(qtbot, window)
    stopped_at = time.monotonic()
    qtbot.keyClick(window.viewer, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=20_000)
    assert time.monotonic() - stopped_at < 3.0  # the kernels noticed; unstopped it runs for seconds
    assert window.tool.current.pieces == () and not shown_errors
    qtbot.waitUntil(lambda: not window.status.run_label.text().startswith("computing"), timeout=5_000)
    qtbot.keyClick(window.viewer, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # the piece comes back
    assert len(window.tool.current.pieces) == 1 and window.runner.busy  # and is computed again


def test_closing_the_window_stops_a_long_extraction(qtbot, make_window):
    import time

    window = make_window()
    start_heavy_piece(qtbot, window)
    window.tool.mark_saved()
    closing_at = time.monotonic()
    window.close()
    assert window.runner.wait(0) and time.monotonic() - closing_at < 3.0


def test_the_file_actions_that_need_an_image_wait_for_one(make_window):
    from PySide6.QtGui import QKeySequence

    window = make_window()  # no image yet (one that failed to open at start): Export wrote an empty file
    actions = {action.text().replace("&", ""): action for action in window.menuBar().actions()[0].menu().actions()}
    needing = ["Save Project...", "Add Reference Layer...", "Import Lines...", "Export Lines...",
               "Refine Lines onto Image..."]
    assert [actions[name].isEnabled() for name in needing] == [False] * 5
    assert actions["Open Image..."].isEnabled() and actions["Open Sample Scene"].isEnabled()
    window.open_image(None)
    assert [actions[name].isEnabled() for name in needing] == [True] * 5
    assert QKeySequence("Ctrl+Q") in actions["Quit"].shortcuts()  # on every platform, once
    assert len({key.toString() for key in actions["Quit"].shortcuts()}) == len(actions["Quit"].shortcuts())
