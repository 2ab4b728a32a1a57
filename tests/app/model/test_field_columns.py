"""The columns a change of the fields removes, moves, inserts and changes, applied in their order to the fields before,
give the fields after; a field of the same name keeps its column, a rename keeps the column it renames."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.model.attributes import FieldDef
from app.model.field_columns import ColumnEdit, column_edit

NAMES = ("lanes", "width_m", "surface", "kind", "note", "ref", "Lanes")


def fields(*names: str, kind: str = "text") -> tuple:
    return tuple(FieldDef(name, kind) for name in names)


def applied(edit: ColumnEdit, old: tuple, new: tuple) -> list:
    """``old`` with ``edit`` applied as a table model applies it, each step checked to lie within the columns; a
    column renamed or retyped keeps its old field until changed (compared by identity: the columns' lineage)."""
    shown = list(old)
    for first, last in edit.removed:
        assert 0 <= first <= last < len(shown)
        del shown[first:last + 1]
    for at, to in edit.moved:
        assert 0 <= at < len(shown) and 0 <= to < len(shown) and at != to
        shown.insert(to, shown.pop(at))
    for first, last in edit.inserted:
        assert 0 <= first <= len(shown) and first <= last
        shown[first:first] = new[first:last + 1]
    assert len(shown) == len(new)
    for column in edit.changed:
        assert shown[column] in old and shown[column] != new[column]
        shown[column] = new[column]
    return shown


def test_a_field_added_is_a_column_inserted_where_it_stands():
    assert column_edit(fields("lanes"), fields("lanes", "kind")) == ([], [], [(1, 1)], [])
    assert column_edit(fields("lanes"), fields("kind", "ref", "lanes")) == ([], [], [(0, 1)], [])


def test_a_field_removed_is_its_column_removed():
    assert column_edit(fields("lanes", "kind", "ref", "note"), fields("kind", "note")) == ([(2, 2), (0, 0)], [], [],
                                                                                          [])


def test_a_field_renamed_or_retyped_in_place_keeps_its_column():
    old = fields("lanes", "kind", "ref")
    assert column_edit(old, fields("lanes", "road_class", "ref")) == ([], [], [], [1])
    assert column_edit(old, fields("lanes", "kind") + fields("ref", kind="integer")) == ([], [], [], [2])
    assert column_edit(old, fields("Lanes", "kind", "ref")) == ([], [], [], [0])  # values are kept by exact name


def test_a_field_moved_is_one_column_moved():
    assert column_edit(fields("a", "b", "c", "d"), fields("b", "c", "d", "a")) == ([], [(0, 3)], [], [])
    assert column_edit(fields("a", "b", "c", "d"), fields("d", "a", "b", "c")) == ([], [(3, 0)], [], [])
    assert column_edit(fields("a", "b"), fields("b", "a")) == ([], [(1, 0)], [], [])


def test_unchanged_fields_change_no_column():
    assert column_edit(fields("a", "b"), fields("a", "b")) == ([], [], [], [])
    assert column_edit((), ()) == ([], [], [], [])


@st.composite
def field_tuples(draw) -> tuple:
    names = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=7))
    return tuple(FieldDef(name, draw(st.sampled_from(["text", "integer"]))) for name in names)


@settings(max_examples=500, deadline=None)
@given(field_tuples(), field_tuples())
def test_the_columns_applied_to_the_fields_before_give_the_fields_after(old, new):
    edit = column_edit(old, new)
    shown = applied(edit, old, new)
    assert shown == list(new)
    kept_names = {f.name for f in old} & {f.name for f in new}
    lineage = applied(edit._replace(changed=[]), old, new)  # each column's field before (or the new one)
    for before, after in zip(lineage, new):
        if after.name in kept_names:
            assert before.name == after.name  # a field of the same name is the same column
    moves_needed = len([f for f in new if f.name in kept_names])
    assert len(edit.moved) <= max(moves_needed - 1, 0)


def test_a_rename_said_keeps_its_column_where_the_places_would_mislead():
    old, new = fields("kind", "lanes"), fields("lane_count", "note")
    assert column_edit(old, new) == ([], [], [], [0, 1])  # by places: kind -> lane_count, lanes -> note
    assert column_edit(old, new, {"lanes": "lane_count"}) == ([(0, 0)], [], [(1, 1)], [0])
    swapped = column_edit(fields("a", "b"), fields("b", "a"), {"a": "b", "b": "a"})  # renamed both ways: in place
    assert swapped == ([], [], [], [0, 1])
    assert column_edit(fields("a", "b"), fields("b"), {"a": "b"}) == ([(1, 1)], [], [], [0])  # (b removed, a -> b)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(NAMES), unique=True, max_size=5), st.permutations(range(5)),
       st.lists(st.sampled_from(NAMES), unique=True, max_size=3), st.data())
def test_renames_said_give_the_fields_after_each_renamed_one_keeping_its_column(names, order, extra, data):
    old = fields(*names)
    kept = [k for k in order if k < len(old)][:data.draw(st.integers(0, len(old)))]
    new_names = [f"{names[k]}_r" if data.draw(st.booleans()) else names[k] for k in kept]
    new_names += [name for name in extra if name not in new_names and name + "_r" not in new_names]
    new = fields(*new_names)
    renamed = {names[k]: new_names[j] for j, k in enumerate(kept)}
    edit = column_edit(old, new, renamed)
    shown = applied(edit, old, new)
    assert shown == list(new)
    lineage = list(old)  # each kept field's column ends where its new field stands
    for first, last in edit.removed:
        del lineage[first:last + 1]
    for at, to in edit.moved:
        lineage.insert(to, lineage.pop(at))
    for first, last in edit.inserted:
        lineage[first:first] = [None] * (last - first + 1)
    # a field added with a removed one's name shows that field's values: it keeps its column
    same_name = {name: name for name in names
                 if name not in renamed and name in new_names and name not in renamed.values()}
    assert {old_field.name: new[place].name for place, old_field in enumerate(lineage) if old_field is not None} \
        == {**renamed, **same_name}
