"""A check for a reference-count bug of PySide6 6.12.0 on Python 3.11.

With PySide6/shiboken6 6.12.0 on CPython 3.11, every call of a Qt method that
returns nothing drops one reference to ``None`` and every ``Signal.emit()``
drops one to ``True`` without having taken them.  Python 3.12 made these
singletons immortal, so there it is harmless; on 3.11 their counts fall with
every repaint and the process aborts ("Fatal Python error: none_dealloc")
after some 20 seconds of panning.  pyproject.toml therefore excludes 6.12.0 on
Python < 3.12; :func:`check_qt_binding` turns an installation that slipped past
that pin into a clear message at start-up instead of a crash later.
"""

from __future__ import annotations

import sys

import PySide6
from PySide6.QtCore import QObject, Signal

__all__ = ["QtBindingError", "check_qt_binding", "singleton_refcount_leaks"]

_PROBE_CALLS = 16


class QtBindingError(RuntimeError):
    """The installed Qt binding would crash the application."""


def singleton_refcount_leaks() -> tuple[bool, bool]:
    """(void calls leak None, emits leak True), measured on a throw-away QObject."""
    if sys.version_info >= (3, 12):
        return False, False  # immortal singletons: a lost reference cannot free them

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


def check_qt_binding() -> None:
    """Raise :class:`QtBindingError` when the installed PySide6 has the leak."""
    if any(singleton_refcount_leaks()):
        raise QtBindingError(
            f"PySide6 {PySide6.__version__} loses references to None/True on Python "
            f"{sys.version_info.major}.{sys.version_info.minor} and would crash LineSnap; "
            "install another version (pip install 'PySide6-Essentials!=6.12.0') or use Python 3.12+"
        )
