"""A check for a reference-count bug of PySide6 6.12.0 on Python 3.11.

That binding drops references to ``None`` and ``True`` it never took, and the
process aborts after a while of panning (docs/notes/gui.md).  pyproject.toml
excludes it on Python < 3.12; :func:`check_qt_binding` turns an installation
that slipped past the pin into a clear message at start-up.
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
