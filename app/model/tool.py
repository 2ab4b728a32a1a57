"""The extraction tool's state: clicked points, pieces, features, undo and redo.

Plain Python with callbacks (no Qt), so every interaction can be unit-tested
without a window.  The window feeds it clicks, cursor moves, keys and the
results of extractions; it answers with events that the widgets render and with
requests (``piece_requested``, ``preview_requested``) that the window runs on a
worker thread.

Features, pieces and outcomes are described in :mod:`app.model.pieces`.  Outcomes
are kept by piece id outside the undo history: a piece id always names the
same request, so an outcome that arrives after its piece was undone is still
right when the piece is redone.  The preview (the optimal polyline from the
last click to the cursor) is not part of the history either.

Only the feature list and the feature in progress are undoable; outcomes,
preview and selection are not.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

import numpy as np

from app.model.events import Event
from app.model.pieces import (
    Feature,
    PieceOutcome,
    PieceSpec,
    PreviewRequest,
    ToolState,
    as_xy,
    feature_score,
    feature_vertices,
    imported_feature,
    piece_start,
    straight_outcome,
)

__all__ = ["ExtractionTool"]


class ExtractionTool:
    """State model of the click-to-extract tool.

    Parameters
    ----------
    settings : object
        The extraction settings used for new pieces and previews (opaque here:
        the window passes a ``core.extraction.ExtractionSettings``).

    Events (``tool.<name>.connect(callback)``)
    ------------------------------------------
    changed()
        The feature list or the feature in progress changed.
    outcomes_changed()
        A piece's extraction finished or failed.
    preview_changed()
        The preview's geometry changed or the preview went away.
    selection_changed()
    piece_requested(piece: PieceSpec)
        Run this piece's extraction and call :meth:`complete_piece`.
    pieces_abandoned(piece_ids: list[int])
        Requested pieces left the drawing before their result came (Esc,
        Backspace, Undo): their extractions may stop; call
        :meth:`request_dropped` for each one that will not come back.
    preview_requested(request: PreviewRequest)
        Run it and call :meth:`complete_preview`; a newer one supersedes it.
    preview_abandoned()
        No preview asked for so far is wanted any more (Esc, the cursor left,
        the anchor or the settings changed): it may stop.
    settings_restored(settings)
        Undo or redo brought back the settings of that moment (a settings
        change that re-ran the current piece is undone with it).
    """

    def __init__(self, settings: Any = None):
        self.settings = settings
        self.state = ToolState()
        self.outcomes: dict[int, PieceOutcome] = {}
        self.selected_id: int | None = None
        self.dirty = False
        self.preview: PieceOutcome | None = None
        self._ids = itertools.count(1)
        # history entries: (state, settings or None).  A settings change that re-ran the current
        # piece is an edit, so its entry carries the settings to bring back with the state; other
        # entries carry None and leave the settings alone (changing them with nothing to re-run is
        # not an edit, and undoing a later drawing step must not take it back)
        self._undo: list[tuple[ToolState, Any]] = []
        self._redo: list[tuple[ToolState, Any]] = []
        self._requested: set[int] = set()
        self._cursor: tuple[tuple[float, float], bool] | None = None
        self._preview_seq = 0
        self._preview_shown_seq = 0
        self._preview_min_seq = 0
        self._paused = False
        for name in ("changed", "outcomes_changed", "preview_changed", "selection_changed",
                     "piece_requested", "pieces_abandoned", "preview_requested", "preview_abandoned",
                     "settings_restored"):
            setattr(self, name, Event(name))

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
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        """True when there is an undone edit to redo."""
        return bool(self._redo)

    def feature(self, feature_id: int) -> Feature:
        """The finished feature with this id (KeyError when there is none)."""
        for feature in self.state.features:
            if feature.id == feature_id:
                return feature
        raise KeyError(f"no feature with id {feature_id}")

    def piece_start(self, feature: Feature, index: int) -> tuple[float, float]:
        """Where piece ``index`` of ``feature`` starts (see :func:`app.model.pieces.piece_start`)."""
        return piece_start(feature, index, self.outcomes)

    def is_pending(self, piece: PieceSpec) -> bool:
        """True while the piece's extraction has not come back."""
        return piece.id not in self.outcomes

    def feature_vertices(self, feature: Feature) -> np.ndarray:
        """(k, 2) float64 vertices (x, y) px of a whole feature."""
        return feature_vertices(feature, self.outcomes)

    def feature_score(self, feature: Feature) -> float | None:
        """Sum of the scores of the extracted pieces; None when no piece has a score."""
        return feature_score(feature, self.outcomes)

    def start_of_piece(self, piece_id: int) -> tuple[float, float]:
        """Where the piece with this id starts now (KeyError when no feature holds it)."""
        for feature in self._all_features():
            for index, piece in enumerate(feature.pieces):
                if piece.id == piece_id:
                    return self.piece_start(feature, index)
        raise KeyError(f"no piece with id {piece_id}")

    def anchor_start(self) -> tuple[float, float] | None:
        """Where the next piece (and the preview) starts, or None without a feature in progress."""
        current = self.state.current
        if current is None:
            return None
        if not current.pieces:
            return current.start_xy
        return self.piece_start(current, len(current.pieces))

    # -------------------------------------------------------------- history
    def _commit(self, new_state: ToolState, settings: Any = None) -> None:
        """Make ``new_state`` (and ``settings``, when given) current, one undoable step."""
        self._undo.append((self.state, None if settings is None else self.settings))
        self._redo.clear()
        if settings is not None:
            self.settings = settings
        self._set_state(new_state)

    def _set_state(self, new_state: ToolState) -> None:
        old_anchor = self.anchor_start()
        self.state = new_state
        self.dirty = True
        if self.selected_id is not None and all(f.id != self.selected_id for f in new_state.features):
            self.selected_id = None
            self.selection_changed.emit()
        self.changed.emit()
        abandoned = self._requested - {piece.id for feature in self._drawn_features() for piece in feature.pieces}
        if abandoned:
            self.pieces_abandoned.emit(sorted(abandoned))
        self._request_missing()
        if self.anchor_start() != old_anchor or new_state.current is None:
            self._restart_preview()

    def undo(self) -> bool:
        """Go back one edit; False when there is nothing to undo."""
        return self._step_history(self._undo, self._redo)

    def redo(self) -> bool:
        """Redo the last undone edit; False when there is nothing to redo."""
        return self._step_history(self._redo, self._undo)

    def _step_history(self, source: list, target: list) -> bool:
        """Restore the newest state of ``source``, keeping the current one on ``target``."""
        if not source:
            return False
        state, settings = source.pop()
        target.append((self.state, None if settings is None else self.settings))
        self._paused = False
        if settings is not None and settings != self.settings:
            self.settings = settings
            self.settings_restored.emit(settings)
        self._set_state(state)
        return True

    def _drawn_features(self) -> list[Feature]:
        """The finished features and the feature in progress (not those of the history)."""
        return list(self.state.features) + ([self.state.current] if self.state.current is not None else [])

    def _request_missing(self) -> None:
        """Ask for every extraction the state needs that was never asked for (or was dropped)."""
        for feature in self._drawn_features():
            for piece in feature.pieces:
                if piece.kind == "extract" and piece.id not in self.outcomes and piece.id not in self._requested:
                    self._requested.add(piece.id)
                    self.piece_requested.emit(piece)

    # ---------------------------------------------------------------- drawing
    def click(self, point, straight: bool = False) -> None:
        """A click at ``point`` (x, y) px: starts a feature or chains a piece onto it."""
        xy = as_xy(point)
        current = self.state.current
        self._paused = False
        if current is None:
            feature = Feature(next(self._ids), "", xy)
            self._commit(replace(self.state, current=feature))
            return
        if xy == current.anchor_xy:
            return  # a second click on the same spot adds nothing
        kind = "straight" if straight else "extract"
        piece = PieceSpec(next(self._ids), current.anchor_xy, xy, kind, None if straight else self.settings)
        if straight:
            self.outcomes[piece.id] = straight_outcome(self.anchor_start(), xy)
        feature = replace(current, pieces=current.pieces + (piece,))
        self._commit(replace(self.state, current=feature))

    def finish(self) -> Feature | None:
        """Enter / double-click: the feature in progress becomes a finished feature."""
        current = self.state.current
        if current is None:
            return None
        if not current.pieces:
            self._commit(replace(self.state, current=None))
            return None
        name = current.name or self._next_name()
        feature = replace(current, name=name)
        self._commit(ToolState(self.state.features + (feature,), None))
        return feature

    def _next_name(self, pending: list[Feature] = ()) -> str:
        taken = {f.name for f in self.state.features} | {f.name for f in pending}
        for n in itertools.count(len(self.state.features) + 1):
            if f"Line {n}" not in taken:
                return f"Line {n}"
        raise AssertionError("unreachable")

    def cancel(self) -> None:
        """Esc: cancel the piece in progress.

        The preview stops following the cursor, and a last piece still being
        computed is dropped; with nothing of that kind left, a feature that has
        only its start click loses it.  Finished pieces stay (Backspace drops
        them, Enter finishes the feature).
        """
        current = self.state.current
        if current is None:
            return
        self._paused = True
        self.preview_abandoned.emit()
        self._clear_preview()
        if not current.pieces:
            self._commit(replace(self.state, current=None))
        elif self.is_pending(current.pieces[-1]):
            self._commit(replace(self.state, current=replace(current, pieces=current.pieces[:-1])))

    def drop_last_piece(self) -> None:
        """Backspace: remove the last piece (or the lone start click) of the feature in progress."""
        current = self.state.current
        if current is None:
            return
        if current.pieces:
            self._commit(replace(self.state, current=replace(current, pieces=current.pieces[:-1])))
        else:
            self._commit(replace(self.state, current=None))

    def set_settings(self, settings: Any) -> None:
        """New settings: later pieces use them, and the current piece and preview re-run."""
        if settings == self.settings:
            return
        current = self.state.current
        if current is not None and current.pieces and current.pieces[-1].kind == "extract":
            last = current.pieces[-1]
            rerun = replace(last, id=next(self._ids), settings=settings)
            self._commit(replace(self.state, current=replace(current, pieces=current.pieces[:-1] + (rerun,))), settings)
        else:
            self.settings = settings
        self._restart_preview()

    # ------------------------------------------------------------- preview
    def move_cursor(self, point, straight: bool = False) -> None:
        """The cursor moved to ``point`` (x, y) px; Shift held makes the preview straight."""
        xy = as_xy(point)
        if self._cursor == (xy, straight):
            return
        self._cursor = (xy, straight)
        self._update_preview()

    def leave(self) -> None:
        """The cursor left the image: no preview."""
        self._cursor = None
        self.preview_abandoned.emit()
        self._clear_preview()

    def _update_preview(self) -> None:
        start = self.anchor_start()
        if start is None or self._cursor is None or self._paused:
            self._clear_preview()
            return
        end, straight = self._cursor
        if end == start:
            return
        if straight:
            self._preview_seq += 1
            self._preview_min_seq = self._preview_seq
            self._show_preview(straight_outcome(start, end))
            return
        self._preview_seq += 1
        self.preview_requested.emit(PreviewRequest(self._preview_seq, start, end, self.settings))

    def _restart_preview(self) -> None:
        """The anchor or the settings changed: results of older requests are stale."""
        self._preview_min_seq = self._preview_seq + 1
        self.preview_abandoned.emit()
        self._clear_preview()
        self._update_preview()

    def _clear_preview(self) -> None:
        if self.preview is not None:
            self.preview = None
            self.preview_changed.emit()

    def _show_preview(self, outcome: PieceOutcome) -> None:
        self._preview_shown_seq = self._preview_seq
        self.preview = outcome
        self.preview_changed.emit()

    def complete_preview(self, seq: int, outcome: PieceOutcome) -> bool:
        """The preview request ``seq`` came back; returns whether it was shown.

        A result is shown unless it is older than the one on screen or was asked
        for before the anchor or the settings changed, so the preview follows
        the cursor while it moves and always ends on the latest request.
        """
        if seq < self._preview_min_seq or seq <= self._preview_shown_seq or self._paused:
            return False
        if self.anchor_start() is None or self._cursor is None:
            return False
        self._preview_shown_seq = seq
        self.preview = outcome
        self.preview_changed.emit()
        return True

    # ------------------------------------------------------------- outcomes
    def complete_piece(self, piece_id: int, outcome: PieceOutcome) -> None:
        """Store the outcome of a piece's extraction (finished or failed)."""
        anchor_before = self.anchor_start()
        self.outcomes[piece_id] = outcome
        self._requested.discard(piece_id)
        self.outcomes_changed.emit()
        if self.anchor_start() != anchor_before:
            self._restart_preview()  # endpoint snapping moved the last vertex

    def request_dropped(self, piece_id: int) -> None:
        """The extraction asked for by ``piece_requested`` was dropped without a result.

        If the piece is in the drawing again (a redo came first), it is asked for again.
        """
        self._requested.discard(piece_id)
        self._request_missing()

    def fail_piece(self, piece_id: int, message: str) -> None:
        """The extraction of a piece failed: keep it as a straight segment marked failed."""
        for feature in self._all_features():
            for index, piece in enumerate(feature.pieces):
                if piece.id == piece_id:
                    start = self.piece_start(feature, index)
                    self.complete_piece(piece_id, straight_outcome(start, piece.click_end, "failed", message))
                    return
        raise KeyError(f"no piece with id {piece_id}")

    def _all_features(self):
        yield from self.state.features
        if self.state.current is not None:
            yield self.state.current
        for state, _ in self._undo + self._redo:
            yield from state.features
            if state.current is not None:
                yield state.current

    # ------------------------------------------------------------- features
    def select(self, feature_id: int | None) -> None:
        """Highlight one finished feature (None: no selection)."""
        if feature_id is not None:
            self.feature(feature_id)
        if feature_id != self.selected_id:
            self.selected_id = feature_id
            self.selection_changed.emit()

    def rename(self, feature_id: int, name: str) -> None:
        """Give a finished feature a new name (an undoable edit)."""
        name = str(name).strip()
        if not name:
            raise ValueError("name must not be empty")
        if self.feature(feature_id).name == name:
            return
        features = tuple(replace(f, name=name) if f.id == feature_id else f for f in self.state.features)
        self._commit(replace(self.state, features=features))

    def delete(self, feature_id: int) -> None:
        """Remove a finished feature (an undoable edit)."""
        self.feature(feature_id)
        features = tuple(f for f in self.state.features if f.id != feature_id)
        self._commit(replace(self.state, features=features))

    def reopen(self, feature_id: int) -> None:
        """Make a finished feature the feature in progress again, to chain more pieces."""
        feature = self.feature(feature_id)
        features = tuple(f for f in self.state.features if f.id != feature_id)
        if self.state.current is not None and self.state.current.pieces:
            features = features + (replace(self.state.current, name=self.state.current.name or self._next_name()),)
        self._paused = False
        self._commit(ToolState(features, feature))

    def add_features(self, items: list[tuple[str, np.ndarray, dict]]) -> list[Feature]:
        """Add ready-made polylines (an import) as finished, editable features.

        Parameters
        ----------
        items : list of (name, vertices_px, properties)
            ``vertices_px`` is (k, 2) float (x, y) pixels with k >= 2.
        """
        added = []
        for name, vertices, properties in items:
            piece_id, feature_id = next(self._ids), next(self._ids)
            feature, outcome = imported_feature(feature_id, piece_id, name or self._next_name(added), vertices,
                                                properties)
            self.outcomes[piece_id] = outcome
            added.append(feature)
        if added:
            self._commit(replace(self.state, features=self.state.features + tuple(added)))
        return added

    def mark_saved(self) -> None:
        """The user's work is safe in a file: no warning on close until the next edit."""
        self.dirty = False

    # ------------------------------------------------------------- session
    def restore(self, state: ToolState, outcomes: dict[int, PieceOutcome]) -> None:
        """Replace everything by a restored session (clears the history)."""
        self.outcomes = dict(outcomes)
        self._requested.clear()
        ids = [f.id for f in state.features] + [p.id for f in state.features for p in f.pieces]
        if state.current is not None:
            ids += [state.current.id] + [p.id for p in state.current.pieces]
        self._ids = itertools.count(max(ids, default=0) + 1)
        self._undo.clear()
        self._redo.clear()
        self.selected_id = None
        self._set_state(state)
        self.dirty = bool(state.features or state.current)
        self.selection_changed.emit()

    def clear(self) -> None:
        """Forget everything (a new image without the old features)."""
        self.restore(ToolState(), {})
        self.dirty = False
