"""File > Export into files whose format changes fields, or which hold other layers: said, and nothing lost."""

from __future__ import annotations

import numpy as np
import pyogrio
import pyogrio.raw

from core.batch.wkb import encode_lines
from core.io.geojson import PIXEL_CRS_WKT
from core.vector import ExportLine, write_lines


def window_with_imported_fields(make_window, tmp_path):
    """A window whose lines came from another tool's file with fields 'NAME' (beside LineSnap's 'name'), 'fid' and
    an integer 'road_id' with a null."""
    window = make_window()
    window.open_image(None)
    source = tmp_path / "osm.fgb"
    attributes = ({"name": "road 0", "NAME": "Main St", "fid": "w1", "road_id": 230},
                  {"name": "road 1", "NAME": None, "fid": "w2", "road_id": None})
    write_lines(source, [ExportLine(np.array([[100.0, 100.0 + 40 * k], [300.0, 120.0 + 40 * k]]), values)
                         for k, values in enumerate(attributes)], window.document.raster,
                field_types={"road_id": "integer"})
    window.feature_io.import_geojson(source)
    return window


def test_an_export_to_a_geopackage_says_which_fields_it_renamed_and_keeps_its_other_layers(make_window, tmp_path):
    out = tmp_path / "roads.gpkg"
    houses = np.array([encode_lines([np.array([[1.0, 1.0], [2.0, 2.0]])])], dtype=object)
    pyogrio.raw.write(str(out), houses, [np.array([12])], ["height"], layer="buildings", driver="GPKG",
                      crs=PIXEL_CRS_WKT, geometry_type="LineString")
    window = window_with_imported_fields(make_window, tmp_path)
    assert window.feature_io.export_geojson(out) == 2
    message = window.status.currentMessage()
    assert message.startswith(f"exported 2 features to {out}; renamed fields 'NAME' to 'NAME_1', 'fid' to 'fid_1' "
                              "(a GeoPackage's")
    assert sorted(pyogrio.list_layers(out)[:, 0]) == ["buildings", "roads"]
    meta, _, _, values = pyogrio.raw.read(str(out), layer="roads", columns=["name", "NAME_1", "fid_1", "road_id"])
    values = dict(zip(meta["fields"], values))  # (the feature ids' field is written last)
    assert [list(values[k]) for k in ("name", "NAME_1", "fid_1")] == [["road 0", "road 1"], ["Main St", None],
                                                                      ["w1", "w2"]]
    road_id = list(meta["fields"]).index("road_id")
    assert meta["dtypes"][road_id] == "int64" and values["road_id"][0] == 230  # (with a null: not read as 230.0)


def test_an_export_that_changes_nothing_says_only_what_it_wrote(make_window, tmp_path):
    window = window_with_imported_fields(make_window, tmp_path)
    window.feature_io.export_geojson(tmp_path / "roads.fgb")
    assert window.status.currentMessage() == f"exported 2 features to {tmp_path / 'roads.fgb'}"
