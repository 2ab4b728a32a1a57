"""Small pieces of the knapsack panel: its file dialogs, a table model over rows, spin boxes.

The dialogs are module functions so that tests replace them
(``monkeypatch.setattr(app.knapsack.widgets, ...)``) instead of clicking.
"""

from __future__ import annotations

import numbers
import re

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtWidgets import QFileDialog, QSpinBox, QTableView

__all__ = ["RowsModel", "ask_export_path", "ask_instance_files", "make_table", "spin"]

#: Text the tables show as a number (right-aligned): the instances table's optima, sizes and times.
_NUMBER = re.compile(r"-?\d+(\.\d+)?")
INSTANCE_FILTER = "Knapsack instances (*.json *.ins2D *.csv *.txt *.in knapPI_*);;All files (*)"


def ask_instance_files(parent, folder: str = "") -> list[str]:
    """Instance files to load (several for a batch); empty when the user cancels."""
    paths, _ = QFileDialog.getOpenFileNames(parent, "Load knapsack instances", folder, INSTANCE_FILTER)
    return list(paths)


def ask_export_path(parent, file_format: str, suggestion: str = "") -> str | None:
    """Where to export the solution as ``file_format`` ("json" or "csv"), or None."""
    pattern = f"{file_format.upper()} (*.{file_format});;All files (*)"
    path, _ = QFileDialog.getSaveFileName(parent, f"Export the solution as {file_format.upper()}", suggestion, pattern)
    if path and not path.lower().endswith(f".{file_format}"):
        path += f".{file_format}"
    return path or None


def spin(low: int, high: int, value: int, tip: str, special: str = "") -> QSpinBox:
    """An integer spin box; ``special`` is shown for its minimum (e.g. "auto")."""
    box = QSpinBox(minimum=low, maximum=high, value=value, toolTip=tip, keyboardTracking=False)
    if special:
        box.setSpecialValueText(special)
    return box


class RowsModel(QAbstractTableModel):
    """Headers and rows (a list of lists, or a 2-D array) shown as text; numbers right-aligned.

    Cells are formatted when the view asks for them, so a table of many
    thousand chosen items costs nothing until it is scrolled to.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._headers: list = []
        self._rows = []

    def set_rows(self, headers, rows) -> None:
        """Show ``rows`` (each with one value per header) under ``headers``."""
        self.beginResetModel()
        self._headers, self._rows = list(headers), rows
        self.endResetModel()

    def cell(self, row: int, column: int):
        """The value at (row, column), as given."""
        return self._rows[row][column]

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._headers)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        value = self._rows[index.row()][index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return str(value)
        if role == Qt.ItemDataRole.TextAlignmentRole and (
                isinstance(value, numbers.Integral) or (isinstance(value, str) and _NUMBER.fullmatch(value))):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)  # numbers line up by digit
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self._headers[section] if section < len(self._headers) else None
        return super().headerData(section, orientation, role)


def make_table(model: RowsModel, stretch_last: bool = True) -> QTableView:
    """A read-only table view of ``model``: whole rows selected, one at a time."""
    view = QTableView(selectionBehavior=QTableView.SelectionBehavior.SelectRows,
                      selectionMode=QTableView.SelectionMode.SingleSelection)
    view.setModel(model)
    view.verticalHeader().hide()
    view.horizontalHeader().setStretchLastSection(stretch_last)
    view.horizontalHeader().setResizeContentsPrecision(200)  # size columns from the first rows only
    return view
