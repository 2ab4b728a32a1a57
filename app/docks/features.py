"""The features list: name, length, score, confidence; select, zoom to, rename, delete, continue drawing."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.errors import reports_errors
from app.model.estimates import LOW_CONFIDENCE, is_low
from app.model.measure import feature_length

__all__ = ["FeaturesPanel"]

_ID_ROLE = Qt.ItemDataRole.UserRole
_LOW_TEXT = QColor(230, 120, 0)
CONFIDENCE_TIP = (f"The lowest confidence of the feature's pieces, in [0, 1] (blank: none was estimated); "
                  f"pieces below {LOW_CONFIDENCE:g} are drawn dashed.")


class FeaturesPanel(QWidget):
    """Lists the finished features of an :class:`app.model.tool.ExtractionTool`.

    Editing a name renames the feature; the buttons zoom to, continue or delete
    the selected feature (all edits go through the tool, so they are undoable).

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
        self.raster = None
        self._lengths: dict = {}
        self._refreshing = False
        self._shown: tuple = ((), ())  # (features, their pending piece ids) as the rows show them
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["Name", "Length", "Score", "Confidence"])
        self.table.horizontalHeaderItem(3).setToolTip(CONFIDENCE_TIP)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                   | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.table.itemSelectionChanged.connect(self._selection_from_table)
        self.table.itemChanged.connect(self._renamed)
        self.table.cellDoubleClicked.connect(lambda row, col: col > 0 and self.zoom_to_selected())
        self.zoom_button = QPushButton("Zoom to", clicked=self.zoom_to_selected)
        self.continue_button = QPushButton("Continue", clicked=self.continue_selected,
                                           toolTip="Make it the feature in progress and chain more pieces onto it")
        self.delete_button = QPushButton("Delete", clicked=self.delete_selected)
        # Delete while the table has the focus (the Edit menu's Delete is the map's): PySide6 ignores a
        # ``context=`` keyword, so the context is set afterwards
        delete_key = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.table, self.delete_selected)
        delete_key.setContext(Qt.ShortcutContext.WidgetShortcut)
        buttons = QHBoxLayout()
        for button in (self.zoom_button, self.continue_button, self.delete_button):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.table)
        layout.addLayout(buttons)
        tool.changed.connect(self._refresh_if_changed)
        tool.outcomes_changed.connect(self._refresh_if_changed)
        tool.selection_changed.connect(self._selection_from_tool)
        self.refresh()

    def set_raster(self, raster) -> None:
        """Measure lengths on ``raster`` (metres when georeferenced)."""
        self.raster = raster
        self._lengths.clear()
        georeferenced = raster is not None and raster.georeferenced
        self.table.horizontalHeaderItem(1).setText("Length")  # each value carries its unit (m, km or px)
        self.table.horizontalHeaderItem(1).setToolTip(
            "Geodesic length on the WGS84 ellipsoid" if georeferenced else "Length in pixels (no georeference)")
        self.refresh()

    def _length(self, feature):
        vertices = self.tool.feature_vertices(feature)
        key = (feature.id, feature.pieces, len(vertices), float(vertices.sum()))
        if key not in self._lengths:
            self._lengths[key] = feature_length(vertices, self.raster)
        return self._lengths[key]

    def _refresh_if_changed(self) -> None:
        """Rebuild the rows when the finished features or their outcomes changed.

        Clicks and results of the feature in progress change neither, and a
        rebuild costs a fraction of a second with thousands of features (and
        would close a name being edited).
        """
        features = self.tool.features
        if features is not self._shown[0] or self._pending(features) != self._shown[1]:
            self.refresh()

    def _pending(self, features) -> tuple:
        return tuple(p.id for f in features for p in f.pieces if self.tool.is_pending(p))

    def refresh(self) -> None:
        """Rebuild the rows from the tool's features."""
        self._refreshing = True
        features = self.tool.features
        self._shown = (features, self._pending(features))
        self.table.setRowCount(len(features))
        for row, feature in enumerate(features):
            name = QTableWidgetItem(feature.name)
            name.setData(_ID_ROLE, feature.id)
            length = self._length(feature)
            length_item = QTableWidgetItem(length.text())
            length_item.setToolTip(length.method)
            score = self.tool.feature_score(feature)
            score_item = QTableWidgetItem("—" if score is None else f"{score:.1f}")
            for col, item in enumerate((name, length_item, score_item, self._confidence_item(feature))):
                if col:
                    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, col, item)
        self._refreshing = False
        self._selection_from_tool()

    def _confidence_item(self, feature) -> QTableWidgetItem:
        confidence = self.tool.feature_confidence(feature)
        item = QTableWidgetItem("" if confidence is None else f"{confidence:.2f}")
        if is_low(confidence):
            item.setForeground(QBrush(_LOW_TEXT))
            item.setToolTip(f"Low confidence: the pieces below {LOW_CONFIDENCE:g} are drawn dashed.")
        return item

    def selected_id(self) -> int | None:
        """Id of the feature selected in the table, or None."""
        rows = self.table.selectionModel().selectedRows()
        return self.table.item(rows[0].row(), 0).data(_ID_ROLE) if rows else None

    def _selection_from_table(self) -> None:
        if not self._refreshing:
            self.tool.select(self.selected_id())
        enabled = self.selected_id() is not None
        for button in (self.zoom_button, self.continue_button, self.delete_button):
            button.setEnabled(enabled)

    def _selection_from_tool(self) -> None:
        self._refreshing = True
        self.table.clearSelection()
        for row in range(self.table.rowCount()):
            if self.table.item(row, 0).data(_ID_ROLE) == self.tool.selected_id:
                self.table.selectRow(row)
        self._refreshing = False
        self._selection_from_table()

    @reports_errors("Could not rename the feature")
    def _renamed(self, item) -> None:
        if self._refreshing or item.column() != 0:
            return
        feature_id = item.data(_ID_ROLE)
        try:
            if item.text().strip():  # a cleared name just goes back to the old one
                self.tool.rename(feature_id, item.text())
        finally:
            self.refresh()

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
