"""Reference layers drawn through cached tiles: in their colour, hidden ones not at all, pans render little."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QColor

from app.map.reference_overlay import ReferenceOverlay
from app.map.viewer import RasterViewer
from app.model.reference import ReferenceLayer, ReferenceLayers
from tests.app.map.test_overlays import near, settled

Y = 60.5


@pytest.fixture
def scene(qtbot):
    layers = ReferenceLayers()
    viewer = RasterViewer()
    viewer.resize(600, 400)
    qtbot.addWidget(viewer)
    overlay = ReferenceOverlay(layers)
    viewer.overlay_painters.append(overlay)
    return layers, viewer, overlay


def test_a_layer_is_drawn_in_its_colour_and_not_when_hidden(scene):
    layers, viewer, overlay = scene
    layers.add(ReferenceLayer("/a.gpkg", "a", (np.array([[20.0, Y], [180.0, Y]]),), "#ff00ff"))
    assert near(settled(viewer, overlay).pixelColor(100, int(Y)), QColor("#ff00ff"))
    layers.set_colour(0, "#00ff00")
    assert near(settled(viewer, overlay).pixelColor(100, int(Y)), QColor("#00ff00"))
    layers.set_visible(0, False)
    assert not near(viewer.grab().toImage().pixelColor(100, int(Y)), QColor("#00ff00"))


def test_the_tiles_are_kept_while_panning_and_match_a_fresh_drawing(scene):
    layers, viewer, overlay = scene
    rng = np.random.default_rng(4)
    lines = tuple(np.cumsum(rng.normal(0, 5, (6, 2)), axis=0) + rng.uniform(0, 1200, 2) for _ in range(2000))
    layers.add(ReferenceLayer("/a.gpkg", "a", lines, "#3d9bff"))
    settled(viewer, overlay)
    rendered = overlay.tiles.rendered
    viewer.pan_by(40.0, 0.0)
    image = settled(viewer, overlay)
    assert 0 < overlay.tiles.rendered - rendered <= 4  # one new column of tiles (400 px high: 4 tiles)
    fresh, expected = RasterViewer(), ReferenceOverlay(layers)
    fresh.resize(600, 400)
    fresh.set_transform(viewer.transform)
    fresh.overlay_painters.append(expected)
    assert settled(fresh, expected) == image
