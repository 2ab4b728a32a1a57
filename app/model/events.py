"""A minimal callback list, so that Qt-free models can announce changes."""

from __future__ import annotations

from typing import Callable

__all__ = ["Event"]


class Event:
    """Callbacks called in connection order by :meth:`emit`.

    Parameters
    ----------
    name : str
        For messages and debugging.
    """

    def __init__(self, name: str = ""):
        self.name = name
        self._callbacks: list[Callable] = []

    def connect(self, callback: Callable) -> Callable:
        """Call ``callback(*args)`` on every emit; returns it (usable as a decorator)."""
        if not callable(callback):
            raise TypeError(f"callback must be callable; got {callback!r}")
        self._callbacks.append(callback)
        return callback

    def disconnect(self, callback: Callable | None = None) -> None:
        """Forget one callback, or all of them when ``callback`` is None."""
        if callback is None:
            self._callbacks.clear()
        elif callback in self._callbacks:
            self._callbacks.remove(callback)

    def emit(self, *args) -> None:
        """Call every connected callback with ``args``."""
        for callback in list(self._callbacks):
            callback(*args)

    def __repr__(self) -> str:
        return f"Event({self.name!r}, {len(self._callbacks)} callbacks)"
