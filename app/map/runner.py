"""Extractions off the GUI thread: a queue of fully specified jobs, one live worker.

Pieces run in submission order; of the previews only the newest waits.  Each
job carries a :class:`core.cancel.CancelToken`; when it is cancelled:
docs/notes/gui.md ("The extraction queue", "Cancelling work nobody waits for").
"""

from __future__ import annotations

import time
import traceback
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal

from app.errors import ErrorReport, report_from_exception
from core.cancel import Cancelled, CancelToken

__all__ = ["ExtractionRunner", "ExtractionJob"]

PREVIEW_CACHE_SIZE = 8

#: Seconds a running preview may go on while newer work waits behind it.
PREVIEW_PATIENCE_S = 0.3


@dataclass
class ExtractionJob:
    """One extraction of ``kind`` "piece", "preview" or "warmup"; ``tag`` is the piece id or preview sequence.

    ``pieces`` lists the piece ids that take the result (a preview can serve a piece).
    """

    kind: str
    tag: int
    start_xy: tuple[float, float]
    end_xy: tuple[float, float]
    settings: Any
    image_generation: int = 0
    pieces: list[int] = field(default_factory=list)
    cancel: CancelToken = field(default_factory=CancelToken)

    @property
    def key(self):
        """Equal for jobs that must give the same result."""
        return (self.image_generation, self.start_xy, self.end_xy, _settings_key(self.settings))


def _settings_key(settings):
    try:
        hash(settings)
    except TypeError:
        return repr(settings)
    return settings


class _Signals(QObject):
    done = Signal(object, object)    # job, result
    failed = Signal(object, object)  # job, ErrorReport
    cancelled = Signal(object)       # job


class _Worker(QRunnable):
    """Runs ``call()`` for ``job`` and reports through ``signals``."""

    def __init__(self, call: Callable[[], Any], job: ExtractionJob, signals: _Signals):
        super().__init__()
        self._call, self._job, self._signals = call, job, signals

    def run(self):
        job = self._job
        try:
            result = self._call()
        except Cancelled:
            self._signals.cancelled.emit(job)
        except Exception as err:  # becomes a dialog or a status message on the GUI thread
            self._signals.failed.emit(job, report_from_exception("Extraction failed", err, traceback.format_exc()))
        else:
            self._signals.done.emit(job, result)


