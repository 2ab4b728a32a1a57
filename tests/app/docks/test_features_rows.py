"""The features table follows each edit by its difference: after random edit sequences its rows (and what its signals
said of them) are those of a table built afresh, and an edit elsewhere keeps the selected row selected and in view."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import Qt

from app.docks.features import FeaturesPanel
from app.docks.features_model import ID_ROLE, FeaturesModel
from app.docks.sort_proxy import sort_key
from app.model.attributes import FieldDef
from app.model.pieces import PieceOutcome, ToolState
from app.model.tool import ExtractionTool
from tests.app.model.test_edit_shortcuts import ACTIONS, _act

TABLE_ACTIONS = ACTIONS + ["complete", "complete", "select", "select", "import_many"]


def texts(model, row: int) -> tuple:
    """A row's id and every cell's text."""
    return (model.index(row, 0).data(ID_ROLE),) + tuple(model.index(row, column).data()
                                                         for column in range(model.columnCount()))


class SignalledRows:
    """The rows as the model's signals describe them: removed, inserted (read when inserted), changed, reset; the
    row count checked against the model's at each signal."""

    def __init__(self, model):
        self.model, self.rows, self.errors = model, [], []
        self._reset()
        model.rowsRemoved.connect(self._removed)
        model.rowsInserted.connect(self._inserted)
        model.dataChanged.connect(self._changed)
        model.modelReset.connect(self._reset)

    def _reset(self) -> None:
        self.rows = [texts(self.model, row) for row in range(self.model.rowCount())]

    def _removed(self, _parent, first: int, last: int) -> None:
        del self.rows[first:last + 1]
        self._check("removed")

    def _inserted(self, _parent, first: int, last: int) -> None:
        self.rows[first:first] = [texts(self.model, row) for row in range(first, last + 1)]
        self._check("inserted")

    def _changed(self, top_left, bottom_right, _roles=()) -> None:
        for row in range(top_left.row(), bottom_right.row() + 1):
            self.rows[row] = texts(self.model, row)

    def _check(self, what: str) -> None:
        if len(self.rows) != self.model.rowCount():
            self.errors.append(f"{what}: {len(self.rows)} rows signalled, {self.model.rowCount()} in the model")


def _complete(tool, a: int, b: int) -> None:
    """A late result of one of the pieces still being computed (of the finished features or the one in progress)."""
    features = list(tool.features) + ([tool.current] if tool.current is not None else [])
    pending = [piece for feature in features for piece in feature.pieces if tool.is_pending(piece)]
    if pending:
        vertices = np.array([[0.0, 0.0], [float(b % 7) * 10, 5.0]])
        tool.complete_piece(pending[a % len(pending)].id, PieceOutcome(vertices, score=float(b), confidence=0.3))


def act(tool, action: str, a: int, b: int) -> None:
    if action == "complete":
        _complete(tool, a, b)
    elif action == "select":
        tool.select(tool.features[a % len(tool.features)].id if tool.features and b % 4 else None)
    elif action == "import_many":  # more runs of rows than the model follows one by one, when split up later
        tool.add_features([("", np.array([[float(k), 0.0], [float(k), 9.0]]), {}) for k in range(70 + a)])
    else:
        _act(tool, action, a, b)


def check_model(model, signalled: SignalledRows) -> None:
    """The model's rows are the tool's features, and its signals said so (every cell as a fresh model's)."""
    tool = model.tool
    fresh = FeaturesModel(tool, lambda *_args: None)
    assert model.rowCount() == len(tool.features) and not signalled.errors
    assert all(model.feature_at(row) is feature for row, feature in enumerate(tool.features))
    assert signalled.rows == [texts(fresh, row) for row in range(fresh.rowCount())]


def check_rows(panel, signalled: SignalledRows, sorted_by_name: bool) -> None:
    tool = panel.tool
    check_model(panel.model, signalled)
    shown = [panel.proxy.index(row, 0).data(ID_ROLE) for row in range(panel.proxy.rowCount())]
    if sorted_by_name:
        assert sorted(shown) == sorted(f.id for f in tool.features)
        names = [sort_key(tool.feature(i).name.lower()) for i in shown]
        assert names == sorted(names)
    else:
        assert shown == [f.id for f in tool.features]
    assert panel.selected_id() == tool.selected_id


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(TABLE_ACTIONS), st.integers(0, 50), st.integers(0, 50)), max_size=50),
       st.booleans())
# a split, a merge of lines apart and its undo, a delete before a reopened line, with late results and a selection
@example([("import", 1, 0), ("import", 4, 1), ("click", 1, 1), ("click", 3, 2), ("finish", 0, 0), ("select", 5, 1),
          ("split", 0, 0), ("merge", 2, 0), ("undo", 0, 0), ("merge", 0, 3), ("reopen", 2, 0), ("delete", 0, 0),
          ("complete", 0, 3), ("straight", 5, 5), ("finish", 0, 0), ("undo", 0, 0), ("redo", 0, 0)], True)
