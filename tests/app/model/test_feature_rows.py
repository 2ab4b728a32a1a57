"""The rows an edit removes, inserts and changes, applied in their order to the rows before, give the rows after."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.model.feature_rows import RowEdit, row_edit
from app.model.pieces import Feature
from app.model.tool_requests import FeatureEdit


def _feature(feature_id: int, name: str = "") -> Feature:
    return Feature(feature_id, name, (0.0, 0.0))


def applied(rows: RowEdit, old: tuple, new: tuple) -> list:
    """``old`` with ``rows`` applied as a table model applies them, each run checked to lie within the rows."""
    shown = list(old)
    for first, last in rows.removed:
        assert 0 <= first <= last < len(shown)
        del shown[first:last + 1]
    for first, last in rows.inserted:
        assert 0 <= first <= len(shown) and first <= last
        shown[first:first] = new[first:last + 1]
    assert len(shown) == len(new)
    for row in rows.changed:
        assert shown[row] is not new[row] and shown[row].id == new[row].id
        shown[row] = new[row]
    return shown


@st.composite
def edits(draw) -> tuple[tuple, tuple, FeatureEdit]:
    """Features before, after and the edit between: some kept (in their order), some taken out, some replaced by
    one with the same id (in place or elsewhere), new ones put in anywhere."""
    old = tuple(_feature(k) for k in range(draw(st.integers(0, 12))))
    fates = [draw(st.sampled_from(["kept", "kept", "taken", "replaced", "moved"])) for _ in old]
    kept = [f for f, fate in zip(old, fates) if fate == "kept"]
    new = list(kept)
    for place_before, (feature, fate) in enumerate(zip(old, fates)):
        if fate in ("replaced", "moved"):
            kept_before = fates[:place_before].count("kept")
            if fate == "replaced":  # after the kept feature before it (and what was put there so far)
                place = new.index(kept[kept_before - 1]) + 1 if kept_before else 0
            else:
                place = draw(st.integers(0, len(new)))
            new.insert(place, _feature(feature.id, "renamed"))
    for k in range(draw(st.integers(0, 4))):
        new.insert(draw(st.integers(0, len(new))), _feature(100 + k))
    new = tuple(new)
    taken_at = tuple(k for k, f in enumerate(old) if all(f is not g for g in new))
    put_at = tuple(k for k, f in enumerate(new) if all(f is not g for g in old))
    edit = FeatureEdit(old, taken_at, tuple(old[k] for k in taken_at), put_at, tuple(new[k] for k in put_at))
    return old, new, edit


@settings(max_examples=400, deadline=None)
@given(edits())
def test_the_row_changes_lead_from_the_rows_before_to_the_rows_after(case):
    old, new, edit = case
    rows = row_edit(edit)
    assert applied(rows, old, new) == list(new)
    for runs in (rows.removed[::-1], rows.inserted):  # runs apart, ascending
        assert all(a[1] + 1 < b[0] for a, b in zip(runs, runs[1:]))


def test_a_rename_changes_its_row_and_a_split_inserts_the_second_part_after_it():
    a, b, c = _feature(1), _feature(2), _feature(3)
    renamed = _feature(2, "road")
    assert row_edit(FeatureEdit((a, b, c), (1,), (b,), (1,), (renamed,))) == RowEdit([], [], [1])
    second = _feature(4)
    assert row_edit(FeatureEdit((a, b, c), (1,), (b,), (1, 2), (renamed, second))) == RowEdit([], [(2, 2)], [1])
    moved = _feature(1, "moved")  # the same id between other neighbours: not a change in place
    assert row_edit(FeatureEdit((a, b, c), (0,), (a,), (2,), (moved,))) == RowEdit([(0, 0)], [(2, 2)], [])
    assert row_edit(FeatureEdit((a, b, c), (0, 2), (a, c), (), ())) == RowEdit([(2, 2), (0, 0)], [], [])
