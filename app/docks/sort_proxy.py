"""Sorting the features table: a column's row order computed at once, not pair by pair.

QSortFilterProxyModel sorts with one ``lessThan`` call per pair of rows; with a
Python model each call is two ``data()`` calls and a Python comparison, so
sorting 10,000 features took 1-6 s with the window frozen.  :class:`SortProxy`
asks the model for the column's values once (``sort_values``) and orders the
rows with one stable ``np.lexsort`` (:func:`order_rows`).  It orders as that
QSortFilterProxyModel did:

- numbers first, numerically; then text, case-insensitively; blanks (None)
  last; descending is the reverse (blanks first);
- stably: rows that sort equal keep the order they were shown in;
- dynamically: a row added, or whose value changed, goes to its place after
  the rows that sort equal to it.

The rows shown are an int64 array of source rows, so that following a row
inserted or removed in the source is a few numpy passes (a Python list shifted
row by row took 10-15 ms an edit at 100,000 rows), and rows added or removed
in one block of the rows shown are inserted or removed there, the other rows
left where they are (moving them through the end of the table changed the
whole layout).
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np
from PySide6.QtCore import QAbstractProxyModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from app.docks.features_model import SORT_ROLE

__all__ = ["SortProxy", "order_rows", "sort_key"]

#: Every integer up to this holds exactly in a float64.
_EXACT_INT = 2**53
#: At most this many rows added or changed at once are placed one by one (a binary search each); more: a full sort.
_FEW_ROWS = 32


def sort_key(value) -> tuple:
    """The order of a cell's sort value: numbers (numerically), then text (case-insensitively), then blanks."""
    if value is None:
        return (2, 0, "")
    if isinstance(value, (int, float)):
        return (0, value, "")
    return (1, 0, str(value).lower())


def order_rows(rows, values, descending: bool = False) -> list[int]:
    """``rows`` stably sorted by :func:`sort_key` of ``values[row]`` (descending: the reverse order, ties kept).

    Same as ``sorted(rows, key=lambda r: sort_key(values[r]), reverse=descending)``
    in a few numpy passes: a kind (number, text, blank) and a rank within it per row.
    """
    picked = [values[row] for row in rows]
    kinds = [0 if isinstance(v, (int, float)) else 2 if v is None else 1 for v in picked]
    kind = np.array(kinds, dtype=np.int8)
    within = np.zeros(len(picked))
    numbers = [v for v, k in zip(picked, kinds) if k == 0]
    if numbers:
        within[kind == 0] = _ranks(numbers) if any(_inexact(v) for v in numbers) else numbers
    texts = [str(v).lower() for v, k in zip(picked, kinds) if k == 1]
    if texts:
        within[kind == 1] = _ranks(texts)
    if descending:  # negated keys, still a stable sort: ties stay in the order shown, as before
        kind, within = -kind, -within
    return np.asarray(rows, dtype=np.int64)[np.lexsort((within, kind))].tolist()


def _inexact(number) -> bool:
    return isinstance(number, int) and abs(number) > _EXACT_INT


def _ranks(values: list) -> list[int]:
    """Each value's rank among the distinct ``values`` (Python's comparison: exact for big integers and any text)."""
    rank = {value: k for k, value in enumerate(sorted(set(values)))}
    return [rank[value] for value in values]


