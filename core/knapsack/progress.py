"""Stage reports of the knapsack solvers: which method runs and the bound gap, for whoever listens.

The solvers call :func:`report` from Python between stages (never from inside
a compiled loop); a caller that wants the reports (the panel's worker process)
wraps its solve in :func:`listening`.  Without a listener a report costs one
context-variable look-up.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Callable

__all__ = ["Stage", "listening", "report"]

_listener: ContextVar = ContextVar("knapsack_progress", default=None)


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
    """

    method: str
    gap: float | None = None
    best: int | None = None

    def describe(self) -> str:
        """One line for a status bar, e.g. ``"states, bound gap 12 (0.0031%)"``."""
        if self.gap is None:
            return self.method
        text = f"{self.method}, bound gap {max(self.gap, 0.0):,.0f}"
        if self.best:
            text += f" ({100.0 * max(self.gap, 0.0) / abs(self.best):.2g}%)"
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
