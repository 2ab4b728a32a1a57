"""Memory budgets of the knapsack solvers.

A solver's decision table grows with items x capacity and can exceed the
machine's memory.  Every CPU solver therefore sizes its large allocations
(dynamic-programming rows and decision tables) before making them and keeps
their sum under a budget: by default half of the memory the kernel reports as
available (``MemAvailable`` of /proc/meminfo), so that the rest of the
application and the operating system keep room.
"""

from __future__ import annotations

import operator
import os

__all__ = ["DEFAULT_SHARE", "available_host_bytes", "check_memory", "default_budget_bytes", "resolve_budget"]

#: Share of the available host memory that a solver may use by default.
DEFAULT_SHARE = 0.5


def available_host_bytes() -> int:
    """Bytes of host memory available to new allocations.

    ``MemAvailable`` of /proc/meminfo on Linux; elsewhere the free physical pages
    as ``os.sysconf`` reports them.
    """
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
    """Validate a caller's budget, or return the default one for ``None``.

    Parameters
    ----------
    memory_budget_bytes : int or None
        Largest number of bytes the solver may allocate for its tables; a
        positive integer, or None for :func:`default_budget_bytes`.

    Raises
    ------
    ValueError
        For a budget that is not a positive integer.
    """
    if memory_budget_bytes is None:
        return default_budget_bytes()
    try:
        if isinstance(memory_budget_bytes, bool):
            raise TypeError
        budget = operator.index(memory_budget_bytes)
    except TypeError:
        budget = 0
    if budget <= 0:
        raise ValueError(f"memory_budget_bytes must be a positive integer or None; got {memory_budget_bytes!r}")
    return budget


def check_memory(nbytes: int, what: str) -> None:
    """Raise ValueError when ``nbytes`` exceeds the machine's physical memory.

    Parameters
    ----------
    nbytes : int
        Bytes about to be allocated.
    what : str
        What needs them, for the message (e.g. "the window solver's tables").
    """
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # no sysconf: cannot tell, do not refuse
        return
    if nbytes > total:
        raise ValueError(
            f"{what} would need {nbytes / 2**30:.1f} GiB of memory but this machine has "
            f"{total / 2**30:.1f} GiB; use fewer points per guide or fewer nodes"
        )
