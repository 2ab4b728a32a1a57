"""The host-memory policy: size large allocations first, refuse what exceeds the budget.

The default budget is :data:`DEFAULT_SHARE` of ``MemAvailable``; notes:
docs/notes/extraction-and-polyline.md, "Host memory".
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
import time

from core import validation

__all__ = ["DEFAULT_SHARE", "HostMemoryError", "available_host_bytes", "check_allocation", "default_budget_bytes",
           "keep_freed_memory", "resolve_budget", "size_text"]

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

    ``MemAvailable`` of /proc/meminfo on Linux (elsewhere the free physical
    pages as ``os.sysconf`` reports them), or less where a cgroup memory limit
    or ``ulimit -v`` leaves this process less.
    """
    now = time.monotonic()
    if now - _reading["at"] >= _READING_LIFETIME_S:
        _reading.update(bytes=int(_read_available_bytes()), at=now)
    return _reading["bytes"]


def _read_available_bytes() -> int:
    """The least of the machine's available memory and this process's headroom under a cgroup or rlimit."""
    return min(_machine_available_bytes(), _cgroup_headroom_bytes(), _rlimit_headroom_bytes())


#: cgroup v2 and v1 files of the memory limit and of the memory in use.
_CGROUP_FILES = (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                 ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"))


def _cgroup_headroom_bytes() -> float:
    """Bytes left under the container's memory limit (infinite where there is none)."""
    for limit_file, usage_file in _CGROUP_FILES:
        try:
            with open(limit_file, encoding="ascii") as fh:
                limit = fh.read().strip()
            with open(usage_file, encoding="ascii") as fh:
                usage = int(fh.read().strip())
        except (OSError, ValueError):
            continue
        if limit.isdigit() and int(limit) < 2**60:
            return max(0, int(limit) - usage)
    return float("inf")


def _rlimit_headroom_bytes() -> float:
    """Bytes of address space left under ``ulimit -v`` (infinite where it is unlimited)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft == resource.RLIM_INFINITY:
            return float("inf")
        with open("/proc/self/statm", encoding="ascii") as fh:
            size = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        return max(0, soft - size)
    except (ImportError, OSError, ValueError, IndexError):
        return float("inf")


def _machine_available_bytes() -> int:
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
    try:  # past 2^62 bytes (no memory is that large) the same as 2^62: the compiled solvers hold it in int64
        return min(validation.integer(memory_budget_bytes, "memory_budget_bytes", 1), 2**62)
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
    limit = (f"the {size_text(budget)} of memory of this machine that one computation may take "
             f"({DEFAULT_SHARE:.0%} of what is available)" if budget_bytes is None
             else f"the memory budget of {size_text(budget)}")
    message = f"{what} would need {size_text(nbytes)} of memory, more than {limit}"
    raise HostMemoryError(f"{message}; {advice}" if advice else message, nbytes, budget)


def size_text(nbytes: int) -> str:
    """``nbytes`` for a message, in the largest binary unit it reaches: "8.0 MiB", "1.5 GiB", "512 bytes"."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift:
            return f"{nbytes / (1 << shift):.1f} {unit}"
    return f"{int(nbytes)} bytes"


#: glibc's malloc settings of :func:`keep_freed_memory` (mallopt's M_MMAP_THRESHOLD and M_TRIM_THRESHOLD):
#: blocks below 32 MiB come from the heap, and up to 64 MiB freed at its top stays mapped.
_MALLOC_SETTINGS = ((-3, 32 << 20), (-1, 64 << 20))


@functools.cache
def keep_freed_memory() -> bool:
    """Let the C allocator keep freed blocks for reuse (Linux with glibc); whether it could.

    By default glibc maps every block past a threshold that only rises to the
    largest block freed so far, and unmaps it on free, so a computation whose
    buffers grow by doubling (the knapsack state lists) gets fresh pages, each
    costing a page fault, at every growth and again at every solve: up to
    half of a solve of 5-40 ms (docs/notes/knapsack.md, KP1 step 16).  Raised
    once per process, on the first knapsack solve: the thresholds glibc's own
    adjustment stops at (32 MiB, and twice that kept at the heap's top).
    Elsewhere (another C library, another system) nothing changes.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return all(mallopt(option, value) == 1 for option, value in _MALLOC_SETTINGS)
