"""The Features dock follows a change of the attribute fields column by column: adding, renaming, moving and removing
fields keeps the selected feature, the current one, the scroll and the sort (no reset); the columns and their values
follow, and Qt's model tester finds the model and the sort proxy consistent throughout."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtTest import QAbstractItemModelTester

from app.docks.features import FeaturesPanel
from app.docks.features_model import HEADERS, ID_ROLE
from app.model.attributes import FieldDef, value_text
from app.model.tool import ExtractionTool

ASC, DESC = Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder
KIND, LANES = FieldDef("kind"), FieldDef("lanes", "integer")


def panel_with_values(qtbot, n: int = 60):
    """A shown panel over ``n`` lines with values of ``kind`` and ``lanes``, Qt's model testers on its model and proxy
    (their failures are warnings: see :func:`failures_of_testers`)."""
    tool = ExtractionTool(settings=None)
    tool.set_fields((KIND, LANES))
    tool.add_features([(f"road {(7 * k) % n:02d}", np.array([[0.0, 0.0], [float(k % 9 + 1), 1.0]]), {})
                       for k in range(n)])
    for k, feature in enumerate(tool.features):
        tool.set_attributes(feature.id, {"kind": f"k{k % 5}", "lanes": k % 4})
    panel = FeaturesPanel(tool)
    qtbot.addWidget(panel)
    panel.resize(420, 300)
    panel.show()
    qtbot.waitExposed(panel)
    mode = QAbstractItemModelTester.FailureReportingMode.Warning
    panel.testers = [QAbstractItemModelTester(model, mode) for model in (panel.model, panel.proxy)]
    return tool, panel


def failures_of_testers(qtlog) -> list[str]:
    return [record.message for record in qtlog.records if "FAIL!" in record.message]


def select_and_scroll(qtbot, panel, row: int) -> None:
    """Select the feature shown in ``row``, make its attribute cell current, then scroll a few rows away."""
    table = panel.table
    table.selectionModel().setCurrentIndex(panel.proxy.index(row, len(HEADERS)),
                                           QItemSelectionModel.SelectionFlag.ClearAndSelect
                                           | QItemSelectionModel.SelectionFlag.Rows)
    table.scrollTo(panel.proxy.index(5, 0), table.ScrollHint.PositionAtTop)  # the user looks elsewhere meanwhile
    qtbot.wait(1)


def view_state(panel) -> dict:
    """What a field change must keep: the selection (panel and tool), the current feature, the scroll, the order."""
    table, proxy = panel.table, panel.proxy
    header = table.horizontalHeader()
    return {"selected": [index.data(ID_ROLE) for index in table.selectionModel().selectedRows()],
            "tool selected": panel.tool.selected_id, "current": table.currentIndex().data(ID_ROLE),
            "scroll": table.verticalScrollBar().value(),
            "shown": [proxy.index(row, 0).data(ID_ROLE) for row in range(proxy.rowCount())],
            "sort": (proxy.sortColumn(), proxy.sortOrder()),
            "indicator": (header.sortIndicatorSection(), header.sortIndicatorOrder())}


def check_columns(panel) -> None:
    """One column per field after the fixed ones, named as the field, each cell its feature's stored value."""
    proxy, tool = panel.proxy, panel.tool
    assert proxy.columnCount() == panel.model.columnCount() == len(HEADERS) + len(tool.fields)
    headers = [proxy.headerData(column, Qt.Orientation.Horizontal) for column in range(proxy.columnCount())]
    assert headers == list(HEADERS) + [field.name for field in tool.fields]
    for row in range(proxy.rowCount()):
        values = dict(tool.feature(proxy.index(row, 0).data(ID_ROLE)).attributes)
        cells = [proxy.index(row, len(HEADERS) + k).data() for k in range(len(tool.fields))]
        assert cells == [value_text(values.get(field.name)) for field in tool.fields]


