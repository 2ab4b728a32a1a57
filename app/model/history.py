"""Undo and redo of the extraction tool: two stacks of :class:`app.model.pieces.ToolState`.

A settings change that re-ran the current piece is an edit, so its entry
carries the settings to bring back with the state.  Other entries carry None
and leave the settings alone: changing them with nothing to re-run is not an
edit, and undoing a later drawing step must not take it back.
"""

from __future__ import annotations

from typing import Any

from app.model.pieces import ToolState

__all__ = ["History"]


class History:
    """Undo and redo stacks of ``(state, settings or None)`` entries."""

    def __init__(self):
        self._undo: list[tuple[ToolState, Any]] = []
        self._redo: list[tuple[ToolState, Any]] = []

    @property
    def can_undo(self) -> bool:
        """True when there is an edit to undo."""
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        """True when there is an undone edit to redo."""
        return bool(self._redo)

    def push(self, state: ToolState, settings: Any = None) -> None:
        """Keep ``state`` (left by a new edit) for undo; a new edit clears the redo stack.

        Parameters
        ----------
        state : ToolState
            The state before the edit.
        settings : object or None
            The settings before the edit, for an edit that changed them.
        """
        self._undo.append((state, settings))
        self._redo.clear()

    def undo(self, state: ToolState, settings: Any) -> tuple[ToolState, Any] | None:
        """The entry to go back to, keeping the current ``state`` and ``settings`` for redo; None when empty."""
        return self._step(self._undo, self._redo, state, settings)

    def redo(self, state: ToolState, settings: Any) -> tuple[ToolState, Any] | None:
        """The entry to go forward to, keeping the current ``state`` and ``settings`` for undo; None when empty."""
        return self._step(self._redo, self._undo, state, settings)

    @staticmethod
    def _step(source: list, target: list, state: ToolState, settings: Any) -> tuple[ToolState, Any] | None:
        if not source:
            return None
        entry = source.pop()
        target.append((state, None if entry[1] is None else settings))
        return entry

    def clear(self) -> None:
        """Forget every entry."""
        self._undo.clear()
        self._redo.clear()
