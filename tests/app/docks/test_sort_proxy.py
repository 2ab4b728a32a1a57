"""Sorting the features table: the order of Python's sorted() over the cells' values, ascending and descending,
stable, followed by selection, edits and rows added or removed."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel

from app.docks.features import FeaturesPanel
from app.docks.features_model import ID_ROLE, SORT_ROLE
from app.docks.sort_proxy import SortProxy, order_rows
from app.model.attributes import FieldDef
from app.model.tool import ExtractionTool

FIELDS = (FieldDef("road_class", "choice", ("primary", "Track", "track")), FieldDef("lanes", "integer"),
          FieldDef("width_m", "real"), FieldDef("note", "text"))
NAME, LENGTH, SCORE, ROAD_CLASS, LANES, WIDTH, NOTE = 0, 1, 2, 4, 5, 6, 7
ASC, DESC = Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder
#: Notes of mixed kinds (a field whose kind changed keeps its old values): numbers, text and blanks.
NOTES = (3, -1.5, 2**53 + 1, 2**53, "b", "A", "a", None, 0, 3.0)


def reference_key(value) -> tuple:
    """What the table promises: numbers first (numerically), then text ignoring case, then blanks."""
    if value is None:
        return (2, 0, "")
    if isinstance(value, str):
        return (1, 0, value.lower())
    return (0, value, "")


def panel_with_features(qtbot, n=60, seed=1):
    """A panel over ``n`` features with many ties; returns (tool, panel, {feature id: {column: value}})."""
    rng = np.random.default_rng(seed)
    tool = ExtractionTool(settings=None)
    tool.set_fields(FIELDS)
    lengths = rng.choice([5.0, 12.0, 40.0, 300.0], n)  # few distinct lengths: ties
    names = ["", "Road a", "road A", "Ditch", "ditch 2"]
    features = tool.add_features([(names[k % 5], np.array([[0.0, 0.0], [length, 0.0]]), {})
                                  for k, length in enumerate(lengths)])
    outcomes, new, values = dict(tool.outcomes), [], {}
    for k, feature in enumerate(features):
        score = None if k % 4 == 0 else float(rng.integers(0, 5))
        piece = feature.pieces[0].id
        outcomes[piece] = replace(outcomes[piece], score=score)
        cells = {"road_class": [None, "primary", "Track", "track"][k % 4],
                 "lanes": [None, 1, 2, 2, 3][int(rng.integers(0, 5))],
                 "width_m": [None, 3.5, 7.0, 12.25][int(rng.integers(0, 4))], "note": NOTES[k % len(NOTES)]}
        new.append(replace(feature, attributes=tuple(sorted((a, v) for a, v in cells.items() if v is not None))))
        values[feature.id] = {NAME: feature.name, LENGTH: lengths[k], SCORE: score, ROAD_CLASS: cells["road_class"],
                              LANES: cells["lanes"], WIDTH: cells["width_m"], NOTE: cells["note"]}
    tool.restore(replace(tool.state, features=tuple(new)), outcomes)
    panel = FeaturesPanel(tool)
    qtbot.addWidget(panel)
    return tool, panel, values


def shown_ids(panel) -> list[int]:
    return [panel.proxy.index(row, 0).data(ID_ROLE) for row in range(panel.proxy.rowCount())]


def expected(ids, values, column, order) -> list[int]:
    return sorted(ids, key=lambda i: reference_key(values[i][column]), reverse=order == DESC)


@pytest.mark.parametrize("order", [ASC, DESC])
@pytest.mark.parametrize("column", [NAME, LENGTH, SCORE, ROAD_CLASS, LANES, WIDTH, NOTE])
def test_each_column_sorts_as_pythons_sorted_over_its_values(qtbot, column, order):
    tool, panel, values = panel_with_features(qtbot)
    drawn = [f.id for f in tool.features]
    assert shown_ids(panel) == drawn  # drawing order at first
    panel.table.sortByColumn(column, order)
    assert shown_ids(panel) == expected(drawn, values, column, order)
    panel.table.sortByColumn(-1, ASC)
    assert shown_ids(panel) == drawn


@pytest.mark.parametrize("order", [ASC, DESC])
def test_sorting_is_stable_rows_that_tie_keep_the_order_shown(qtbot, order):
    tool, panel, values = panel_with_features(qtbot)
    panel.table.sortByColumn(WIDTH, DESC)
    by_width = shown_ids(panel)
    panel.table.sortByColumn(LANES, order)  # ties in lanes: by width, as shown before
    assert shown_ids(panel) == expected(by_width, values, LANES, order)


def test_the_selection_maps_to_the_right_feature_after_sorting_both_ways(qtbot):
    tool, panel, values = panel_with_features(qtbot)
    tool.select(tool.features[10].id)
    panel.table.sortByColumn(NOTE, DESC)
    assert panel.selected_id() == tool.features[10].id == tool.selected_id  # the selection moved with its row
    ids = shown_ids(panel)
    panel.table.selectRow(3)
    assert panel.selected_id() == ids[3] == tool.selected_id
    tool.select(ids[40])
    rows = panel.table.selectionModel().selectedRows()
    assert [r.row() for r in rows] == [40] and rows[0].data(ID_ROLE) == ids[40]


def test_cells_edited_after_sorting_reach_their_feature_and_move_to_their_place(qtbot):
    tool, panel, values = panel_with_features(qtbot)
    panel.table.sortByColumn(LANES, ASC)
    before = shown_ids(panel)
    target = before[0]
    assert panel.proxy.setData(panel.proxy.index(0, LANES), "2")
    assert dict(tool.feature(target).attributes)["lanes"] == 2
    values[target][LANES] = 2  # taken out and put back after the rows with 2 lanes
    assert shown_ids(panel) == expected([i for i in before if i != target] + [target], values, LANES, ASC)


def test_rows_added_and_removed_while_sorted_go_to_their_place(qtbot):
    tool, panel, values = panel_with_features(qtbot)
    panel.table.sortByColumn(LENGTH, DESC)
    before = shown_ids(panel)
    added = tool.add_features([("", np.array([[0.0, 0.0], [length, 0.0]]), {}) for length in (40.0, 1000.0, 5.0)])
    values.update({f.id: {LENGTH: length} for f, length in zip(added, (40.0, 1000.0, 5.0))})
    assert shown_ids(panel) == expected(before + [f.id for f in added], values, LENGTH, DESC)  # after their equals
    tool.select(before[5])
    tool.undo()
    assert shown_ids(panel) == before and panel.selected_id() == before[5]


def test_order_rows_handles_big_integers_and_text_exactly():
    values = [2**53 + 1, "b", None, 2**53, "B", 1.5, "a", 2**53 + 1.0]
    rows = list(range(len(values)))
    assert order_rows(rows, values) == [5, 3, 7, 0, 6, 1, 4, 2]
    assert order_rows(rows, values, descending=True) == [2, 1, 4, 6, 0, 3, 7, 5]


CELL_VALUES = st.one_of(st.none(), st.integers(-2**60, 2**60), st.integers(-3, 3),
                        st.floats(allow_nan=False, allow_infinity=False),
                        st.sampled_from(["a", "A", "b", "", "é", "Z"]), st.text(max_size=4))


@settings(max_examples=200, deadline=None)
@given(values=st.lists(CELL_VALUES, max_size=40), seed=st.integers(0, 2**16), descending=st.booleans())
def test_order_rows_is_pythons_stable_sorted(values, seed, descending):
    rows = np.random.default_rng(seed).permutation(len(values)).tolist()
    reference = sorted(rows, key=lambda r: reference_key(values[r]), reverse=descending)
    assert order_rows(rows, values, descending) == reference


def test_a_model_without_sort_values_is_sorted_by_its_sort_role_and_followed(qtbot):
    model = QStandardItemModel(0, 1)

    def item(value):
        cell = QStandardItem(str(value))
        cell.setData(value, SORT_ROLE)
        return cell

    for value in (3, None, "b", 1, "A"):
        model.appendRow(item(value))
    proxy = SortProxy()
    proxy.setSourceModel(model)
    proxy.sort(0, ASC)

    def shown():
        return [proxy.index(row, 0).data(SORT_ROLE) for row in range(proxy.rowCount())]

    assert shown() == [1, 3, "A", "b", None]
    model.insertRow(1, item(2))  # in the middle of the model
    model.removeRow(3)  # "b"
    assert shown() == [1, 2, 3, "A", None]
    for row in range(proxy.rowCount()):
        assert proxy.mapFromSource(proxy.mapToSource(proxy.index(row, 0))).row() == row
    proxy.sort(0, DESC)
    assert shown() == [None, "A", 3, 2, 1]
