"""Which extractions the tool asks for, and which requests a new state abandons (a part of
:class:`app.model.tool.ExtractionTool`, which holds the state, the outcomes and the requests; no Qt).

A piece is asked for once its start is final (the piece before it ended at
its click or has its outcome), in click order.  With tens of thousands of
finished features, walking them all was most of an edit (58 ms a click, 70 ms
a delete at 100,000).  A finished feature whose every extraction has its
outcome has nothing to ask for, and stays so (outcomes are not taken back
while a feature holds the piece): each walk keeps the places of the features
still waiting, and the next walk looks only at those and at the features the
edit put in (:class:`FeatureEdit`, from the undo step's
:class:`app.model.state_change.StateChange`), and of those only the ones with
a piece without its outcome (an import of 50,000 settled lines had walked
them all, a Python call each); the requests abandoned are
looked for only in the features the edit took out and the feature in progress.
"""

from __future__ import annotations

import bisect
import operator
from typing import NamedTuple

from app.model.pieces import Feature, ToolState, start_is_final, unsettled_places
from app.model.state_change import StateChange

__all__ = ["ExtractionRequests", "FeatureEdit"]


class FeatureEdit(NamedTuple):
    """What one change of the state did to the finished features.

    Attributes
    ----------
    old : tuple of Feature
        The finished features before the change.
    taken_at, put_at : tuple of int
        Ascending places of the features taken out (in ``old``) and of those
        put in (in the features after the change); the others kept their order.
    taken, put : tuple of Feature
        Those features, in the same order.
    """

    old: tuple
    taken_at: tuple[int, ...]
    taken: tuple
    put_at: tuple[int, ...]
    put: tuple

    @classmethod
    def of(cls, change: StateChange, old: tuple, backward: bool = False) -> FeatureEdit:
        """The edit of ``change`` applied to the features ``old``: forward (an edit, redo) or ``backward`` (undo)."""
        if backward:
            return cls(old, change.added_at, change.added, change.removed_at, change.removed)
        return cls(old, change.removed_at, change.removed, change.added_at, change.added)


class ExtractionRequests:
    """The request walks of :class:`app.model.tool.ExtractionTool` (its ``state``, ``outcomes``,
    ``_requested``, ``_walked``, ``_waiting``, ``piece_requested`` and ``piece_start``)."""

    def _abandoned(self, old_state: ToolState, edit: FeatureEdit | None) -> set[int]:
        """The requested pieces the new state no longer draws (``edit``: from ``old_state``'s features to the new
        ones; None walks every feature).  Only the features the edit took out and the old feature in progress can
        have held them: a piece is drawn by one feature at most."""
        if edit is None:
            drawn = {piece.id for feature in self._drawn_features() for piece in feature.pieces}
            return self._requested.keys() - drawn
        before = list(edit.taken) + ([old_state.current] if old_state.current is not None else [])
        after = list(edit.put) + ([self.state.current] if self.state.current is not None else [])
        gone = {p.id for f in before for p in f.pieces} - {p.id for f in after for p in f.pieces}
        return gone & self._requested.keys()

    def _drawn_features(self) -> list[Feature]:
        """The finished features and the feature in progress (not those of the history)."""
        return list(self.state.features) + ([self.state.current] if self.state.current is not None else [])

    def _request_ready(self, edit: FeatureEdit | None = None) -> None:
        """Ask, in click order and once each, for the extractions whose start is final.

        Of the finished features only those the last walk found waiting (an extraction without its outcome) and
        those ``edit`` put in are walked, where ``edit`` starts from the features last walked or they are the same
        tuple (a click, an outcome); else every feature (a restore)."""
        features, current = self.state.features, self.state.current
        waiting = []
        for place, feature in self._unsettled(edit):
            if self._ask_for(feature):
                waiting.append((place, feature))
        if current is not None:
            self._ask_for(current)
        self._walked, self._waiting = features, tuple(waiting)

    def _unsettled(self, edit: FeatureEdit | None) -> list[tuple[int, Feature]]:
        """``(place, feature)`` of the finished features that may wait for an extraction, in their order: of those
        to walk, only the features with a piece without its outcome (found in C: :func:`unsettled_places`)."""
        features = self.state.features
        if features is self._walked:
            return list(self._waiting)
        if edit is None or edit.old is not self._walked:
            return [(place, features[place]) for place in unsettled_places(features, self.outcomes)]
        kept = _kept_places(self._waiting, edit.taken_at, edit.put_at)
        put = [(edit.put_at[k], edit.put[k]) for k in unsettled_places(edit.put, self.outcomes)]
        return sorted(kept + put, key=operator.itemgetter(0))

    def _ask_for(self, feature: Feature) -> bool:
        """Ask for the extractions of ``feature`` whose start is final; whether one of them has no outcome yet."""
        waiting = False
        for index, piece in enumerate(feature.pieces):
            if piece.kind != "extract" or piece.id in self.outcomes:
                continue
            waiting = True
            if piece.id in self._requested:
                continue
            if not start_is_final(feature, index, self.outcomes):
                break
            self._requested[piece.id] = (piece, self.piece_start(feature, index))
            self.piece_requested.emit(*self._requested[piece.id])
        return waiting


def _kept_places(waiting, taken_at: tuple[int, ...], put_at: tuple[int, ...]) -> list[tuple[int, Feature]]:
    """The places after an edit of the ``(place, feature)`` of ``waiting`` (ascending places before it) that the edit
    did not take out at ``taken_at``, with features put in at ``put_at`` (both ascending)."""
    kept, put_before = [], 0
    for place, feature in waiting:
        taken_before = bisect.bisect_left(taken_at, place)
        if taken_before < len(taken_at) and taken_at[taken_before] == place:
            continue
        rank = place - taken_before  # among the features kept
        while put_before < len(put_at) and put_at[put_before] <= rank + put_before:
            put_before += 1
        kept.append((rank + put_before, feature))
    return kept
