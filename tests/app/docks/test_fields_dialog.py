"""The Fields dialog over the Features dock: a field renamed keeps its values in its column (selection and sort kept),
Undo and Redo take the whole change back and forth, a retype that would lose values says so before clearing them,
and a removed field's values come back with a field of its name (pytest-qt)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from app.docks.attribute_dialogs import ORIGIN_ROLE
from app.docks.features_model import HEADERS
from app.model.attributes import FieldDef
from tests.app.docks.test_features_fields import (
    ASC,
    KIND,
    LANES,
    check_columns,
    failures_of_testers,
    panel_with_values,
    select_and_scroll,
    view_state,
)


def column_texts(panel, column: int) -> list[str]:
    proxy = panel.proxy
    return [proxy.index(row, column).data() for row in range(proxy.rowCount())]


def headers(panel) -> list[str]:
    return [panel.proxy.headerData(c, Qt.Orientation.Horizontal) for c in range(panel.proxy.columnCount())]


def rename_in_dialog(qtbot, panel, row: int, name: str):
    """Open Fields..., type ``name`` over the name of field row ``row`` and press OK; returns the dialog."""
    dialog = panel.define_fields()
    qtbot.addWidget(dialog)
    dialog.table.item(row, 0).setText(name)
    dialog.ok_button.click()
    return dialog


def test_a_field_renamed_in_the_dialog_keeps_its_values_its_column_the_selection_and_the_sort(qtbot, qtlog):
    tool, panel = panel_with_values(qtbot)
    kind_column = len(HEADERS)
    panel.table.sortByColumn(kind_column, ASC)
    select_and_scroll(qtbot, panel, 40)
    before, kinds = view_state(panel), column_texts(panel, kind_column)
    resets = []
    panel.model.modelAboutToBeReset.connect(lambda: resets.append(True))
    dialog = rename_in_dialog(qtbot, panel, 0, "road_class")
    qtbot.wait(1)
    assert not dialog.isVisible() and dialog.renamed() == {"kind": "road_class", "lanes": "lanes"}
    assert [f.name for f in tool.fields] == ["road_class", "lanes"]
    assert headers(panel)[kind_column] == "road_class" and column_texts(panel, kind_column) == kinds
    assert all("kind" not in dict(f.attributes) for f in tool.features)
    assert view_state(panel) == before  # the sort by the renamed column, the selection, the scroll: all kept
    check_columns(panel)
    assert not resets and not failures_of_testers(qtlog)


def test_undo_and_redo_take_the_rename_and_its_values_back_and_forth(qtbot, qtlog):
    tool, panel = panel_with_values(qtbot)
    select_and_scroll(qtbot, panel, 12)
    before_state, before_view = tool.state, view_state(panel)
    rename_in_dialog(qtbot, panel, 1, "lane_count")
    after_state = tool.state
    assert tool.undo()
    qtbot.wait(1)
    assert tool.state == before_state and headers(panel)[len(HEADERS) + 1] == "lanes"
    assert view_state(panel) == before_view
    check_columns(panel)
    assert tool.redo()
    qtbot.wait(1)
    assert tool.state == after_state and headers(panel)[len(HEADERS) + 1] == "lane_count"
    assert column_texts(panel, len(HEADERS) + 1)[:4] == [str(k % 4) for k in range(4)]
    assert view_state(panel) == before_view
    check_columns(panel)
    assert not failures_of_testers(qtlog)


def test_a_retype_that_would_lose_values_says_which_and_clears_them_only_on_a_second_ok(qtbot):
    tool, panel = panel_with_values(qtbot)  # kind: text "k0".."k4"; lanes: integer 0..3
    state = tool.state
    dialog = panel.define_fields()
    qtbot.addWidget(dialog)
    assert dialog.table.item(0, 0).data(ORIGIN_ROLE) == "kind"
    dialog.table.cellWidget(0, 1).setCurrentText("choice")
    dialog.table.item(0, 2).setText("k0, k1")
    dialog.table.cellWidget(1, 1).setCurrentText("text")  # lanes to text: every value fits
    dialog.ok_button.click()
    assert dialog.isVisible() and tool.state is state
    assert "kind: 36 values are not one of k0, k1 ('k2', 'k3', 'k4', ...)" in dialog.error.text()
    assert dialog.ok_button.text() == "Clear 36 values"
    dialog.table.item(0, 2).setText("k0, k1, k2")  # changed meanwhile: checked again, told again
    assert dialog.ok_button.text() == "OK"
    dialog.ok_button.click()
    assert dialog.isVisible() and tool.state is state and dialog.ok_button.text() == "Clear 24 values"
    dialog.ok_button.click()
    assert not dialog.isVisible()
    assert {dict(f.attributes).get("kind") for f in tool.features} == {"k0", "k1", "k2", None}
    assert {type(dict(f.attributes)["lanes"]) for f in tool.features} == {str}
    check_columns(panel)
    assert tool.undo() and tool.state == state
    check_columns(panel)


def test_a_removed_field_comes_back_with_its_values_when_a_field_gets_its_name(qtbot, qtlog):
    tool, panel = panel_with_values(qtbot)
    values = [dict(f.attributes)["lanes"] for f in tool.features]
    dialog = panel.define_fields()
    qtbot.addWidget(dialog)
    dialog.table.selectRow(1)
    dialog.remove_selected()
    dialog.ok_button.click()
    assert tool.fields == (KIND,) and headers(panel) == list(HEADERS) + ["kind"]
    assert [dict(f.attributes)["lanes"] for f in tool.features] == values  # kept on the lines, unseen
    dialog = panel.define_fields()
    qtbot.addWidget(dialog)
    row = dialog.add_row("lanes", "real")
    assert dialog.table.item(row, 0).data(ORIGIN_ROLE) is None
    dialog.ok_button.click()
    assert tool.fields == (KIND, FieldDef("lanes", "real"))
    assert column_texts(panel, len(HEADERS) + 1) == [str(v) for v in values]
    assert [dict(f.attributes)["lanes"] for f in tool.features] == [float(v) for v in values]  # as the new type
    check_columns(panel)
    assert not failures_of_testers(qtlog)


def test_the_dialog_says_what_becomes_of_the_values(qtbot):
    tool, panel = panel_with_values(qtbot, n=3)
    dialog = panel.define_fields()
    qtbot.addWidget(dialog)
    texts = " ".join(label.text() for label in dialog.findChildren(type(dialog.error)))
    assert "Renaming a field takes its values along" in texts and "until a field gets its name again" in texts
    dialog.reject()
    assert tool.fields == (KIND, LANES)


def test_the_dock_takes_the_moved_values_with_the_column_in_one_signal_and_never_sorts_blanks(qtbot, qtlog):
    tool, panel = panel_with_values(qtbot, n=300)
    panel.table.sortByColumn(len(HEADERS), ASC)
    shown = view_state(panel)["shown"]
    signals, layouts = [], []
    panel.model.dataChanged.connect(lambda first, last, _roles=(): signals.append(
        (first.row(), last.row(), first.column(), last.column())))
    panel.proxy.layoutChanged.connect(lambda *_args: layouts.append(True))
    rename_in_dialog(qtbot, panel, 0, "road_class")
    assert signals == [(0, 299, len(HEADERS), len(HEADERS))]  # (not 300 rows one by one, after a column of blanks)
    assert not layouts and view_state(panel)["shown"] == shown
    check_columns(panel)
    assert not failures_of_testers(qtlog)


def test_the_dock_follows_the_dialogs_renames_where_places_would_mislead(qtbot, qtlog):
    """kind removed, lanes renamed lane_count, note added: by places, kind would have become lane_count and lanes
    note; the dialog says which is which, so the sort stays on the lanes' column, now lane_count."""
    tool, panel = panel_with_values(qtbot)
    panel.table.sortByColumn(len(HEADERS) + 1, ASC)
    select_and_scroll(qtbot, panel, 20)
    before = view_state(panel)
    dialog = panel.define_fields()
    qtbot.addWidget(dialog)
    dialog.table.selectRow(0)
    dialog.remove_selected()
    dialog.table.item(0, 0).setText("lane_count")
    dialog.add_row("note")
    dialog.ok_button.click()
    assert [f.name for f in tool.fields] == ["lane_count", "note"]
    assert view_state(panel) == {**before, "sort": (len(HEADERS), ASC), "indicator": (len(HEADERS), ASC)}
    check_columns(panel)
    assert not failures_of_testers(qtlog)
