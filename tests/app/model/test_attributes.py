"""Attribute fields and values without a window: definitions, validation, undo, session, import."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.model.attributes import (
    FieldDef,
    check_fields,
    export_values,
    fields_from_list,
    fields_to_list,
    import_values,
    parse_value,
    with_imported_values,
)
from app.model.pieces import imported_feature
from app.model.tool import ExtractionTool
from app.session import fields_from_session, state_from_dict, tool_to_dict
from core.extraction import ExtractionSettings

ROAD_FIELDS = (FieldDef("road_class", "choice", ("primary", "secondary", "track")), FieldDef("surface", "text"),
               FieldDef("lanes", "integer"), FieldDef("width_m", "real"))


def tool_with_lines(count=2, fields=ROAD_FIELDS):
    tool = ExtractionTool(ExtractionSettings())
    tool.set_fields(fields)
    for k in range(count):
        tool.click((0.0, 10.0 * k))
        tool.click((30.0, 10.0 * k), straight=True)
        tool.finish()
    return tool


@pytest.mark.parametrize("kwargs, message", [
    ({"name": ""}, "must start with a letter"),
    ({"name": "2lanes"}, "must start with a letter"),
    ({"name": "road class"}, "only letters, digits"),
    ({"name": "Name"}, "LineSnap's own"),
    ({"name": "score"}, "LineSnap's own"),
    ({"name": "lanes", "kind": "bool"}, "kind must be one of"),
    ({"name": "cls", "kind": "choice"}, "needs distinct, non-empty choices"),
    ({"name": "cls", "kind": "choice", "choices": ("a", "a")}, "needs distinct"),
    ({"name": "cls", "kind": "text", "choices": ("a",)}, "only a choice field"),
])
def test_bad_definitions_are_refused_with_one_line(kwargs, message):
    with pytest.raises(ValueError, match=message) as caught:
        FieldDef(**kwargs)
    assert "\n" not in str(caught.value)


def test_names_are_unique_ignoring_case():
    with pytest.raises(ValueError, match="used twice"):
        check_fields([FieldDef("Lanes", "integer"), FieldDef("lanes", "text")])


@pytest.mark.parametrize("field, raw, expected", [
    (FieldDef("lanes", "integer"), "2", 2), (FieldDef("lanes", "integer"), 3.0, 3),
    (FieldDef("lanes", "integer"), " -4 ", -4), (FieldDef("width_m", "real"), "6.5", 6.5),
    (FieldDef("width_m", "real"), 7, 7.0), (FieldDef("surface"), "gravel", "gravel"),
    (FieldDef("c", "choice", ("a", "b")), " b", "b"), (FieldDef("lanes", "integer"), "  ", None),
    (FieldDef("surface"), None, None),
])
def test_values_are_parsed_to_their_field(field, raw, expected):
    value = parse_value(field, raw)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize("field, raw, message", [
    (FieldDef("lanes", "integer"), "2.5", "lanes must be a whole number"),
    (FieldDef("lanes", "integer"), "two", "lanes must be a whole number"),
    (FieldDef("width_m", "real"), "nan", "width_m must be a finite number"),
    (FieldDef("width_m", "real"), True, "width_m must be a finite number"),
    (FieldDef("c", "choice", ("a", "b")), "z", "c must be one of a, b"),
])
def test_bad_values_are_refused_naming_the_field(field, raw, message):
    with pytest.raises(ValueError, match=message):
        parse_value(field, raw)


@given(st.one_of(st.integers(-2**62, 2**62), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8)))
def test_integer_parsing_matches_a_plain_reference(raw):
    """Whole numbers only, from numbers or their text: an independent reading through Python's own parsers."""
    def reference(value):
        if isinstance(value, str):
            if not value.strip():
                return None
            try:
                value = float(value)
            except ValueError:
                return "refused"
        if isinstance(value, float) and (not math.isfinite(value) or value != int(value) or abs(value) >= 2**63):
            return "refused"
        return int(value)

    expected = reference(raw)
    if expected == "refused":
        with pytest.raises(ValueError):
            parse_value(FieldDef("n", "integer"), raw)
    else:
        assert parse_value(FieldDef("n", "integer"), raw) == expected


