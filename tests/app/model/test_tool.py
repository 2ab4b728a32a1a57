"""The extraction tool's Qt-free model: clicks, chaining, undo/redo, cancel, preview."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from app.model.pieces import PieceOutcome, feature_ribbon_edges, feature_vertices
from app.model.tool import ExtractionTool


@dataclass(frozen=True)
class Snapping:
    """Settings with endpoint snapping: a piece may end away from its click."""

    name: str = "snap"
    snap_endpoints: bool = True


class Recorder:
    """Collects the tool's requests, as the window's worker would receive them."""

    def __init__(self, tool: ExtractionTool):
        self.pieces, self.starts, self.previews, self.changes = [], [], [], 0
        tool.piece_requested.connect(self._piece)
        tool.preview_requested.connect(self.previews.append)
        tool.changed.connect(self._count)

    def _piece(self, piece, start_xy):
        self.pieces.append(piece)
        self.starts.append(start_xy)

    def _count(self):
        self.changes += 1


def fake_outcome(start, end, n=3, score=1.0):
    """A bent polyline from start to end, as an extraction would return."""
    start, end = np.asarray(start, float), np.asarray(end, float)
    t = np.linspace(0, 1, n)[:, None]
    vertices = start + t * (end - start)
    vertices[1:-1, 1] += 1.0
    return PieceOutcome(vertices, score=score, backend="cpu", method="window")


@pytest.fixture
def tool():
    return ExtractionTool(settings="S1")


def test_two_clicks_request_one_piece_and_chain(tool):
    rec = Recorder(tool)
    tool.click((10, 10))
    assert tool.current is not None and tool.current.pieces == ()
    assert rec.pieces == []
    tool.click((50, 10))
    tool.click((90, 30))
    assert [(p.click_start, p.click_end) for p in rec.pieces] == [((10, 10), (50, 10)), ((50, 10), (90, 30))]
    assert all(p.settings == "S1" and p.kind == "extract" for p in rec.pieces)
    assert all(tool.is_pending(p) for p in tool.current.pieces)


def test_vertices_are_placeholders_until_outcomes_arrive(tool):
    rec = Recorder(tool)
    tool.click((0, 0))
    tool.click((10, 0))
    tool.click((20, 0))
    np.testing.assert_array_equal(tool.feature_vertices(tool.current), [[0, 0], [10, 0], [20, 0]])
    tool.complete_piece(rec.pieces[1].id, fake_outcome((10, 0), (20, 0)))
    tool.complete_piece(rec.pieces[0].id, fake_outcome((0, 0), (10, 0), score=2.5))
    np.testing.assert_array_equal(tool.feature_vertices(tool.current),
                                  [[0, 0], [5, 1], [10, 0], [15, 1], [20, 0]])
    assert tool.feature_score(tool.current) == pytest.approx(3.5)


def test_finish_names_and_stores_the_feature(tool):
    tool.click((0, 0))
    tool.click((10, 0))
    feature = tool.finish()
    assert feature.name == "Line 1" and tool.current is None
    assert tool.features == (feature,)
    tool.click((5, 5))
    tool.click((6, 9))
    assert tool.finish().name == "Line 2"


def test_finish_without_pieces_drops_the_lone_click(tool):
    tool.click((0, 0))
    assert tool.finish() is None
    assert tool.current is None and tool.features == ()


def test_undo_redo_walk_the_history(tool):
    rec = Recorder(tool)
    tool.click((0, 0))
    tool.click((10, 0))
    tool.click((20, 5))
    tool.finish()
    states = []
    while tool.can_undo:
        states.append((len(tool.features), tool.current and len(tool.current.pieces)))
        tool.undo()
    assert states == [(1, None), (0, 2), (0, 1), (0, 0)]
    assert tool.current is None and tool.features == ()
    assert not tool.undo()
    while tool.redo():
        pass
    assert len(tool.features) == 1 and len(tool.features[0].pieces) == 2
    assert len(rec.pieces) == 2  # redo reuses the requests already made


def test_outcome_arriving_after_undo_is_kept_for_redo(tool):
    rec = Recorder(tool)
    tool.click((0, 0))
    tool.click((10, 0))
    piece = rec.pieces[0]
    tool.undo()
    tool.complete_piece(piece.id, fake_outcome((0, 0), (10, 0)))
    tool.redo()
    assert not tool.is_pending(tool.current.pieces[0])
    assert len(rec.pieces) == 1


def test_new_edit_clears_redo(tool):
    tool.click((0, 0))
    tool.click((10, 0))
    tool.undo()
    assert tool.can_redo
    tool.click((5, 5))
    assert not tool.can_redo


def test_backspace_drops_last_piece_then_the_start(tool):
    tool.click((0, 0))
    tool.click((10, 0))
    tool.click((20, 0))
    tool.drop_last_piece()
    assert [p.click_end for p in tool.current.pieces] == [(10, 0)]
    tool.drop_last_piece()
    assert tool.current.pieces == ()
    tool.drop_last_piece()
    assert tool.current is None
    tool.drop_last_piece()  # nothing left: no error, no history entry
    assert tool.current is None


def test_escape_cancels_the_pending_piece_and_stops_the_preview(tool):
    rec = Recorder(tool)
    tool.click((0, 0))
    tool.click((10, 0))
    tool.complete_piece(rec.pieces[0].id, fake_outcome((0, 0), (10, 0)))
    tool.click((20, 0))  # still being computed
    tool.move_cursor((30, 3))
    tool.cancel()
    assert [p.click_end for p in tool.current.pieces] == [(10, 0)]
    assert tool.preview is None
    n = len(rec.previews)
    tool.move_cursor((31, 3))
    assert len(rec.previews) == n  # paused until the next click
    tool.click((40, 0))
    assert len(tool.current.pieces) == 2 and tool.current.pieces[1].click_start == (10, 0)


def test_escape_after_only_the_start_click_cancels_the_feature(tool):
    tool.click((0, 0))
    tool.cancel()
    assert tool.current is None


def test_a_second_escape_drops_the_whole_unfinished_line_and_undo_brings_it_back(tool):
    rec = Recorder(tool)
    tool.click((0, 0))
    tool.click((10, 0))
    tool.complete_piece(rec.pieces[0].id, fake_outcome((0, 0), (10, 0)))
    tool.click((20, 0))  # still being computed
    tool.cancel()  # the first Esc drops the piece in progress only
    assert len(tool.current.pieces) == 1
    tool.cancel()  # the second drops the line, as in QGIS
    assert tool.current is None and tool.features == ()
    tool.undo()
    assert len(tool.current.pieces) == 1


def test_escape_on_a_line_with_no_piece_computing_drops_it_at_once(tool):
    rec = Recorder(tool)
    tool.click((0, 0))
    tool.click((10, 0))
    tool.complete_piece(rec.pieces[0].id, fake_outcome((0, 0), (10, 0)))
    tool.cancel()
    assert tool.current is None and tool.features == ()


def _three_lines(tool):
    for y in (0, 10, 20):
        tool.click((0, y))
        tool.click((10, y), straight=True)
        tool.finish()
    return tool.features


def test_continue_keeps_the_line_in_its_place_in_the_list(tool):
    first, second, third = _three_lines(tool)
    tool.reopen(second.id)
    tool.click((20, 15), straight=True)
    tool.finish()
    assert [f.id for f in tool.features] == [first.id, second.id, third.id]
    assert len(tool.features[1].pieces) == 2
    tool.reopen(third.id)
    tool.delete(first.id)  # a line above the reopened one goes while it is being continued
    tool.finish()
    assert [f.id for f in tool.features] == [second.id, third.id]


def test_escape_on_a_continued_line_puts_it_back_as_it_was(tool):
    first, second, third = _three_lines(tool)
    tool.reopen(second.id)
    tool.click((20, 15), straight=True)
    tool.drop_last_piece()
    tool.drop_last_piece()  # even its own pieces dropped: Esc brings the line back whole
    tool.cancel()
    assert tool.features == (first, second, third) and tool.current is None


def test_straight_piece_needs_no_extraction(tool):
    rec = Recorder(tool)
    tool.click((0, 0))
    tool.click((10, 4), straight=True)
    assert rec.pieces == []
    piece = tool.current.pieces[0]
    assert piece.kind == "straight" and not tool.is_pending(piece)
    np.testing.assert_array_equal(tool.feature_vertices(tool.current), [[0, 0], [10, 4]])


def test_preview_requests_follow_the_cursor_and_stale_results_are_dropped(tool):
    rec = Recorder(tool)
    tool.move_cursor((5, 5))
    assert rec.previews == []  # nothing clicked yet
    tool.click((0, 0))
    tool.move_cursor((5, 5))
    tool.move_cursor((6, 5))
    tool.move_cursor((6, 5))  # same place: no new request
    first, second = rec.previews
    assert (first.start_xy, first.end_xy, second.end_xy) == ((0, 0), (5, 5), (6, 5))
    assert second.seq > first.seq
    assert tool.complete_preview(second.seq, fake_outcome((0, 0), (6, 5)))
    assert not tool.complete_preview(first.seq, fake_outcome((0, 0), (5, 5)))  # older than shown
    np.testing.assert_array_equal(tool.preview.vertices_px[-1], (6, 5))


def test_older_preview_is_shown_while_the_latest_is_computed(tool):
    rec = Recorder(tool)
    tool.click((0, 0))
    tool.move_cursor((5, 5))
    tool.move_cursor((6, 5))
    assert tool.complete_preview(rec.previews[0].seq, fake_outcome((0, 0), (5, 5)))
    assert tool.complete_preview(rec.previews[1].seq, fake_outcome((0, 0), (6, 5)))


def test_preview_from_a_previous_anchor_is_never_shown(tool):
    rec = Recorder(tool)
    tool.click((0, 0))
    tool.move_cursor((5, 5))
    stale = rec.previews[-1]
    tool.click((5, 5))
    assert not tool.complete_preview(stale.seq, fake_outcome((0, 0), (5, 5)))
    tool.move_cursor((9, 9))
    assert rec.previews[-1].start_xy == (5, 5)


def test_shift_preview_is_straight_and_immediate(tool):
    rec = Recorder(tool)
    tool.click((0, 0))
    tool.move_cursor((8, 3), straight=True)
    assert rec.previews == []
    np.testing.assert_array_equal(tool.preview.vertices_px, [[0, 0], [8, 3]])


def test_settings_change_reruns_the_current_piece_and_the_preview(tool):
    rec = Recorder(tool)
    tool.click((0, 0))
    tool.click((10, 0))
    tool.move_cursor((20, 2))
    old_piece, n_previews = tool.current.pieces[-1], len(rec.previews)
    tool.set_settings("S2")
    new_piece = tool.current.pieces[-1]
    assert new_piece.id != old_piece.id and new_piece.settings == "S2"
    assert (new_piece.click_start, new_piece.click_end) == (old_piece.click_start, old_piece.click_end)
    assert rec.pieces[-1] is new_piece
    assert len(rec.previews) == n_previews + 1 and rec.previews[-1].settings == "S2"
    restored = []
    tool.settings_restored.connect(restored.append)
    tool.undo()  # the re-run was an edit: undo brings back the piece and the settings it ran with
    assert tool.current.pieces[-1].id == old_piece.id and tool.settings == "S1" and restored == ["S1"]
    tool.redo()
    assert tool.current.pieces[-1].id == new_piece.id and tool.settings == "S2" and restored == ["S1", "S2"]
    tool.undo()
    tool.set_settings("S2")  # choosing the undone settings again re-runs the piece again
    assert tool.current.pieces[-1].settings == "S2" and tool.current.pieces[-1].id != old_piece.id


def test_settings_changed_with_nothing_to_rerun_are_not_undone(tool):
    restored = []
    tool.settings_restored.connect(restored.append)
    tool.click((0, 0))
    tool.set_settings("S2")  # only a start click: nothing re-runs, no step in the history
    tool.click((10, 0))
    assert tool.current.pieces[-1].settings == "S2"
    tool.undo()
    assert tool.settings == "S2" and restored == [] and tool.current.pieces == ()
    tool.redo()
    tool.finish()
    tool.set_settings("S3")  # after the finish: nothing to re-run
    tool.undo()  # undoes the finish, not the settings
    assert tool.current is not None and tool.settings == "S3" and restored == []


def test_failed_piece_is_a_marked_straight_segment(tool):
    rec = Recorder(tool)
    tool.click((0, 0))
    tool.click((10, 0))
    tool.fail_piece(rec.pieces[0].id, "no feasible polyline")
    outcome = tool.outcomes[rec.pieces[0].id]
    assert outcome.status == "failed" and "feasible" in outcome.error
    np.testing.assert_array_equal(outcome.vertices_px, [[0, 0], [10, 0]])


def test_snapped_end_becomes_the_next_start():
    tool = ExtractionTool(settings=Snapping())
    rec = Recorder(tool)
    tool.click((0, 0))
    tool.click((10, 0))
    snapped = PieceOutcome(np.array([[0, 1.0], [5, 1.5], [10, 2.0]]), score=1.0)
    tool.complete_piece(rec.pieces[0].id, snapped)
    assert tool.anchor_start() == (10.0, 2.0)
    tool.move_cursor((20, 0))
    assert rec.previews[-1].start_xy == (10.0, 2.0)


def test_rename_delete_select_and_reopen(tool):
    tool.click((0, 0))
    tool.click((10, 0))
    feature = tool.finish()
    tool.select(feature.id)
    tool.rename(feature.id, "  Main street ")
    assert tool.features[0].name == "Main street"
    with pytest.raises(ValueError, match="name"):
        tool.rename(feature.id, "  ")
    tool.reopen(feature.id)
    assert tool.features == () and tool.current.id == feature.id
    tool.click((20, 5))
    assert len(tool.current.pieces) == 2
    tool.finish()
    tool.delete(feature.id)
    assert tool.features == () and tool.selected_id is None
    tool.undo()
    assert tool.features[0].name == "Main street"
    with pytest.raises(KeyError):
        tool.delete(12345)


def test_add_features_imports_editable_lines(tool):
    vertices = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 4.0]])
    added = tool.add_features([("road", vertices, {"score": 7.5}), ("", vertices[:2], {}), ("", vertices, {})])
    assert [f.name for f in added] == ["road", "Line 1", "Line 2"]
    np.testing.assert_array_equal(tool.feature_vertices(tool.features[0]), vertices)
    assert tool.feature_score(tool.features[0]) == 7.5
    assert tool.feature_score(tool.features[1]) is None
    tool.reopen(added[0].id)
    tool.drop_last_piece()
    np.testing.assert_array_equal(feature_vertices(tool.current, tool.outcomes), [[1.0, 2.0]])
    with pytest.raises(ValueError, match="vertices_px"):
        tool.add_features([("bad", np.zeros((1, 2)), {})])


def test_dirty_flag(tool):
    assert not tool.dirty
    tool.click((0, 0))
    assert tool.dirty
    tool.mark_saved()
    assert not tool.dirty
    tool.undo()
    assert tool.dirty


def test_clicks_must_be_finite(tool):
    with pytest.raises(ValueError, match="point"):
        tool.click((np.nan, 0))


def test_pending_pieces_that_leave_the_drawing_are_abandoned_and_asked_again_if_they_return(tool):
    rec = Recorder(tool)
    abandoned, previews_abandoned = [], []
    tool.pieces_abandoned.connect(abandoned.append)
    tool.preview_abandoned.connect(lambda: previews_abandoned.append(True))
    tool.click((0, 0))
    tool.click((10, 0))
    tool.click((20, 0))
    first, second = rec.pieces
    tool.complete_piece(first.id, fake_outcome((0, 0), (10, 0)))
    tool.cancel()  # Esc while the second piece is computed
    assert abandoned == [[second.id]] and previews_abandoned
    tool.request_dropped(second.id)  # its extraction stopped without a result
    assert len(rec.pieces) == 2  # not in the drawing: not asked again
    tool.undo()  # Esc's step is undone: the piece is back and needs its extraction
    assert [p.id for p in rec.pieces] == [first.id, second.id, second.id]
    tool.drop_last_piece()  # Backspace on the pending piece; the runner has not answered yet
    tool.undo()
    assert abandoned == [[second.id], [second.id]] and len(rec.pieces) == 3
    tool.request_dropped(second.id)  # the answer to the Backspace arrives after the undo
    assert len(rec.pieces) == 4 and tool.is_pending(tool.current.pieces[-1])
    tool.complete_piece(second.id, fake_outcome((10, 0), (20, 0)))
    tool.drop_last_piece()  # a piece with its outcome is never abandoned
    assert len(abandoned) == 2

def test_the_preview_is_abandoned_when_the_cursor_leaves_or_the_anchor_moves(tool):
    rec = Recorder(tool)
    abandoned = []
    tool.preview_abandoned.connect(lambda: abandoned.append(len(rec.previews)))
    tool.click((0, 0))
    tool.move_cursor((10, 5))
    tool.leave()
    tool.move_cursor((10, 6))
    tool.click((10, 6))  # the anchor moves: the old preview is stale, then a new one is asked for
    assert abandoned[-2:] == [1, 2] and len(rec.previews) == 2


def test_a_piece_is_requested_with_its_start_and_without_snapping_at_once():
    tool = ExtractionTool(settings="S1")
    rec = Recorder(tool)
    for point in ((0, 0), (10, 0), (20, 5)):
        tool.click(point)
    assert [p.id for p in rec.pieces] == [p.id for p in tool.current.pieces]
    assert rec.starts == [(0.0, 0.0), (10.0, 0.0)]  # the previous click: the extraction ends there


def test_after_a_snapping_piece_the_next_is_requested_once_its_end_is_known():
    tool = ExtractionTool(settings=Snapping())
    rec = Recorder(tool)
    for point in ((0, 0), (10, 0), (20, 0), (30, 0)):
        tool.click(point)
    first, second, third = tool.current.pieces
    assert rec.pieces == [first]  # the second starts where the first's extraction ends: not known yet
    tool.complete_piece(first.id, PieceOutcome(np.array([[0, 1.0], [5, 1.5], [10, 2.0]]), score=1.0))
    assert rec.pieces == [first, second] and rec.starts[1] == (10.0, 2.0)
    tool.fail_piece(second.id, "no feasible polyline")  # a failed piece ends at its click
    assert rec.pieces == [first, second, third] and rec.starts[2] == (20.0, 0.0)


def test_pieces_that_wait_for_their_start_are_never_abandoned():
    tool = ExtractionTool(settings=Snapping())
    rec = Recorder(tool)
    abandoned = []
    tool.pieces_abandoned.connect(abandoned.append)
    for point in ((0, 0), (10, 0), (20, 0)):
        tool.click(point)
    tool.drop_last_piece()  # the second piece was never asked for: nothing to stop
    assert abandoned == [] and len(rec.pieces) == 1
    tool.undo()
    tool.complete_piece(rec.pieces[0].id, PieceOutcome(np.array([[0, 0.0], [10, 1.0]])))
    assert [p.id for p in rec.pieces] == [p.id for p in tool.current.pieces] and rec.starts[1] == (10.0, 1.0)


def test_a_failure_after_the_tool_was_cleared_is_refused(tool):
    rec = Recorder(tool)
    tool.click((0, 0))
    tool.click((10, 0))
    tool.clear()
    with pytest.raises(KeyError):
        tool.fail_piece(rec.pieces[0].id, "late")


def test_an_extraction_that_ends_at_its_click_up_to_rounding_joins_the_next_piece(tool):
    rec = Recorder(tool)
    for point in ((0, 0), (10, 0), (20, 0)):
        tool.click(point)
    tool.complete_piece(rec.pieces[0].id, PieceOutcome(np.array([[0, 0.0], [5, 1.0], [10 + 1e-12, 0.0]])))
    tool.complete_piece(rec.pieces[1].id, fake_outcome((10, 0), (20, 0)))
    assert len(tool.feature_vertices(tool.current)) == 5  # no second vertex 1e-12 px from the joint


def test_a_chained_piece_starts_where_the_previous_one_ended_without_a_jog():
    tool = ExtractionTool(settings=Snapping())
    rec = Recorder(tool)
    for point in ((0, 0), (10, 0), (20, 10)):
        tool.click(point)
    first, second = tool.current.pieces
    tool.complete_piece(first.id, PieceOutcome(np.array([[0, 1.0], [5, 1.5], [10, 2.0]]), score=1.0))
    assert rec.starts[1] == (10.0, 2.0)
    # the second piece's own snapping moved its start 3 px across its direction
    tool.complete_piece(second.id, PieceOutcome(np.array([[12.1, -0.1], [16, 5.0], [20, 10.0]]), score=1.0))
    vertices = tool.feature_vertices(tool.current)
    assert vertices.tolist() == [[0, 1.0], [5, 1.5], [10, 2.0], [16, 5.0], [20, 10.0]]
    assert tool.outcomes[second.id].vertices_px[0].tolist() == [12.1, -0.1]  # the outcome itself is kept


def test_the_ribbon_follows_the_line_across_a_joint():
    from core.extraction.estimate import RoadEstimate

    tool = ExtractionTool(settings=Snapping())
    rec = Recorder(tool)
    for point in ((0, 0), (10, 0), (20, 0)):
        tool.click(point)
    estimate = RoadEstimate(width_px=4.0, polarity="bright", contrast=1.0, confidence=0.9, course="straight")
    tool.complete_piece(rec.pieces[0].id, PieceOutcome(np.array([[0, 0.0], [10, 0.0]]), estimate=estimate))
    tool.complete_piece(rec.pieces[1].id, PieceOutcome(np.array([[10, 3.0], [20, 0.0]]), estimate=estimate))
    edges = list(feature_ribbon_edges(tool.current, tool.outcomes))
    assert len(edges) == 4  # two edges a piece; the second piece's begin beside the joint, not 3 px off it
    assert {tuple(np.round(edge[0], 6)) for edge in edges[2:]} == {(10.0, 2.0), (10.0, -2.0)}


@dataclass(frozen=True)
class _Nodes:
    """Settings of 8 nodes: spans under 3.5 px put the guides closer than an extraction allows."""

    nodes: int = 8


def test_a_preview_too_short_for_the_guides_is_the_straight_segment_at_once():
    tool = ExtractionTool(settings=_Nodes())
    rec = Recorder(tool)
    tool.click((100, 100))
    tool.move_cursor((102, 101))  # 2.2 px: seven gaps of 0.32 px, closer than the extraction allows
    assert rec.previews == [] and tool.preview.vertices_px.tolist() == [[100, 100], [102, 101]]
    tool.move_cursor((104, 101))  # 4.1 px: guides 0.59 px apart
    assert len(rec.previews) == 1


def test_a_click_too_short_for_the_guides_adds_the_straight_segment_its_preview_showed():
    tool = ExtractionTool(settings=_Nodes())
    rec = Recorder(tool)
    tool.click((100, 100))
    tool.click((200, 100))  # a piece to extract
    assert len(rec.pieces) == 1
    tool.complete_piece(rec.pieces[0].id, fake_outcome((100, 100), (200, 100)))
    tool.click((201.5, 101.5))  # a slip 2.1 px on: no extraction asked for (it would be refused)
    assert len(rec.pieces) == 1
    assert tool.current.pieces[-1].kind == "straight" and not tool.is_pending(tool.current.pieces[-1])
    assert feature_vertices(tool.current, tool.outcomes)[-2:].tolist() == [[200, 100], [201.5, 101.5]]
    tool.click((230, 101.5))  # a span long enough is extracted again
    assert len(rec.pieces) == 2
