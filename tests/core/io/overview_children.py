"""Stand-ins for the overview build's child process (core.io.overview_build._child_main), run in the child.

Kept apart from the tests so that the spawned child imports little.
"""

from __future__ import annotations

import os
import time

from core.io import overview_build


class _OnLevel:
    """A pipe end that does ``action`` instead of telling the parent that level 1:2 is done."""

    def __init__(self, conn, action):
        self._conn, self._action = conn, action

    def send(self, message):
        if message[0] == "level":
            self._action()
        self._conn.send(message)

    def close(self):
        self._conn.close()


def _die():
    os._exit(9)


def _disk_full():
    raise OSError(28, "No space left on device")


def dying_child(conn, *args):
    """GDAL wrote level 1:2 into the staging folder, then the process died (killed, out of memory)."""
    overview_build._child_main(_OnLevel(conn, _die), *args)


def failing_child(conn, *args):
    """Level 1:2 built, then the disk is full."""
    overview_build._child_main(_OnLevel(conn, _disk_full), *args)


def stuck_child(conn, *args):
    """One GDAL call that takes a minute (it cannot look at a cancel)."""
    time.sleep(60)
