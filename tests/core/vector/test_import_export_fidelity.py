"""File > Import then File > Export (as the GUI does it: core.vector.read_lines, then write_lines of the lines'
flat properties) keeps feature ids and date fields."""

from __future__ import annotations

import json

import numpy as np
import pyogrio
import pyogrio.raw
import pytest

from core.batch.wkb import encode_lines
from core.io.line_report import LinesRead
from core.io.raster import open_raster
from core.vector import ExportLine, read_lines, write_lines
from tests.core.batch.scene import CRS, px_to_map, write_scene
from tests.core.batch.test_feature_ids import _by_name

LINES = [[(20.0, 104.0), (154.0, 104.0)], [(154.0, 104.0), (154.0, 230.0)], [(30.0, 30.0), (60.0, 40.0)]]


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    return write_scene(tmp_path_factory.mktemp("fidelity") / "scene.tif")


def _exported(path, image, out):
    """Import ``path`` onto ``image`` and export its lines to ``out`` as app.io_actions does."""
    with open_raster(image) as raster:
        features = read_lines(path, raster)
        lines = []
        for f in features:
            flat = {k: v for k, v in f.properties.items() if v is None or isinstance(v, (str, int, float, bool))}
            details = {k: v for k, v in f.properties.items() if k not in flat}
            lines.append(ExportLine(f.vertices_px, {"name": f.name, **flat}, details or None))
        write_lines(out, lines, raster)


def _ids_by_name(path) -> dict:
    return {name: id_and_fields[0] for name, id_and_fields in _by_name(path)[0].items()}


def _gpkg(path, zones=None):
    """LINES with fids, a Date field ``opened`` and a DateTime field ``seen`` (``zones``: its GDAL time zone flags)."""
    geometry = np.array([encode_lines([px_to_map(np.array(line))]) for line in LINES], dtype=object)
    opened = np.array(["2024-05-01", "NaT", "1999-12-31"], dtype="datetime64[D]")
    seen = np.array(["2024-05-01T10:20:30.500", "2023-01-02T03:04:05", "NaT"], dtype="datetime64[ms]")
    pyogrio.raw.write(str(path), geometry, [np.array([230, 7, 41], np.int64), opened, seen,
                                             np.array(["a", "b", "c"], object)],
                      ["fid", "opened", "seen", "name"], crs=CRS, geometry_type="LineString", driver="GPKG",
                      gdal_tz_offsets=None if zones is None else {"seen": np.asarray(zones)})
    return path


@pytest.mark.parametrize("suffix", [".gpkg", ".geojson", ".shp", ".fgb"])
def test_a_geopackages_fids_come_back_through_import_and_export(image, tmp_path, suffix):
    out = tmp_path / f"exported{suffix}"
    _exported(_gpkg(tmp_path / "roads.gpkg"), image, out)
    assert _ids_by_name(out) == {"a": 230, "b": 7, "c": 41}


@pytest.mark.parametrize("suffix", [".gpkg", ".geojson"])
def test_geojson_ids_come_back_through_import_and_export(image, tmp_path, suffix):
    with open_raster(image) as raster:
        lonlat = [np.column_stack(raster.pixel_to_lonlat(*np.array(line).T)) for line in LINES]
    features = [{"type": "Feature", "id": fid, "properties": {"name": name},
                 "geometry": {"type": "LineString", "coordinates": xy.tolist()}}
                for fid, name, xy in zip([17, 3, 99], "abc", lonlat)]
    source = tmp_path / "roads.geojson"
    source.write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    out = tmp_path / f"exported{suffix}"
    _exported(source, image, out)
    assert _ids_by_name(out) == {"a": 17, "b": 3, "c": 99}


