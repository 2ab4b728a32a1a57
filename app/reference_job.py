"""File > Add Reference Layer off the GUI thread: read and reproject on a worker, with progress and cancel.

Reading a large layer (50,000 lines, each reprojected onto the image) took
seconds on the GUI thread, which froze the window.  :func:`prepare_reference`
does all of it (read, place every line through the image's georeference, the
lines' bounding boxes for drawing) on any thread, reporting progress and
stopping at the next line once cancelled.  The layer is added to
:class:`app.model.reference.ReferenceLayers` only when the work is done, on
the GUI thread, so a cancel or an error leaves the layers as they were.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.import_job import WatchedRaster
from app.model.reference import ReferenceLayer, load_reference_layer
from app.worker_job import WorkerJob, start_with_progress
from core.cancel import Cancelled, CancelToken

__all__ = ["ReferenceJob", "prepare_reference", "start_reference"]


def prepare_reference(path, raster, colour: str, token: CancelToken | None = None, report=None) -> ReferenceLayer:
    """The reference layer of ``path`` on ``raster`` (:func:`app.model.reference.load_reference_layer`; any thread).

    ``report(done, total, phase)`` hears of progress (total 0: unknown).
    Raises ``core.io.geojson.GeoJSONError`` as ``load_reference_layer`` does, and
    :class:`core.cancel.Cancelled` once ``token`` is cancelled.
    """
    report = report or (lambda done, total, phase: None)
    report(0, 0, "reading the file")
    layer = load_reference_layer(path, WatchedRaster(raster, token, report), colour)
    if token is not None and token.cancelled:
        raise Cancelled("the reference layer was cancelled")
    report(len(layer.lines_px), len(layer.lines_px), "preparing the drawing")
    layer.line_boxes_px  # noqa: B018 -- computed here, not on the GUI thread at the first paint
    return layer


class ReferenceJob(WorkerJob):
    """One reference layer read onto ``document`` (:func:`prepare_reference` on a worker thread of its own).

    ``done(layer)`` brings the :class:`ReferenceLayer` to add (on the GUI thread);
    the other signals are :class:`app.worker_job.WorkerJob`'s.
    """

    def __init__(self, path, document, colour: str, parent=None):
        self.path, self.document = str(path), document
        self.entry: dict | None = None  # its project entry (path, colour, visible), set by start_reference
        super().__init__(lambda token, report: prepare_reference(self.path, document.raster, colour, token, report),
                         "Could not add the reference layer", parent)


def start_reference(actions, path, colour: str | None = None, visible: bool = True, kept: bool = False) -> ReferenceJob:
    """Read ``path`` as a reference layer on a worker (progress dialog, Cancel) for ``actions``
    (:class:`app.project_actions.ProjectActions`), added on top of the layers when done, in ``colour``
    (the next one by default) and shown or hidden as ``visible`` says.

    When it ends, ``actions.start_next_reference()`` starts the next layer
    queued (a project's or a recovery's layers are read one after another, in
    their order); a cancel drops the ones still queued.  A layer ``kept`` (a
    project's or a recovery's) that cannot be read stays among the project's
    entries (``actions.unread_references``) until another image opens.
    """
    window = actions.window
    colour = colour or actions.references.next_colour()
    job = ReferenceJob(path, window.document, colour, window)
    job.entry = {"path": job.path, "colour": colour, "visible": bool(visible)}  # its project entry meanwhile
    if kept:  # a project's or recovery's layer that cannot be read stays in it (a file missing for now)
        job.failed.connect(lambda _: window.document is job.document and actions.unread_references.append(job.entry))

    def add(layer: ReferenceLayer) -> None:
        if window.document is not job.document:  # the image changed meanwhile: the layer was placed on the old one
            window.status.showMessage(f"reference layer {layer.name} dropped: the image changed", 8000)
            return
        actions.add_loaded_reference(layer if visible else replace(layer, visible=False))

    def end() -> None:
        actions.reference_job = None
        if job.token.cancelled:  # Cancel, or the window closing: none of the layers still queued either
            actions.queued_references.clear()
        actions.start_next_reference()

    actions.reference_job = job
    return start_with_progress(window, job, "Add reference layer", f"reading of {Path(path).name}", "lines",
                               add, end)
