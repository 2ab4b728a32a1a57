"""Attribute values through the window's export (every format, typed fields), import, project file and autosave."""

from __future__ import annotations

import json

import numpy as np
import pyogrio
import pytest
from PySide6.QtCore import Qt

from app.model.attributes import FieldDef
from app.model.reference import load_reference_layer
from app.session import state_from_dict
from core.extraction import ExtractionSettings

FIELDS = (FieldDef("road_class", "choice", ("primary", "track")), FieldDef("surface"),
          FieldDef("lanes", "integer"), FieldDef("width_m", "real"))
VALUES = ({"road_class": "primary", "surface": "asphalt", "lanes": 2, "width_m": 7.5},
          {"road_class": "track", "lanes": None, "width_m": None, "surface": None})


def window_with_values(make_window, config_dir=None):
    window = make_window(config_dir=config_dir)
    window.open_image(None)
    window.tool.set_fields(FIELDS)
    window.tool.add_features([("", np.array([[100.0, 100.0 + 40 * k], [300.0, 120.0 + 40 * k]]), {})
                              for k in range(2)])
    for feature, values in zip(window.tool.features, VALUES):
        window.tool.set_attributes(feature.id, values)
    return window


@pytest.mark.parametrize("extension", [".gpkg", ".shp", ".fgb", ".geojson"])
def test_values_are_exported_as_typed_fields_and_read_back_on_import(make_window, tmp_path, extension):
    window = window_with_values(make_window)
    out = tmp_path / f"roads{extension}"
    window.feature_io.export_geojson(out)
    info = pyogrio.read_info(out)
    types = dict(zip(info["fields"], info["dtypes"]))
    assert types["road_class"] == types["surface"] == "object" and types["width_m"] == "float64"
    assert types["lanes"] in (("int32", "int64") if extension == ".geojson" else ("int64",))
    other = make_window(config_dir=tmp_path / "other")
    other.open_image(None)
    other.tool.set_fields(FIELDS)
    added = other.feature_io.import_geojson(out)
    assert [dict(f.attributes) for f in added] == [{k: v for k, v in values.items() if v is not None}
                                                   for values in VALUES]
    assert all(type(v) is type(VALUES[0][k]) for k, v in added[0].attributes)  # typed: 2 stays an int
    # The same file as a reference layer: the same lines (GeoJSON: lon/lat to 7 decimals, about 1 cm).
    reference = load_reference_layer(out, other.document.raster)
    for line, feature in zip(reference.lines_px, window.tool.features):
        np.testing.assert_allclose(line, window.tool.feature_vertices(feature), atol=0.05)


def test_geojson_keeps_values_as_plain_properties(make_window, tmp_path):
    window = window_with_values(make_window)
    out = tmp_path / "roads.geojson"
    window.feature_io.export_geojson(out)
    properties = [f["properties"] for f in json.loads(out.read_text())["features"]]
    assert [{k: p[k] for k in VALUES[0]} for p in properties] == list(VALUES)


def test_the_project_file_and_the_autosave_keep_fields_and_values(make_window, tmp_path):
    window = window_with_values(make_window)
    window.projects.save_project(tmp_path / "work.linesnap")
    window.autosave()
    saved = json.loads(window.session.path.read_text())
    assert saved["fields"][0] == {"name": "road_class", "kind": "choice", "choices": ["primary", "track"]}
    assert saved["features"][0]["attributes"] == VALUES[0]
    other = make_window(config_dir=tmp_path / "other")
    assert other.projects.open_project(tmp_path / "work.linesnap")
    assert other.tool.fields == FIELDS
    assert [f.attributes for f in other.tool.features] == [f.attributes for f in window.tool.features]
    third = make_window(config_dir=tmp_path / "third")  # crash recovery: the fields come back with the session
    third.projects.restore_context({**saved, "project": None})
    assert third.tool.fields == FIELDS


def rename_road_class(window, qtbot) -> None:
    """Fields... in the Features dock: road_class renamed "category", lanes made real; OK."""
    dialog = window.features_panel.define_fields()
    qtbot.addWidget(dialog)
    dialog.table.item(0, 0).setText("category")
    dialog.table.cellWidget(2, 1).setCurrentText("real")
    dialog.ok_button.click()
    assert not dialog.isVisible(), dialog.error.text()


def test_a_field_renamed_in_the_dialog_is_exported_with_its_values_and_edit_undo_takes_it_back(
        make_window, tmp_path, qtbot):
    window = window_with_values(make_window)
    rename_road_class(window, qtbot)
    out = tmp_path / "renamed.geojson"
    window.feature_io.export_geojson(out)
    properties = [f["properties"] for f in json.loads(out.read_text())["features"]]
    assert [(p["category"], p["lanes"]) for p in properties] == [("primary", 2.0), ("track", None)]
    assert all("road_class" not in p for p in properties)
    window.undo_action.trigger()  # Edit > Undo: the old fields and the old values, in one step
    assert window.tool.fields == FIELDS
    assert [dict(f.attributes) for f in window.tool.features] == [
        {k: v for k, v in values.items() if v is not None} for values in VALUES]
    window.feature_io.export_geojson(out)
    properties = [f["properties"] for f in json.loads(out.read_text())["features"]]
    assert [(p["road_class"], p["lanes"]) for p in properties] == [("primary", 2), ("track", None)]
    window.redo_action.trigger()
    assert window.tool.fields[0].name == "category"
    assert dict(window.tool.features[0].attributes)["category"] == "primary"


def test_a_project_and_the_autosave_after_a_rename_restore_the_new_fields_with_their_values(
        make_window, tmp_path, qtbot):
    window = window_with_values(make_window)
    rename_road_class(window, qtbot)
    renamed = [dict(f.attributes) for f in window.tool.features]
    assert renamed[0] == {"category": "primary", "surface": "asphalt", "lanes": 2.0, "width_m": 7.5}
    window.projects.save_project(tmp_path / "work.linesnap")
    window.autosave()
    saved = json.loads(window.session.path.read_text())
    other = make_window(config_dir=tmp_path / "other")
    assert other.projects.open_project(tmp_path / "work.linesnap")
    assert other.tool.fields == window.tool.fields and not other.tool.can_undo
    assert [dict(f.attributes) for f in other.tool.features] == renamed
    assert other.features_panel.model.headerData(4, Qt.Orientation.Horizontal) == "category"
    third = make_window(config_dir=tmp_path / "third")  # crash recovery
    third.open_image(None)
    third.tool.restore(*state_from_dict(saved, ExtractionSettings.from_dict))
    third.projects.restore_context({**saved, "project": None})
    assert third.tool.fields == window.tool.fields and not third.tool.can_undo
    assert [dict(f.attributes) for f in third.tool.features] == renamed
