"""File > Refine Lines onto Image: a displaced layer comes back on its road as editable features; cancel adds none."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from app.refine_job import start_refine
from tests.core.batch.scene import ROAD_Y_PX, write_lines, write_scene


def _scene(tmp_path):
    image = write_scene(tmp_path / "scene.tif")
    lines = write_lines(tmp_path / "displaced.gpkg", [[(20.0, 106.0), (100.0, 106.0)]],
                        {"ref": np.array(["h"], dtype=object)})
    return image, lines


def test_a_displaced_line_comes_back_on_its_road_as_an_editable_feature(qtbot, make_window, tmp_path):
    image, lines = _scene(tmp_path)
    window = make_window()
    assert window.open_image(image)
    seen = []
    job = start_refine(window, lines)
    job.progress.connect(lambda done, total, phase: seen.append(phase))
    qtbot.waitUntil(lambda: window.refine_job is None, timeout=120_000)
    assert job.wait(10_000)
    (feature,) = window.tool.features
    vertices = window.tool.feature_vertices(feature)
    assert np.abs(vertices[:, 1] - ROAD_Y_PX).max() <= 1.5  # 6 px off before
    properties = window.tool.outcomes[feature.pieces[0].id].details["properties"]
    assert properties["ref"] == "h" and properties["status"] == "refined"
    assert "refining the pieces" in seen and "refined 1 lines" in window.status.currentMessage()
    window.tool.undo()
    assert window.tool.features == ()
    file_menu = window.menuBar().actions()[0].menu()
    assert "Refine Lines onto Image..." in [a.text().replace("&", "") for a in file_menu.actions()]


def test_cancel_adds_nothing(qtbot, make_window, tmp_path):
    image, lines = _scene(tmp_path)
    window = make_window()
    assert window.open_image(image)
    job = start_refine(window, lines)
    job.cancel()
    qtbot.waitUntil(lambda: window.refine_job is None, timeout=120_000)
    assert job.wait(10_000)
    assert window.tool.features == () and "cancelled" in window.status.currentMessage()


def test_the_layers_dock_refines_the_selected_reference_layer(qtbot, make_window, tmp_path):
    image, lines = _scene(tmp_path)
    window = make_window()
    assert window.open_image(image)
    window.projects.add_reference(lines)
    panel = window.layers_dock.widget()
    assert not panel.refine_button.isEnabled()  # nothing selected yet
    panel.list.setCurrentRow(0)
    qtbot.mouseClick(panel.refine_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.refine_job is None and len(window.tool.features) == 1, timeout=120_000)
    vertices = window.tool.feature_vertices(window.tool.features[0])
    assert np.abs(vertices[:, 1] - ROAD_Y_PX).max() <= 1.5  # the layer itself stays as it was
    assert len(window.projects.references.layers) == 1


def test_closing_the_window_stops_a_running_refinement(qtbot, make_window, tmp_path, shown_errors):
    image, lines = _scene(tmp_path)
    window = make_window()
    assert window.open_image(image)
    job = start_refine(window, lines)
    window.tool.mark_saved()
    window.close()  # its shutdown cancels the refinement and waits for its worker
    assert job.wait(0), "the refinement's worker outlived the window"
    assert window.tool.features == () and shown_errors == []
