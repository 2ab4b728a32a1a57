"""The features list: name, length, score, confidence and the layer's attributes; sort, edit, zoom to, continue."""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.docks.attribute_dialogs import AttributeDelegate, AttributeForm, FieldsDialog
from app.docks.features_model import ID_ROLE, FeaturesModel
from app.docks.sort_proxy import SortProxy
from app.errors import reports_errors

__all__ = ["FeaturesPanel"]


#: Default width (px) of the table's columns; the last one takes what is left.
COLUMN_PX = 78


class FeaturesPanel(QWidget):
    """Lists the finished features of an :class:`app.model.tool.ExtractionTool`.

    Editing a name renames the feature, editing a cell of an attribute column
    sets its value; the buttons zoom to, continue or delete the selected
    feature, Fields... defines the layer's attribute fields, and "Form"
    asks for a line's values when it is finished (all edits go through
    the tool, so they are undoable).  A click on a header sorts the rows.
    The rows come from :class:`app.docks.features_model.FeaturesModel`
    (``model``), which computes only the cells in view.

    Signals
    -------
    zoom_requested(rect)
        ``rect`` = (x0, y0, x1, y1) in raster pixels.
    drawing_resumed()
        Continue reopened the selected feature: the map should take the keys (Enter, Esc, Backspace).
    """

    zoom_requested = Signal(object)
    drawing_resumed = Signal()

    def __init__(self, tool, parent=None):
        super().__init__(parent)
        self.tool = tool
        self._syncing = False
        self.model = FeaturesModel(tool, self._rename, self, self._set_value)
        self.proxy = SortProxy(self)
        self.proxy.setSourceModel(self.model)
        self.form: AttributeForm | None = None  # the form open for a finished line, if any
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)  # drawing order at first
        self.table.setSortingEnabled(True)
        self.table.setItemDelegate(AttributeDelegate(self.table))
        header = self.table.horizontalHeader()
        header.setDefaultSectionSize(COLUMN_PX)  # narrow columns: attribute fields fit beside the four fixed ones
        header.setStretchLastSection(True)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # no row measuring
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                   | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.table.selectionModel().selectionChanged.connect(self._selection_from_table)
        self.table.doubleClicked.connect(lambda index: index.column() > 0 and self.zoom_to_selected())
        self.zoom_button = QPushButton("Zoom to", clicked=self.zoom_to_selected)
        self.continue_button = QPushButton("Continue", clicked=self.continue_selected,
                                           toolTip="Make it the feature in progress and chain more pieces onto it")
        self.delete_button = QPushButton("Delete", clicked=self.delete_selected)
        # Delete while the table has the focus (the Edit menu's Delete is the map's): PySide6 ignores a
        # ``context=`` keyword, so the context is set afterwards
        delete_key = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.table, self.delete_selected)
        delete_key.setContext(Qt.ShortcutContext.WidgetShortcut)
        self.fields_button = QPushButton("Fields...", clicked=self.define_fields,
                                         toolTip="Define this layer's attribute fields (road class, surface, lanes)")
        self.form_on_finish = QCheckBox("Form", toolTip="Ask for a line's attributes when it is finished")
        buttons = QHBoxLayout()  # one row: the Settings dock above keeps its height at 1400 x 900
        for button in (self.zoom_button, self.continue_button, self.delete_button, self.fields_button):
            buttons.addWidget(button)
        buttons.addWidget(self.form_on_finish)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.table)
        layout.addLayout(buttons)
        tool.fields_changed.connect(self._follow_fields)
        tool.feature_finished.connect(self._finished)
        tool.changed.connect(self.refresh)
        tool.outcomes_changed.connect(self.refresh)
        tool.selection_changed.connect(self._selection_from_tool)
        self._selection_from_tool()

    def set_raster(self, raster) -> None:
        """Measure lengths on ``raster`` (metres when georeferenced)."""
        self.model.set_raster(raster)

    def refresh(self) -> None:
        """Follow the tool's features: rows appended, removed or changed (a name being edited stays open)."""
        self._syncing = True
        try:
            self.model.sync()
        finally:
            self._syncing = False
        self._selection_from_tool()

    def _follow_fields(self) -> None:
        """Follow the tool's fields: columns removed, moved, inserted, changed; the selection and the sort kept."""
        self._syncing = True  # (a column removed is deselected first: the row selected is not whole meanwhile)
        scrolls = self.table.hasAutoScroll()
        self.table.setAutoScroll(False)  # (the current cell's column removed: no scroll to its neighbour)
        try:
            self.model.sync_fields()
        finally:
            self._syncing = False
            self.table.setAutoScroll(scrolls)
        selection = self.table.selectionModel()
        for row in {index.row() for index in selection.selectedIndexes()}:  # (a column inserted is not selected)
            selection.select(self.proxy.index(row, 0),
                             QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows)
        header, sort = self.table.horizontalHeader(), (self.proxy.sortColumn(), self.proxy.sortOrder())
        if (header.sortIndicatorSection(), header.sortIndicatorOrder()) != sort:  # (a header follows no column moved)
            with QSignalBlocker(header):  # (its signal would sort the rows again: they are sorted)
                header.setSortIndicator(*sort)
        self._selection_from_tool()

    @reports_errors("Could not rename the feature")
    def _rename(self, feature_id: int, name: str) -> None:
        self.tool.rename(feature_id, name)

    @reports_errors("Could not set the value")
    def _set_value(self, feature_id: int, field_name: str, text: str) -> None:
        self.tool.set_attributes(feature_id, {field_name: text})

    def define_fields(self) -> FieldsDialog:
        """Open the dialog that defines the layer's fields (window-modal: returns it); OK applies them, renamed fields
        taking their values along, as one undoable edit (:meth:`app.model.tool_edits.FeatureEdits.set_fields`)."""
        dialog = FieldsDialog(self.tool.fields, self, apply=self.tool.set_fields)
        dialog.open()
        return dialog

    def _finished(self, feature) -> None:
        if self.form_on_finish.isChecked() and self.tool.fields:
            QTimer.singleShot(0, lambda: self.open_form(feature.id))  # after the key or click that finished it

    def open_form(self, feature_id: int) -> AttributeForm | None:
        """Open the attribute form of a finished feature (not modal); OK sets its values as one undoable edit."""
        try:
            feature = self.tool.feature(feature_id)
        except KeyError:
            return None  # undone meanwhile
        form = AttributeForm(self.tool.fields, dict(feature.attributes), f"Attributes of {feature.name}", self)
        form.accepted.connect(lambda: self._set_values(feature_id, form.values()))
        form.finished.connect(lambda _result: setattr(self, "form", None))
        self.form = form
        form.open()
        return form

    @reports_errors("Could not set the values")
    def _set_values(self, feature_id: int, values: dict) -> None:
        self.tool.set_attributes(feature_id, values)

    def selected_id(self) -> int | None:
        """Id of the feature selected in the table, or None."""
        rows = self.table.selectionModel().selectedRows()
        return rows[0].data(ID_ROLE) if rows else None

    def _selection_from_table(self, *_args) -> None:
        if not self._syncing:
            self.tool.select(self.selected_id())
        enabled = self.selected_id() is not None
        for button in (self.zoom_button, self.continue_button, self.delete_button):
            button.setEnabled(enabled)

    def _selection_from_tool(self) -> None:
        row = self.model.row_of(self.tool.selected_id) if self.tool.selected_id is not None else None
        if row is not None and self.selected_id() == self.tool.selected_id:
            return self._selection_from_table()
        self._syncing = True
        try:
            selection = self.table.selectionModel()
            if row is None:
                selection.clearSelection()
            else:
                flags = (QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
                index = self.proxy.mapFromSource(self.model.index(row, 0))
                selection.select(index, flags)
                self.table.scrollTo(index)
        finally:
            self._syncing = False
        self._selection_from_table()

    def zoom_to_selected(self) -> None:
        """Ask the viewer to show the selected feature whole."""
        feature_id = self.selected_id()
        if feature_id is None:
            return
        vertices = self.tool.feature_vertices(self.tool.feature(feature_id))
        (x0, y0), (x1, y1) = vertices.min(axis=0), vertices.max(axis=0)
        pad = max(20.0, 0.15 * max(x1 - x0, y1 - y0))
        self.zoom_requested.emit((x0 - pad, y0 - pad, x1 + pad, y1 + pad))

    def delete_selected(self) -> None:
        """Delete the selected feature (undoable)."""
        feature_id = self.selected_id()
        if feature_id is not None:
            self.tool.delete(feature_id)

    def continue_selected(self) -> None:
        """Reopen the selected feature for drawing."""
        feature_id = self.selected_id()
        if feature_id is not None:
            self.tool.reopen(feature_id)
            self.drawing_resumed.emit()
