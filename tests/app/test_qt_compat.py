"""The installed Qt binding does not leak references to None/True (PySide6 6.12.0 on Python 3.11 does)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from app.qt_compat import QtBindingError, check_qt_binding, singleton_refcount_leaks

ROOT = Path(__file__).resolve().parents[2]

# Far more void calls and emits than None and True have references in a fresh process.
SESSION = """
from PySide6.QtCore import QObject, Signal
class Pinger(QObject):
    ping = Signal()
p = Pinger()
for _ in range(200_000):
    p.setObjectName("x")
    p.ping.emit()
print("survived")
"""


def test_installed_binding_survives_many_qt_calls():
    done = subprocess.run([sys.executable, "-c", SESSION], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "survived" in done.stdout, done.stderr[-500:]
    assert singleton_refcount_leaks() == (False, False)
    check_qt_binding()


def test_a_leaking_binding_is_refused_with_a_message(monkeypatch):
    import app.qt_compat as qt_compat

    monkeypatch.setattr(qt_compat, "singleton_refcount_leaks", lambda: (True, False))
    with pytest.raises(QtBindingError, match="PySide6 .* would crash LineSnap"):
        check_qt_binding()
