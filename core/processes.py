"""Processes: ending a child that a cancel or a shutdown no longer waits for, and telling whether a process
that left something behind (a staging folder) still runs."""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import sys
from pathlib import Path

__all__ = ["STOP_TIMEOUT_S", "end_process", "process_runs", "this_process"]

#: How long (s) a terminated child may take to go before it is killed.
STOP_TIMEOUT_S = 2.0
_LINUX = sys.platform.startswith("linux")


def end_process(process, timeout_s: float = STOP_TIMEOUT_S) -> None:
    """Terminate ``process`` if it still runs, kill it if it has not gone within ``timeout_s``, reap and close it."""
    if process.is_alive():
        process.terminate()
        process.join(timeout_s)
    if process.is_alive():
        process.kill()
    process.join()
    process.close()


def this_process() -> dict:
    """This process as :func:`process_runs` tells it apart later, from any process of the machine.

    Returns
    -------
    dict
        ``host`` (the machine's name), ``pid``, and ``started``: on Linux the boot and the clock tick at which
        the process started, so that a later process given the same pid is not taken for it; None elsewhere.
        JSON can hold it.
    """
    pid = os.getpid()
    started = None
    if _LINUX:
        with contextlib.suppress(OSError, ValueError, IndexError):
            started = _linux_start(pid)
    return {"host": socket.gethostname(), "pid": pid, "started": started}


def process_runs(owner) -> bool | None:
    """Whether the process that :func:`this_process` described as ``owner`` still runs.

    Returns
    -------
    bool or None
        False where it is gone: no process has its pid, or (Linux) the one that has it started at another
        time, or is a zombie.  True where it runs (Linux: the same pid and start).  None where it cannot be
        told: ``owner`` is not such a description or names another machine (a folder on a network share), or
        a process has its pid but its start cannot be compared (outside Linux, or ``/proc`` hides it).
    """
    if not isinstance(owner, dict) or owner.get("host") != socket.gethostname():
        return None
    pid, started = owner.get("pid"), owner.get("started")
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
        return None
    if _LINUX and isinstance(started, str):
        with contextlib.suppress(OSError, ValueError, IndexError):  # (not readable: told by the pid alone)
            return _linux_start(pid) == started
    if os.name != "posix":  # (Windows' os.kill ends the process it is given)
        return None
    try:
        os.kill(pid, 0)  # (signal 0: only whether the pid is taken)
    except ProcessLookupError:
        return False
    except OSError:  # (PermissionError: another user's process has it)
        pass
    return None


def _linux_start(pid: int) -> str | None:
    """When process ``pid`` started: ``"BOOT_ID TICKS"``, the boot and ``/proc/PID/stat``'s field 22 (clock ticks
    since the boot); None for a zombie.  OSError where ``/proc`` has no such process."""
    text = Path(f"/proc/{pid}/stat").read_text()
    state, *fields = text[text.rindex(")") + 2:].split()  # (the command name, in parentheses, may hold spaces)
    return None if state in ("Z", "X") else f"{_boot_id()} {int(fields[18])}"


@functools.cache
def _boot_id() -> str:
    """This boot of the machine (Linux): clock ticks since the boot of another are no start of ours."""
    return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
