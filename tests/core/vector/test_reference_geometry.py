"""read_line_geometry: reference layers' lines read by GDAL (GeoJSON included), geometry only, placed on the image."""

from __future__ import annotations

import json

import numpy as np
import pytest

from app.model.document import sample_scene_path
from core.io.geojson import PIXEL_CRS_WKT, GeoJSONError, LineFeature, write_geojson
from core.io.raster import open_raster
from core.vector import read_line_geometry
from tests.geo_reference import pixels_in_crs

LINES = [np.array([[10.5, 20.25], [300.0, 400.0], [512.125, 90.0]]), np.array([[700.0, 700.0], [710.0, 1200.5]])]


@pytest.fixture
def scene():
    with open_raster(str(sample_scene_path())) as raster:
        yield raster


@pytest.fixture
def no_python_json(monkeypatch):
    """LineSnap's Python GeoJSON parsing fails the test: GDAL must do it (it leaves the GIL free)."""
    import core.io.geojson
    import core.vector.reading

    def refuse(*args, **kwargs):
        raise AssertionError("the file was parsed by Python's json")
    monkeypatch.setattr(core.io.geojson, "load_json", refuse)
    monkeypatch.setattr(core.vector.reading, "read_geojson", refuse)


def _collection(lines, crs_name=None) -> dict:
    document = {"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"k": k}, "geometry": {"type": "LineString", "coordinates": line.tolist()}}
        for k, line in enumerate(lines)]}
    if crs_name:
        document["crs"] = {"type": "name", "properties": {"name": crs_name}}
    return document


@pytest.mark.parametrize("crs", [None, "EPSG:3857"])
def test_geojson_in_wgs84_or_a_legacy_crs_lands_on_its_pixels(tmp_path, scene, crs, no_python_json):
    lines = [pixels_in_crs(crs or "EPSG:4326", scene, line) for line in LINES]
    path = tmp_path / "roads.geojson"
    path.write_text(json.dumps(_collection(lines, crs and "urn:ogc:def:crs:EPSG::3857")))
    got = read_line_geometry(path, scene)
    assert len(got) == 2
    for a, b in zip(got, LINES):
        np.testing.assert_allclose(a, b, atol=1e-6)


@pytest.mark.parametrize("with_crs_member", [True, False])
def test_linesnap_pixel_exports_of_plain_images_stay_pixels(tmp_path, scene, with_crs_member):
    path = tmp_path / "plain.geojson"
    write_geojson(path, [LineFeature(line, f"l{k}") for k, line in enumerate(LINES)], None)
    document = json.loads(path.read_text())
    assert document["crs"]["properties"]["name"] == PIXEL_CRS_WKT
    if not with_crs_member:  # as LineSnap wrote them before the crs member: only "linesnap:coordinates"
        del document["crs"]
        path.write_text(json.dumps(document, indent=1))
    got = read_line_geometry(path, scene)  # on a georeferenced image too: pixels are pixels
    assert [g.tolist() for g in got] == [line.tolist() for line in LINES]


@pytest.mark.parametrize("text, expected", [
    ('{"type": "FeatureCollection", "features": [', "Unterminated"),
    ('{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"a":' + "[" * 20000 + "]" * 20000
     + '},"geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]}}]}', "nested"),
    ('{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},'
     '"geometry":{"type":"LineString","coordinates":[["a","b"],["c","d"]]}}]}', "no LineString"),
    ("", "cannot read"),
])
def test_a_bad_geojson_is_one_line_naming_the_file(tmp_path, scene, capfd, text, expected):
    path = tmp_path / "bad.geojson"
    path.write_text(text)
    with pytest.raises(GeoJSONError) as caught:
        read_line_geometry(path, scene)
    message = str(caught.value)
    assert "bad.geojson" in message and expected in message and "\n" not in message
    assert capfd.readouterr().err == ""  # GDAL's complaint is in the message, not on stderr


def test_a_missing_file_is_a_clear_error(tmp_path, scene):
    with pytest.raises(GeoJSONError, match="gone.geojson does not exist"):
        read_line_geometry(tmp_path / "gone.geojson", scene)


def test_wgs84_lines_need_a_georeferenced_image(tmp_path):
    path = tmp_path / "roads.geojson"
    path.write_text(json.dumps(_collection([np.array([[15.0, 48.0], [15.1, 48.1]])])))
    with pytest.raises(GeoJSONError, match="roads.geojson is in EPSG:4326: open a georeferenced image"):
        read_line_geometry(path, None)
