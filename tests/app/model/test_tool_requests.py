"""The extractions asked for and abandoned are the same whether the finished features are walked on every
edit or only when they changed (the click's shortcut), over random sequences of edits and late results."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.model.pieces import start_is_final
from app.model.tool import ExtractionTool
from tests.app.model.test_tool import Snapping, fake_outcome


class WalkingTool(ExtractionTool):
    """The reference: every drawn feature walked on every call, as before the shortcut."""

    def _request_ready(self) -> None:
        for feature in self._drawn_features():
            for index, piece in enumerate(feature.pieces):
                if piece.kind != "extract" or piece.id in self.outcomes or piece.id in self._requested:
                    continue
                if not start_is_final(feature, index, self.outcomes):
                    break
                self._requested[piece.id] = (piece, self.piece_start(feature, index))
                self.piece_requested.emit(*self._requested[piece.id])

    def _abandoned(self, old_state, same_finished) -> set[int]:
        drawn = {piece.id for feature in self._drawn_features() for piece in feature.pieces}
        return self._requested.keys() - drawn


def _events(tool):
    events = []
    tool.piece_requested.connect(lambda piece, start: events.append(("asked", piece.id, start)))
    tool.pieces_abandoned.connect(lambda ids: events.append(("abandoned", tuple(ids))))
    return events


ACTIONS = st.lists(st.tuples(st.sampled_from(["click", "straight", "finish", "undo", "redo", "complete", "drop",
                                              "complete_old", "delete", "escape", "reopen"]),
                             st.integers(0, 10**6)), max_size=60)


@settings(max_examples=150, deadline=None)
@given(ACTIONS, st.booleans())
@example([("click", 1), ("click", 0), ("undo", 0)], False)  # a requested piece undone: abandoned
# a finished line whose extraction is out, deleted from before another: its request abandoned
@example([("click", 1), ("click", 0), ("finish", 0), ("click", 3), ("click", 5), ("finish", 0), ("delete", 0)],
         False)
@example([("click", 1), ("click", 0), ("click", 3), ("finish", 0), ("click", 5), ("click", 7), ("finish", 0),
          ("reopen", 0), ("click", 9), ("finish", 0), ("complete_old", 0), ("complete_old", 1)], True)
@example([("click", 1), ("click", 0), ("click", 3), ("escape", 0), ("redo", 0)], False)
# a finished line still waiting for an outcome: its next piece is asked for when the outcome comes
@example([("click", 1), ("click", 0), ("click", 3), ("finish", 0), ("complete", 0), ("click", 5), ("click", 7)],
         True)
@example([("click", 1), ("click", 0), ("click", 3), ("finish", 0), ("click", 5), ("click", 7), ("complete_old", 0),
          ("complete", 0), ("undo", 0), ("complete_old", 1)], True)
def test_the_shortcut_asks_and_abandons_as_the_full_walk(actions, snapping):
    tools = [ExtractionTool(settings=Snapping() if snapping else "S1"),
             WalkingTool(settings=Snapping() if snapping else "S1")]
    logs = [_events(tool) for tool in tools]
    for action, seed in actions:
        for tool, log in zip(tools, logs):
            seen = len(log)
            _act(tool, action, seed)
            for event in log[seen:]:  # the runner drops what was abandoned (app.map.runner.drop_pieces)
                if event[0] == "abandoned":
                    for piece_id in event[1]:
                        if piece_id in tool._requested:
                            tool.request_dropped(piece_id)
        assert logs[0] == logs[1]
        assert tools[0].state == tools[1].state


def _act(tool, action, seed):
    rng = np.random.default_rng(seed)
    if action in ("click", "straight"):
        tool.click(tuple(float(v) for v in rng.integers(0, 500, 2)), straight=action == "straight")
    elif action == "finish":
        tool.finish()
    elif action == "undo":
        tool.undo()
    elif action == "redo":
        tool.redo()
    elif action == "escape":
        tool.cancel()
    elif action == "delete" and tool.features:
        tool.delete(tool.features[seed % len(tool.features)].id)
    elif action == "reopen" and tool.features and tool.current is None:
        tool.reopen(tool.features[seed % len(tool.features)].id)
    elif action in ("complete", "complete_old", "drop") and tool._requested:
        ids = sorted(tool._requested)
        piece_id = ids[-1] if action == "complete" else ids[seed % len(ids)]
        piece, start = tool._requested[piece_id]
        if action == "drop":
            tool.request_dropped(piece_id)
        else:
            end = np.asarray(piece.click_end, float) + (rng.normal(0, 2, 2) if seed % 2 else 0.0)
            tool.complete_piece(piece_id, fake_outcome(start, end))
