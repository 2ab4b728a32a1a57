"""Undo and redo of the tool against an independent reference; the history's bound; outcomes let go.

The reference is a timeline of plain copies of the state taken after each
edit (with the undo limit applied as the oldest copy dropped), a position in
it, and the outcomes that any state of the timeline can still draw.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model import line_edits
from app.model.line_edits import LineEditError
from app.model.pieces import PieceOutcome, ToolState
from app.model.tool import ExtractionTool


def _plain_feature(feature):
    if feature is None:
        return None
    pieces = tuple((p.id, p.click_start, p.click_end, p.kind, p.settings) for p in feature.pieces)
    return (feature.id, feature.name, feature.start_xy, pieces, feature.attributes)


def plain(state: ToolState):
    """A copy of ``state`` in plain tuples, that no later edit can change."""
    reopened = None if state.reopened is None else (state.reopened[0], _plain_feature(state.reopened[1]))
    return tuple(_plain_feature(f) for f in state.features), _plain_feature(state.current), reopened


def piece_ids(copy) -> set[int]:
    features, current, reopened = copy
    held = list(features) + [current, reopened[1] if reopened else None]
    return {piece[0] for f in held if f is not None for piece in f[3]}


class Reference:
    """What undo, redo and the outcomes must be, from copies of the states only."""

    def __init__(self, tool: ExtractionTool, limit: int):
        self.limit, self.timeline, self.position, self.outcomes = limit, [plain(tool.state)], 0, {}
        self.dirty = False

    def edited(self, tool: ExtractionTool) -> None:
        self.timeline[self.position + 1:] = [plain(tool.state)]
        self.position += 1
        if len(self.timeline) - 1 > self.limit:
            del self.timeline[0]
            self.position -= 1
        self.dirty = True

    def reloaded(self, tool: ExtractionTool) -> None:
        self.timeline, self.position = [plain(tool.state)], 0
        self.dirty = bool(tool.features or tool.current)

    def held(self) -> set[int]:
        return set().union(*(piece_ids(copy) for copy in self.timeline))

    def learn(self, tool: ExtractionTool) -> None:
        """Outcomes the tool made with an edit (straight clicks, imports, line edits) for pieces new to it."""
        for piece_id in piece_ids(self.timeline[self.position]) - self.outcomes.keys():
            if piece_id in tool.outcomes:
                self.outcomes[piece_id] = tool.outcomes[piece_id]
        for piece_id in self.outcomes.keys() - self.held():
            del self.outcomes[piece_id]

    def check(self, tool: ExtractionTool) -> None:
        assert plain(tool.state) == self.timeline[self.position]
        assert tool.can_undo == (self.position > 0)
        assert tool.can_redo == (self.position < len(self.timeline) - 1)
        assert tool.outcomes.keys() == self.outcomes.keys()
        assert all(tool.outcomes[i] is outcome for i, outcome in self.outcomes.items())
        assert tool.dirty == self.dirty


def _line(k: int) -> np.ndarray:
    return np.array([[k, 0.0], [k + 3.0, 4.0], [k + 6.0, 0.0]])


def _feature_id(tool, k):
    return tool.features[k % len(tool.features)].id if tool.features else -1


def _apply(tool, op, args, requested, completed):
    """Run one user action; returns True for an action that is not an edit by design (completion, save, reload)."""
    a, b = args
    if op == "click":
        tool.click((float(a % 7) * 10, float(b % 5) * 10), straight=bool(b % 2))
    elif op == "finish":
        tool.finish()
    elif op == "cancel":
        tool.cancel()
    elif op == "backspace":
        tool.drop_last_piece()
    elif op == "settings":
        tool.set_settings(f"S{a % 3}")
    elif op == "rename":
        tool.rename(_feature_id(tool, a), f"name {b % 3}")
    elif op == "delete":
        tool.delete(_feature_id(tool, a))
    elif op == "reopen":
        tool.reopen(_feature_id(tool, a), at_start=bool(b % 2))
    elif op == "import":
        tool.add_features([("", _line(a + i), {"n": i}) for i in range(1 + b % 3)])
    elif op == "move":
        tool.apply_edit(line_edits.moved_vertex, _feature_id(tool, a), b % 3, (float(b), 1.0))
    elif op == "reverse":
        tool.apply_edit(line_edits.reversed_line, _feature_id(tool, a))
    elif op == "split":
        tool.apply_edit(line_edits.split_line, _feature_id(tool, a), 1 + b % 2)
    elif op == "undo":
        tool.undo()
    elif op == "redo":
        tool.redo()
    return False


OPS = ["click", "click", "click", "finish", "cancel", "backspace", "settings", "rename", "delete", "reopen",
       "reopen", "import", "move", "reverse", "split", "undo", "undo", "undo", "redo", "redo", "complete", "save",
       "reload"]
actions = st.lists(st.tuples(st.sampled_from(OPS), st.tuples(st.integers(0, 50), st.integers(0, 50))),
                   max_size=60)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 6), actions)
def test_undo_redo_and_outcomes_follow_the_reference(limit, script):
    tool = ExtractionTool(settings="S1", undo_limit=limit)
    reference, requested, completed, changes = Reference(tool, limit), [], set(), [0]
    tool.piece_requested.connect(lambda piece, start: requested.append((piece, start)))
    tool.changed.connect(lambda: changes.__setitem__(0, changes[0] + 1))
    for op, args in script:
        before = changes[0]
        if op == "complete":  # an extraction comes back, maybe after its piece left the drawing
            waiting = [(p, s) for p, s in requested if p.id not in completed]
            if waiting:
                piece, start = waiting[args[0] % len(waiting)]
                completed.add(piece.id)
                outcome = PieceOutcome(np.array([start, (start[0] + 1, start[1] + 2), piece.click_end]))
                tool.complete_piece(piece.id, outcome)
                if piece.id in reference.held():
                    reference.outcomes[piece.id] = outcome
        elif op == "save":
            tool.mark_saved()
            reference.dirty = False
        elif op == "reload":  # save the project and open it again: only the drawn pieces' outcomes are in the file
            drawn = piece_ids(plain(tool.state))
            tool.restore(tool.state, {i: o for i, o in tool.outcomes.items() if i in drawn})
            reference.reloaded(tool)
        else:
            undo_redo = op in ("undo", "redo")
            try:
                _apply(tool, op, args, requested, completed)
            except (LineEditError, ValueError, KeyError):
                assert changes[0] == before  # a refused edit changes nothing
            if changes[0] != before and not undo_redo:
                assert changes[0] == before + 1
                reference.edited(tool)
            elif changes[0] != before:
                reference.position += -1 if op == "undo" else 1
                reference.dirty = True
        reference.learn(tool)
        reference.check(tool)


def test_undo_within_a_continued_line_keeps_it_continued_and_esc_puts_it_back():
    tool = ExtractionTool(settings="S1")
    tool.add_features([("", _line(0), {}), ("", _line(10), {})])
    original = tool.features[0]
    tool.reopen(original.id)
    tool.click((30.0, 30.0), straight=True)
    tool.undo()
    assert tool.state.reopened == (0, original) and tool.current is not None
    tool.cancel()
    assert tool.features[0] is original and tool.current is None


def test_the_oldest_steps_go_first_and_the_newest_still_undo():
    tool = ExtractionTool(settings="S1", undo_limit=3)
    tool.add_features([("", _line(k), {}) for k in range(5)])
    for k in range(5):
        tool.rename(tool.features[k].id, f"renamed {k}")
    while tool.undo():
        pass
    assert [f.name for f in tool.features] == ["renamed 0", "renamed 1", "Line 3", "Line 4", "Line 5"]
    assert tool.undo_limit == 3


def test_lowering_the_limit_drops_the_oldest_steps_at_once():
    tool = ExtractionTool(settings="S1")
    tool.add_features([("", _line(k), {}) for k in range(4)])
    for feature in tool.features:
        tool.apply_edit(line_edits.moved_vertex, feature.id, 1, (0.0, 0.0))
    assert len(tool.outcomes) == 8  # the imported lines' outcomes are still held by the history
    tool.undo()
    tool.undo_limit = 1  # one step kept: the one undone, for redo
    assert not tool.can_undo and tool.can_redo
    assert len(tool.outcomes) == 5  # the moved lines' and the one undone line's imported outcome
    assert tool.redo() and not tool.can_redo


def test_outcomes_of_lines_deleted_long_ago_are_let_go():
    tool = ExtractionTool(settings="S1", undo_limit=2)
    tool.add_features([("", _line(k), {}) for k in range(3)])
    deleted_piece = tool.features[0].pieces[0].id
    tool.delete(tool.features[0].id)
    tool.rename(tool.features[0].id, "a")
    assert deleted_piece in tool.outcomes  # the delete can still be undone
    tool.rename(tool.features[0].id, "b")
    assert deleted_piece not in tool.outcomes
    assert len(tool.outcomes) == 2


def test_an_extraction_that_comes_back_for_a_piece_nothing_holds_is_not_kept():
    tool = ExtractionTool(settings="S1")
    requested = []
    tool.piece_requested.connect(lambda piece, start: requested.append(piece))
    tool.click((0, 0))
    tool.click((40, 0))
    tool.undo()  # the piece waits in the redo stack
    tool.click((0, 40))  # a new edit: it can never come back
    tool.complete_piece(requested[0].id, PieceOutcome(np.array([[0.0, 0.0], [40.0, 0.0]])))
    assert requested[0].id not in tool.outcomes


def test_the_work_stays_unsaved_when_the_saved_state_left_the_history():
    tool = ExtractionTool(settings="S1", undo_limit=2)
    tool.add_features([("", _line(0), {})])
    tool.mark_saved()
    for name in "abc":
        tool.rename(tool.features[0].id, name)
    while tool.undo():
        pass
    assert tool.features[0].name == "a" and tool.dirty


@pytest.mark.parametrize("limit", [-1, 1.5, True])
def test_a_bad_limit_is_refused(limit):
    with pytest.raises((TypeError, ValueError), match="undo_limit"):
        ExtractionTool(undo_limit=limit)
