"""First start after an install: launch to the first extraction drawn, with numba's cache empty.

    python -m tests.benchmarks.bench_first_start [--repeat N] [--no-write]

Each run points ``NUMBA_CACHE_DIR`` at a new empty folder (what a fresh
install has), launches the window (``app.main.run_gui --screenshot``,
offscreen Qt) on the bundled sample scene, which clicks the demo's two points
as soon as the first tiles are drawn and exits once the polyline is drawn and
the window saved as a picture.  The wall time of the whole process is the
launch-to-usable time.  Runs alternate with the background compiler on (the
default: a child process compiles the kernels beside the window's warm-up
extraction) and off (``LINESNAP_PRECOMPILE=0``), then once more on the
filled cache (a later start).  Writes the "first-start" section of
BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.benchmarks.report import machine_description, markdown_table, write_section

ROOT = Path(__file__).resolve().parents[2]
TARGET_S = 10.0
LAUNCH = "import sys; from app.main import run_gui; sys.exit(run_gui(['--screenshot', sys.argv[1]]))"


def launch_s(cache_dir: str, precompile: bool) -> tuple[float, float]:
    """(wall s, CPU s of the window and its children) of one launch to the first extraction drawn."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", NUMBA_CACHE_DIR=cache_dir,
               LINESNAP_PRECOMPILE="1" if precompile else "0")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", LAUNCH, str(Path(folder) / "shot.png")], cwd=ROOT, env=env,
                       check=True, capture_output=True, timeout=600)
        wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def wait_for_background_compilers(timeout_s: float = 120.0) -> None:
    """Wait (up to ``timeout_s``) until no ``python -m core.warmup`` runs.

    A first start's background compiler goes on after the window is usable
    (it compiles what the first click did not need): the next launch would
    share the cores with it.
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(b"core.warmup" in line for line in _command_lines()):
        time.sleep(0.2)


def _command_lines() -> list[bytes]:
    """The command lines of the running processes (Linux; none elsewhere)."""
    lines = []
    for path in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            lines.append(path.read_bytes())
        except OSError:  # the process has ended meanwhile
            pass
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="cold launches of each kind")
    parser.add_argument("--no-write", action="store_true", help="print only, leave BENCHMARKS.md alone")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    runs: dict[str, list] = {"on": [], "off": [], "warm": []}
    for _ in range(args.repeat):
        for kind in ("on", "off"):
            with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
                runs[kind].append(launch_s(cache, kind == "on"))
                wait_for_background_compilers()
                if kind == "on":
                    runs["warm"].append(launch_s(cache, True))
            print(kind, runs[kind][-1], flush=True)
    labels = {"on": "empty cache, background compiler (default)", "off": "empty cache, no background compiler",
              "warm": "a later start (cache filled)"}
    rows = [[labels[k], len(v), f"{statistics.median(w for w, _ in v):.1f}", f"{min(w for w, _ in v):.1f}",
             f"{max(w for w, _ in v):.1f}", f"{statistics.median(c for _, c in v):.1f}",
             "yes" if statistics.median(w for w, _ in v) <= TARGET_S else "no"] for k, v in runs.items()]
    text = "\n\n".join([
        "## First start: launch to the first extraction drawn (`python -m tests.benchmarks.bench_first_start`)",
        machine_description(),
        f"1-minute load average before / after: {load_before:.2f} / {os.getloadavg()[0]:.2f} (a shared "
        "machine: other work slows compiling). Each launch gets an empty `NUMBA_CACHE_DIR` (a fresh install), "
        "opens the sample scene offscreen, clicks the demo's two points once the first tiles are drawn and "
        "exits when the polyline is drawn; wall time of the whole process, CPU time of it and its children.",
        markdown_table(["launch", "runs", "wall median (s)", "min (s)", "max (s)", "CPU median (s)",
                        f"<= {TARGET_S:.0f} s"], rows),
    ])
    print(text)
    if not args.no_write:
        write_section("first-start", text)


if __name__ == "__main__":
    main()