@pytest.mark.parametrize("suffix", [".gpkg", ".shp"])
def test_dates_keep_their_type_through_import_and_export(image, tmp_path, suffix):
    out = tmp_path / f"exported{suffix}"
    _exported(_gpkg(tmp_path / "roads.gpkg"), image, out)
    info = pyogrio.read_info(str(out))
    types = dict(zip(info["fields"], info["ogr_types"]))
    meta, _, _, values = pyogrio.raw.read(str(out))
    values = dict(zip(meta["fields"], values))
    order = [str(n) for n in values["name"]]
    assert types["opened"] == "OFTDate"
    assert [str(v) for v in values["opened"]] == [{"a": "2024-05-01", "b": "NaT", "c": "1999-12-31"}[n]
                                                  for n in order]
    if suffix == ".gpkg":
        assert types["seen"] == "OFTDateTime"
        assert str(values["seen"][order.index("a")]) == "2024-05-01T10:20:30.500"



@pytest.mark.parametrize("suffix", [".gpkg", ".geojson", ".fgb", ".shp"])
def test_a_datetimes_utc_offset_comes_back_through_import_and_export(image, tmp_path, suffix):
    # File > Import read 10:20:30.500+02:00 as "10:20:30.500" text, exported as 10:20:30.500 without its offset
    source = _gpkg(tmp_path / "roads.gpkg", zones=[108, 100, 0])  # GDAL's flags: UTC+02:00, UTC, none (a null)
    with open_raster(image) as raster:
        assert {f.name: f.properties["seen"] for f in read_lines(source, raster)} == {
            "a": "2024-05-01T10:20:30.500+02:00", "b": "2023-01-02T03:04:05.000Z", "c": None}
    out = tmp_path / f"exported{suffix}"
    _exported(source, image, out)
    meta, _, _, values = pyogrio.raw.read(str(out), datetime_as_string=True)
    values = dict(zip(meta["fields"], values))
    seen = dict(zip((str(n) for n in values["name"]), values["seen"]))
    first = "2024-05-01T08:20:30.500Z" if suffix == ".gpkg" else "2024-05-01T10:20:30.500+02:00"  # GeoPackage: UTC
    assert seen["a"] == first and seen["b"] in ("2023-01-02T03:04:05Z", "2023-01-02T03:04:05.000Z")


def _multi_part(path, raster, source_fids=None):
    """Feature ``a`` of two parts (id 5) and ``b`` of one (id 6), as a GeoPackage or an RFC 7946 GeoJSON file;
    ``source_fids``: the features' values of a property ``source_fid`` of their own."""
    parts = [[(20.0, 104.0), (154.0, 104.0)], [(154.0, 104.0), (154.0, 230.0)]], [[(30.0, 30.0), (60.0, 40.0)]]
    own = {} if source_fids is None else {"source_fid": source_fids}
    if path.suffix == ".gpkg":
        geometry = np.array([encode_lines([px_to_map(np.array(p)) for p in lines]) for lines in parts], dtype=object)
        pyogrio.raw.write(str(path), geometry, [np.array([5, 6], np.int64), np.array(["a", "b"], object),
                                                *(np.array(v, object) for v in own.values())],
                          ["fid", "name", *own], crs=CRS, geometry_type="MultiLineString", driver="GPKG")
        return path
    features = [{"type": "Feature", "id": fid, "properties": {"name": name, **{k: v[j] for k, v in own.items()}},
                 "geometry": {"type": "MultiLineString", "coordinates": [
                     np.column_stack(raster.pixel_to_lonlat(*np.array(p).T)).tolist() for p in lines]}}
                for j, (fid, name, lines) in enumerate(zip([5, 6], "ab", parts))]
    path.write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    return path


