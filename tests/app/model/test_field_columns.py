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
