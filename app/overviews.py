"""File > Build Overviews...: offered for a large image without overviews, built on a worker, then used.

Opening a large image that has no overviews (:func:`core.io.overviews.needs_overviews`) says so in the
status bar and shows a "Build overviews..." button there.  The build runs as a
:class:`app.worker_job.WorkerJob` with a progress dialog whose Cancel stops it at once (GDAL's process is
ended; nothing is left beside the image).  Once built, the open image's handles are opened again and its cached
tiles dropped, so the view redraws through the overviews; the features, the undo history and the view stay.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtWidgets import QPushButton

from app import errors
from app.errors import report_from_exception
from app.worker_job import WorkerJob, start_with_progress
from core.io.overviews import build_overviews, needs_overviews, remove_abandoned_staging

__all__ = ["OverviewActions", "NO_OVERVIEWS_TEXT"]

NO_OVERVIEWS_TEXT = ("{name} is large and has no overviews: the whole image is slow to draw. "
                     "File > Build Overviews... makes them once, beside the image.")
#: How long (ms) the status bar says so.
NOTICE_MS = 30_000


class OverviewActions:
    """The overviews of the open image: the notice on opening, the build, and the switch to them.

    Parameters
    ----------
    window : app.main_window.MainWindow
        Its ``document``, ``loader``, ``viewer`` and ``status`` are used.

    Attributes
    ----------
    job : WorkerJob or None
        The build in progress (the window cancels and waits for it on closing).
    action : QAction or None
        File > Build Overviews... (:func:`app.menus.build_menus` sets it).
    button : QPushButton
        The status bar's offer, shown while the open image lacks overviews.
    """

    def __init__(self, window):
        self._window = window
        self.job: WorkerJob | None = None
        self._stopping: WorkerJob | None = None  # a cancelled build whose worker may still be ending GDAL's process
        self.action = None
        self.button = QPushButton("Build overviews...", flat=True, visible=False)
        self.button.setToolTip("Build the image's overviews (pyramids) so that it draws quickly zoomed out")
        self.button.clicked.connect(self.build)
        window.status.addPermanentWidget(self.button)

    def offer(self, document) -> None:
        """Offer to build overviews when ``document`` (the image just opened) is large and has none (or has
        damaged ones, which the raster reads without: its notice is said instead).

        The staging folders that killed builds of the image left beside it (gigabytes, hidden) are removed
        first, whether a build is offered or not (an .ovr may have been made since by other means).
        """
        local = document.path is not None and "://" not in document.path
        if self.action is not None:
            self.action.setEnabled(local)
        if local and not document.path.startswith("/vsi"):
            remove_abandoned_staging(document.path)
        try:
            needed = needs_overviews(document.raster)
        except Exception:  # only a hint: an image GDAL opened but cannot tell about shows no offer
            needed = False
        self.button.setVisible(needed)
        if document.raster.notices:  # a damaged .ovr, set aside: why the image is slow, and what to do
            self._window.status.showMessage(" ".join(document.raster.notices), NOTICE_MS)
        elif needed:
            self._window.status.showMessage(NO_OVERVIEWS_TEXT.format(name=document.title), NOTICE_MS)

    def build(self) -> None:
        """Build the open image's overviews on a worker, with a progress dialog (File > Build Overviews...)."""
        window, document = self._window, self._window.document
        if document is None or self.job is not None:
            return
        if self._stopping is not None and not self._stopping.wait(0):
            window.status.showMessage("the cancelled build is still stopping: try again in a moment", 5000)
            return
        if not document.path or "://" in document.path:
            errors.show_error(window, report_from_exception(
                "Could not build the overviews", ValueError("overviews are built for images opened from a local file")))
            return
        started = time.perf_counter()
        job = WorkerJob(lambda token, report: build_overviews(document.path, cancel=token, report=report),
                        "Could not build the overviews", window)
        job.cancelled.connect(lambda: setattr(self, "_stopping", job))
        self.job = start_with_progress(window, job, "Build Overviews", f"building overviews of {document.title}",
                                       "levels", lambda factors: self._use(document, factors, started),
                                       lambda: setattr(self, "job", None))

    def _use(self, document, factors: list[int], started: float) -> None:
        """Read the open image through its new overviews, keeping the view (and everything else) as it is."""
        window = self._window
        if window.document is not document:  # (the progress dialog is modal: another image cannot be open)
            return
        document.reopen()
        window.loader.reopen()
        window.viewer.reload_tiles()
        self.button.hide()
        levels = ", ".join(f"1:{f}" for f in factors)
        window.status.showMessage(f"overviews built in {time.perf_counter() - started:.1f} s ({levels}), "
                                  f"in {Path(document.path).name}.ovr", 10_000)
