"""The sort proxy follows rows inserted, removed and changed in its source as its promise says, through random edits:
rows put in their place after the rows that sort equal to them, the mapping both ways, a persistent index kept."""

from __future__ import annotations

from bisect import bisect_left

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from app.docks.features_model import SORT_ROLE
from app.docks.sort_proxy import SortProxy, sort_key

UID_ROLE = Qt.ItemDataRole.UserRole + 7
ASC, DESC = Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder
VALUES = st.one_of(st.none(), st.integers(-3, 3), st.sampled_from(["a", "A", "b"]))


class ListModel(QAbstractTableModel):
    """One column of sort values; each row has a unique id.  Rows are inserted with their values."""

    def __init__(self):
        super().__init__()
        self.rows: list[tuple[int, object]] = []  # (uid, value)

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else 1

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        uid, value = self.rows[index.row()]
        return uid if role == UID_ROLE else value if role == SORT_ROLE else str(value)

    def insert(self, row: int, items: list) -> None:
        self.beginInsertRows(QModelIndex(), row, row + len(items) - 1)
        self.rows[row:row] = items
        self.endInsertRows()

    def remove(self, first: int, last: int) -> None:
        self.beginRemoveRows(QModelIndex(), first, last)
        del self.rows[first:last + 1]
        self.endRemoveRows()

    def change(self, first: int, last: int, values: list) -> None:
        for row, value in zip(range(first, last + 1), values):
            self.rows[row] = (self.rows[row][0], value)
        self.dataChanged.emit(self.index(first, 0), self.index(last, 0))


class Reference:
    """What the proxy should show, by uid: Python's stable sorted() on a sort, each new or changed row bisected in
    after its equals (more than 32 at once: all sorted again, as the proxy does)."""

    def __init__(self, model: ListModel):
        self.model, self.shown, self.order = model, [], None  # order: None (the model's), ASC or DESC

    def key(self, uid):
        return sort_key(dict(self.model.rows)[uid])

    def sort(self, order) -> None:
        self.order = order
        self.shown = ([uid for uid, _ in self.model.rows] if order is None else
                      sorted(self.shown, key=self.key, reverse=order == DESC))

    def place(self, uids: list) -> None:
        if self.order is None:
            self.shown = [uid for uid, _ in self.model.rows]
            return
        descending = self.order == DESC
        if len(uids) > 32:
            self.shown = sorted(self.shown + uids, key=self.key, reverse=descending)
            return
        for uid in sorted(uids, key=self.key, reverse=descending):
            key = self.key(uid)
            keys = [self.key(u) for u in self.shown]
            if descending:
                place = bisect_left([k < key for k in keys], True)
            else:
                place = bisect_left([key < k for k in keys], True)
            self.shown.insert(place, uid)


EDITS = st.lists(st.tuples(st.sampled_from(["insert", "insert", "insert_many", "remove", "remove", "change", "sort"]),
                           st.integers(0, 60), st.integers(0, 3), st.lists(VALUES, min_size=40, max_size=40)),
                 max_size=25)


@pytest.mark.parametrize("order", [None, ASC, DESC])
@settings(max_examples=60, deadline=None)
@given(edits=EDITS)
def test_the_proxy_follows_its_source_as_a_reference_does(qapp, order, edits):
    model, proxy = ListModel(), SortProxy()
    proxy.setSourceModel(model)
    reference, uids = Reference(model), iter(range(10**6))
    proxy.sort(-1 if order is None else 0, ASC if order is None else order)
    reference.sort(order)
    kept, kept_uid = QPersistentModelIndex(), None
    for action, at, size, values in edits:
        rows = len(model.rows)
        if action in ("insert", "insert_many"):
            items = [(next(uids), v) for v in values[:size + 1 if action == "insert" else 34 + size]]
            model.insert(at % (rows + 1), items)
            reference.place([uid for uid, _ in items])
        elif action == "remove" and rows:
            first = at % rows
            last = min(rows - 1, first + size)
            gone = {uid for uid, _ in model.rows[first:last + 1]}
            model.remove(first, last)
            reference.shown = [uid for uid in reference.shown if uid not in gone]
            if kept_uid in gone:
                kept_uid = None
        elif action == "change" and rows:
            first = at % rows
            last = min(rows - 1, first + size)
            changed = [uid for uid, _ in model.rows[first:last + 1]]
            model.change(first, last, values)
            reference.shown = [uid for uid in reference.shown if uid not in changed]
            reference.place(changed)
        elif action == "sort":
            new_order = [None, ASC, DESC][size % 3]
            proxy.sort(-1 if new_order is None else 0, ASC if new_order is None else new_order)
            reference.sort(new_order)
        shown = [proxy.index(row, 0).data(UID_ROLE) for row in range(proxy.rowCount())]
        assert shown == reference.shown
        assert all(proxy.mapFromSource(proxy.mapToSource(proxy.index(row, 0))).row() == row
                   for row in range(proxy.rowCount()))
        if kept_uid is not None:
            assert kept.isValid() and kept.data(UID_ROLE) == kept_uid  # a persistent index stays on its row
        elif proxy.rowCount():
            kept = QPersistentModelIndex(proxy.index(at % proxy.rowCount(), 0))
            kept_uid = kept.data(UID_ROLE)