class SortProxy(QAbstractProxyModel):
    """A flat table model's rows sorted by one column's :data:`SORT_ROLE` values, as the module says.

    Use it like a QSortFilterProxyModel that does not filter: ``setSourceModel``,
    then ``sort(column, order)`` (a view with sorting enabled calls it);
    ``sort(-1)`` shows the model's own order.  The model's ``sort_values(column,
    rows)`` gives the values fast (else they are read with ``data()``).  The
    model may reset, insert, remove and change rows, and change its layout;
    it may insert, remove and move columns (sorted by a column removed: the
    model's order again).
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._rows = np.zeros(0, dtype=np.int64)  # proxy row -> source row
        self._positions: np.ndarray | None = None  # source row -> proxy row (-1: not shown), built when asked
        self._values: list | None = None  # source row -> its value in the sort column, while sorted
        self._column, self._order = -1, Qt.SortOrder.AscendingOrder
        self._saved: list = []  # persistent indexes over a source layout change: (proxy index, source index)

    # ------------------------------------------------------------ sorting
    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        """Show the rows by ``column``'s values (-1: in the model's order), from the order shown now."""
        self._column, self._order = column, Qt.SortOrder(order)
        self._values = self._read_values()
        self._reorder(self._sorted(self._rows))

    def sortColumn(self) -> int:
        return self._column

    def sortOrder(self) -> Qt.SortOrder:
        return self._order

    def _sort_column(self) -> int:
        model = self.sourceModel()
        return self._column if model is not None and 0 <= self._column < model.columnCount() else -1

    def _read_values(self, rows=None) -> list | None:
        """The sort column's values of source ``rows`` (all when None); None while unsorted."""
        column, model = self._sort_column(), self.sourceModel()
        if column < 0:
            return None
        rows = range(model.rowCount()) if rows is None else rows
        if hasattr(model, "sort_values"):
            return model.sort_values(column, rows)
        return [model.index(row, column).data(SORT_ROLE) for row in rows]

    def _sorted(self, rows: np.ndarray) -> np.ndarray:
        """Source ``rows`` in the order shown: by the sort column's values, stably from their order, else by row."""
        descending = self._order == Qt.SortOrder.DescendingOrder
        if self._values is None:
            ordered = np.sort(rows, kind="stable")  # (nearly sorted: a merge sort's one pass)
            return ordered[::-1].copy() if descending else ordered
        return np.asarray(order_rows(rows.tolist(), self._values, descending), dtype=np.int64)

    def _placed(self, rows: np.ndarray, new) -> np.ndarray:
        """``rows`` (in order) with the ``new`` source rows each placed after the rows that sort equal to it."""
        new = np.asarray(new, dtype=np.int64)
        if self._values is None or len(new) > _FEW_ROWS:
            return self._sorted(np.concatenate([rows, new]))
        values, descending = self._values, self._order == Qt.SortOrder.DescendingOrder
        keys = {row: sort_key(values[row]) for row in new.tolist()}
        for row in sorted(keys, key=keys.__getitem__, reverse=descending):
            key = keys[row]
            if descending:
                place = bisect_left(rows, True, key=lambda r: sort_key(values[r]) < key)
            else:
                place = bisect_left(rows, True, key=lambda r: key < sort_key(values[r]))
            rows = np.insert(rows, place, row)
        return rows

    def _reorder(self, rows: np.ndarray) -> None:
        """Show the source ``rows`` in this order (the same rows as now), moving the persistent indexes along."""
        if np.array_equal(rows, self._rows):
            return
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        sources = [(int(self._rows[index.row()]), index.column()) for index in persistent]
        self._rows, self._positions = rows, None
        self.changePersistentIndexList(persistent, [self.index(self._position(row), column)
                                                    for row, column in sources])
        self.layoutChanged.emit()

    def _source_positions(self) -> np.ndarray:
        """Source row -> proxy row (-1: not shown)."""
        if self._positions is None:
            positions = np.full(self.sourceModel().rowCount() if self.sourceModel() else 0, -1, dtype=np.int64)
            positions[self._rows] = np.arange(len(self._rows))
            self._positions = positions
        return self._positions

    def _position(self, source_row: int) -> int:
        positions = self._source_positions()
        return int(positions[source_row]) if 0 <= source_row < len(positions) else -1

    # ------------------------------------------------------------ following the source model
    def setSourceModel(self, model) -> None:
        self.beginResetModel()
        if self.sourceModel() is not None:
            for signal, slot in self._links(self.sourceModel()):
                signal.disconnect(slot)
        super().setSourceModel(model)
        if model is not None:
            for signal, slot in self._links(model):
                signal.connect(slot)
        self._rebuild()
        self.endResetModel()

    def _links(self, model) -> tuple:
        return ((model.dataChanged, self._source_data_changed), (model.headerDataChanged, self.headerDataChanged),
                (model.rowsInserted, self._source_rows_inserted),
                (model.rowsAboutToBeRemoved, self._source_rows_about_to_be_removed),
                (model.rowsRemoved, self._source_rows_removed),
                (model.modelAboutToBeReset, self.beginResetModel), (model.modelReset, self._source_reset),
                (model.layoutAboutToBeChanged, self._source_layout_about_to_change),
                (model.layoutChanged, self._source_layout_changed),
                (model.columnsAboutToBeInserted, self._source_columns_about_to_be_inserted),
                (model.columnsInserted, self._source_columns_inserted),
                (model.columnsAboutToBeRemoved, self._source_columns_about_to_be_removed),
                (model.columnsRemoved, self._source_columns_removed),
                (model.columnsAboutToBeMoved, self._source_columns_about_to_be_moved),
                (model.columnsMoved, self._source_columns_moved))

    def _rebuild(self) -> None:
        """The model's rows afresh, in their sorted order (as after a reset)."""
        self._rows = np.arange(self.sourceModel().rowCount() if self.sourceModel() is not None else 0, dtype=np.int64)
        self._values = self._read_values()
        self._rows, self._positions = self._sorted(self._rows), None

    def _source_reset(self) -> None:
        self._rebuild()
        self.endResetModel()

    def _source_data_changed(self, top_left, bottom_right, roles=()) -> None:
        first, last = top_left.row(), bottom_right.row()
        column = self._sort_column()
        if column >= 0 and top_left.column() <= column <= bottom_right.column() and (
                not roles or SORT_ROLE in roles):
            self._values[first:last + 1] = self._read_values(range(first, last + 1))
            rows = self._rows
            self._reorder(self._placed(rows[(rows < first) | (rows > last)], range(first, last + 1)))
        shown = self._source_positions()[first:last + 1]
        shown = shown[shown >= 0]
        if len(shown):
            self.dataChanged.emit(self.index(int(shown.min()), top_left.column()),
                                  self.index(int(shown.max()), bottom_right.column()), roles)

    def _source_rows_inserted(self, parent, first: int, last: int) -> None:
        if parent.isValid():
            return
        count = last - first + 1
        # the rows shown already point at their source rows after the insertion (read while the view is told)
        self._rows = rows = np.where(self._rows >= first, self._rows + count, self._rows)
        self._positions = None
        if self._values is not None:
            self._values[first:first] = self._read_values(range(first, last + 1))
        new = np.arange(first, last + 1, dtype=np.int64)
        target = self._placed(rows, new)
        at = np.flatnonzero((target >= first) & (target <= last))
        if at[-1] - at[0] + 1 == count and np.array_equal(np.delete(target, at), rows):
            end, shown = int(at[0]), target  # one block among the rows shown: inserted where it goes
        else:
            end, shown = len(rows), np.concatenate([rows, new])  # at the end, then moved to their places
        self.beginInsertRows(QModelIndex(), end, end + count - 1)
        self._rows, self._positions = shown, None
        self.endInsertRows()
        self._reorder(target)

    def _source_rows_about_to_be_removed(self, parent, first: int, last: int) -> None:
        if parent.isValid():
            return
        gone = (self._rows >= first) & (self._rows <= last)
        at = np.flatnonzero(gone)
        if not len(at):
            return
        if at[-1] - at[0] + 1 != len(at):  # apart: together at the end first
            self._reorder(np.concatenate([self._rows[~gone], self._rows[gone]]))
            at = np.arange(len(self._rows) - len(at), len(self._rows))
        start, end = int(at[0]), int(at[-1])
        self.beginRemoveRows(QModelIndex(), start, end)
        self._rows, self._positions = np.concatenate([self._rows[:start], self._rows[end + 1:]]), None
        self.endRemoveRows()

    def _source_rows_removed(self, parent, first: int, last: int) -> None:
        if parent.isValid():
            return
        count = last - first + 1
        self._rows = np.where(self._rows > last, self._rows - count, self._rows)
        self._positions = None
        if self._values is not None:
            del self._values[first:last + 1]

    def _source_layout_about_to_change(self, *_args) -> None:
        self.layoutAboutToBeChanged.emit()
        self._saved = [(QPersistentModelIndex(index), QPersistentModelIndex(self.mapToSource(index)))
                       for index in self.persistentIndexList()]

    def _source_layout_changed(self, *_args) -> None:
        self._rebuild()
        saved, self._saved = self._saved, []
        self.changePersistentIndexList([QModelIndex(proxy) for proxy, _ in saved],
                                       [self.mapFromSource(QModelIndex(source)) for _, source in saved])
        self.layoutChanged.emit()

    # the columns are the model's, passed on as they change; the sort column follows its column (the rows stay)
    def _source_columns_about_to_be_inserted(self, parent, first: int, last: int) -> None:
        if not parent.isValid():
            self.beginInsertColumns(QModelIndex(), first, last)

    def _source_columns_inserted(self, parent, first: int, last: int) -> None:
        if not parent.isValid():
            self._column += (last - first + 1) if self._column >= first else 0
            self.endInsertColumns()

    def _source_columns_about_to_be_removed(self, parent, first: int, last: int) -> None:
        if not parent.isValid():
            self.beginRemoveColumns(QModelIndex(), first, last)

    def _source_columns_removed(self, parent, first: int, last: int) -> None:
        if parent.isValid():
            return
        gone = first <= self._column <= last
        if gone:  # sorted by no column: the model's order (a layout change: the selection stays)
            self._column, self._order, self._values = -1, Qt.SortOrder.AscendingOrder, None
        elif self._column > last:
            self._column -= last - first + 1
        self.endRemoveColumns()
        if gone:
            self._reorder(self._sorted(self._rows))

    def _source_columns_about_to_be_moved(self, parent, start: int, end: int, _parent, destination: int) -> None:
        if not parent.isValid():
            self.beginMoveColumns(QModelIndex(), start, end, QModelIndex(), destination)

    def _source_columns_moved(self, parent, start: int, end: int, _parent, destination: int) -> None:
        if parent.isValid():
            return
        count, column = end - start + 1, self._column
        if start <= column <= end:
            self._column = column - start + (destination if destination < start else destination - count)
        elif destination <= column < start:
            self._column = column + count
        elif end < column < destination:
            self._column = column - count
        self.endMoveColumns()

    # ------------------------------------------------------------ Qt's proxy interface
    def mapToSource(self, index):
        if not index.isValid() or self.sourceModel() is None:
            return QModelIndex()
        return self.sourceModel().index(int(self._rows[index.row()]), index.column())

    def mapFromSource(self, index):
        if not index.isValid():
            return QModelIndex()
        row = self._position(index.row())
        return self.createIndex(row, index.column()) if row >= 0 else QModelIndex()

    def index(self, row: int, column: int, parent=QModelIndex()):
        if parent.isValid() or not (0 <= row < len(self._rows) and 0 <= column < self.columnCount()):
            return QModelIndex()
        return self.createIndex(row, column)

    def parent(self, index=None):
        if index is None:  # the QObject's parent, when asked without an index
            return QObject.parent(self)
        return QModelIndex()

    def sibling(self, row: int, column: int, index):
        return self.index(row, column)

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        model = self.sourceModel()
        return 0 if parent.isValid() or model is None else model.columnCount()

    def hasChildren(self, parent=QModelIndex()) -> bool:
        return not parent.isValid() and len(self._rows) > 0

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        model = self.sourceModel()
        if model is None:
            return None
        if orientation == Qt.Orientation.Vertical:
            if not 0 <= section < len(self._rows):
                return None
            section = int(self._rows[section])
        return model.headerData(section, orientation, role)

    # data, setData and flags straight to the model (QAbstractProxyModel's would call back mapToSource)
    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        return self.sourceModel().data(self.mapToSource(index), role) if index.isValid() else None

    def setData(self, index, value, role=Qt.ItemDataRole.EditRole) -> bool:
        return index.isValid() and self.sourceModel().setData(self.mapToSource(index), value, role)

    def flags(self, index):
        return self.sourceModel().flags(self.mapToSource(index)) if index.isValid() else Qt.ItemFlag.NoItemFlags
