"""The features table follows the finished features, and only them."""

from __future__ import annotations

import numpy as np

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


def test_drawing_the_next_feature_does_not_rebuild_the_rows(qtbot):
    # A rebuild costs a fraction of a second with thousands of (imported) features: not at every click.
    tool, panel = panel_with_one_line(qtbot)
    row = panel.table.item(0, 0)
    tool.click((100.0, 100.0))
    tool.click((160.0, 100.0))
    tool.complete_piece(tool.current.pieces[0].id, straight_outcome((100.0, 100.0), (160.0, 100.0)))
    tool.drop_last_piece()
    assert panel.table.item(0, 0) is row


def test_rows_follow_finishing_a_feature_and_its_late_result(qtbot):
    tool, panel = panel_with_one_line(qtbot)
    tool.click((100.0, 100.0))
    tool.click((160.0, 100.0))
    piece = tool.current.pieces[0]
    tool.finish()  # the piece is still being computed: a placeholder segment of 60 px
    assert [panel.table.item(r, 1).text() for r in range(2)] == ["50 px", "60 px"]
    assert panel.table.item(1, 2).text() == "—"
    outcome = straight_outcome((100.0, 100.0), (100.0, 180.0))
    tool.complete_piece(piece.id, type(outcome)(outcome.vertices_px, score=12.5))
    assert panel.table.item(1, 1).text() == "80 px" and panel.table.item(1, 2).text() == "12.5"
    tool.rename(tool.features[0].id, "Ditch")
    assert panel.table.item(0, 0).text() == "Ditch"


def test_the_confidence_column_shows_the_weakest_piece_and_flags_it_when_low(qtbot):
    from app.model.pieces import PieceOutcome

    tool, panel = panel_with_one_line(qtbot)  # a straight piece: no confidence
    assert panel.table.horizontalHeaderItem(3).text() == "Confidence"
    assert "dashed" in panel.table.horizontalHeaderItem(3).toolTip()
    assert panel.table.item(0, 3).text() == ""
    tool.click((100.0, 100.0))
    for x, confidence in ((160.0, 0.91), (220.0, 0.42)):
        tool.click((x, 100.0))
        tool.complete_piece(tool.current.pieces[-1].id,
                            PieceOutcome(np.array([(x - 60.0, 100.0), (x, 100.0)]), confidence=confidence))
    tool.finish()
    item = panel.table.item(1, 3)
    assert item.text() == "0.42" and "dashed" in item.toolTip()
    assert item.foreground().color() != panel.table.item(1, 2).foreground().color()