def test_fields_round_trip_through_their_list_and_refuse_damage():
    assert fields_from_list(json.loads(json.dumps(fields_to_list(ROAD_FIELDS)))) == ROAD_FIELDS
    with pytest.raises(ValueError, match=r"fields\[1\]: field 'x': kind must be"):
        fields_from_list([{"name": "a"}, {"name": "x", "kind": "date"}])


def test_values_are_one_undoable_edit_each():
    tool = tool_with_lines()
    first, second = tool.features
    tool.set_attributes(first.id, {"lanes": "2", "road_class": "primary"})
    tool.set_attributes(second.id, {"width_m": "5.5"})
    assert dict(tool.feature(first.id).attributes) == {"lanes": 2, "road_class": "primary"}
    tool.set_attributes(first.id, {"lanes": None})
    assert dict(tool.feature(first.id).attributes) == {"road_class": "primary"}
    assert tool.undo() and dict(tool.feature(first.id).attributes) == {"lanes": 2, "road_class": "primary"}
    assert tool.undo() and tool.feature(second.id).attributes == ()
    assert tool.undo() and tool.feature(first.id).attributes == ()
    assert tool.redo() and dict(tool.feature(first.id).attributes)["lanes"] == 2


def test_a_bad_value_changes_nothing():
    tool = tool_with_lines(1)
    feature = tool.features[0]
    with pytest.raises(ValueError, match="lanes must be a whole number"):
        tool.set_attributes(feature.id, {"road_class": "track", "lanes": "many"})
    with pytest.raises(ValueError, match="no field named 'speed'"):
        tool.set_attributes(feature.id, {"speed": 3})
    assert tool.features[0] is feature and not tool.can_redo


def test_values_stay_through_continue_and_finish():
    tool = tool_with_lines(1)
    feature_id = tool.features[0].id
    tool.set_attributes(feature_id, {"surface": "asphalt"})
    finished = []
    tool.feature_finished.connect(finished.append)
    tool.reopen(feature_id)
    tool.click((60.0, 0.0), straight=True)
    tool.finish()
    assert dict(tool.feature(feature_id).attributes) == {"surface": "asphalt"}
    assert [f.id for f in finished] == [feature_id]


def test_export_values_cover_every_field_and_drop_values_that_no_longer_fit():
    tool = tool_with_lines(1)
    feature_id = tool.features[0].id
    tool.set_attributes(feature_id, {"surface": "3", "lanes": 2})
    tool.set_fields((FieldDef("surface", "integer"), FieldDef("lanes", "choice", ("1", "2")), FieldDef("note")))
    assert export_values(tool.fields, tool.feature(feature_id)) == {"surface": 3, "lanes": "2", "note": None}
    tool.set_fields((FieldDef("surface", "real"),))
    assert export_values(tool.fields, tool.feature(feature_id)) == {"surface": 3.0}


def test_the_session_keeps_fields_and_values():
    tool = tool_with_lines()
    tool.set_attributes(tool.features[1].id, {"road_class": "track", "lanes": 1, "width_m": 3.25, "surface": "dirt"})
    data = json.loads(json.dumps(tool_to_dict(tool, "/some/image.tif")))
    state, outcomes = state_from_dict(data, ExtractionSettings.from_dict)
    assert state.features == tool.features
    assert fields_from_session(data) == ROAD_FIELDS


def test_imported_properties_fill_the_fields_they_fit():
    values, rest = import_values(ROAD_FIELDS, {"LANES": 2, "Surface": "gravel", "road_class": "motorway", "id": 7})
    assert dict(values) == {"lanes": 2, "surface": "gravel"}
    assert rest == {"road_class": "motorway", "id": 7}  # not one of the choices: kept as the file's property
    feature, outcome = imported_feature(2, 1, "a", np.array([[0.0, 0.0], [5.0, 0.0]]), {"lanes": 3.0, "x": "y"})
    features, outcomes = with_imported_values(ROAD_FIELDS, [feature], {1: outcome})
    assert features[0].attributes == (("lanes", 3),) and outcomes[1].details["properties"] == {"x": "y"}
