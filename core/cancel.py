"""Stopping a running extraction from another thread: a flag that the kernels and the host poll.

Notes: docs/notes/extraction-and-polyline.md, "Threads and cancelling".
"""

from __future__ import annotations

import numpy as np

__all__ = ["Cancelled", "CancelToken", "check", "flag_of"]

# The flag of "no token": never set.  Writable like every token's flag, so
# that the kernels compile one specialisation for both.
_NEVER = np.zeros(1, dtype=np.uint8)


class Cancelled(Exception):
    """The work was cancelled through its :class:`CancelToken` before it finished."""


class CancelToken:
    """A request to stop, shared by the thread that asks and the thread that works.

    ``cancel()`` may be called from any thread, any number of times; the work
    notices it at its next check.
    """

    __slots__ = ("flag",)

    def __init__(self):
        #: (1,) uint8 ndarray: nonzero once cancelled; the kernels poll it.
        self.flag = np.zeros(1, dtype=np.uint8)

    def cancel(self) -> None:
        """Ask the work to stop."""
        self.flag[0] = 1

    @property
    def cancelled(self) -> bool:
        """True once :meth:`cancel` was called."""
        return bool(self.flag[0])

    def __repr__(self) -> str:
        return f"CancelToken(cancelled={self.cancelled})"


def flag_of(cancel: CancelToken | None) -> np.ndarray:
    """The (1,) uint8 flag a kernel polls for ``cancel`` (one that is never set for None)."""
    if cancel is None:
        return _NEVER
    if not isinstance(cancel, CancelToken):
        raise TypeError(f"cancel must be a core.cancel.CancelToken or None; got {type(cancel).__name__}")
    return cancel.flag


def check(cancel: CancelToken | None) -> None:
    """Raise :class:`Cancelled` when ``cancel`` was cancelled (nothing for None)."""
    if flag_of(cancel)[0]:
        raise Cancelled("the extraction was cancelled")