@pytest.mark.parametrize("source", ["roads.gpkg", "roads.geojson"])
@pytest.mark.parametrize("suffix", [".gpkg", ".geojson"])
def test_a_multi_part_features_parts_get_ids_of_their_own_and_keep_the_features(image, tmp_path, source, suffix):
    # the parts shared their feature's id: a GeoPackage export renumbered every feature (b's 6 too), GeoJSON
    # repeated the id
    report = LinesRead()
    with open_raster(image) as raster:
        features = read_lines(_multi_part(tmp_path / source, raster), raster, report)
    assert [(f.name, f.properties.get("fid"), f.properties.get("source_fid")) for f in features] == [
        ("a (1)", None, 5), ("a (2)", None, 5), ("b", 6, None)]
    assert report.text() == "1 multi-part line read as 2 lines, one per part (their feature's id as source_fid)"
    out = tmp_path / f"exported{suffix}"
    _exported(tmp_path / source, image, out)
    written = _by_name(out)[0]
    ids = {name: fid for name, (fid, _) in written.items()}
    assert ids["b"] == 6 and len(set(ids.values())) == 3
    assert {name: fields["source_fid"] for name, (_, fields) in written.items() if name != "b"} == {"a (1)": 5,
                                                                                                  "a (2)": 5}


@pytest.mark.parametrize("source", ["roads.gpkg", "roads.geojson"])
def test_a_layer_with_a_source_fid_of_its_own_keeps_it_and_the_split_features_id_in_source_fid_2(image, tmp_path,
                                                                                                source):
    # the parts kept their own source_fid (setdefault) and the feature's id 5 was lost without a word
    report = LinesRead()
    with open_raster(image) as raster:
        features = read_lines(_multi_part(tmp_path / source, raster, ["x-1", "y-2"]), raster, report)
    assert [(f.name, f.properties.get("fid"), f.properties.get("source_fid"), f.properties.get("source_fid_2"))
            for f in features] == [("a (1)", None, "x-1", 5), ("a (2)", None, "x-1", 5), ("b", 6, "y-2", None)]
    assert report.text() == ("1 multi-part line read as 2 lines, one per part (their feature's id as source_fid_2: "
                             "the layer has a property source_fid of its own)")
    out = tmp_path / "exported.gpkg"
    _exported(tmp_path / source, image, out)
    written = {name: (fields["source_fid"], fields["source_fid_2"]) for name, (_, fields) in _by_name(out)[0].items()}
    assert {name: values for name, values in written.items() if name != "b"} == {"a (1)": ("x-1", 5),
                                                                                 "a (2)": ("x-1", 5)}
    assert written["b"][0] == "y-2" and np.isnan(written["b"][1])  # (a null integer, read as NaN)


@pytest.mark.parametrize("suffix", [".geojson", ".gpkg", ".fgb"])
def test_mixed_integer_and_text_ids_come_back_as_text_as_refine_writes_them(image, tmp_path, suffix):
    # File > Export wrote GeoJSON ids [11, "r-2", "1"], refine ["11", "r-2", "1"]: one type per layer now
    with open_raster(image) as raster:
        lonlat = [np.column_stack(raster.pixel_to_lonlat(*np.array(line).T)) for line in LINES]
    features = [{"type": "Feature", "id": fid, "properties": {"name": name},
                 "geometry": {"type": "LineString", "coordinates": xy.tolist()}}
                for fid, name, xy in zip([11, "r-2", None], "abc", lonlat)]
    source = tmp_path / "roads.geojson"
    source.write_text(json.dumps({"type": "FeatureCollection", "features": [
        {k: v for k, v in f.items() if k != "id" or v is not None} for f in features]}))
    out = tmp_path / f"exported{suffix}"
    _exported(source, image, out)
    written = _by_name(out)[0]
    if suffix == ".geojson":  # (a missing id is given a free one)
        assert {name: fid for name, (fid, _) in written.items()} == {"a": "11", "b": "r-2", "c": "1"}
    else:  # a text field (a GeoPackage's fids are integers: it is renamed there)
        field = "fid_1" if suffix == ".gpkg" else "fid"
        assert {name: fields[field] for name, (_, fields) in written.items()} == {"a": "11", "b": "r-2", "c": None}
