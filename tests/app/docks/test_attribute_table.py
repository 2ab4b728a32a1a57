"""Attributes in the Features dock: the fields dialog, the form on finish, the editable and sortable table."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLineEdit

from app.docks.features import FeaturesPanel
from app.model.attributes import FieldDef
from app.model.tool import ExtractionTool

FIELDS = (FieldDef("road_class", "choice", ("primary", "track")), FieldDef("lanes", "integer"),
          FieldDef("width_m", "real"))


def panel_with_lines(qtbot, lengths=(50.0, 10.0, 30.0)):
    tool = ExtractionTool(settings=None)
    tool.set_fields(FIELDS)
    for k, length in enumerate(lengths):
        tool.click((0.0, 10.0 * k))
        tool.click((length, 10.0 * k), straight=True)
        tool.finish()
    panel = FeaturesPanel(tool)
    qtbot.addWidget(panel)
    return tool, panel


def shown(panel, column):
    """The column's texts in the order the table shows them."""
    proxy = panel.proxy
    return [proxy.index(row, column).data() for row in range(proxy.rowCount())]


def test_fields_are_columns_and_their_cells_edit_the_values_undoably(qtbot):
    tool, panel = panel_with_lines(qtbot)
    assert [panel.proxy.headerData(c, Qt.Orientation.Horizontal) for c in range(4, 7)] == ["road_class", "lanes",
                                                                                            "width_m"]
    assert panel.proxy.setData(panel.proxy.index(1, 5), "2")
    assert dict(tool.features[1].attributes) == {"lanes": 2} and shown(panel, 5) == ["", "2", ""]
    tool.undo()
    assert tool.features[1].attributes == () and shown(panel, 5) == ["", "", ""]


def test_a_bad_cell_value_is_reported_and_changes_nothing(qtbot, shown_errors):
    tool, panel = panel_with_lines(qtbot)
    panel.proxy.setData(panel.proxy.index(0, 5), "two")
    assert tool.features[0].attributes == () and not tool.can_redo
    assert len(shown_errors) == 1 and "lanes must be a whole number" in str(shown_errors[0])


def test_a_choice_cell_is_edited_with_its_list(qtbot):
    tool, panel = panel_with_lines(qtbot)
    index = panel.proxy.index(2, 4)
    editor = panel.table.itemDelegate().createEditor(panel.table.viewport(), None, index)
    assert isinstance(editor, QComboBox) and [editor.itemText(i) for i in range(3)] == ["", "primary", "track"]
    editor.setCurrentText("track")
    panel.table.itemDelegate().setModelData(editor, panel.proxy, index)
    assert dict(tool.features[2].attributes) == {"road_class": "track"}


def test_sorting_orders_numbers_as_numbers_with_blanks_last_and_follows_edits(qtbot):
    tool, panel = panel_with_lines(qtbot, lengths=(50.0, 10.0, 300.0))
    panel.table.sortByColumn(1, Qt.SortOrder.AscendingOrder)  # lengths: 10 px < 50 px < 300 px (not as text)
    assert shown(panel, 1) == ["10 px", "50 px", "300 px"]
    for feature, width in zip(tool.features, ("12.5", "", "3")):
        if width:
            tool.set_attributes(feature.id, {"width_m": width})
    panel.table.sortByColumn(6, Qt.SortOrder.AscendingOrder)
    assert shown(panel, 6) == ["3", "12.5", ""]
    tool.set_attributes(tool.features[1].id, {"width_m": "1"})  # the edited row moves to its place
    assert shown(panel, 6) == ["1", "3", "12.5"]
    panel.table.selectRow(0)
    assert panel.selected_id() == tool.features[1].id == tool.selected_id


def test_the_form_on_finish_sets_the_new_lines_values(qtbot):
    tool, panel = panel_with_lines(qtbot, lengths=())
    panel.form_on_finish.setChecked(True)
    tool.click((0.0, 0.0))
    tool.click((40.0, 0.0), straight=True)
    tool.finish()
    qtbot.waitUntil(lambda: panel.form is not None and panel.form.isVisible())
    form = panel.form
    form.editors["road_class"].setCurrentText("primary")
    form.editors["lanes"].setText("2.5")
    form.accept()  # refused: stays open and says why
    assert form.isVisible() and "lanes must be a whole number" in form.error.text()
    form.editors["lanes"].setText("4")
    form.editors["width_m"].setText("7.25")
    form.accept()
    assert dict(tool.features[0].attributes) == {"road_class": "primary", "lanes": 4, "width_m": 7.25}
    assert tool.undo() and tool.features[0].attributes == ()  # the values: one step of their own


def test_no_form_unless_asked(qtbot):
    tool, panel = panel_with_lines(qtbot, lengths=(20.0,))
    tool.click((0.0, 50.0))
    tool.click((40.0, 50.0), straight=True)
    tool.finish()
    qtbot.wait(20)
    assert panel.form is None


def test_the_fields_dialog_defines_the_layers_fields(qtbot):
    tool, panel = panel_with_lines(qtbot, lengths=(20.0,))
    tool.set_attributes(tool.features[0].id, {"lanes": 3})
    dialog = panel.define_fields()
    assert dialog.table.rowCount() == 3
    row = dialog.add_row("surface", "choice", "asphalt, gravel")
    dialog.table.cellWidget(row, 1).setCurrentText("choice")
    bad = dialog.add_row("score")
    dialog.accept()
    assert dialog.isVisible() and f"row {bad + 1}" in dialog.error.text() and "LineSnap's own" in dialog.error.text()
    dialog.table.removeRow(bad)
    dialog.table.removeRow(0)  # road_class goes; lanes keeps its value
    dialog.accept()
    assert [f.name for f in tool.fields] == ["lanes", "width_m", "surface"]
    assert tool.fields[2].choices == ("asphalt", "gravel")
    assert panel.model.columnCount() == 7 and shown(panel, 4) == ["3"]


def test_a_line_edit_form_keeps_the_current_values(qtbot):
    tool, panel = panel_with_lines(qtbot, lengths=(20.0,))
    tool.set_attributes(tool.features[0].id, {"lanes": 3, "road_class": "track"})
    form = panel.open_form(tool.features[0].id)
    assert isinstance(form.editors["lanes"], QLineEdit) and form.values() == {"road_class": "track", "lanes": "3",
                                                                             "width_m": ""}
    form.reject()


def test_the_fields_dialog_shows_its_column_headers_whole(qtbot):
    from app.docks.attribute_dialogs import FieldsDialog

    dialog = FieldsDialog((FieldDef("class", "choice", ("primary", "secondary")),))
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    header = dialog.table.horizontalHeader()
    for column in range(3):  # (the dialog opened 386 px wide and read "hoices (comma-separate")
        text = dialog.table.horizontalHeaderItem(column).text()
        assert header.sectionSize(column) >= header.fontMetrics().horizontalAdvance(text), text
    assert header.sectionViewportPosition(2) + header.sectionSize(2) <= dialog.table.viewport().width()
    assert header.sectionSize(1) >= dialog.table.cellWidget(0, 1).sizeHint().width()  # the type's choice whole
