"""Export to GeoJSON, GeoPackage, Shapefile and FlatGeobuf: pyogrio reads every file with the right CRS and fields."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import numpy as np
import pyogrio
import pytest

from app.model.document import sample_scene_path
from core.io.atomic import STALE_TEMPORARY_S
from core.io.geojson import GeoJSONError
from core.io.raster import open_raster
from core.vector import DETAILS_FIELD, ExportLine, read_lines, unpack_details, write_lines

EXTENSIONS = (".geojson", ".gpkg", ".shp", ".fgb")


def _lines(rng, count=4):
    lines = []
    for k in range(count):
        vertices = rng.uniform(10, 1400, size=(int(rng.integers(2, 7)), 2))
        attributes = {"name": f"road {k}", "lanes": int(k + 1), "width_m": float(3.5 * (k + 1)),
                      "surface": None if k == 2 else "asphalt"}
        lines.append(ExportLine(vertices, attributes, {"score": float(k), "pieces": [{"kind": "extract"}]}))
    return lines


@pytest.fixture(scope="module")
def scene():
    with open_raster(sample_scene_path()) as raster:
        yield raster


@pytest.mark.parametrize("extension", EXTENSIONS)
def test_every_format_reads_back_with_the_images_crs_fields_and_positions(tmp_path, scene, extension):
    rng = np.random.default_rng(len(extension))
    lines = _lines(rng)
    path = tmp_path / f"lines{extension}"
    write_lines(path, lines, scene)
    info = pyogrio.read_info(path)
    expected_crs = "EPSG:4326" if extension == ".geojson" else "EPSG:32633"
    assert info["crs"] == expected_crs
    assert info["features"] == len(lines)
    fields = dict(zip(info["fields"], info["dtypes"]))
    assert fields["lanes"].startswith("int") and fields["width_m"] == "float64" and fields["name"] == "object"
    assert (DETAILS_FIELD in fields) == (extension != ".shp")  # Shapefile text stops at 254 characters
    _, _, geometry, values = pyogrio.raw.read(path)
    columns = dict(zip(info["fields"], values))
    assert list(columns["lanes"]) == [1, 2, 3, 4]
    assert [columns["surface"][k] for k in (0, 2)] == ["asphalt", None]
    back = read_lines(path, scene)  # through the image's georeference, reprojected where needed
    tolerance_px = 0.05 if extension == ".geojson" else 1e-6  # 7 decimals of a degree: about 1 cm, 0.02 px
    for line, feature in zip(lines, back):
        np.testing.assert_allclose(feature.vertices_px, line.vertices_px, atol=tolerance_px)
        assert feature.name == line.attributes["name"]


def test_geojson_is_rfc7946_with_ids_seven_decimals_and_one_details_field(tmp_path, scene):
    path = tmp_path / "lines.geojson"
    write_lines(path, _lines(np.random.default_rng(3)), scene)
    collection = json.loads(path.read_text())
    assert "crs" not in collection
    assert [f["id"] for f in collection["features"]] == [1, 2, 3, 4]
    for feature in collection["features"]:
        assert all(not isinstance(v, (dict, list)) for v in feature["properties"].values())  # flat
        assert json.loads(feature["properties"][DETAILS_FIELD])["pieces"] == [{"kind": "extract"}]
        for lon, lat in feature["geometry"]["coordinates"]:
            assert round(lon, 7) == lon and round(lat, 7) == lat
    write_lines(path, _lines(np.random.default_rng(3)), scene, details=False)
    assert DETAILS_FIELD not in json.loads(path.read_text())["features"][0]["properties"]


@pytest.mark.parametrize("extension", EXTENSIONS)
def test_a_plain_image_is_never_written_as_wgs84(tmp_path, extension):
    lines = _lines(np.random.default_rng(7))
    with open_raster(np.zeros((1500, 1500), np.uint8)) as plain:
        path = tmp_path / f"plain{extension}"
        write_lines(path, lines, plain)
        crs = pyogrio.read_info(path)["crs"]
        assert crs is not None and "4326" not in crs and crs.startswith("LOCAL_CS")
        back = read_lines(path, plain)
    for line, feature in zip(lines, back):
        np.testing.assert_allclose(feature.vertices_px, line.vertices_px, atol=1e-6)


def test_geojson_refuses_an_image_whose_crs_is_not_related_to_wgs84(tmp_path, monkeypatch, scene):
    monkeypatch.setattr(type(scene), "georeferenced", False, raising=False)
    monkeypatch.setattr(scene, "georeferenced", False)
    with pytest.raises(GeoJSONError, match="GeoPackage"):
        write_lines(tmp_path / "x.geojson", _lines(np.random.default_rng(1)), scene)
    write_lines(tmp_path / "x.gpkg", _lines(np.random.default_rng(1)), scene)  # in the image's own CRS
    assert pyogrio.read_info(tmp_path / "x.gpkg")["crs"] == "EPSG:32633"


def test_unknown_extension_and_bad_attributes_are_refused_with_one_line(tmp_path, scene):
    with pytest.raises(ValueError, match="unknown extension '.kml'"):
        write_lines(tmp_path / "x.kml", _lines(np.random.default_rng(1)), scene)
    with pytest.raises(TypeError, match="attribute 'tags'"):
        ExportLine(np.zeros((2, 2)) + [[0, 0], [1, 1]], {"tags": ["a"]})


def test_legacy_geojson_with_a_projected_crs_member_is_reprojected_onto_the_image(tmp_path, scene):
    vertices_px = np.array([[100.0, 200.0], [400.0, 650.0], [900.0, 700.0]])
    mx, my = scene.pixel_to_map(*vertices_px.T)  # UTM 33N metres
    path = tmp_path / "legacy.geojson"
    path.write_text(json.dumps({"type": "FeatureCollection",
                                "crs": {"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::32633"}},
                                "features": [{"type": "Feature", "properties": {"name": "old", "class": 3},
                                              "geometry": {"type": "LineString",
                                                           "coordinates": np.column_stack([mx, my]).tolist()}}]}))
    (line,) = read_lines(path, scene)
    np.testing.assert_allclose(line.vertices_px, vertices_px, atol=1e-6)
    assert line.name == "old" and line.properties == {"class": 3}


@pytest.mark.parametrize("extension", [".geojson", ".gpkg", ".fgb"])
def test_read_lines_unpacks_the_details_field_into_the_properties_it_was(tmp_path, scene, extension):
    lines = _lines(np.random.default_rng(5))
    path = tmp_path / f"lines{extension}"
    write_lines(path, lines, scene)
    for k, (line, feature) in enumerate(zip(lines, read_lines(path, scene))):
        assert DETAILS_FIELD not in feature.properties
        flat = {k: v for k, v in line.attributes.items() if k != "name"}
        fid = {"fid": k + 1} if extension != ".fgb" else {}  # the feature ids written (a FlatGeobuf has none)
        assert feature.properties == {**flat, **line.details, **fid}


def test_unpack_details_keeps_flat_fields_and_text_that_is_not_a_json_object():
    assert unpack_details({"score": 2.0, DETAILS_FIELD: '{"score": 1.0, "pieces": []}'}) == {"score": 2.0,
                                                                                            "pieces": []}
    for text in ("[1, 2]", '{"cut off at 254 char', "plain words"):
        assert unpack_details({DETAILS_FIELD: text}) == {DETAILS_FIELD: text}
    assert unpack_details({"a": 1}) == {"a": 1}


@pytest.mark.parametrize("extension", [".gpkg", ".shp", ".fgb"])
def test_a_write_that_gdal_leaves_empty_is_an_error_naming_the_file_and_keeps_the_old_one(
        tmp_path, scene, monkeypatch, extension):
    # a small layer on a full disk: GDAL buffers it, fails at close without a word and leaves empty files
    path = tmp_path / f"lines{extension}"
    write_lines(path, _lines(np.random.default_rng(2)), scene)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    real_write = pyogrio.raw.write

    def write_then_lose_the_data(target, *args, **kwargs):
        real_write(target, *args, **kwargs)
        for produced in Path(target).parent.iterdir():
            produced.write_bytes(b"")

    monkeypatch.setattr(pyogrio.raw, "write", write_then_lose_the_data)
    with pytest.raises(OSError, match=rf"cannot write {re.escape(str(path))}: the file GDAL wrote is incomplete"):
        write_lines(path, _lines(np.random.default_rng(3)), scene)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_a_failed_gdal_write_is_one_short_os_error_naming_the_file(tmp_path, scene, monkeypatch):
    def full(*args, **kwargs):  # GDAL's GeoPackage error quotes a whole SQL script before the reason
        raise RuntimeError("sqlite3_exec(CREATE TABLE " + "x" * 5000 + ") failed: database or disk is full")

    monkeypatch.setattr(pyogrio.raw, "write", full)
    path = tmp_path / "lines.gpkg"
    with pytest.raises(OSError) as caught:
        write_lines(path, _lines(np.random.default_rng(4)), scene)
    message = str(caught.value)
    assert message.startswith(f"cannot write {path}: sqlite3_exec(CREATE TABLE")
    assert message.endswith("failed: database or disk is full") and len(message) < 400 + len(str(path))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("extension", [".gpkg", ".shp"])
def test_the_next_write_removes_the_folders_that_a_killed_write_left(tmp_path, scene, extension):
    path = tmp_path / f"lines{extension}"
    stale, fresh = tmp_path / f".{path.name}.k3j2x9ab", tmp_path / f".{path.name}.def456gh"  # fresh: another writer's
    for folder in (stale, fresh):
        folder.mkdir()
        (folder / path.name).write_bytes(b"partial")
    old = time.time() - 2 * STALE_TEMPORARY_S
    os.utime(stale / path.name, (old, old))
    os.utime(stale, (old, old))
    write_lines(path, _lines(np.random.default_rng(5)), scene)
    assert not stale.exists() and (fresh / path.name).read_bytes() == b"partial"
    assert pyogrio.read_info(path)["features"] == 4


def test_read_lines_parses_a_geojson_without_crs_member_once(tmp_path, scene, monkeypatch):
    # a 100 MB import: the look for a crs member parsed the whole file a first time, the window frozen 5 s
    path = tmp_path / "lines.geojson"
    write_lines(path, _lines(np.random.default_rng(6)), scene)
    assert '"crs"' not in path.read_text()
    real_loads, calls = json.loads, []

    def counted(text, *args, **kwargs):
        calls.append(len(text))
        return real_loads(text, *args, **kwargs)

    monkeypatch.setattr(json, "loads", counted)
    assert len(read_lines(path, scene)) == 4
    whole = path.stat().st_size
    assert len([n for n in calls if n >= whole - 16]) == 1  # the others: each line's details field
