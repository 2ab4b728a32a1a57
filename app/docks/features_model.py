"""The features table's Qt model: one row per finished feature, its cells computed when shown.

With tens of thousands of (imported) features, building every row's cells
on each edit cost seconds; this model answers ``data()`` for the rows in view
only (lengths cached per feature) and follows each edit by what it changed
(the tool's ``features_edit``, :func:`app.model.feature_rows.row_edit`):
rows removed and inserted where the edit took features out and put them in,
a row changed where a feature was replaced by one with the same id (a
rename).  Comparing the feature tuples, or resetting the model after a
delete, walked every feature (tens of ms at 100,000) and lost the view's
selection and scroll; a reset is left for a restore (a session, a project).
A change of the attribute fields is followed column by column the same way
(:func:`app.model.field_columns.column_edit`, told which field became which
by the tool's ``fields_edit``); the values it moved or converted come with it
(the tool says ``fields_changed`` before ``changed``): the same features in
the same rows, their changed columns signalled once each, not row by row.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from app.model.attributes import value_text
from app.model.estimates import LOW_CONFIDENCE, is_low
from app.model.feature_lookup import place_by_walk
from app.model.feature_rows import RowEdit, row_edit
from app.model.field_columns import column_edit
from app.model.measure import feature_lengths
from app.model.pieces import ToolState, unsettled_places
from app.model.state_change import StateChange
from app.model.tool_requests import FeatureEdit

__all__ = ["FeaturesModel", "ID_ROLE", "SORT_ROLE", "CONFIDENCE_TIP"]

ID_ROLE = Qt.ItemDataRole.UserRole
#: A cell's value to sort by: text, a number (a length in metres or pixels), or None (blank).
SORT_ROLE = Qt.ItemDataRole.UserRole + 1
HEADERS = ("Name", "Length", "Score", "Confidence")
_LOW_TEXT = QColor(230, 120, 0)
CONFIDENCE_TIP = (f"The lowest confidence of the feature's pieces, in [0, 1] (blank: none was estimated); "
                  f"pieces below {LOW_CONFIDENCE:g} are drawn dashed.")
_PIXEL_LENGTH_TIP = "Length in pixels (no georeference)"
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
#: An edit of more runs of rows than this resets the model (one layout of the view instead of many row moves).
_MAX_RUNS = 64


class FeaturesModel(QAbstractTableModel):
    """Rows of an :class:`app.model.tool.ExtractionTool`'s finished features: name, length, score, confidence,
    then one column per attribute field of the layer.

    Call :meth:`sync` when the tool's features or outcomes changed and
    :meth:`sync_fields` when its fields did; editing a name calls
    ``rename(feature_id, text)``, editing a value ``set_value(feature_id, field_name, text)``.
    """

    def __init__(self, tool, rename, parent=None, set_value=None):
        super().__init__(parent)
        self.tool, self._rename, self._set_value = tool, rename, set_value
        self.fields = tool.fields
        self.raster = None
        self._features = tool.features
        self._lengths: dict[int, tuple] = {}  # feature id -> (vertices, Length)
        self._pending = self._pending_ids(self._features)

    # ------------------------------------------------------------ following the tool
    def set_raster(self, raster) -> None:
        """Measure lengths on ``raster`` (metres when georeferenced)."""
        self.raster = raster
        self._lengths.clear()
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, 1, 1)
        if self._features:
            self.dataChanged.emit(self.index(0, 1), self.index(len(self._features) - 1, 1))

    def sync(self) -> None:
        """Catch up with the tool: the rows its last edit removed, inserted or changed (a reset after a restore)."""
        new = self.tool.features
        if new is not self._features:
            rows = self._row_edit(self._features, new)
            if rows is None or len(rows.removed) + len(rows.inserted) > _MAX_RUNS:
                self._reset(new)
            else:
                self._follow(rows, new)
        for feature_id in list(self._pending):  # late results of finished features
            row = self.row_of(feature_id)
            if row is None or not self._pending_ids([self._features[row]]):
                self._pending.discard(feature_id)
            if row is not None:
                self._row_changed(row)

    def _row_edit(self, old: tuple, new: tuple) -> RowEdit | None:
        """The rows from ``old`` to ``new``: by the tool's last edit where it started from ``old``, else by the
        difference of the two; None after a restore (the whole tuple replaced)."""
        edit = self.tool.features_edit
        if edit is None:
            return None
        if edit.old is not old:  # (the dock follows every change: not seen so far)
            edit = FeatureEdit.of(StateChange.between(ToolState(old), ToolState(new)), old)
        return row_edit(edit)

    def _follow(self, rows: RowEdit, new: tuple) -> None:
        """Remove, insert and change rows as ``rows`` says, from the features shown to ``new``; in between, the rows
        are those of the features at each step (the sort proxy reads the rows inserted)."""
        features = self._features
        last_step = len(rows.removed) + len(rows.inserted) - 1  # ``new`` then, but for the rows changed after
        for step, (first, last) in enumerate(rows.removed):
            self._pending.difference_update(f.id for f in features[first:last + 1])
            self.beginRemoveRows(QModelIndex(), first, last)
            self._features = features = new if step == last_step else features[:first] + features[last + 1:]
            self.endRemoveRows()
        for step, (first, last) in enumerate(rows.inserted, len(rows.removed)):
            self.beginInsertRows(QModelIndex(), first, last)
            self._features = features = (new if step == last_step else
                                         features[:first] + new[first:last + 1] + features[first:])
            self.endInsertRows()
            self._pending |= self._pending_ids(new[first:last + 1])
        self._features = new
        for row in rows.changed:
            self._pending.discard(new[row].id)
            self._pending |= self._pending_ids([new[row]])
            self._row_changed(row)

    def _reset(self, features: tuple) -> None:
        self.beginResetModel()
        self._features = features
        self.endResetModel()
        self._pending = self._pending_ids(features)

    def _pending_ids(self, features) -> set[int]:
        """Ids of the features (a sequence) with pieces still being computed (found in C: an import's rows)."""
        return {features[place].id for place in unsettled_places(features, self.tool.outcomes)}

    def sync_fields(self) -> None:
        """Follow the tool's attribute fields, one column each after the fixed ones: columns removed, moved, inserted
        and changed as :func:`app.model.field_columns.column_edit` says (a reset lost the view's selection, its scroll
        and its sort, and re-sorted every row)."""
        new, change = self.tool.fields, self.tool.fields_edit
        renamed = change.renamed if change is not None and change.old is self.fields and change.new is new else None
        edit = column_edit(self.fields, new, renamed)
        shown, fixed = list(self.fields), len(HEADERS)
        for first, last in edit.removed:
            self.beginRemoveColumns(QModelIndex(), fixed + first, fixed + last)
            del shown[first:last + 1]
            self.fields = tuple(shown)
            self.endRemoveColumns()
        for at, to in edit.moved:  # (Qt's destination: the column it goes before, counted before the move)
            self.beginMoveColumns(QModelIndex(), fixed + at, fixed + at, QModelIndex(), fixed + to + (to > at))
            shown.insert(to, shown.pop(at))
            self.fields = tuple(shown)
            self.endMoveColumns()
        for first, last in edit.inserted:
            self.beginInsertColumns(QModelIndex(), fixed + first, fixed + last)
            shown[first:first] = new[first:last + 1]
            self.fields = tuple(shown)
            self.endInsertColumns()
        self.fields = new
        inserted = [k for first, last in edit.inserted for k in range(first, last + 1)] if self._take_values() else []
        for column in edit.changed:  # renamed or retyped: its header and its cells
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, fixed + column, fixed + column)
        for column in sorted(edit.changed + inserted):  # (inserted: a removed field's values shown again, converted)
            if self._features:
                self.dataChanged.emit(self.index(0, fixed + column),
                                      self.index(len(self._features) - 1, fixed + column))

    def _take_values(self) -> bool:
        """Take in the features of a change of the fields (the values it moved or converted: the same features in
        the same places, only the columns it changed or inserted differ); whether it did.  Anything else waits for
        :meth:`sync`."""
        new, edit = self.tool.features, self.tool.features_edit
        if new is self._features or edit is None or edit.old is not self._features or edit.taken_at != edit.put_at \
                or any(a.id != b.id for a, b in zip(edit.taken, edit.put)):
            return False
        self._features = new
        return True

    def field_at(self, column: int):
        """The attribute field shown in ``column``, or None for a fixed column."""
        return self.fields[column - len(HEADERS)] if column >= len(HEADERS) else None

    def _row_changed(self, row: int) -> None:
        self.dataChanged.emit(self.index(row, 0), self.index(row, self.columnCount() - 1))

    def row_of(self, feature_id) -> int | None:
        """The row of a feature, or None."""
        try:
            if self._features is self.tool.features:
                return self.tool.feature_place(feature_id)  # (the tool's lookup: no walk)
            return place_by_walk(self._features, feature_id)
        except KeyError:
            return None

    def feature_at(self, row: int):
        """The feature shown in ``row``."""
        return self._features[row]

    # ------------------------------------------------------------ Qt's model interface
    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._features)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(HEADERS) + len(self.fields)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal:
            return None
        georeferenced = self.raster is not None and self.raster.georeferenced
        field = self.field_at(section)
        if role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section] if field is None else field.name  # each length carries its unit (m, km or px)
        if role == Qt.ItemDataRole.ToolTipRole and field is not None:
            return f"{field.kind}{': ' + ', '.join(field.choices) if field.choices else ''} (double-click to edit)"
        if role == Qt.ItemDataRole.ToolTipRole:
            if section == 1:
                return "Geodesic length on the WGS84 ellipsoid" if georeferenced else _PIXEL_LENGTH_TIP
            if section == 3:
                return CONFIDENCE_TIP
        return None

    def flags(self, index):
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        editable = index.column() == 0 or (self.field_at(index.column()) is not None and self._set_value is not None)
        return flags | Qt.ItemFlag.ItemIsEditable if editable else flags

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or index.row() >= len(self._features):
            return None
        feature, column = self._features[index.row()], index.column()
        if role == ID_ROLE:
            return feature.id
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return self._text(feature, column)
        if role == SORT_ROLE:
            return self._sort_key(feature, column)
        if role == Qt.ItemDataRole.TextAlignmentRole and 0 < column < len(HEADERS):
            return int(_RIGHT.value)
        if column == 1 and role == Qt.ItemDataRole.ToolTipRole:
            return self._length(feature).method
        if column == 3 and role in (Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.ToolTipRole):
            if is_low(self.tool.feature_confidence(feature)):
                if role == Qt.ItemDataRole.ForegroundRole:
                    return QBrush(_LOW_TEXT)
                return f"Low confidence: the pieces below {LOW_CONFIDENCE:g} are drawn dashed."
        return None

    def setData(self, index, value, role=Qt.ItemDataRole.EditRole) -> bool:
        field = self.field_at(index.column())
        if role == Qt.ItemDataRole.EditRole and field is not None and self._set_value is not None:
            self._set_value(self._features[index.row()].id, field.name, "" if value is None else str(value))
            return True  # the tool's change comes back through sync (a refused value: nothing changed)
        if role != Qt.ItemDataRole.EditRole or index.column() != 0:
            return False
        feature = self._features[index.row()]
        if str(value).strip():  # a cleared name just goes back to the old one
            self._rename(feature.id, str(value))
        self._row_changed(index.row())
        return True

    def _text(self, feature, column: int) -> str:
        field = self.field_at(column)
        if field is not None:
            return value_text(dict(feature.attributes).get(field.name))
        if column == 0:
            return feature.name
        if column == 1:
            return self._length(feature).text()
        if column == 2:
            score = self.tool.feature_score(feature)
            return "—" if score is None else f"{score:.1f}"
        confidence = self.tool.feature_confidence(feature)
        return "" if confidence is None else f"{confidence:.2f}"

    def sort_values(self, column: int, rows) -> list:
        """The :data:`SORT_ROLE` values of ``column`` in ``rows``, read in one go (a sort reads them all; lengths
        not yet measured are measured together)."""
        features = self._features
        if column == 1 and self.field_at(column) is None:
            self._measure([features[row] for row in rows])
        return [self._sort_key(features[row], column) for row in rows]

    def _measure(self, features) -> None:
        """Cache the lengths of those of ``features`` not measured since their vertices changed, in one pass."""
        missing = []
        for feature in features:
            vertices = self.tool.feature_vertices(feature)
            cached = self._lengths.get(feature.id)
            if cached is None or cached[0] is not vertices:
                missing.append((feature.id, vertices))
        for (feature_id, vertices), length in zip(missing, feature_lengths([v for _, v in missing], self.raster)):
            self._lengths[feature_id] = (vertices, length)

    def _sort_key(self, feature, column: int):
        field = self.field_at(column)
        if field is not None:
            return dict(feature.attributes).get(field.name)
        if column == 0:
            return feature.name.lower()
        if column == 1:
            return self._length(feature).value
        return self.tool.feature_score(feature) if column == 2 else self.tool.feature_confidence(feature)

    def _length(self, feature):
        self._measure([feature])  # (the tool caches the vertices: the same array while unchanged)
        return self._lengths[feature.id][1]
