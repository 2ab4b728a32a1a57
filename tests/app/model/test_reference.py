"""Reference layers without a window: vertices and segments for snapping, reprojection onto the image."""

from __future__ import annotations

import numpy as np
import pytest

from app.model.document import sample_scene_path
from app.model.reference import ReferenceLayer, ReferenceLayers, load_reference_layer
from core.batch.layers import write_line_layer
from core.io.geojson import GeoJSONError
from core.io.raster import open_raster
from tests.geo_reference import pixels_in_crs


@pytest.fixture
def sample_scene():
    return sample_scene_path()


def test_vertices_and_segments_of_the_visible_layers():
    a = ReferenceLayer("/a.gpkg", "a", (np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 2.0]]),))
    b = ReferenceLayer("/b.gpkg", "b", (np.array([[5.0, 5.0], [6.0, 7.0]]), np.array([[9.0, 9.0], [8.0, 8.0]])))
    layers = ReferenceLayers()
    seen = []
    layers.changed.connect(lambda: seen.append(1))
    layers.add(a)
    layers.add(b)
    assert layers.vertices_px().shape == (7, 2)
    segments = layers.segments_px()
    assert segments.shape == (4, 2, 2)
    assert segments[1].tolist() == [[1.0, 0.0], [1.0, 2.0]]
    assert segments[2].tolist() == [[5.0, 5.0], [6.0, 7.0]]
    layers.set_visible(0, False)
    assert layers.vertices_px().tolist() == [[5.0, 5.0], [6.0, 7.0], [9.0, 9.0], [8.0, 8.0]]
    assert layers.segments_px().shape == (2, 2, 2)
    layers.remove(1)
    assert layers.vertices_px().shape == (0, 2) and layers.segments_px().shape == (0, 2, 2)
    assert len(seen) == 4
    assert layers.to_list() == [{"path": "/a.gpkg", "colour": a.colour, "visible": False}]


@pytest.mark.parametrize("suffix", [".gpkg", ".fgb", ".shp"])
def test_a_layer_in_another_crs_lands_on_its_pixels(tmp_path, sample_scene, suffix):
    rng = np.random.default_rng(7)
    with open_raster(sample_scene) as raster:
        lines = [rng.uniform(10, 1400, size=(k, 2)) for k in (2, 5)]
        path = tmp_path / f"roads{suffix}"
        write_line_layer(path, [[pixels_in_crs("EPSG:3857", raster, line)] for line in lines],
                         {"name": ["a", "b"]}, "EPSG:3857")
        layer = load_reference_layer(path, raster)
    assert layer.path == str(path.resolve()) and layer.name == "roads"
    assert len(layer.lines_px) == 2
    for got, expected in zip(layer.lines_px, lines):
        np.testing.assert_allclose(got, expected, atol=1e-6)


def test_an_unreadable_layer_is_a_clear_error(tmp_path, sample_scene):
    bad = tmp_path / "nothing.gpkg"
    bad.write_text("not a geopackage")
    with open_raster(sample_scene) as raster, pytest.raises(GeoJSONError):
        load_reference_layer(bad, raster)
