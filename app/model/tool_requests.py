"""Which extractions the tool asks for, and which requests a new state abandons (a part of
:class:`app.model.tool.ExtractionTool`, which holds the state, the outcomes and the requests; no Qt).

A piece is asked for once its start is final (the piece before it ended at
its click or has its outcome), in click order.  With tens of thousands of
finished features these walks were most of a click: the finished features are
walked only when their tuple changed (a click changes only the feature in
progress), and an abandoned request is looked for only in the old feature in
progress when the finished features are the same tuple.
"""

from __future__ import annotations

import operator

from app.model.pieces import Feature, ToolState, start_is_final

__all__ = ["ExtractionRequests"]


class ExtractionRequests:
    """The request walks of :class:`app.model.tool.ExtractionTool` (its ``state``, ``outcomes``,
    ``_requested``, ``_settled_features``, ``piece_requested`` and ``piece_start``)."""

    def _abandoned(self, old_state: ToolState, same_finished: bool) -> set[int]:
        """The requested pieces the new state no longer draws.  Where one tuple of finished features begins
        with the other (a click keeps it, finishing appends, undoing that takes the last off), only the old
        features past the shorter and the old feature in progress can have gone: thousands of finished
        features are walked only when an edit changed some of them."""
        old, new = old_state.features, self.state.features
        common = len(new) if same_finished else _prefix_length(old, new)
        if common < 0:
            drawn = {piece.id for feature in self._drawn_features() for piece in feature.pieces}
            return self._requested.keys() - drawn
        before = list(old[common:]) + ([old_state.current] if old_state.current is not None else [])
        after = list(new[common:]) + ([self.state.current] if self.state.current is not None else [])
        gone = {p.id for f in before for p in f.pieces} - {p.id for f in after for p in f.pieces}
        return gone & self._requested.keys()

    def _drawn_features(self) -> list[Feature]:
        """The finished features and the feature in progress (not those of the history)."""
        return list(self.state.features) + ([self.state.current] if self.state.current is not None else [])

    def _request_ready(self) -> None:
        """Ask, in click order and once each, for the extractions whose start is final.

        Of the finished features only those past the last tuple a walk found settled (every extraction with
        its outcome; outcomes are never taken back) are walked, where the tuple begins with it (a click keeps
        it, finishing a line appends one, undoing that takes it off): walking 100,000 finished features took
        each click 58 ms, and finishing a line 78 ms."""
        features, current = self.state.features, self.state.current
        settled = self._settled_features
        known = len(features) if features is settled else max(0, _prefix_length(settled or (), features))
        waiting = False  # a finished feature has an extraction without its outcome
        for feature in list(features[known:]) + ([current] if current is not None else []):
            for index, piece in enumerate(feature.pieces):
                if piece.kind != "extract" or piece.id in self.outcomes:
                    continue
                waiting = waiting or feature is not current
                if piece.id in self._requested:
                    continue
                if not start_is_final(feature, index, self.outcomes):
                    break
                self._requested[piece.id] = (piece, self.piece_start(feature, index))
                self.piece_requested.emit(*self._requested[piece.id])
        if not waiting:
            self._settled_features = features


def _prefix_length(first: tuple, second: tuple) -> int:
    """The shorter tuple's length where it is the longer's beginning, the same objects; else -1 (compared in
    C: a millisecond for 100,000 features)."""
    shorter = min(len(first), len(second))
    return shorter if all(map(operator.is_, first[:shorter], second[:shorter])) else -1
