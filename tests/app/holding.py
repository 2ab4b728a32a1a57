"""Hold an import's worker at its 100th placed line, so that a test can cancel or close while it runs."""

from __future__ import annotations

import threading

import app.import_job as import_job


def hold_at_line(monkeypatch, method: str, line: int = 100):
    """Patch ``WatchedRaster.<method>`` (the per-line placement) to wait at line ``line`` until released.

    Returns ``(reached, release, placed)``: two events and the list of line counts the worker placed.
    Progress is reported every 10 lines, so a cancel is seen within them.
    """
    monkeypatch.setattr(import_job, "PROGRESS_EVERY", 10)
    reached, release, placed = threading.Event(), threading.Event(), []
    original = getattr(import_job.WatchedRaster, method)

    def placing(self, *args):
        placed.append(self._placed)
        if self._placed == line:
            reached.set()
            release.wait(30)
        return original(self, *args)

    monkeypatch.setattr(import_job.WatchedRaster, method, placing)
    return reached, release, placed
