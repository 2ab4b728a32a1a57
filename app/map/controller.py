"""Wiring of the extraction tool: viewer input -> tool model -> worker -> tool model -> viewer.

The model (:class:`app.model.tool.ExtractionTool`) decides; the runner
(:class:`app.map.runner.ExtractionRunner`) computes off the GUI thread; the viewer
draws.  This module only connects them and turns results and errors into what
the model and the user see.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from app import errors
from app.map.line_editing import LineEditing
from app.map.overlays import OverlayOptions, ToolOverlay
from app.model.pieces import PieceOutcome

__all__ = ["ToolController", "outcome_from_result"]

#: Ctrl+click selects a feature passing this close to the cursor (screen pixels).
PICK_RADIUS_PX = 6.0


def outcome_from_result(result) -> PieceOutcome:
    """The tool's view of a ``core.extraction.ExtractionResult``."""
    return PieceOutcome(
        vertices_px=result.vertices_px,
        status="done",
        score=float(result.score),
        backend=result.backend,
        method=result.method,
        timings_ms=dict(result.timings_ms),
        details={"guides": result.guides, "settings": result.settings},
        estimate=result.estimate,
        confidence=result.confidence,
    )


class ToolController(QObject):
    """Connects a tool model, an extraction runner and a viewer.

    Parameters
    ----------
    tool : app.model.tool.ExtractionTool
    runner : app.map.runner.ExtractionRunner
        Gets the tool's complete requests (``piece_requested(piece, start_xy)``
        becomes ``submit_piece``); its results go back to the tool.
    viewer : app.map.viewer.RasterViewer
    parent : QObject, optional

    Signals
    -------
    extraction_finished(result)
        A piece's extraction came back: for the status bar, which describes
        the last piece (a preview's estimate of the few pixels to the cursor
        would replace it).
    message(text)
        Something worth a line in the status bar ("": clear the line, after a
        preview that failed has been followed by one that did not).
    """

    extraction_finished = Signal(object)
    message = Signal(str)

    def __init__(self, tool, runner, viewer, parent=None):
        super().__init__(parent)
        self.tool, self.runner, self.viewer = tool, runner, viewer
        self._preview_failure_shown = False
        self.overlay = ToolOverlay(tool, OverlayOptions())
        viewer.overlay_painters.append(self.overlay)
        self.editing = LineEditing(tool, viewer, self.overlay.index, self)  # snapping and vertex edits
        self.editing.message.connect(self.message)
        viewer.clicked.connect(self._on_click)
        viewer.picked.connect(self._on_pick)
        viewer.double_clicked.connect(lambda x, y: tool.finish())
        viewer.right_clicked.connect(lambda x, y: tool.finish())
        viewer.hovered.connect(self._on_hover)
        viewer.left.connect(tool.leave)
        viewer.left.connect(self.editing.clear_marker)
        tool.piece_requested.connect(self._submit_piece)
        tool.preview_requested.connect(self._submit_preview)
        tool.pieces_abandoned.connect(runner.drop_pieces)
        tool.preview_abandoned.connect(runner.drop_preview)
        for event in (tool.changed, tool.outcomes_changed, tool.preview_changed, tool.selection_changed):
            event.connect(viewer.update)
        runner.piece_done.connect(self._on_piece_done)
        runner.piece_failed.connect(self._on_piece_failed)
        runner.preview_done.connect(self._on_preview_done)
        runner.preview_failed.connect(self._on_preview_failed)
        runner.piece_dropped.connect(tool.request_dropped)

    def set_show_guides(self, show: bool) -> None:
        """Draw the guides and candidate points of the latest extraction, or not."""
        self.overlay.options.show_guides = bool(show)
        self.viewer.update()

    def set_show_ribbon(self, show: bool) -> None:
        """Draw the estimated ribbon's edges along every piece, or not."""
        self.overlay.options.show_ribbon = bool(show)
        self.viewer.update()

    # -------------------------------------------------------------- input
    def _on_click(self, x: float, y: float, straight: bool) -> None:
        if not self.viewer.contains_image_point(x, y):
            self.message.emit(f"({x:.0f}, {y:.0f}) is outside the image: click on the image")
            return
        self.tool.click(self.editing.snapped(x, y), straight=straight)

    def _on_pick(self, x: float, y: float) -> None:
        """Ctrl+click: select the finished feature under the cursor (within a few screen pixels), or none."""
        self.overlay.index.catch_up()
        self.tool.select(self.overlay.index.nearest((x, y), PICK_RADIUS_PX / self.viewer.transform.scale))

    def _on_hover(self, x: float, y: float, straight: bool) -> None:
        if self.viewer.contains_image_point(x, y):
            self.tool.move_cursor(self.editing.snapped(x, y), straight=straight)
        else:
            self.editing.clear_marker()
            self.tool.leave()

    # ------------------------------------------------------------ requests
    def _submit_piece(self, piece, start_xy) -> None:
        self.runner.submit_piece(piece.id, start_xy, piece.click_end, piece.settings)

    def _submit_preview(self, request) -> None:
        self.runner.submit_preview(request.seq, request.start_xy, request.end_xy, request.settings)

    # ------------------------------------------------------------- results
    def _on_piece_done(self, piece_id: int, result) -> None:
        self.tool.complete_piece(piece_id, outcome_from_result(result))
        self.extraction_finished.emit(result)

    def _on_piece_failed(self, piece_id: int, report) -> None:
        try:
            self.tool.fail_piece(piece_id, report.message)
        except KeyError:
            pass  # no request is out for it any more: a piece of a closed image
        errors.log.error("extraction failed: %s\n%s", report.message, report.details)
        errors.show_error(self.viewer.window(), errors.ErrorReport(
            "Extraction failed", report.message, report.details, report.kind))

    def _on_preview_done(self, seq: int, result) -> None:
        if self.tool.complete_preview(seq, outcome_from_result(result)) and self._preview_failure_shown:
            self._preview_failure_shown = False
            self.message.emit("")  # the failure it showed no longer holds

    def _on_preview_failed(self, seq: int, report) -> None:
        self._preview_failure_shown = True
        self.message.emit(f"preview: {report.message}")
