"""write_lines (File > Export, ``extract -o``): any attribute names, GeoPackages of several layers, upper-case
extensions; what a format changed comes back (FieldChanges) instead of GDAL's raw warnings."""

from __future__ import annotations

import warnings

import numpy as np
import pyogrio
import pyogrio.raw
import pytest

from core.batch.wkb import encode_lines
from core.io.geojson import PIXEL_CRS_WKT
from core.vector import ExportLine, read_lines, write_lines

VERTICES = np.array([[10.0, 10.0], [60.0, 35.5], [90.0, 80.0]])


def _lines(*attributes):
    return [ExportLine(VERTICES + 5 * k, values, {"score": 1.5, "pieces": [{"kind": "extract"}]})
            for k, values in enumerate(attributes)]


def test_an_export_into_a_geopackage_keeps_its_other_layers(tmp_path):
    path = tmp_path / "multi.gpkg"
    houses = np.array([encode_lines([np.array([[1.0, 1.0], [2.0, 2.0]])])], dtype=object)
    pyogrio.raw.write(str(path), houses, [np.array(["school"], dtype=object)], ["use"], layer="buildings",
                      driver="GPKG", crs=PIXEL_CRS_WKT, geometry_type="LineString")
    for count in (3, 2):  # a second export replaces the first one's layer
        changes = write_lines(path, _lines(*({"name": f"road {k}"} for k in range(count))))
    assert changes.driver == "GPKG" and not changes.describe()
    assert sorted(pyogrio.list_layers(path)[:, 0]) == ["buildings", "multi"]
    assert pyogrio.read_info(path, layer="buildings")["features"] == 1
    assert [line.name for line in read_lines(path)] == ["road 0", "road 1"]


def test_attributes_a_geopackage_refuses_are_renamed_and_said_and_nothing_is_lost(tmp_path):
    path = tmp_path / "roads.gpkg"
    lines = _lines({"name": "a", "NAME": "A", "fid": "x1", "road_id": 230},
                   {"name": "b", "NAME": "B", "fid": "x1", "road_id": None})
    changes = write_lines(path, lines, field_types={"road_id": "integer"})
    assert dict(changes) == {"NAME": "NAME_1", "fid": "fid_1"}
    assert changes.describe().startswith("renamed fields 'NAME' to 'NAME_1', 'fid' to 'fid_1' (a GeoPackage's")
    back = read_lines(path)
    assert [line.properties["NAME_1"] for line in back] == ["A", "B"]
    assert [line.properties["fid_1"] for line in back] == ["x1", "x1"]
    assert [line.properties["road_id"] for line in back] == [230, None]  # an integer, not 230.0
    assert isinstance(back[0].properties["road_id"], int) and back[0].properties["score"] == 1.5
    changes = write_lines(path, _lines(*({"fid": fid} for fid in [7, 7])))  # a duplicate failed (UNIQUE constraint)
    assert dict(changes) == {"fid": "fid_1"}
    assert [line.properties["fid_1"] for line in read_lines(path)] == [7, 7]
    changes = write_lines(path, _lines(*({"fid": fid} for fid in [20, 10])))  # distinct: an imported line's fids
    assert dict(changes) == {}
    assert sorted(line.properties["fid"] for line in read_lines(path)) == [10, 20]


@pytest.mark.parametrize("extension", [".SHP", ".GPKG", ".FGB", ".GEOJSON"])
def test_an_upper_case_extension_is_written_and_read_back(tmp_path, extension):
    path = tmp_path / f"UP{extension}"
    write_lines(path, _lines({"name": "road"}))
    assert path.is_file() and [line.name for line in read_lines(path)] == ["road"]


def test_a_shapefile_says_which_text_it_cut_without_gdals_warning(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        changes = write_lines(tmp_path / "notes.shp", _lines({"name": "a", "note": "n" * 300}))
    assert [str(w.message) for w in caught] == []
    assert changes.cut == {"note": 1} and changes.describe().startswith("cut 1 value of 'note' to 254 bytes")
    assert len(read_lines(tmp_path / "notes.shp")[0].properties["note"]) == 254


@pytest.mark.parametrize("extension", [".gpkg", ".shp", ".fgb"])
def test_integers_and_booleans_with_nulls_keep_their_type_through_import_and_export(tmp_path, extension):
    lines = [ExportLine(VERTICES + k, values) for k, values in enumerate(({"road_id": 230, "oneway": True},
                                                                         {"road_id": None, "oneway": None}))]
    first, again = tmp_path / f"first{extension}", tmp_path / f"again{extension}"
    write_lines(first, lines)
    write_lines(again, [ExportLine(line.vertices_px, line.properties) for line in read_lines(first)])
    fids = [{"fid": 1}, {"fid": 2}] if extension in (".gpkg", ".geojson") else [{}, {}]  # the ids written first
    assert [line.properties for line in read_lines(again)] == [{"road_id": 230, "oneway": True, **fids[0]},
                                                              {"road_id": None, "oneway": None, **fids[1]}]
    types = dict(zip(*(pyogrio.read_info(again)[key] for key in ("fields", "dtypes"))))
    assert types["road_id"] == "int64" and types["oneway"] == "bool"
