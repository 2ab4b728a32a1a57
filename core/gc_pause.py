"""Python's cyclic garbage collector paused while a large acyclic structure is built (any thread).

Reading a vector file builds hundreds of thousands of new lists and dicts
(a parsed GeoJSON document, then one line and its properties per feature),
none of them in a reference cycle: they are freed by their reference counts.
Their allocations set off the collector over and over, and each full pass
walks every object of the process with the interpreter lock held: importing
50,000 lines (in a process that had shown 60,000 others before) ran 8 full
passes of 140-700 ms each on the reading worker, and the GUI thread, needing
the lock, stood still as long.  Objects freed while the collector is paused leave its
counts again, so once it runs it looks only at those still alive.
"""

from __future__ import annotations

import contextlib
import gc
import threading

__all__ = ["paused_collection"]

_lock = threading.Lock()
_pauses = {"depth": 0, "was_enabled": False}


@contextlib.contextmanager
def paused_collection():
    """A context in which the cyclic garbage collector does not run (reference counting still frees objects).

    Nests, and may be entered by several threads at once: the collector runs
    again when the last of them leaves, if it ran before the first entered.
    """
    with _lock:
        if _pauses["depth"] == 0:
            _pauses["was_enabled"] = gc.isenabled()
            gc.disable()
        _pauses["depth"] += 1
    try:
        yield
    finally:
        with _lock:
            _pauses["depth"] -= 1
            if _pauses["depth"] == 0 and _pauses["was_enabled"]:
                gc.enable()
