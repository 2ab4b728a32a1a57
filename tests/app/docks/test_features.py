"""The features table follows the finished features, and only them, row by row."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from app.docks.features import FeaturesPanel
from app.model.pieces import straight_outcome
from app.model.tool import ExtractionTool


def panel_with_one_line(qtbot):
    tool = ExtractionTool(settings=None)
    tool.click((0.0, 0.0))
    tool.click((30.0, 40.0), straight=True)
    tool.finish()
    panel = FeaturesPanel(tool)
    qtbot.addWidget(panel)
    return tool, panel


def cell(panel, row, column, role=Qt.ItemDataRole.DisplayRole):
    return panel.model.index(row, column).data(role)


def count_signals(model):
    counts = {"reset": 0, "inserted": 0, "removed": 0, "changed": 0}
    model.modelReset.connect(lambda: counts.__setitem__("reset", counts["reset"] + 1))
    model.rowsInserted.connect(lambda *a: counts.__setitem__("inserted", counts["inserted"] + 1))
    model.rowsRemoved.connect(lambda *a: counts.__setitem__("removed", counts["removed"] + 1))
    model.dataChanged.connect(lambda *a: counts.__setitem__("changed", counts["changed"] + 1))
    return counts


def test_drawing_the_next_feature_does_not_touch_the_rows(qtbot):
    # Rows cost time with thousands of (imported) features: not at every click.
    tool, panel = panel_with_one_line(qtbot)
    counts = count_signals(panel.model)
    tool.click((100.0, 100.0))
    tool.click((160.0, 100.0))
    tool.complete_piece(tool.current.pieces[0].id, straight_outcome((100.0, 100.0), (160.0, 100.0)))
    tool.drop_last_piece()
    assert counts == {"reset": 0, "inserted": 0, "removed": 0, "changed": 0}


def test_finish_undo_and_rename_change_one_row_each_never_the_whole_table(qtbot):
    tool, panel = panel_with_one_line(qtbot)
    tool.add_features([("", np.array([[0.0, 0.0], [float(k), 1.0]]), {}) for k in range(1, 200)])
    counts = count_signals(panel.model)
    tool.click((100.0, 100.0))
    tool.click((160.0, 100.0), straight=True)
    tool.finish()
    assert counts["inserted"] == 1 and panel.model.rowCount() == 201
    tool.rename(tool.features[5].id, "Ditch")
    assert counts["changed"] == 1 and cell(panel, 5, 0) == "Ditch"
    tool.undo()
    tool.undo()
    assert counts["removed"] == 1 and panel.model.rowCount() == 200 and cell(panel, 5, 0) != "Ditch"
    assert counts["reset"] == 0
    tool.delete(tool.features[3].id)  # from the middle: one row removed there
    assert counts["removed"] == 2 and counts["reset"] == 0
    assert [cell(panel, r, 0) for r in range(panel.model.rowCount())] == [f.name for f in tool.features]
    tool.undo()
    assert counts["inserted"] == 2 and counts["reset"] == 0 and cell(panel, 3, 0) == tool.features[3].name


def test_rows_follow_finishing_a_feature_and_its_late_result(qtbot):
    tool, panel = panel_with_one_line(qtbot)
    tool.click((100.0, 100.0))
    tool.click((160.0, 100.0))
    piece = tool.current.pieces[0]
    tool.finish()  # the piece is still being computed: a placeholder segment of 60 px
    assert [cell(panel, r, 1) for r in range(2)] == ["50 px", "60 px"]
    assert cell(panel, 1, 2) == "—"
    outcome = straight_outcome((100.0, 100.0), (100.0, 180.0))
    tool.complete_piece(piece.id, type(outcome)(outcome.vertices_px, score=12.5))
    assert cell(panel, 1, 1) == "80 px" and cell(panel, 1, 2) == "12.5"
    tool.rename(tool.features[0].id, "Ditch")
    assert cell(panel, 0, 0) == "Ditch"


def test_selection_follows_the_tool_both_ways(qtbot):
    tool, panel = panel_with_one_line(qtbot)
    tool.add_features([("", np.array([[0.0, 0.0], [float(k), 1.0]]), {}) for k in range(1, 50)])
    tool.select(tool.features[30].id)
    assert panel.selected_id() == tool.features[30].id
    panel.table.selectRow(7)
    assert tool.selected_id == tool.features[7].id
    tool.select(None)
    assert panel.selected_id() is None and not panel.delete_button.isEnabled()


def test_the_confidence_column_shows_the_weakest_piece_and_flags_it_when_low(qtbot):
    from app.model.pieces import PieceOutcome

    tool, panel = panel_with_one_line(qtbot)  # a straight piece: no confidence
    header = panel.model.headerData
    assert header(3, Qt.Orientation.Horizontal) == "Confidence"
    assert "dashed" in header(3, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert cell(panel, 0, 3) == ""
    tool.click((100.0, 100.0))
    for x, confidence in ((160.0, 0.91), (220.0, 0.42)):
        tool.click((x, 100.0))
        tool.complete_piece(tool.current.pieces[-1].id,
                            PieceOutcome(np.array([(x - 60.0, 100.0), (x, 100.0)]), confidence=confidence))
    tool.finish()
    assert cell(panel, 1, 3) == "0.42" and "dashed" in cell(panel, 1, 3, Qt.ItemDataRole.ToolTipRole)
    assert cell(panel, 1, 3, Qt.ItemDataRole.ForegroundRole) is not None
    assert cell(panel, 0, 3, Qt.ItemDataRole.ForegroundRole) is None