# many lines, some split (runs of rows apart), a restore of a reordered tuple: a reset
@example([("import_many", 0, 0), ("split", 3, 0), ("split", 9, 0), ("rename", 5, 2), ("reload", 0, 0),
          ("undo", 0, 0)], False)
def test_the_rows_that_followed_the_edits_equal_a_table_built_afresh(qapp, actions, sorted_by_name):
    tool = ExtractionTool(settings="S1")
    tool.set_fields((FieldDef("kind"),))
    panel = FeaturesPanel(tool)
    try:
        panel.show()
        if sorted_by_name:
            panel.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        signalled = SignalledRows(panel.model)
        for action, a, b in actions:
            act(tool, action, a, b)
            qapp.processEvents()
            check_rows(panel, signalled, sorted_by_name)
    finally:
        panel.close()
        panel.deleteLater()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(TABLE_ACTIONS + ["sync"] * 8), st.integers(0, 50), st.integers(0, 50)),
                max_size=50))
# two deletes apart and a split elsewhere seen at once: runs of rows apart, from the difference of the tuples
@example([("import", 0, 2), ("import", 3, 2), ("sync", 0, 0), ("delete", 1, 0), ("delete", 3, 0), ("split", 4, 0),
          ("rename", 0, 4), ("sync", 0, 0), ("undo", 0, 0), ("undo", 0, 0), ("undo", 0, 0)])
def test_a_model_synced_now_and_then_equals_one_built_afresh(qapp, actions):
    """Several edits between two syncs (the tool's last edit does not start from the rows shown): the rows follow the
    difference of the two tuples of features."""
    tool = ExtractionTool(settings="S1")
    tool.restore_fields((FieldDef("kind"),))  # (not an edit: the bare model follows no undo of the fields)
    model = FeaturesModel(tool, lambda *_args: None)
    signalled = SignalledRows(model)
    for action, a, b in actions + [("sync", 0, 0)]:
        if action == "sync":
            model.sync()
            check_model(model, signalled)
        else:
            act(tool, action, a, b)


def test_a_restore_of_other_features_resets_the_rows_once(qtbot):
    tool = ExtractionTool(settings=None)
    tool.add_features([("", np.array([[0.0, 0.0], [float(k), 1.0]]), {}) for k in range(1, 30)])
    panel = FeaturesPanel(tool)
    qtbot.addWidget(panel)
    resets = []
    panel.model.modelReset.connect(lambda: resets.append(True))
    tool.restore(ToolState(tool.features[::-1]), dict(tool.outcomes))  # (a session restored, a project opened)
    assert len(resets) == 1 and [panel.model.feature_at(r) for r in range(29)] == list(tool.features)


def panel_scrolled_to_a_selection(qtbot, sorted_by_name: bool):
    """A shown panel over 400 lines named in reverse, line 300 selected and scrolled to."""
    tool = ExtractionTool(settings=None)
    tool.add_features([(f"road {999 - k}", np.array([[0.0, 0.0], [float(k + 1), 1.0]]), {}) for k in range(400)])
    panel = FeaturesPanel(tool)
    qtbot.addWidget(panel)
    panel.resize(400, 300)
    panel.show()
    qtbot.waitExposed(panel)
    if sorted_by_name:
        panel.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
    tool.select(tool.features[300].id)
    return tool, panel


@pytest.mark.parametrize("sorted_by_name", [False, True])
def test_an_edit_elsewhere_keeps_the_selected_row_selected_and_the_view_where_it_was(qtbot, sorted_by_name):
    tool, panel = panel_scrolled_to_a_selection(qtbot, sorted_by_name)
    selected, table = tool.selected_id, panel.table
    table.scrollToTop()  # the user looks elsewhere meanwhile
    qtbot.wait(10)
    scroll = table.verticalScrollBar().value()
    seen = []  # the selection whenever the table says it changed (Qt 6 says so when rows move under it)
    table.selectionModel().selectionChanged.connect(lambda *_args: seen.append(panel.selected_id()))
    for edit in (lambda: tool.delete(tool.features[150].id), tool.undo, tool.redo,
                 lambda: tool.rename(tool.features[120].id, "road 0"), tool.undo):
        edit()
        qtbot.wait(1)
        assert panel.selected_id() == selected == tool.selected_id
        rows = table.selectionModel().selectedRows()
        assert [index.data(ID_ROLE) for index in rows] == [selected]
        assert table.verticalScrollBar().value() == scroll  # not thrown back to the selection (as a reset did)
    assert set(seen) <= {selected}  # the selection never went away meanwhile
