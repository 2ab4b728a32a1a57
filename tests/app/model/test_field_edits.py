"""A change of the attribute fields with the values it moves, without a window: renamed fields carry their values,
retyped ones convert them, values that would be lost are told first, removed ones wait for their name, and the whole
change is one undoable step."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from app.model import line_edits
from app.model.attributes import FieldDef, export_values
from app.model.feature_index import FeatureIndex
from app.model.field_edits import FieldChangeError
from app.model.tool import ExtractionTool
from app.session import fields_from_session, state_from_dict, tool_to_dict
from core.extraction import ExtractionSettings

KIND, LANES, WIDTH = FieldDef("kind"), FieldDef("lanes", "text"), FieldDef("width_m", "real")


def tool_with_values(values: list[dict], fields=(KIND, LANES, WIDTH)) -> ExtractionTool:
    """A tool with one imported line per entry of ``values`` (field name -> value), the fields defined first."""
    tool = ExtractionTool(ExtractionSettings())
    tool.set_fields(fields)
    tool.add_features([("", np.array([[0.0, 10.0 * k], [30.0, 10.0 * k]]), {}) for k in range(len(values))])
    for feature, entry in zip(tool.features, values):
        if entry:
            tool.set_attributes(feature.id, entry)
    return tool


def values_of(tool) -> list[dict]:
    return [dict(feature.attributes) for feature in tool.features]


def test_a_renamed_field_takes_its_values_to_its_new_name_on_every_line():
    tool = tool_with_values([{"kind": "primary", "lanes": "2"}, {}, {"kind": "track"}])
    untouched = tool.features[1]
    tool.set_fields((FieldDef("road_class"), LANES, WIDTH), {"kind": "road_class", "lanes": "lanes",
                                                              "width_m": "width_m"})
    assert [f.name for f in tool.fields] == ["road_class", "lanes", "width_m"]
    assert values_of(tool) == [{"road_class": "primary", "lanes": "2"}, {}, {"road_class": "track"}]
    assert tool.features[1] is untouched  # a line without a value in it is not rewritten
    assert export_values(tool.fields, tool.features[0]) == {"road_class": "primary", "lanes": "2", "width_m": None}
    assert tool.fields_edit.renamed == {"kind": "road_class"}


def test_the_change_is_one_undoable_step_with_its_values_and_redo_makes_it_again():
    tool = tool_with_values([{"kind": "primary", "lanes": "2"}, {"kind": "track", "lanes": "two"}])
    before_state, events = tool.state, []
    tool.fields_changed.connect(lambda: events.append(("fields", tool.fields_edit.renamed)))
    tool.changed.connect(lambda: events.append(("changed", None)))
    tool.set_fields((FieldDef("road_class"), FieldDef("lanes_n", "text")), {"kind": "road_class", "lanes": "lanes_n"})
    after_state = tool.state
    assert events == [("fields", {"kind": "road_class", "lanes": "lanes_n"}), ("changed", None)]  # fields first
    assert tool.undo()
    assert tool.state == before_state and tool.fields == (KIND, LANES, WIDTH)
    assert values_of(tool) == [{"kind": "primary", "lanes": "2"}, {"kind": "track", "lanes": "two"}]
    assert events[-2] == ("fields", {"road_class": "kind", "lanes_n": "lanes"})  # undone: the other way round
    assert tool.redo()
    assert tool.state == after_state
    assert values_of(tool) == [{"road_class": "primary", "lanes_n": "2"}, {"road_class": "track", "lanes_n": "two"}]
    assert tool.undo() and tool.state == before_state  # the set_attributes before are steps of their own


def test_two_fields_can_swap_names():
    tool = tool_with_values([{"kind": "primary", "lanes": "2"}])
    tool.set_fields((FieldDef("lanes"), FieldDef("kind")), {"kind": "lanes", "lanes": "kind"})
    assert values_of(tool) == [{"lanes": "primary", "kind": "2"}]


def test_a_retyped_field_converts_the_values_that_fit():
    tool = tool_with_values([{"lanes": "3", "width_m": 7.5}, {"lanes": " 2 ", "width_m": 3.0},
                             {"lanes": "4.0", "width_m": 0.1 + 0.2}])
    tool.set_fields((KIND, FieldDef("lanes", "integer"), FieldDef("width_m", "text")),
                    {"kind": "kind", "lanes": "lanes", "width_m": "width_m"})
    assert values_of(tool) == [{"lanes": 3, "width_m": "7.5"}, {"lanes": 2, "width_m": "3"},
                               {"lanes": 4, "width_m": "0.30000000000000004"}]  # text: as shown, unless it loses
    assert all(type(dict(f.attributes)["lanes"]) is int for f in tool.features)
    tool.set_fields((KIND, FieldDef("lanes", "choice", ("2", "3", "4")), FieldDef("width_m", "real")),
                    {"kind": "kind", "lanes": "lanes", "width_m": "width_m"})
    assert values_of(tool) == [{"lanes": "3", "width_m": 7.5}, {"lanes": "2", "width_m": 3.0},
                               {"lanes": "4", "width_m": 0.1 + 0.2}]


def test_values_that_do_not_fit_the_new_type_are_told_and_cleared_only_when_asked():
    tool = tool_with_values([{"lanes": "2"}, {"lanes": "two"}, {"lanes": "many", "kind": "x"}, {"lanes": "2.5"}])
    state = tool.state
    retyped = (KIND, FieldDef("lanes", "integer"), WIDTH)
    with pytest.raises(FieldChangeError) as caught:
        tool.set_fields(retyped, {"lanes": "lanes"})
    assert caught.value.count == 3 and "lanes: 3 values are not a whole number ('two', 'many', '2.5')" \
        in str(caught.value)
    assert tool.state is state and tool.fields == (KIND, LANES, WIDTH)  # nothing changed
    tool.set_fields(retyped, {"lanes": "lanes"}, clear_misfits=True)
    assert values_of(tool) == [{"lanes": 2}, {}, {"kind": "x"}, {}]
    assert tool.undo() and tool.state == state and values_of(tool)[1] == {"lanes": "two"}


def test_a_removed_fields_values_stay_on_the_lines_for_a_field_given_its_name_again():
    tool = tool_with_values([{"kind": "primary", "lanes": "2"}, {"lanes": "3"}])
    tool.set_fields((KIND, WIDTH), {"kind": "kind", "width_m": "width_m"})
    assert [export_values(tool.fields, f) for f in tool.features] == [{"kind": "primary", "width_m": None},
                                                                     {"kind": None, "width_m": None}]
    assert values_of(tool)[1] == {"lanes": "3"}  # kept, out of sight
    tool.set_fields((KIND, WIDTH, FieldDef("lanes", "integer")), {"kind": "kind", "width_m": "width_m"})
    assert values_of(tool) == [{"kind": "primary", "lanes": 2}, {"lanes": 3}]  # shown again, as its new type


def test_a_rename_onto_a_removed_fields_name_tells_the_values_it_would_replace():
    tool = tool_with_values([{"kind": "primary", "lanes": "2"}, {"lanes": "3"}, {"kind": "x", "lanes": "x"}])
    tool.set_fields((KIND,), {"kind": "kind"})  # lanes removed: its values stay
    with pytest.raises(FieldChangeError, match=r"lanes: 1 value of a removed field lanes \('2'\)"):
        tool.set_fields((FieldDef("lanes"),), {"kind": "lanes"})
    tool.set_fields((FieldDef("lanes"),), {"kind": "lanes"}, clear_misfits=True)
    assert values_of(tool) == [{"lanes": "primary"}, {"lanes": "3"}, {"lanes": "x"}]


def test_a_new_field_named_as_a_renamed_one_was_starts_empty():
    tool = tool_with_values([{"kind": "primary"}])
    tool.set_fields((FieldDef("road_class"), FieldDef("kind")), {"kind": "road_class"})
    assert values_of(tool) == [{"road_class": "primary"}]


def test_fields_defined_by_name_only_leave_the_values_under_their_names():
    tool = tool_with_values([{"kind": "primary"}])
    tool.set_fields((FieldDef("road_class"),))  # (no renames said: kind is removed, road_class added)
    assert values_of(tool) == [{"kind": "primary"}] and tool.fields_edit.renamed is None
    tool.set_fields((KIND,))
    assert values_of(tool) == [{"kind": "primary"}]


@pytest.mark.parametrize("renamed, message", [
    ({"nope": "kind"}, "must go from a field before"),
    ({"kind": "nope"}, "must go from a field before"),
    ({"kind": "lanes", "lanes": "lanes"}, "two fields cannot become one"),
])
def test_a_bad_rename_is_refused(renamed, message):
    tool = tool_with_values([{"kind": "a"}])
    state = tool.state
    with pytest.raises(ValueError, match=message):
        tool.set_fields((KIND, LANES), renamed)
    assert tool.state is state


def test_the_line_in_progress_and_a_reopened_ones_original_follow_too():
    tool = tool_with_values([{"kind": "primary"}])
    feature_id = tool.features[0].id
    tool.reopen(feature_id)
    tool.set_fields((FieldDef("road_class"),), {"kind": "road_class"})
    assert dict(tool.current.attributes) == {"road_class": "primary"}
    tool.cancel()  # Esc puts the original back: with the renamed field's value
    assert dict(tool.feature(feature_id).attributes) == {"road_class": "primary"}


def test_restored_fields_are_not_an_undo_step():
    tool = ExtractionTool(ExtractionSettings())
    tool.restore_fields((KIND,))
    assert tool.fields == (KIND,) and not tool.can_undo and tool.fields_edit.renamed is None


def test_a_session_after_a_rename_restores_the_new_fields_and_their_values():
    tool = tool_with_values([{"kind": "primary", "lanes": "2"}])
    tool.set_fields((FieldDef("road_class"), FieldDef("lanes", "integer")), {"kind": "road_class", "lanes": "lanes"})
    data = json.loads(json.dumps(tool_to_dict(tool, "/some/image.tif")))
    other = ExtractionTool(ExtractionSettings())
    other.restore(*state_from_dict(data, ExtractionSettings.from_dict))
    other.restore_fields(fields_from_session(data))
    assert other.fields == tool.fields and values_of(other) == [{"road_class": "primary", "lanes": 2}]
    assert not other.can_undo


NAMES = st.sampled_from(["a", "b", "c", "d"])
KINDS = st.sampled_from([("text", ()), ("integer", ()), ("real", ()), ("choice", ("1", "2", "x"))])
VALUES = st.one_of(st.none(), st.sampled_from(["1", "2", "x", "2.5", 1, 2, 2.5, -3.0]))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(NAMES, KINDS, VALUES, VALUES), min_size=1, max_size=4, unique_by=lambda r: r[0]),
       st.lists(st.tuples(st.one_of(st.none(), NAMES), NAMES, KINDS), max_size=4, unique_by=lambda r: r[1]))
def test_any_change_keeps_every_value_or_says_how_many_it_drops_and_undo_gives_all_back(rows, changes):
    """Random fields with values on two lines, then a random change (each new field from an old one or none): made
    with as many values as before, or refused naming as many values as clearing them drops; undo gives back the
    state before."""
    fields = tuple(FieldDef(name, kind, choices) for name, (kind, choices), _, _ in rows)
    tool = tool_with_values([_fitting(fields, {name: v for name, _, v, _ in rows}),
                             _fitting(fields, {name: v for name, _, _, v in rows})], fields)
    new = tuple(FieldDef(name, kind, choices) for _, name, (kind, choices) in changes)
    renamed = {origin: name for origin, name, _ in changes if origin in {f.name for f in fields}}
    assume(len(set(renamed.values())) == len(renamed) == len({o for o, _, _ in changes if o in renamed}))
    state, count = tool.state, _count(tool.state)
    try:
        tool.set_fields(new, renamed)
    except FieldChangeError as err:
        assert tool.state is state
        tool.set_fields(new, renamed, clear_misfits=True)
        assert err.count > 0 and _count(tool.state) == count - err.count
    else:
        assert _count(tool.state) == count  # nothing dropped silently
    for feature in tool.features:  # each field shows its value as stored: it fits its type
        stored = dict(feature.attributes)
        shown = {name: value for name, value in export_values(tool.fields, feature).items() if name in stored}
        assert all(type(value) is type(stored[name]) and value == stored[name] for name, value in shown.items())
    if tool.state != state:
        assert tool.undo() and tool.state == state and tool.fields == fields


def _fitting(fields, values: dict) -> dict:
    """The values that fit their field as they are (set_attributes stores them so)."""
    from app.model.attributes import parse_value

    kept = {}
    for field in fields:
        value = values.get(field.name)
        try:
            parsed = parse_value(field, value)
        except ValueError:
            continue
        if parsed is not None and parsed == value and type(parsed) is type(value):
            kept[field.name] = value
    return kept


def _count(state) -> int:
    return sum(len(feature.attributes) for feature in state.features)


def test_a_rename_keeps_the_lines_vertices_and_gives_the_maps_index_nothing_to_redraw():
    tool = tool_with_values([{"kind": f"k{k % 3}"} for k in range(200)])
    index = FeatureIndex(tool)
    index.sync()
    vertices = [tool.feature_vertices(f) for f in tool.features]
    tool.set_fields((FieldDef("road_class"), LANES, WIDTH), {"kind": "road_class"})
    assert all(tool.feature_vertices(f) is v for f, v in zip(tool.features, vertices))  # (cached: the same line)
    assert not index.sync()  # (it indexed every line again and redrew the whole map)
    assert all(index.entry(f.id)[0] is f for f in tool.features)
    assert tool.undo() and not index.sync()
    moved = tool.features[5]  # a line replaced in place with another geometry: indexed again, in its place
    tool.apply_edit(line_edits.moved_vertex, moved.id, 0, (500.0, 600.0))
    change = index.sync()
    assert change.added == [moved.id] and [i for i, _ in change.removed] == [moved.id]
    assert index.query((499.0, 599.0, 501.0, 601.0)) == [moved.id]
    assert index.query((-1.0, -1.0, 31.0, 2000.0)) == [f.id for f in tool.features]
