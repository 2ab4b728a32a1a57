"""Events of the Qt-free models: a callback list, declared on the class like a Qt signal.

Example
-------
>>> class Counter:
...     changed = EventDescriptor("The count changed: changed(count).")
>>> counter = Counter()
>>> _ = counter.changed.connect(print)
>>> counter.changed.emit(3)
3
"""

from __future__ import annotations

from typing import Callable

__all__ = ["Event", "EventDescriptor"]


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


class EventDescriptor:
    """An :class:`Event` declared on a class: each instance gets its own.

    The event is made on first access and kept in the instance's ``__dict__``
    under the attribute's name, so later accesses are plain attribute reads.

    Parameters
    ----------
    doc : str
        What the event announces and the arguments it is emitted with.
    """

    def __init__(self, doc: str = ""):
        self.__doc__ = doc
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        event = instance.__dict__[self.name] = Event(self.name)
        return event

    def __repr__(self) -> str:
        return f"EventDescriptor({self.name!r})"