#: Field changes as the Fields... dialog (and a project opened) makes them, each from the fields before.
FIELD_CHANGES = [
    ("add a field", (KIND, LANES, FieldDef("width_m", "real"))),
    ("add one in front", (FieldDef("note"), KIND, LANES, FieldDef("width_m", "real"))),
    ("rename one", (FieldDef("note"), FieldDef("road_class"), LANES, FieldDef("width_m", "real"))),
    ("rename it back", (FieldDef("note"), KIND, LANES, FieldDef("width_m", "real"))),
    ("retype one", (FieldDef("note"), KIND, FieldDef("lanes", "real"), FieldDef("width_m", "real"))),
    ("move them", (LANES, FieldDef("width_m", "real"), KIND, FieldDef("note"))),
    ("remove two", (LANES, KIND)),
    ("remove all", ()),
    ("add them back (their values with them)", (KIND, LANES)),
]


@pytest.mark.parametrize("sort", [None, (0, ASC), (1, DESC)])
def test_field_changes_keep_the_selection_the_current_feature_the_scroll_and_a_fixed_columns_sort(qtbot, qtlog, sort):
    tool, panel = panel_with_values(qtbot)
    if sort is not None:
        panel.table.sortByColumn(*sort)
    select_and_scroll(qtbot, panel, 40)
    before = view_state(panel)
    assert before["selected"] == [before["tool selected"]] == [before["current"]] and before["scroll"] > 0
    resets = []
    for model in (panel.model, panel.proxy):
        model.modelAboutToBeReset.connect(lambda: resets.append(True))
    for label, fields in FIELD_CHANGES:
        tool.set_fields(fields)
        qtbot.wait(1)
        assert view_state(panel) == before, label
        check_columns(panel)
    assert not resets and not failures_of_testers(qtlog)


def test_sorted_by_a_field_the_sort_follows_its_column_until_it_is_removed(qtbot, qtlog):
    tool, panel = panel_with_values(qtbot)
    lanes = len(HEADERS) + 1
    panel.table.sortByColumn(lanes, DESC)
    select_and_scroll(qtbot, panel, 40)
    before = view_state(panel)
    for label, fields, column in [("add one in front", (FieldDef("note"), KIND, LANES), lanes + 1),
                                  ("rename another", (FieldDef("note"), FieldDef("road_class"), LANES), lanes + 1),
                                  ("move it first", (LANES, FieldDef("note"), FieldDef("road_class")), lanes - 1),
                                  ("move it last", (FieldDef("note"), FieldDef("road_class"), LANES), lanes + 1),
                                  ("remove one in front", (FieldDef("road_class"), LANES), lanes)]:
        tool.set_fields(fields)
        qtbot.wait(1)
        expected = {**before, "sort": (column, DESC), "indicator": (column, DESC)}
        assert view_state(panel) == expected, label
        check_columns(panel)
    tool.set_fields((FieldDef("road_class"),))  # the sort column removed: the model's order, nothing else lost
    qtbot.wait(1)
    after = view_state(panel)
    assert after["shown"] == [feature.id for feature in tool.features]
    assert after["sort"][0] == after["indicator"][0] == -1
    assert {key: after[key] for key in ("selected", "tool selected", "current")} == {
        key: before[key] for key in ("selected", "tool selected", "current")}
    check_columns(panel)
    assert not failures_of_testers(qtlog)


def test_renaming_the_sorted_field_sorts_by_the_values_of_its_new_name(qtbot, qtlog):
    tool, panel = panel_with_values(qtbot)
    panel.table.sortByColumn(len(HEADERS), ASC)
    select_and_scroll(qtbot, panel, 40)
    selected = tool.selected_id
    tool.set_fields((FieldDef("kind_b"), LANES))  # no values under the new name: all blank, the model's order
    qtbot.wait(1)
    assert view_state(panel)["shown"] == [feature.id for feature in tool.features]
    tool.set_fields((KIND, LANES))
    qtbot.wait(1)
    state = view_state(panel)
    kinds = [dict(tool.feature(feature_id).attributes)["kind"] for feature_id in state["shown"]]
    assert kinds == sorted(kinds) and state["sort"] == state["indicator"] == (len(HEADERS), ASC)
    assert state["selected"] == [selected] == [tool.selected_id] == [state["current"]]
    check_columns(panel)
    assert not failures_of_testers(qtlog)
