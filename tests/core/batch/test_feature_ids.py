"""Feature ids (GeoPackage fids, GeoJSON ``id`` members) and date fields kept through ``refine``."""

from __future__ import annotations

import functools
import json

import numpy as np
import pyogrio
import pyogrio.raw
import pytest

from core.batch import refine_layer
from core.batch.runner import dask_client
from core.batch.wkb import encode_lines
from tests.core.batch.scene import CRS, px_to_map, write_scene

THREADS = functools.partial(dask_client, workers=1, threads=True)
LINES = [[(20.0, 104.0), (90.0, 104.0), (154.0, 104.0)], [(154.0, 104.0), (154.0, 230.0)],
         [(1000.0, 1000.0), (1100.0, 1000.0)]]


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    return write_scene(tmp_path_factory.mktemp("ids") / "scene.tif")


def _geometry():
    return np.array([encode_lines([px_to_map(np.array(line))]) for line in LINES], dtype=object)


def _gpkg(path):
    opened = np.array(["2024-05-01", "NaT", "1999-12-31"], dtype="datetime64[D]")
    seen = np.array(["2024-05-01T10:20:30.500", "2023-01-02T03:04:05", "NaT"], dtype="datetime64[ms]")
    pyogrio.raw.write(str(path), _geometry(), [np.array([230, 7, 2**40], np.int64), opened, seen,
                                               np.array(["a", "b", "c"], object)],
                      ["fid", "opened", "seen", "name"], crs=CRS, geometry_type="LineString", driver="GPKG")
    return str(path)


def _by_name(path):
    """Per feature name: (its id, its fields) as the output holds them."""
    meta, fids, _, fields = pyogrio.raw.read(str(path), return_fids=True)
    fields = dict(zip(meta["fields"], fields))
    if str(path).endswith(".geojson"):
        fids = [f.get("id") for f in json.loads(open(path).read())["features"]]
    elif "fid" in fields:
        fids = fields["fid"]
    return {str(n): (fids[k].item() if hasattr(fids[k], "item") else fids[k], {m: v[k] for m, v in fields.items()})
            for k, n in enumerate(fields["name"])}, dict(zip(meta["fields"], pyogrio.read_info(str(path))["ogr_types"]))


@pytest.mark.parametrize("suffix", [".gpkg", ".geojson", ".shp", ".fgb"])
def test_a_geopackages_fids_come_back_as_the_outputs_ids(image, tmp_path, suffix):
    # GIS users join tables on them: refine wrote fids 1, 2, 3 (GeoJSON: no ids)
    lines = _gpkg(tmp_path / "roads.gpkg")
    out = tmp_path / f"refined{suffix}"
    report = refine_layer(lines, [image], out, client_factory=THREADS, tile_px=64)
    assert report.statuses == {"refined": 2, "off_image": 1}
    features, _ = _by_name(out)
    assert {name: fid for name, (fid, _) in features.items()} == {"a": 230, "b": 7, "c": 2**40}


@pytest.mark.parametrize("ids", [[11, 12, 13], ["r-1", "r-2", "r-3"], [5, None, 9]])
@pytest.mark.parametrize("suffix", [".geojson", ".gpkg"])
def test_geojson_ids_come_back(image, tmp_path, ids, suffix):
    lonlat = [px_to_map(np.array(line)) for line in LINES]
    features = [{"type": "Feature", "properties": {"name": name}, "geometry": {"type": "LineString",
                                                                                "coordinates": xy.tolist()}}
                for name, xy in zip("abc", lonlat)]
    for feature, fid in zip(features, ids):
        if fid is not None:
            feature["id"] = fid
    lines = tmp_path / "roads.geojson"
    crs = {"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::32618"}}  # (CRS, as GDAL names it)
    lines.write_text(json.dumps({"type": "FeatureCollection", "features": features, "crs": crs}))
    out = tmp_path / f"refined{suffix}"
    refine_layer(lines, [image], out, client_factory=THREADS, tile_px=64)
    written, types = _by_name(out)
    got = {name: fid for name, (fid, _) in written.items()}
    if suffix == ".geojson":
        expected = dict(zip("abc", ids if None not in ids else [5, 1, 9]))  # a missing one: a free id
    elif isinstance(ids[0], str):
        expected = dict(zip("abc", ids))  # a GeoPackage's fids are integers: in a field, renamed
        got = {name: fields["fid_1"] for name, (_, fields) in written.items()}
    else:
        expected = {name: fid for name, fid in zip("abc", ids) if fid is not None}
        got = {name: fid for name, fid in got.items() if name in expected}
    assert got == expected
    if suffix == ".geojson":  # GDAL's field of string ids is not written twice
        assert all("id" not in f["properties"] for f in json.loads(out.read_text())["features"])
    else:
        assert "id" not in types


@pytest.mark.parametrize("suffix", [".gpkg", ".shp"])
def test_dates_keep_their_type(image, tmp_path, suffix):
    lines = _gpkg(tmp_path / "roads.gpkg")
    out = tmp_path / f"refined{suffix}"
    refine_layer(lines, [image], out, client_factory=THREADS, tile_px=64)
    written, types = _by_name(out)
    assert types["opened"] == "OFTDate"
    assert str(written["a"][1]["opened"]) == "2024-05-01"
    if suffix == ".gpkg":
        assert types["seen"] == "OFTDateTime" and str(written["a"][1]["seen"]) == "2024-05-01T10:20:30.500"


def test_a_layers_ids_are_written_of_one_type():
    # File > Export wrote [11, "r-2", "1"] into GeoJSON, refine ["11", "r-2", "1"] (GDAL writes one type)
    from core.batch.feature_ids import filled_ids

    assert filled_ids([11, "r-2", None]) == ["11", "r-2", "1"]
    assert filled_ids([11, None, 1]) == [11, 2, 1]
    assert filled_ids(["a", None]) == ["a", "1"]
    assert filled_ids([2**63, 1]) == [str(2**63), "1"]  # (no integer field holds it)
