"""Knapsack solves in a separate process that the GUI can end at any moment.

Why a process, and how messages travel: docs/notes/gui.md, "Knapsack solves
in a worker process".
"""

from __future__ import annotations

import multiprocessing

from PySide6.QtCore import QObject, QTimer, Signal

from app.errors import ErrorReport
from app.knapsack.jobs import worker_main
from core.processes import end_process

__all__ = ["KnapsackRunner"]

POLL_MS = 20
#: Seconds a dead worker is waited for to be reaped, so that its exit code can be told (its pipe closes first).
_REAP_WAIT_S = 1.0


class KnapsackRunner(QObject):
    """Runs one :class:`app.knapsack.jobs.SolveJob` at a time in a worker process.

    Parameters
    ----------
    parent : QObject, optional
    target : callable, optional
        The child's main function, ``target(conn)``; default
        :func:`app.knapsack.jobs.worker_main`.

    Signals
    -------
    progress(job_id, done_steps, total_steps, text)
    finished(job_id, JobResult)
    failed(job_id, ErrorReport)
        The solve raised, or the worker process died (e.g. out of memory).
    cancelled(job_id)
    """

    progress = Signal(int, int, int, str)
    finished = Signal(int, object)
    failed = Signal(int, object)
    cancelled = Signal(int)

    def __init__(self, parent=None, target=None):
        super().__init__(parent)
        self._target = target or worker_main
        self._context = multiprocessing.get_context("spawn")
        self._process = None
        self._conn = None
        self._ready = False
        self._job_id = 0
        self._running: int | None = None
        self._unsent = None
        self._warm_kinds: tuple = ()
        self._timer = QTimer(self, interval=POLL_MS, timeout=self._poll)

    @property
    def busy(self) -> bool:
        """True while a job runs (or waits for the worker to start)."""
        return self._running is not None

    @property
    def process(self):
        """The worker's ``multiprocessing.Process``, or None when there is none."""
        return self._process

    def start(self, warm_kinds: tuple = ()) -> None:
        """Start the worker process now if there is none (a job then starts at once).

        ``warm_kinds``: problem kinds ("kp1", "kp2", "subset-sum", "mckp") whose CPU solvers the new worker
        loads as soon as it is ready, before any job (a worker started after a cancel: the next solve of the
        same kind then pays no loading).
        """
        if self._process is not None and self._process.is_alive():
            return
        self._stop_process()
        self._warm_kinds = tuple(warm_kinds)
        parent_end, child_end = self._context.Pipe()
        process = self._context.Process(target=self._target, args=(child_end,), daemon=True,
                                        name="linesnap-knapsack-worker")
        process.start()
        child_end.close()
        self._process, self._conn, self._ready = process, parent_end, False
        self._timer.start()

    def submit(self, job) -> int:
        """Run ``job`` in the worker; returns its id.  RuntimeError while another job runs."""
        if self.busy:
            raise RuntimeError("a knapsack job is already running; cancel it first")
        self.start()
        self._job_id += 1
        self._running, self._unsent = self._job_id, job
        self._timer.start()
        self._send_unsent()
        return self._job_id

    def cancel(self) -> None:
        """End the running job now: the worker process is ended and reaped."""
        job_id = self._running
        if job_id is None:
            return
        self._running, self._unsent = None, None
        self._stop_process()
        self.cancelled.emit(job_id)

    def shutdown(self) -> None:
        """End the worker process (and any job): nothing outlives this call."""
        self._running, self._unsent = None, None
        self._stop_process()

    # ------------------------------------------------------------ internals
    def _stop_process(self) -> None:
        self._timer.stop()
        process, conn = self._process, self._conn
        self._process, self._conn, self._ready = None, None, False
        if conn is not None:
            conn.close()
        if process is None:
            return
        end_process(process)

    def _send_unsent(self) -> None:
        if not self._ready or self._conn is None:
            return
        if self._warm_kinds:
            kinds, self._warm_kinds = self._warm_kinds, ()
            self._send(("warm", kinds))
        if self._unsent is None:
            return
        job, self._unsent = self._unsent, None
        self._send(("job", self._running, job))

    def _send(self, message) -> None:
        try:
            self._conn.send(message)
        except (OSError, ValueError):  # the worker is gone; _poll reports it
            pass

    def _poll(self) -> None:
        try:
            while self._conn is not None and self._conn.poll():
                self._handle(self._conn.recv())
        except (EOFError, OSError):
            self._worker_died()
            return
        if self._process is not None and not self._process.is_alive():
            self._worker_died()
        elif self._running is None and self._ready:
            self._timer.stop()  # idle and warm: nothing to wait for

    def _handle(self, message) -> None:
        kind = message[0]
        if kind == "ready":
            self._ready = True
            self._send_unsent()
            return
        job_id = message[1]
        if job_id != self._running:
            return
        if kind == "progress":
            self.progress.emit(job_id, *message[2:])
            return
        self._running = None
        if kind == "done":
            self.finished.emit(job_id, message[2])
        else:
            self.failed.emit(job_id, message[2])

    def _worker_died(self) -> None:
        exitcode = None
        if self._process is not None:  # (its pipe closes as it exits, a moment before it can be reaped)
            self._process.join(_REAP_WAIT_S)
            exitcode = self._process.exitcode
        job_id = self._running
        self._running, self._unsent = None, None
        self._stop_process()
        if job_id is not None:
            self.failed.emit(job_id, ErrorReport(
                "Solving failed",
                f"The solver process stopped unexpectedly (exit code {exitcode}); "
                "it may have run out of memory. Try a smaller instance or a memory budget.",
                "", "WorkerDied"))
