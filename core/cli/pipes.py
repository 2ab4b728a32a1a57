"""``linesnap ... | head``: a reader that stops early is no error."""

from __future__ import annotations

import os
import sys

__all__ = ["stdout_closed"]


def stdout_closed() -> int:
    """The exit status after a BrokenPipeError on stdout: 0, quietly (as when the reader stopped on purpose).

    stdout is pointed at the null device, so that Python's final flush at exit
    does not fail a second time with "Exception ignored ... BrokenPipeError".
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is no file (captured by a test): nothing to redirect
        pass
    return 0
