"""The live preview: the optimal polyline from the anchor to the cursor (not undoable).

A result is shown unless it is older than the one on screen or was asked for
before the anchor or the settings changed.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from app.model.events import Event
from app.model.pieces import PieceOutcome, PreviewRequest, as_xy, straight_outcome
from core.extraction.cost import guides_too_close

__all__ = ["LivePreview", "too_short"]


class LivePreview:
    """The preview's state and requests, for :class:`app.model.tool.ExtractionTool`.

    ``anchor()`` gives where it starts (or None), ``settings()`` the settings of
    the next request; ``changed``, ``requested``, ``abandoned`` are the tool's
    preview events.  ``outcome`` is the preview shown; ``paused`` is set by Esc
    until the next click.
    """

    def __init__(self, anchor: Callable[[], tuple | None], settings: Callable[[], Any],
                 changed: Event, requested: Event, abandoned: Event):
        self._anchor, self._settings = anchor, settings
        self._changed, self._requested, self._abandoned = changed, requested, abandoned
        self.outcome: PieceOutcome | None = None
        self.paused = False
        self._cursor: tuple[tuple[float, float], bool] | None = None
        self._newest_seq = 0  # the newest request
        self._shown_seq = 0   # the request whose result is on screen
        self._oldest_seq = 0  # older requests are stale (another anchor or settings)

    def move_cursor(self, point, straight: bool = False) -> None:
        """The cursor moved to ``point`` (x, y) px; Shift held makes the preview straight."""
        xy = as_xy(point)
        if self._cursor != (xy, straight):
            self._cursor = (xy, straight)
            self.update()

    def leave(self) -> None:
        """The cursor left the image: no preview."""
        self._cursor = None
        self._abandoned.emit()
        self._clear()

    def pause(self) -> None:
        """Esc: no preview until :attr:`paused` is cleared (the next click)."""
        self.paused = True
        self._abandoned.emit()
        self._clear()

    def update(self) -> None:
        """Ask for the preview to the cursor (a straight one is shown at once)."""
        start = self._anchor()
        if start is None or self._cursor is None or self.paused:
            self._clear()
            return
        end, straight = self._cursor
        if end == start:
            return
        self._newest_seq += 1
        settings = self._settings()
        if straight or too_short(start, end, settings):
            self._oldest_seq = self._newest_seq
            self._show(self._newest_seq, straight_outcome(start, end))
        else:
            self._requested.emit(PreviewRequest(self._newest_seq, start, end, settings))

    def restart(self) -> None:
        """The anchor or the settings changed: results of older requests are stale."""
        self._oldest_seq = self._newest_seq + 1
        self._abandoned.emit()
        self._clear()
        self.update()

    def complete(self, seq: int, outcome: PieceOutcome) -> bool:
        """The request ``seq`` came back; returns whether it is shown."""
        if seq < self._oldest_seq or seq <= self._shown_seq or self.paused:
            return False
        if self._anchor() is None or self._cursor is None:
            return False
        self._show(seq, outcome)
        return True

    def _show(self, seq: int, outcome: PieceOutcome) -> None:
        self._shown_seq = seq
        self.outcome = outcome
        self._changed.emit()

    def _clear(self) -> None:
        if self.outcome is not None:
            self.outcome = None
            self._changed.emit()


def too_short(start, end, settings) -> bool:
    """Whether the span is too short for the settings' guides (core.extraction.cost.guides_too_close, which an
    extraction refuses): the cursor a few pixels from the anchor, which every move after a click passes
    through; its preview is the straight segment, not a refusal in the status bar, and a click there (a slip
    beside the last vertex) adds that straight segment, not a failed extraction."""
    nodes = getattr(settings, "nodes", None)
    if not isinstance(nodes, int) or isinstance(nodes, bool):
        return False
    return guides_too_close(nodes, math.hypot(end[0] - start[0], end[1] - start[1]))
