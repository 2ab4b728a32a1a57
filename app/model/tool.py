"""The extraction tool's state: clicked points, pieces, features, the preview (no Qt).

The window feeds it clicks, cursor moves, keys and extraction results; it
answers with events that the widgets render and with requests
(``piece_requested`` once a piece's start is final, ``preview_requested``)
that the window runs on a worker thread.  Design: docs/notes/gui.md.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

import numpy as np

from app.model import editing
from app.model.events import EventDescriptor
from app.model.feature_lookup import FeatureLookup
from app.model.history import DEFAULT_UNDO_LIMIT, History, PieceReferences
from app.model.pieces import (
    Feature,
    PieceOutcome,
    PieceSpec,
    ToolState,
    as_xy,
    feature_confidence,
    feature_score,
    piece_start,
    straight_outcome,
)
from app.model.preview import LivePreview, too_short
from app.model.state_change import StateChange
from app.model.tool_edits import FeatureEdits
from app.model.tool_requests import ExtractionRequests, FeatureEdit
from app.model.vertex_cache import VertexCache

__all__ = ["ExtractionTool"]


class ExtractionTool(FeatureEdits, ExtractionRequests):
    """State model of the click-to-extract tool.

    ``settings`` (opaque here; the window passes a
    ``core.extraction.ExtractionSettings``) are those of new pieces and previews;
    with ``settings.snap_endpoints`` a piece's end is known only from its outcome.
    """

    changed = EventDescriptor("changed(): the feature list or the feature in progress changed.")
    outcomes_changed = EventDescriptor("outcomes_changed(): a piece's extraction finished or failed.")
    preview_changed = EventDescriptor("preview_changed(): the preview's geometry changed or it went away.")
    selection_changed = EventDescriptor("selection_changed(): another feature (or none) is selected.")
    piece_requested = EventDescriptor(
        "piece_requested(piece: PieceSpec, start_xy): extract from ``start_xy`` (final) to "
        "``piece.click_end`` with ``piece.settings``, then call complete_piece, fail_piece or "
        "request_dropped.")
    pieces_abandoned = EventDescriptor(
        "pieces_abandoned(piece_ids: list[int]): requested pieces left the drawing before their "
        "result came (Esc, Backspace, Undo); their extractions may stop.")
    preview_requested = EventDescriptor(
        "preview_requested(request: PreviewRequest): run it and call complete_preview; a newer "
        "one supersedes it.")
    preview_abandoned = EventDescriptor(
        "preview_abandoned(): no preview asked for so far is wanted any more (Esc, the cursor left, "
        "the anchor or the settings changed).")
    settings_restored = EventDescriptor(
        "settings_restored(settings): undo or redo brought back the settings of that moment.")
    fields_changed = EventDescriptor("fields_changed(): the attribute fields changed (``fields_edit`` says how); "
                                     "before the ``changed`` of the values they moved.")
    feature_finished = EventDescriptor("feature_finished(feature): a line drawn here was finished (Enter).")

    def __init__(self, settings: Any = None, undo_limit: int = DEFAULT_UNDO_LIMIT):
        self.settings = settings
        self.state = ToolState()
        self.outcomes: dict[int, PieceOutcome] = {}
        self.selected_id: int | None = None
        self.dirty = False
        #: The change that made ``features`` from the features before it (None after a restore), for followers of
        #: the features one change behind (:class:`app.model.feature_index.FeatureIndex`); it keeps that tuple of
        #: features alive (as the state's ``splice`` does), one tuple at most.
        self.features_edit: FeatureEdit | None = None
        self._ids = itertools.count(1)
        self._history = History(undo_limit)
        self._lookup = FeatureLookup(self.state.features)  # the finished features by id, the "Line n" taken
        self._references = PieceReferences()  # the pieces held by the state and the history
        self._requested: dict[int, tuple[PieceSpec, tuple[float, float]]] = {}  # by id: (piece, start)
        self._walked: tuple | None = self.state.features  # the finished features of the last request walk
        self._waiting: tuple = ()  # (place, feature) of those of them with an extraction without its outcome
        self._vertices = VertexCache()  # each finished feature's vertices, computed once
        self._preview = LivePreview(self.anchor_start, lambda: self.settings, self.preview_changed,
                                    self.preview_requested, self.preview_abandoned)

    # ------------------------------------------------------------------ queries
    @property
    def features(self) -> tuple[Feature, ...]:
        """The finished features, in drawing order."""
        return self.state.features

    @property
    def current(self) -> Feature | None:
        """The feature in progress, or None."""
        return self.state.current

    @property
    def can_undo(self) -> bool:
        """True when there is an edit to undo."""
        return self._history.can_undo

    @property
    def can_redo(self) -> bool:
        """True when there is an undone edit to redo."""
        return self._history.can_redo

    @property
    def undo_limit(self) -> int:
        """The most undoable steps kept (undo and redo together); setting it lower drops the oldest."""
        return self._history.limit

    @undo_limit.setter
    def undo_limit(self, limit: int) -> None:
        self._let_go(self._history.set_limit(limit))

    def feature(self, feature_id: int) -> Feature:
        """The finished feature with this id (KeyError when there is none)."""
        return editing.find_feature(self.state, feature_id, self._lookup)

    def feature_place(self, feature_id: int) -> int:
        """The index of finished feature ``feature_id`` in :attr:`features` (KeyError when there is none)."""
        return editing.feature_place(self.state, feature_id, self._lookup)

    def piece_start(self, feature: Feature, index: int) -> tuple[float, float]:
        """Where piece ``index`` of ``feature`` starts (see :func:`app.model.pieces.piece_start`)."""
        return piece_start(feature, index, self.outcomes)

    def is_pending(self, piece: PieceSpec) -> bool:
        """True while the piece's extraction has not come back."""
        return piece.id not in self.outcomes

    def feature_vertices(self, feature: Feature) -> np.ndarray:
        """(k, 2) float64 vertices (x, y) px of a whole feature (cached: do not modify them)."""
        return self._vertices.get(feature, self.outcomes)

    def feature_score(self, feature: Feature) -> float | None:
        """Sum of the scores of the extracted pieces; None when no piece has a score."""
        return feature_score(feature, self.outcomes)

    def feature_confidence(self, feature: Feature) -> float | None:
        """The lowest confidence of the feature's pieces; None when no piece has one."""
        return feature_confidence(feature, self.outcomes)

    def anchor_start(self) -> tuple[float, float] | None:
        """Where the next piece (and the preview) starts, or None without a feature in progress."""
        current = self.state.current
        if current is None:
            return None
        return self.piece_start(current, len(current.pieces))

    # -------------------------------------------------------------- history
    def _commit(self, new_state: ToolState, settings: Any = None) -> None:
        """Make ``new_state`` (and ``settings``, when given) current, one undoable step."""
        change = StateChange.between(self.state, new_state)
        before, after = change.features_before(), change.features_after()
        self._references.hold(before + after)  # the step's
        self._references.hold(after)  # the state's (held before the history lets go of anything)
        self._references.release(before)
        dropped = self._history.push(change, None if settings is None else self.settings)
        if settings is not None:
            self.settings = settings
        self._let_go(dropped)
        self._set_state(new_state, change)

    def _let_go(self, dropped: list[StateChange]) -> None:
        """Release what the ``dropped`` steps held: the outcomes of pieces nothing holds any more, cached vertices."""
        for change in dropped:
            features = change.features_before() + change.features_after()
            for piece_id in self._references.release(features):
                self.outcomes.pop(piece_id, None)
            self._vertices.forget(features, self._references)

    def _set_state(self, new_state: ToolState, change: StateChange | None = None, backward: bool = False) -> None:
        """Make ``new_state`` current; ``change`` (undone where ``backward``) leads to it from the state now, so
        that only the features it changed are walked (None: a restore)."""
        old_anchor, old_state = self.anchor_start(), self.state
        edit = None if change is None else FeatureEdit.of(change, old_state.features, backward)
        self.state = new_state
        if new_state.features is not old_state.features:
            self.features_edit = edit
        self._lookup.follow(edit, new_state.features)
        self.dirty = True
        if self.selected_id is not None and _left(self.selected_id, new_state, edit):
            self.selected_id = None
            self.selection_changed.emit()
        if new_state.fields != old_state.fields:
            self._follow_fields(old_state.fields, change, backward)
        self.changed.emit()
        if self._requested:
            abandoned = self._abandoned(old_state, edit)
            if abandoned:
                self.pieces_abandoned.emit(sorted(abandoned))
        self._request_ready(edit)
        if self.anchor_start() != old_anchor or new_state.current is None:
            self._preview.restart()

    def undo(self) -> bool:
        """Go back one edit; False when there is nothing to undo."""
        entry = self._history.undo(self.state, self.settings)
        if entry is not None:
            self._references.hold(entry[0].features_before())
            self._references.release(entry[0].features_after())  # the step still holds them
        return self._restore_entry(entry, backward=True)

    def redo(self) -> bool:
        """Redo the last undone edit; False when there is nothing to redo."""
        entry = self._history.redo(self.state, self.settings)
        if entry is not None:
            self._references.hold(entry[0].features_after())
            self._references.release(entry[0].features_before())
        return self._restore_entry(entry)

    def _restore_entry(self, entry: tuple[StateChange, ToolState, Any] | None, backward: bool = False) -> bool:
        if entry is None:
            return False
        change, state, settings = entry
        self._preview.paused = False
        if settings is not None and settings != self.settings:
            self.settings = settings
            self.settings_restored.emit(settings)
        self._set_state(state, change, backward)
        return True

    # ---------------------------------------------------------------- drawing
    def click(self, point, straight: bool = False) -> None:
        """A click at ``point`` (x, y) px: starts a feature or chains a piece onto it (straight where
        ``straight``, or where the span is too short for the settings' guides)."""
        xy = as_xy(point)
        current = self.state.current
        self._preview.paused = False
        if current is None:
            feature = Feature(next(self._ids), "", xy)
            self._commit(replace(self.state, current=feature))
            return
        if xy == current.anchor_xy:
            return  # a second click on the same spot adds nothing
        start = self.anchor_start() or current.anchor_xy
        straight = straight or too_short(start, xy, self.settings)  # a slip beside the last vertex: as its preview
        kind = "straight" if straight else "extract"
        piece = PieceSpec(next(self._ids), current.anchor_xy, xy, kind, None if straight else self.settings)
        if straight:
            self.outcomes[piece.id] = straight_outcome(start, xy)
        self._commit(editing.with_piece(self.state, piece))

    def finish(self) -> Feature | None:
        """Enter / double-click: the feature in progress becomes a finished feature."""
        current = self.state.current
        if current is None:
            return None
        if not current.pieces:
            self._commit(replace(self.state, current=None))
            return None
        self._commit(editing.finished(self.state, self._lookup))
        done = self.feature(current.id)
        self.feature_finished.emit(done)
        return done

    def cancel(self) -> None:
        """Esc: drop a last piece still being computed; with none, drop the whole unfinished line (as QGIS).

        A reopened feature goes back as it was before Continue.
        """
        current = self.state.current
        if current is None:
            return
        self._preview.pause()
        if current.pieces and self.is_pending(current.pieces[-1]):
            self._commit(editing.without_last_piece(self.state))
        else:
            self._commit(editing.without_current(self.state))

    def drop_last_piece(self) -> None:
        """Backspace: remove the last piece (or the lone start click) of the feature in progress."""
        if self.state.current is not None:
            self._commit(editing.without_last_piece(self.state))

    def set_settings(self, settings: Any) -> None:
        """New settings: later pieces use them, and the current piece and preview re-run."""
        if settings == self.settings:
            return
        current = self.state.current
        if current is not None and current.pieces and current.pieces[-1].kind == "extract":
            rerun = replace(current.pieces[-1], id=next(self._ids), settings=settings)
            self._commit(editing.with_piece(self.state, rerun, replace_last=True), settings)
        else:
            self.settings = settings
        self._preview.restart()

    # ------------------------------------------------------------- preview
    @property
    def preview(self) -> PieceOutcome | None:
        """The preview shown now (the optimal polyline from the anchor to the cursor), or None."""
        return self._preview.outcome

    def move_cursor(self, point, straight: bool = False) -> None:
        """The cursor moved to ``point`` (x, y) px; Shift held makes the preview straight."""
        self._preview.move_cursor(point, straight)

    def leave(self) -> None:
        """The cursor left the image: no preview."""
        self._preview.leave()

    def complete_preview(self, seq: int, outcome: PieceOutcome) -> bool:
        """The preview request ``seq`` came back; returns whether it is shown (see :mod:`app.model.preview`)."""
        return self._preview.complete(seq, outcome)

    # ------------------------------------------------------------- outcomes
    def complete_piece(self, piece_id: int, outcome: PieceOutcome) -> None:
        """Store the outcome of a piece's extraction (finished or failed); dropped when nothing can draw the piece."""
        anchor_before = self.anchor_start()
        if piece_id in self._references:
            self.outcomes[piece_id] = outcome
        self._requested.pop(piece_id, None)
        self.outcomes_changed.emit()
        self._request_ready()  # a piece that waited for this one's snapped end
        if self.anchor_start() != anchor_before:
            self._preview.restart()  # endpoint snapping moved the last vertex

    def request_dropped(self, piece_id: int) -> None:
        """The request for ``piece_id`` was dropped without a result; ask again if the piece is drawn again."""
        self._requested.pop(piece_id, None)
        self._request_ready()

    def fail_piece(self, piece_id: int, message: str) -> None:
        """The piece's extraction failed: keep it as a straight segment marked failed (KeyError when not requested)."""
        piece, start = self._requested[piece_id]
        self.complete_piece(piece_id, straight_outcome(start, piece.click_end, "failed", message))

    # ------------------------------------------------------------- features
    def select(self, feature_id: int | None) -> None:
        """Highlight one finished feature (None: no selection)."""
        if feature_id is not None:
            self.feature(feature_id)
        if feature_id != self.selected_id:
            self.selected_id = feature_id
            self.selection_changed.emit()

    def mark_saved(self) -> None:
        """The user's work is safe in a file: no warning on close until the next edit."""
        self.dirty = False

    # ------------------------------------------------------------- session
    def restore(self, state: ToolState, outcomes: dict[int, PieceOutcome]) -> None:
        """Replace everything by a restored session (clears the history)."""
        self.outcomes = dict(outcomes)
        self._requested.clear()
        self._walked = None  # (other outcomes: every feature is walked)
        self._vertices.clear()
        ids = [f.id for f in state.features] + [p.id for f in state.features for p in f.pieces]
        if state.current is not None:
            ids += [state.current.id] + [p.id for p in state.current.pieces]
        self._ids = itertools.count(max(ids, default=0) + 1)
        self._history.clear()
        self._references.reset(state)
        self.selected_id = None
        self._set_state(state)
        self.dirty = bool(state.features or state.current)
        self.selection_changed.emit()

    def clear(self) -> None:
        """Forget everything but the fields (a new image without the old features)."""
        self.restore(ToolState(fields=self.fields), {})
        self.dirty = False


def _left(feature_id: int, state: ToolState, edit: FeatureEdit | None) -> bool:
    """Whether finished feature ``feature_id`` (of the features before ``edit``) is not among ``state``'s; only the
    features the edit took out and put in are looked at (None: every feature)."""
    if edit is None:
        return all(f.id != feature_id for f in state.features)
    return any(f.id == feature_id for f in edit.taken) and all(f.id != feature_id for f in edit.put)
