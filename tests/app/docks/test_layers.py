"""The Layers dock: list, hide (neither drawn nor snapped to), recolour and remove reference layers (pytest-qt)."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QColorDialog

from app.model.viewmath import ViewTransform
from tests.app.conftest import wait_idle
from tests.app.map.test_overlays import near
from tests.app.test_projects import _reference_file

MAGENTA = QColor("#ff00ff")


@pytest.fixture
def window_with_layer(qtbot, make_window, tmp_path, monkeypatch):
    window = make_window()
    window.open_image(None)
    wait_idle(qtbot, window)
    path, line = _reference_file(tmp_path, window)
    assert window.layers_dock.isHidden()  # closed until there is a layer to list
    window.projects.add_reference(path)
    assert window.layers_dock.isVisible()  # opened, in front
    monkeypatch.setattr(QColorDialog, "getColor", lambda *args: QColor(MAGENTA))
    window.layers_dock.widget().list.setCurrentRow(0)
    window.layers_dock.widget().colour_button.click()
    window.viewer.set_transform(ViewTransform(1.0, 0.0, 0.0))
    return window, window.layers_dock.widget(), line


def _drawn_at(window, xy) -> bool:
    """Whether the map shows the layer's magenta at raster point ``xy`` (every tile drawn first)."""
    tiles = window.projects.overlay.tiles
    image = window.viewer.grab().toImage()  # a repaint renders tiles for a limited time: repeat until all are
    while _visible(window) and not tiles.complete:
        image = window.viewer.grab().toImage()
    point = window.viewer.image_to_view(*xy).toPoint()
    return near(image.pixelColor(point), MAGENTA, tolerance=30)


def _visible(window) -> bool:
    return any(layer.visible for layer in window.projects.references.layers)


def test_the_dock_lists_a_layer_and_recolours_it(window_with_layer):
    window, panel, _ = window_with_layer
    assert panel.list.count() == 1
    item = panel.list.item(0)
    assert item.text() == "roads (1 lines)" and item.checkState() == Qt.CheckState.Checked
    assert window.projects.references.layers[0].colour == "#ff00ff"
    assert panel.colour_button.isEnabled() and panel.remove_button.isEnabled()


def test_a_hidden_layer_is_neither_drawn_nor_snapped_to(qtbot, window_with_layer):
    window, panel, line = window_with_layer
    middle = (line[0] + line[1]) / 2
    editing = window.controller.editing
    x, y = line[1]
    assert _drawn_at(window, middle)
    assert editing.snapped(x + 4.0, y - 3.0) == pytest.approx(tuple(line[1]), abs=1e-6)
    panel.list.item(0).setCheckState(Qt.CheckState.Unchecked)
    assert not window.projects.references.layers[0].visible
    assert not _drawn_at(window, middle)
    assert editing.snapped(x + 4.0, y - 3.0) == (x + 4.0, y - 3.0)
    panel.list.item(0).setCheckState(Qt.CheckState.Checked)
    assert _drawn_at(window, middle)
    assert editing.snapped(x + 4.0, y - 3.0) == pytest.approx(tuple(line[1]), abs=1e-6)


def test_the_project_and_autosave_follow_the_dock(qtbot, window_with_layer, tmp_path):
    window, panel, line = window_with_layer
    panel.list.item(0).setCheckState(Qt.CheckState.Unchecked)
    target = tmp_path / "p.linesnap"
    window.projects.save_project(target)
    saved = json.loads(target.read_text())["images"][0]["references"]
    assert [(r["colour"], r["visible"]) for r in saved] == [("#ff00ff", False)]
    assert window.projects.session_context()["references"][0]["visible"] is False
    panel.remove_button.click()
    assert panel.list.count() == 0 and window.projects.references.layers == ()
    assert window.projects.session_context()["references"] == []
    assert not panel.remove_button.isEnabled()
    x, y = line[1]
    assert window.controller.editing.snapped(x + 4.0, y - 3.0) == (x + 4.0, y - 3.0)


def test_rows_are_top_layer_first(qtbot, window_with_layer, tmp_path):
    window, panel, _ = window_with_layer
    second = tmp_path / "second.gpkg"
    (tmp_path / "refs" / "roads.gpkg").rename(second)
    window.projects.add_reference(second)
    assert [panel.list.item(k).text().split(" ")[0] for k in range(2)] == ["second", "roads"]
    panel.list.setCurrentRow(0)
    panel.remove_button.click()
    assert [layer.name for layer in window.projects.references.layers] == ["roads"]


def test_the_dock_leaves_and_comes_back_with_the_map_tab(qtbot, window_with_layer):
    window, _, _ = window_with_layer
    window.features_dock.raise_()
    window.tabs.setCurrentIndex(1)
    assert window.layers_dock.isHidden() and window.features_dock.isHidden()
    window.tabs.setCurrentIndex(0)
    assert window.tabifiedDockWidgets(window.features_dock) == [window.layers_dock]
    qtbot.waitUntil(lambda: window.features_dock.isVisible())
    assert not window.layers_dock.isHidden()  # still a tab beside Features
