"""core.memory.keep_freed_memory: freed blocks stay mapped for reuse where glibc allows it."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest

from core.memory import keep_freed_memory

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"

#: Buffers grown by doubling to 32 MiB, as the knapsack state lists grow, five times over after a first
#: run; prints the page faults those five runs took.
_GROWTH = """
import resource, sys
import numpy as np
if sys.argv[1] == "keep":
    from core.memory import keep_freed_memory
    assert keep_freed_memory()
def growth():
    a = np.ones(1024)
    for _ in range(12):
        b = np.empty(2 * len(a))
        b[: len(a)] = a
        b[len(a):] = 1.0
        a = b
growth()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    growth()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str) -> int:
    done = subprocess.run([sys.executable, "-c", _GROWTH, mode], capture_output=True, text=True, check=True,
                          timeout=120, cwd=Path(__file__).resolve().parents[2])
    return int(done.stdout.split()[-1])


@pytest.mark.skipif(not GLIBC, reason="the malloc settings are glibc's")
def test_freed_blocks_are_reused_without_page_faults():
    """Each growth touches 16,000 fresh pages; glibc's default maps most of them anew every time."""
    kept, default = _faults("keep"), _faults("default")
    assert kept * 2 < default, (kept, default)


def test_keeping_freed_memory_is_set_once_and_reports_whether_it_could():
    assert keep_freed_memory() is GLIBC
    assert keep_freed_memory() is GLIBC


def test_a_refusal_says_sizes_in_the_unit_they_reach():
    from core.memory import HostMemoryError, check_allocation, size_text

    assert [size_text(n) for n in (512, 3 << 10, 8 << 20, 3 << 29, 5 << 40)] == [
        "512 bytes", "3.0 KiB", "8.0 MiB", "1.5 GiB", "5.0 TiB"]
    with pytest.raises(HostMemoryError, match=r"would need 100.0 MiB of memory, more than the memory budget of 8.0 MiB"
                       ):
        check_allocation(100 << 20, "a read", 8 << 20)  # (it said 0.1 GiB against 0.0 GiB)
