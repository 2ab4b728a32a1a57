"""Undo and redo of the extraction tool: two stacks of :class:`app.model.state_change.StateChange`.

A settings change that re-ran the current piece is an edit, so its entry
carries the settings to bring back with the state.  Other entries carry None
and leave the settings alone: changing them with nothing to re-run is not an
edit, and undoing a later drawing step must not take it back.

The stacks hold at most ``limit`` steps in all, the oldest dropped first; the
steps dropped are handed back so that the tool can let go of what only they
held (:class:`PieceReferences`).
"""

from __future__ import annotations

import collections
from typing import Any, Iterable

from app.model.pieces import Feature, ToolState, piece_ids
from app.model.state_change import StateChange

__all__ = ["History", "PieceReferences", "DEFAULT_UNDO_LIMIT"]

#: Undoable steps kept by default: a long session's worth, a few MB at 100,000 lines.
DEFAULT_UNDO_LIMIT = 500


def checked_limit(limit) -> int:
    """``limit`` as an int >= 0 (TypeError or ValueError naming it otherwise)."""
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise TypeError(f"undo_limit must be an int; got {type(limit).__name__}")
    if limit < 0:
        raise ValueError(f"undo_limit must be >= 0; got {limit}")
    return limit


class History:
    """Undo and redo stacks of ``(change, settings or None)`` entries, at most ``limit`` in all."""

    def __init__(self, limit: int = DEFAULT_UNDO_LIMIT):
        self._limit = checked_limit(limit)
        self._undo: collections.deque[tuple[StateChange, Any]] = collections.deque()
        self._redo: list[tuple[StateChange, Any]] = []

    @property
    def limit(self) -> int:
        """The most steps kept (undo and redo together)."""
        return self._limit

    @property
    def can_undo(self) -> bool:
        """True when there is an edit to undo."""
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        """True when there is an undone edit to redo."""
        return bool(self._redo)

    def __len__(self) -> int:
        return len(self._undo) + len(self._redo)

    def set_limit(self, limit: int) -> list[StateChange]:
        """Keep at most ``limit`` steps from now on; returns the steps dropped (oldest undo, then farthest redo)."""
        self._limit = checked_limit(limit)
        return self._trimmed()

    def push(self, change: StateChange, settings: Any = None) -> list[StateChange]:
        """Keep ``change`` (a new edit) for undo; returns the steps dropped (the redo stack, the oldest over the limit).

        Parameters
        ----------
        change : StateChange
            From the state before the edit to the state after it.
        settings : object or None
            The settings before the edit, for an edit that changed them.
        """
        dropped = [entry[0] for entry in self._redo]
        self._redo.clear()
        self._undo.append((change, settings))
        return dropped + self._trimmed()

    def _trimmed(self) -> list[StateChange]:
        dropped = []
        while len(self) > self._limit:
            dropped.append((self._undo.popleft() if self._undo else self._redo.pop(0))[0])
        return dropped

    def undo(self, state: ToolState, settings: Any) -> tuple[StateChange, ToolState, Any] | None:
        """The step undone, the state before it and its settings (or None); None when there is nothing to undo.

        ``state`` and ``settings`` are the current ones: the step keeps ``settings`` for redo.
        """
        if not self._undo:
            return None
        change, entry_settings = self._undo.pop()
        self._redo.append((change, None if entry_settings is None else settings))
        return change, change.undone(state), entry_settings

    def redo(self, state: ToolState, settings: Any) -> tuple[StateChange, ToolState, Any] | None:
        """The step redone, the state after it and its settings (or None); None when there is nothing to redo."""
        if not self._redo:
            return None
        change, entry_settings = self._redo.pop()
        self._undo.append((change, None if entry_settings is None else settings))
        return change, change.redone(state), entry_settings

    def clear(self) -> list[StateChange]:
        """Forget every entry; returns the steps dropped."""
        dropped = [entry[0] for entry in self._undo] + [entry[0] for entry in self._redo]
        self._undo.clear()
        self._redo.clear()
        return dropped


class PieceReferences:
    """How many features of the state and of the undo history hold each piece.

    A feature counts once wherever it is held (the state's features, the
    feature in progress, a reopened feature's original, either side of a
    step), so a piece that drops to zero can never be drawn again and its
    outcome can go.
    """

    def __init__(self):
        self._counts: collections.Counter[int] = collections.Counter()

    def __contains__(self, piece_id: int) -> bool:
        return piece_id in self._counts

    def __len__(self) -> int:
        return len(self._counts)

    def hold(self, features: Iterable[Feature]) -> None:
        """Count one more holder of each piece of ``features``."""
        self._counts.update(piece_ids(features))  # (counted in C: an import of 50,000 lines is held twice)

    def release(self, features: Iterable[Feature]) -> list[int]:
        """Count one holder less of each piece of ``features``; returns the ids of the pieces no longer held."""
        counts = self._counts
        released = list(piece_ids(features))
        counts.subtract(released)
        gone = [piece_id for piece_id in dict.fromkeys(released) if counts[piece_id] <= 0]
        for piece_id in gone:
            del counts[piece_id]
        return gone

    def reset(self, state: ToolState) -> None:
        """Count the features of ``state`` only (a history cleared with it)."""
        self._counts.clear()
        reopened = state.reopened[1] if state.reopened is not None else None
        self.hold(list(state.features) + [f for f in (state.current, reopened) if f is not None])
