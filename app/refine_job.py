"""File > Refine Lines onto Image: an existing line layer moved onto the open image, off the GUI thread.

:func:`prepare_refined` runs ``core.batch.refine_layer`` (the engine of
``linesnap refine``: shift search, pieces extracted on a local Dask cluster of
threads, joined) into a temporary file, then builds its lines as features
exactly as File > Import does (``app.import_job.prepare_import``), so the
result is an editable layer, one undoable step; every line keeps its
properties plus the refinement's ``status``, ``confidence`` and displacement.
Cancel is checked after every raster tile and between the phases.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from app import dialogs, errors
from app.errors import report_from_exception
from app.import_job import prepare_import
from app.worker_job import WorkerJob, start_with_progress
from core.cancel import Cancelled, CancelToken

__all__ = ["RefineJob", "prepare_refined", "refine_dialog", "refine_path", "start_refine"]

#: Worker threads of the local Dask cluster (the window keeps the rest of the machine).
WORKER_THREADS = 2


def prepare_refined(lines_path, document, tool, settings, token: CancelToken | None = None, report=None):
    """Refine the lines of ``lines_path`` onto ``document``'s image; a PreparedImport of the result (any thread).

    ``report(done, total, phase)`` hears of progress (pieces, then lines).
    Raises :class:`core.cancel.Cancelled` once ``token`` is cancelled and
    ValueError for inputs ``linesnap refine`` refuses.
    """
    from core.batch import refine_layer
    from core.batch.runner import dask_client

    report = report or (lambda done, total, phase: None)
    if not document.path or "://" in document.path:
        raise ValueError("refining needs an image opened from a local file")

    def pieces_done(done: int, total: int) -> None:
        if token is not None and token.cancelled:
            raise Cancelled("the refinement was cancelled")
        report(done, total, "refining the pieces")

    with tempfile.TemporaryDirectory(prefix="linesnap-refine-") as folder:
        output = Path(folder) / "refined.gpkg"
        factory = functools.partial(dask_client, workers=WORKER_THREADS, threads=True)
        refine_layer(lines_path, [document.path], output, settings, client_factory=factory, progress=pieces_done)
        prepared = prepare_import(output, document, tool, token, report)
    prepared.path = str(lines_path)
    return prepared


class RefineJob(WorkerJob):
    """One refinement of the lines in ``path`` onto ``document`` (:func:`prepare_refined` on a worker thread).

    ``done(prepared)`` brings an ``app.import_job.PreparedImport`` to add with ``tool.add_built_features``
    (on the GUI thread); the other signals are :class:`app.worker_job.WorkerJob`'s.
    """

    def __init__(self, path, document, tool, settings, parent=None):
        self.path, self.document, self.tool, self.settings = str(path), document, tool, settings
        super().__init__(lambda token, report: prepare_refined(self.path, document, tool, settings, token, report),
                         "Could not refine the lines", parent)


def start_refine(window, path) -> RefineJob:
    """Refine on a worker with a progress dialog whose Cancel stops it; the result is added as features."""
    if window.document is None:
        raise ValueError("open the image to refine the lines onto first")
    job = RefineJob(path, window.document, window.tool, window.tool.settings, window)

    def add(prepared) -> None:
        window.tool.add_built_features(prepared.features, prepared.outcomes, prepared.vertices)
        window.status.showMessage(f"refined {len(prepared.features)} lines of {Path(path).name} onto the image "
                                  "(Ctrl+Z takes them back)", 15000)

    def end() -> None:
        window.refine_job = None

    window.refine_job = job
    return start_with_progress(window, job, "Refine lines onto the image", f"refinement of {Path(path).name}", "",
                               add, end)


def refine_dialog(window) -> None:
    """Ask for a line layer and refine it onto the open image (File > Refine Lines onto Image...)."""
    path = dialogs.ask_import_path(window, str(Path(window.document.path).parent) if window.document else "")
    if path:
        refine_path(window, path)


def refine_path(window, path) -> None:
    """Refine the line layer ``path`` onto the open image (the Layers dock's Refine...); errors as a dialog."""
    try:
        start_refine(window, path)
    except Exception as err:  # the GUI edge
        errors.show_error(window, report_from_exception("Could not refine the lines", err))
