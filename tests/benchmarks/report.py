"""Benchmark reporting: the machine's description and BENCHMARKS.md sections.

Each benchmark script owns one section of BENCHMARKS.md, delimited by
``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->``; rerunning the script
replaces that section (with the machine, date and versions) and leaves the
others alone.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import os
import platform
import re
import statistics
import time
from pathlib import Path

BENCHMARKS_MD = Path(__file__).resolve().parents[2] / "BENCHMARKS.md"


def cpu_model() -> str:
    """The processor's model name as /proc/cpuinfo gives it (or platform's guess)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_gib() -> float:
    """Total memory of the machine in GiB."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30


def gpu_name() -> str | None:
    """The CUDA device's name, or None without a real GPU."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return None
    try:
        from numba import cuda

        if not cuda.is_available():
            return None
        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        return f"{name} (compute capability {dev.compute_capability[0]}.{dev.compute_capability[1]})"
    except Exception:
        return None


def machine_description(with_gpu: bool = False) -> str:
    """One markdown paragraph: date, CPU, cores, memory, Python and library versions."""
    import numba
    import numpy

    parts = [
        f"{_dt.date.today().isoformat()}",
        f"{cpu_model()}, {os.cpu_count()} logical cores, {memory_gib():.0f} GiB",
        f"Python {platform.python_version()}, numpy {numpy.__version__}, numba {numba.__version__}",
    ]
    if with_gpu:
        parts.append(f"GPU: {gpu_name() or 'none'}")
        try:
            import numba_cuda

            parts.append(f"numba-cuda {numba_cuda.__version__}")
        except Exception:
            pass
    return "Machine: " + "; ".join(parts) + "."


def median_ms(fn, repeat: int = 7, warmup: int = 2) -> float:
    """Median wall time of ``fn()`` in milliseconds after ``warmup`` untimed calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def markdown_table(header: list[str], rows: list[list[object]]) -> str:
    """A GitHub markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def publish(name: str, parts: list[str]) -> None:
    """Print the section's paragraphs and tables (``parts``) and write them as section ``name`` of BENCHMARKS.md."""
    text = "\n\n".join(parts)
    print(text)
    write_section(name, text)


def save_device_report(markdown: str, out: Path | None, default_name: str) -> Path | None:
    """Write a GPU benchmark's markdown to ``out``, else to ``$OUT/default_name`` on the device machine (its
    files come back from there; ``--apply`` then writes the section where BENCHMARKS.md lives); returns the
    path written, None where neither is given."""
    if out is None and os.environ.get("OUT"):
        out = Path(os.environ["OUT"]) / default_name
    if out is not None:
        out.write_text(markdown + "\n", encoding="utf-8")
    return out


def write_section(name: str, markdown: str, path: Path = BENCHMARKS_MD) -> None:
    """Replace (or append) the section ``name`` of BENCHMARKS.md with ``markdown``."""
    begin, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    block = f"{begin}\n{markdown.strip()}\n{end}"
    path.touch(exist_ok=True)
    with open(path, "r+", encoding="utf-8") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        text = fh.read()
        pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
        if pattern.search(text):
            text = pattern.sub(lambda _: block, text)
        else:
            text = text.rstrip("\n") + ("\n\n" if text.strip() else "") + block + "\n"
        fh.seek(0)
        fh.truncate()
        fh.write(text)
