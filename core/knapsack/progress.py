"""Stage reports of the knapsack solvers: which method runs and the bound gap, for whoever listens.

The solvers call :func:`report` from Python between stages (never from inside
a compiled loop); a caller that wants the reports (the panel's worker process)
wraps its solve in :func:`listening`.  Without a listener a report costs one
context-variable look-up.  Within a long compiled run (KP1's exact state lists,
seconds on hard instances) :func:`watching` reports every
:data:`WATCH_INTERVAL_S` what the run writes to a shared array: its best value
and the items it has decided.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Callable

__all__ = ["WATCH_INTERVAL_S", "Stage", "listening", "report", "watching"]

_listener: ContextVar = ContextVar("knapsack_progress", default=None)
#: Seconds between two reports of a watched run.
WATCH_INTERVAL_S = 0.25


@dataclass(frozen=True)
class Stage:
    """What a solver is doing.

    Attributes
    ----------
    method : str
        ``"dp"``, ``"states"``, ``"surrogate"``, ...
    gap : float or None
        Upper bound less the best solution found so far (in profit units); None when unknown.
    best : int or None
        Value of the best solution found so far, when known (same units).
    done, total : int or None
        Items the run has decided, of ``total`` (a watched run, :func:`watching`).
    """

    method: str
    gap: float | None = None
    best: int | None = None
    done: int | None = None
    total: int | None = None

    def describe(self) -> str:
        """One line for a status bar, e.g. ``"states, bound gap 12 (0.0031%)"``."""
        if self.gap is None:
            return self.method
        text = f"{self.method}, bound gap {max(self.gap, 0.0):,.0f}"
        if self.best:
            text += f" ({100.0 * max(self.gap, 0.0) / abs(self.best):.2g}%)"
        if self.total:
            text += f", {self.done:,} of {self.total:,} items decided"
        return text


@contextmanager
def listening(callback: Callable[[Stage], None]):
    """Send the solvers' :class:`Stage` reports to ``callback`` within the block."""
    token = _listener.set(callback)
    try:
        yield
    finally:
        _listener.reset(token)


def report(method: str, gap: float | None = None, best: int | None = None) -> None:
    """Tell the listener (if any) the current method and bound gap."""
    callback = _listener.get()
    if callback is not None:
        callback(Stage(method, None if gap is None else float(gap), None if best is None else int(best)))


@contextmanager
def watching(method: str, shared, upper_bound: int, total: int):
    """Within the block, report ``method``'s progress every :data:`WATCH_INTERVAL_S` from a thread of its own,
    where a listener waits (else nothing runs): the gap of ``upper_bound`` to the best value ``shared[1]``
    and the items decided ``shared[2]`` of ``total``, which a compiled run writes as it goes (it holds no
    lock: the reads may lag a step)."""
    callback = _listener.get()  # (a new thread does not see this context's listener)
    if callback is None or len(shared) < 3:
        yield
        return
    finished = threading.Event()

    def watch():
        while not finished.wait(WATCH_INTERVAL_S):
            best = int(shared[1])
            callback(Stage(method, float(upper_bound - best), best, int(shared[2]), int(total)))

    thread = threading.Thread(target=watch, name="knapsack-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        finished.set()
        thread.join()
