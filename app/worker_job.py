"""A long piece of work on a worker thread of its own, with progress, cancel and one result (Qt signals).

:class:`WorkerJob` runs ``work(token, report)`` once; ``report(done, total,
phase)`` becomes the ``progress`` signal, :class:`core.cancel.Cancelled` (or a
cancel after the work returned) becomes ``cancelled``, any other exception a
``failed`` report for the window, and the result ``done``.  Cancel answers at
once: ``cancelled`` comes from :meth:`WorkerJob.cancel` itself and whatever the
worker sends afterwards is dropped, so the window never waits on a step that
cannot look at the token (parsing a 100 MB GeoJSON file takes seconds); the
worker stops at its next check.  The imports and
refinements of line layers (:mod:`app.import_job`, :mod:`app.refine_job`) are
such jobs.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from app import dialogs, errors
from app.errors import report_from_exception
from core.cancel import Cancelled, CancelToken

__all__ = ["WorkerJob", "start_with_progress"]


class _Signals(QObject):
    progress = Signal(int, int, str)
    done = Signal(object)
    failed = Signal(object)
    cancelled = Signal()


class _Worker(QRunnable):
    def __init__(self, job):
        super().__init__()
        self.job = job

    def run(self) -> None:
        job, signals = self.job, self.job._signals
        try:
            result = job._work(job.token, signals.progress.emit)
        except Cancelled:
            signals.cancelled.emit()
        except Exception as err:  # the worker's edge: the window shows it
            signals.failed.emit(report_from_exception(job._failure_title, err))
        else:
            if job.token.cancelled:
                signals.cancelled.emit()
            else:
                signals.done.emit(result)


class WorkerJob(QObject):
    """``work(token, report)`` on a worker thread of its own.

    Signals
    -------
    progress(done, total, phase)
        ``total`` 0 while unknown.
    done(result)
        What ``work`` returned (not sent when cancelled meanwhile).
    failed(report)
        An :class:`app.errors.ErrorReport` titled ``failure_title``.
    cancelled()
    """

    progress = Signal(int, int, str)
    done = Signal(object)
    failed = Signal(object)
    cancelled = Signal()

    def __init__(self, work, failure_title: str, parent=None):
        super().__init__(parent)
        self._work, self._failure_title = work, failure_title
        self.token = CancelToken()
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._signals = _Signals()
        self._ended = False
        for name in ("progress", "done", "failed", "cancelled"):
            getattr(self._signals, name).connect(getattr(self, f"_relay_{name}"))

    def start(self) -> None:
        """Begin (returns at once)."""
        self._pool.start(_Worker(self))

    def cancel(self) -> None:
        """Send ``cancelled`` now (unless the job has ended) and stop the work at its next check."""
        self.token.cancel()
        self._end(self.cancelled)

    def _end(self, signal, *args) -> None:
        if not self._ended:
            self._ended = True
            signal.emit(*args)

    def _relay_progress(self, done: int, total: int, phase: str) -> None:
        if not self._ended:
            self.progress.emit(done, total, phase)

    def _relay_done(self, result) -> None:
        self._end(self.done, result)

    def _relay_failed(self, report) -> None:
        self._end(self.failed, report)

    def _relay_cancelled(self) -> None:
        self._end(self.cancelled)

    def wait(self, timeout_ms: int = -1) -> bool:
        """Until the worker ended; False on timeout."""
        return self._pool.waitForDone(timeout_ms)


def start_with_progress(window, job: WorkerJob, title: str, what: str, unit: str, on_done, on_end) -> WorkerJob:
    """Start ``job`` with a window-modal progress dialog whose Cancel stops it.

    ``on_done(result)`` runs with the result; a failure is shown as an error dialog, a cancel
    in the status bar ("``what`` cancelled"); ``on_end()`` runs first in every case.  ``unit``
    names what the progress counts ("lines", "pieces", or "" for none).
    """
    progress = dialogs.import_progress(window, what)
    progress.setWindowTitle(title)
    progress.canceled.connect(job.cancel)

    def show(done: int, total: int, phase: str) -> None:
        progress.setMaximum(total)  # 0: busy, the total is not known yet
        progress.setValue(min(done, total) if total else 0)
        progress.setLabelText(f"{phase}... {done:,}{f' of {total:,}' if total else ''} {unit}".rstrip())

    def end() -> None:
        progress.reset()
        progress.deleteLater()
        on_end()

    job.progress.connect(show)
    job.done.connect(lambda result: (end(), on_done(result)))
    job.failed.connect(lambda report: (end(), errors.show_error(window, report)))
    job.cancelled.connect(lambda: (end(), window.status.showMessage(f"{what} cancelled", 8000)))
    job.start()
    return job
