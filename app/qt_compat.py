"""A guard against a reference-count bug of PySide6 6.12 on Python 3.11.

With PySide6/shiboken6 6.12.0 on CPython 3.11, every call of a Qt method that
returns nothing drops one reference to ``None`` and every ``Signal.emit()``
drops one to ``True``, without having taken them.  Python 3.12 made these
singletons immortal, so there it is harmless; on 3.11 their counts fall with
every repaint (about 40 per paint of the viewer) and the process aborts with
"Fatal Python error: none_dealloc" once one reaches zero: after some
20 seconds of panning, or at exit.

The guard measures the leak once (a few calls on a throw-away QObject) and,
only where it is real, raises the reference counts of ``None``, ``True`` and
``False`` by 2**40, which is what 3.12's immortality amounts to.  These
objects are never freed anyway; the counts only have to stay positive.
"""

from __future__ import annotations

import ctypes
import sys

__all__ = ["guard_singleton_refcounts", "singleton_refcount_leaks"]

_BOOST = 1 << 40
_PROBE_CALLS = 16
_guarded = False


def singleton_refcount_leaks() -> tuple[bool, bool]:
    """(void calls leak None, emits leak True), measured on a throw-away QObject."""
    from PySide6.QtCore import QObject, Signal

    class _Probe(QObject):
        ping = Signal()

    probe = _Probe()
    none_before = sys.getrefcount(None)
    for _ in range(_PROBE_CALLS):
        probe.setObjectName("probe")
    none_leaks = sys.getrefcount(None) <= none_before - _PROBE_CALLS // 2
    true_before = sys.getrefcount(True)
    for _ in range(_PROBE_CALLS):
        probe.ping.emit()
    true_leaks = sys.getrefcount(True) <= true_before - _PROBE_CALLS // 2
    return none_leaks, true_leaks


def guard_singleton_refcounts() -> bool:
    """Apply the guard where the leak is real (once per process); True when applied."""
    global _guarded
    if _guarded:
        return True
    if sys.implementation.name != "cpython" or sys.version_info >= (3, 12):
        return False  # immortal singletons: nothing to guard
    if not any(singleton_refcount_leaks()):
        return False
    for singleton in (None, True, False):
        # ob_refcnt is the first field of every CPython object.
        ctypes.c_ssize_t.from_address(id(singleton)).value += _BOOST
    _guarded = True
    return True
