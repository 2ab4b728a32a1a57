"""The host-memory policy: size large allocations first, refuse what exceeds the budget.

The default budget is :data:`DEFAULT_SHARE` of ``MemAvailable``; notes:
docs/notes/extraction-and-polyline.md, "Host memory".
"""

from __future__ import annotations

import os
import time

from core import validation

__all__ = ["DEFAULT_SHARE", "HostMemoryError", "available_host_bytes", "check_allocation", "default_budget_bytes",
           "resolve_budget"]

#: Share of the available host memory that one computation may use by default.
DEFAULT_SHARE = 0.5

#: Seconds during which one reading of the available memory serves: reading
#: /proc/meminfo costs ~10 us and an extraction checks four allocations.
_READING_LIFETIME_S = 0.5
_reading = {"at": -float("inf"), "bytes": 0}


class HostMemoryError(ValueError):
    """An allocation would exceed the host-memory budget (``needed_bytes``, ``budget_bytes``)."""

    def __init__(self, message: str, needed_bytes: int, budget_bytes: int):
        super().__init__(message)
        self.needed_bytes = int(needed_bytes)
        self.budget_bytes = int(budget_bytes)


def available_host_bytes() -> int:
    """Bytes of host memory available to new allocations (read at most every 0.5 s).

    ``MemAvailable`` of /proc/meminfo on Linux; elsewhere the free physical pages
    as ``os.sysconf`` reports them.
    """
    now = time.monotonic()
    if now - _reading["at"] >= _READING_LIFETIME_S:
        _reading.update(bytes=_read_available_bytes(), at=now)
    return _reading["bytes"]


def _read_available_bytes() -> int:
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 2**31  # an unknown platform: assume a modest 2 GiB


def default_budget_bytes() -> int:
    """The default budget: :data:`DEFAULT_SHARE` of the available host memory."""
    return int(available_host_bytes() * DEFAULT_SHARE)


def resolve_budget(memory_budget_bytes) -> int:
    """A caller's budget (a positive int; ValueError otherwise), or :func:`default_budget_bytes` for None."""
    if memory_budget_bytes is None:
        return default_budget_bytes()
    try:
        return validation.integer(memory_budget_bytes, "memory_budget_bytes", 1)
    except (TypeError, ValueError):
        raise ValueError(
            f"memory_budget_bytes must be a positive integer or None; got {memory_budget_bytes!r}"
        ) from None


def check_allocation(nbytes: int, what: str, budget_bytes: int | None = None, *, advice: str = "") -> None:
    """Raise HostMemoryError when ``nbytes`` exceed the budget; the one host-memory decision.

    Parameters
    ----------
    nbytes : int
        Bytes about to be allocated (a Python int: no overflow).
    what : str
        What needs them, for the message ("reading a window of 10 x 10 pixels").
    budget_bytes : int, optional
        Default :func:`default_budget_bytes`.
    advice : str
        How to need less, appended to the message.
    """
    budget = resolve_budget(budget_bytes)
    if nbytes <= budget:
        return
    limit = (f"the {budget / 2**30:.1f} GiB of memory of this machine that one computation may take "
             f"({DEFAULT_SHARE:.0%} of what is available)" if budget_bytes is None
             else f"the memory budget of {budget / 2**30:.1f} GiB")
    message = f"{what} would need {nbytes / 2**30:.1f} GiB of memory, more than {limit}"
    raise HostMemoryError(f"{message}; {advice}" if advice else message, nbytes, budget)
