"""The public ``core.polyline.solve(problem, "window", "gpu")`` on Seredin's grid, next to its GPU DP alone.

Run (on a machine with an NVIDIA GPU): ``python -m tests.benchmarks.bench_solve_gpu [--out FILE]``;
then ``python -m tests.benchmarks.bench_solve_gpu --apply FILE`` where BENCHMARKS.md lives.

Random float32 scores on the geometry of ``bench_dp_cpu`` (span 250 px, guides
+-25 px, 30 degrees).  ``solve()`` is timed as users call it: validation, the
upload of the score tables from the host, the turn ranges (computed on the
device), the DP and the backtracking; on a new geometry each time (the spacing
moved by 1e-6) and on the same problem again.  ``solve_prepared(prepared,
"window", "gpu")`` times the same minus validation and preparation.  Medians
after warm-up.  Writes the "solve-gpu" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np

from tests.benchmarks.bench_dp_cpu import random_problem
from tests.benchmarks.report import machine_description, markdown_table, median_ms, save_device_report, write_section

SIZES = ((8, 512), (8, 1024))
TARGET_MS = 3.0


def measure(nodes: int, points: int, rng, repeat: int) -> list:
    """One table row: the medians (ms) of solve() new / same geometry and solve_prepared()."""
    from core.polyline import prepare, solve, solve_prepared

    problem = random_problem(nodes, points, rng)
    moved = iter(range(1, 10**9))

    def new_geometry():
        return solve(dataclasses.replace(problem, spacing=problem.spacing * (1 + 1e-6 * next(moved))), "window", "gpu")

    prepared = prepare(problem)
    kernel = median_ms(lambda: solve_prepared(prepared, "window", "gpu"), repeat=repeat, warmup=2)
    new = median_ms(new_geometry, repeat=repeat, warmup=2)
    same = median_ms(lambda: solve(problem, "window", "gpu"), repeat=repeat, warmup=2)
    cpu = solve(problem, "window", "cpu").score
    gpu = solve(problem, "window", "gpu").score
    return [nodes, points, f"{new:.2f}", f"{same:.2f}", f"{kernel:.2f}", f"{new / kernel:.2f}",
            "yes" if np.isclose(cpu, gpu, rtol=1e-5) else f"NO ({cpu} vs {gpu})"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--apply", type=Path, default=None, help="write this markdown file into BENCHMARKS.md")
    args = parser.parse_args(argv)
    if args.apply:
        write_section("solve-gpu", args.apply.read_text(encoding="utf-8"))
        return 0
    from core.engine import gpu_available

    if not gpu_available():
        print("no CUDA GPU", file=sys.stderr)
        return 1
    rng = np.random.default_rng(17)
    rows = [measure(nodes, points, rng, args.repeat) for nodes, points in SIZES]
    header = ["nodes", "points", "solve() new geometry (ms)", "solve() same problem (ms)",
              "solve_prepared() (ms)", "solve() / solve_prepared()", "same optimum as the CPU"]
    text = "\n".join([
        "## Public `solve()` on the GPU (`python -m tests.benchmarks.bench_solve_gpu`)",
        "",
        machine_description(with_gpu=True),
        "",
        f"Random float32 scores, span 250 px, guides +-25 px, 30 degrees; medians of {args.repeat} after warm-up. "
        "`solve(problem, \"window\", \"gpu\")` includes validation, the upload of the score tables, the turn "
        "ranges (on the device), the DP and the backtracking. "
        f"Target (issue 17): solve() at 8 x 1024 <= {TARGET_MS:g} ms on the GPU, tables uploaded included.",
        "",
        markdown_table(header, rows),
    ])
    print(text)
    save_device_report(text, args.out, "bench_solve_gpu.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
