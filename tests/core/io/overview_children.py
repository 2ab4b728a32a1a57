"""Stand-ins for the overview build's child process (core.io.overview_build._child_main), run in the child.

Kept apart from the tests so that the spawned child imports little.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from pathlib import Path

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


def unwatched_child(conn, image, *args):
    """Where the kernel cannot end the child with its parent: it starts level 1:2, a minute of Python (the GIL
    free, unlike in GDAL's call)."""
    overview_build._killed_with_parent = lambda: False
    overview_build._end_with_parent()
    Path(f"{image}.ovr").write_bytes(b"II*\0")
    time.sleep(60)


def build_and_tell(image: str, pid_file: str, child_main: str | None = None):
    """A window's process: a build of ``image``'s overviews on a worker thread (its child running
    ``child_main`` of this module where given); once level 1:2 is being written in the staging folder, the
    child's pid goes to ``pid_file`` (and the test kills this process)."""
    from core.io.overviews import build_overviews

    if child_main is not None:
        overview_build._child_main = globals()[child_main]
    threading.Thread(target=build_overviews, args=(image,), daemon=True).start()
    name, staged = Path(image).name, []
    while not staged:
        time.sleep(0.01)
        staged = list(Path(image).parent.glob(f".{name}.ovr-*.tmp/{name}.ovr"))
    [child] = [p for p in multiprocessing.active_children() if p.name == "linesnap-overviews"]
    Path(f"{pid_file}.tmp").write_text(str(child.pid))
    os.replace(f"{pid_file}.tmp", pid_file)
    time.sleep(60)


def hold_staging(image: str, ready_file: str):
    """A build's process between making its staging folder beside ``image`` and ending (a minute: the test
    kills it); ``ready_file`` appears once the folder is there."""
    with overview_build.staging(Path(image)):
        Path(f"{ready_file}.tmp").write_text("")
        os.replace(f"{ready_file}.tmp", ready_file)
        time.sleep(60)