class ExtractionRunner(QObject):
    """Runs extractions on one worker thread and reports back on the GUI thread.

    Parameters
    ----------
    extract_fn : callable
        ``extract_fn(image, start_xy, end_xy, settings, cancel=token) -> result``,
        called on the worker thread; raises ``core.cancel.Cancelled`` when the
        token stops it.

    Signals
    -------
    piece_done(piece_id, result), piece_failed(piece_id, report)
    preview_done(seq, result), preview_failed(seq, report)
    piece_dropped(piece_id)
        The piece's request was dropped by :meth:`drop_pieces` before it gave a
        result: ask again if it is wanted after all.
    idle()
        Nothing is running or waiting any more.
    """

    piece_done = Signal(int, object)
    piece_failed = Signal(int, object)
    preview_done = Signal(int, object)
    preview_failed = Signal(int, object)
    piece_dropped = Signal(int)
    idle = Signal()

    def __init__(self, extract_fn: Callable, parent=None):
        super().__init__(parent)
        self._extract_fn = extract_fn
        self._image = None
        self._generation = 0
        self._pieces: deque[ExtractionJob] = deque()
        self._preview: ExtractionJob | None = None
        self._running: ExtractionJob | None = None
        self._recent: OrderedDict = OrderedDict()
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._signals = _Signals(self)
        self._signals.done.connect(self._on_done)
        self._signals.failed.connect(self._on_failed)
        self._signals.cancelled.connect(self._on_cancelled)
        self._patience = QTimer(self)
        self._patience.setSingleShot(True)
        self._patience.timeout.connect(self._cancel_stale_preview)

    @property
    def busy(self) -> bool:
        """True while an extraction runs or waits."""
        return self._running is not None or bool(self._pieces) or self._preview is not None

    def running(self) -> tuple[str, float] | None:
        """``(kind, seconds)`` of the extraction running now ("piece", "preview", "warmup"), or None."""
        if self._running is None:
            return None
        return self._running.kind, time.monotonic() - self._started_at

    def set_image(self, image) -> None:
        """Extract from ``image`` (the window's ImageDocument) from now on.

        Waiting work is dropped and running work cancelled.
        """
        self._image = image
        self._generation += 1
        self._pieces.clear()
        self._preview = None
        self._recent.clear()
        self._cancel_running()

    def submit_piece(self, piece_id: int, start_xy, end_xy, settings) -> None:
        """Queue the extraction of piece ``piece_id`` from ``start_xy`` to ``end_xy`` (px), after earlier pieces."""
        self._pieces.append(ExtractionJob("piece", piece_id, tuple(start_xy), tuple(end_xy), settings,
                                          self._generation, [piece_id]))
        self._pump()

    def submit_preview(self, seq: int, start_xy, end_xy, settings) -> None:
        """Ask for a preview; it replaces any preview request that has not started."""
        self._preview = ExtractionJob("preview", seq, tuple(start_xy), tuple(end_xy), settings, self._generation)
        self._pump()

    def drop_preview(self) -> None:
        """Forget the waiting preview and stop a running one, unless it also serves a piece."""
        self._preview = None
        self._cancel_bare_preview()

    def drop_pieces(self, piece_ids) -> None:
        """These pieces are not wanted now: dequeue or cancel their jobs.

        Each request left without a result is reported by ``piece_dropped``.
        """
        ids = set(piece_ids)
        dropped = [job.tag for job in self._pieces if job.tag in ids]
        self._pieces = deque(job for job in self._pieces if job.tag not in ids)
        running = self._running
        if running is not None and running.pieces and ids.issuperset(running.pieces):
            if running.kind == "piece":
                running.cancel.cancel()  # reported by _on_cancelled, or done after all
            else:  # a preview that serves them: it goes on for the preview's sake
                dropped += running.pieces
                running.pieces = []
        for piece_id in dropped:
            QTimer.singleShot(0, lambda pid=piece_id: self.piece_dropped.emit(pid))

    def submit_warmup(self, start_xy, end_xy, settings) -> None:
        """Run one throw-away extraction (loads the compiled kernels before the first click)."""
        if not self.busy and self._image is not None:
            self._start(ExtractionJob("warmup", 0, tuple(start_xy), tuple(end_xy), settings, self._generation))

    def wait(self, timeout_ms: int = -1) -> bool:
        """Block until the running worker finished (True) or the timeout ran out."""
        return self._pool.waitForDone(timeout_ms)

    def shutdown(self) -> None:
        """Drop waiting work, cancel the running extraction and wait for its worker.

        Nothing runs until the next :meth:`set_image`.
        """
        self.set_image(None)
        self._pool.waitForDone()

    # ----------------------------------------------------------- scheduling
    def _pump(self) -> None:
        if self._image is None:  # shut down (or no image yet)
            self._pieces.clear()
            self._preview = None
            return
        while self._running is None and self._pieces:
            job = self._pieces.popleft()
            if job.key in self._recent:  # the preview already computed it
                result = self._recent[job.key]
                QTimer.singleShot(0, lambda pid=job.tag, r=result: self.piece_done.emit(pid, r))
                continue
            self._start(job)
        if self._running is None and self._preview is not None:
            job, self._preview = self._preview, None
            self._start(job)
        elif self._running is not None and self._running.kind == "preview":
            self._attach_waiting_pieces()
            if self._preview is not None or self._pieces:
                self._schedule_stale_preview_cancel()
        elif self._running is not None and self._running.kind == "warmup" and (self._preview or self._pieces):
            self._running.cancel.cancel()  # thrown away anyway: real work goes first

    def _schedule_stale_preview_cancel(self) -> None:
        """Cancel the running preview once it has run PREVIEW_PATIENCE_S, if work still waits then."""
        if not self._patience.isActive():
            waited = time.monotonic() - self._started_at
            self._patience.start(max(0, round(1000 * (PREVIEW_PATIENCE_S - waited))))

    def _cancel_stale_preview(self) -> None:
        if self._preview is not None or self._pieces:
            self._cancel_bare_preview()

    def _cancel_bare_preview(self) -> None:
        """Cancel the running job if it is a preview that serves no piece."""
        running = self._running
        if running is not None and running.kind == "preview" and not running.pieces:
            running.cancel.cancel()

    def _cancel_running(self) -> None:
        if self._running is not None:
            self._running.cancel.cancel()

    def _attach_waiting_pieces(self) -> None:
        """A waiting piece equal to the running preview takes its result instead of running again."""
        running = self._running
        while self._pieces and self._pieces[0].key == running.key:
            running.pieces.append(self._pieces.popleft().tag)

    def _start(self, job: ExtractionJob) -> None:
        self._running = job
        self._started_at = time.monotonic()
        call = partial(self._extract_fn, self._image, job.start_xy, job.end_xy, job.settings, cancel=job.cancel)
        self._pool.start(_Worker(call, job, self._signals))

    def _finish(self, job: ExtractionJob) -> bool:
        """Bookkeeping after a worker; False when the job belongs to a previous image."""
        self._running = None
        self._patience.stop()
        current = job.image_generation == self._generation
        QTimer.singleShot(0, self._pump_or_idle)
        return current

    def _pump_or_idle(self) -> None:
        self._pump()
        if not self.busy:
            self.idle.emit()

    def _on_done(self, job: ExtractionJob, result) -> None:
        if not self._finish(job):
            return
        if job.kind == "preview":
            self._recent[job.key] = result
            while len(self._recent) > PREVIEW_CACHE_SIZE:
                self._recent.popitem(last=False)
            self.preview_done.emit(job.tag, result)
        for piece_id in job.pieces:
            self.piece_done.emit(piece_id, result)

    def _on_failed(self, job: ExtractionJob, report: ErrorReport) -> None:
        if not self._finish(job):
            return
        if job.kind == "preview":
            self.preview_failed.emit(job.tag, report)
        for piece_id in job.pieces:
            self.piece_failed.emit(piece_id, report)

    def _on_cancelled(self, job: ExtractionJob) -> None:
        if not self._finish(job):
            return
        for piece_id in job.pieces:
            self.piece_dropped.emit(piece_id)
