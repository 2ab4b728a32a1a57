"""The public ``solve()`` first, then the DP of the CPU solvers on Seredin's grid: ``window`` against ``mitm``.

    python -m tests.benchmarks.bench_dp_cpu [--quick] [--seed S] [--repeat N] [--mitm-repeat N]
                                            [--threading-layer omp|workqueue|tbb] [--no-write]

For nodes 5, 6, 7, 8 (split points including both endpoints, so m = nodes - 2
guides) and points 128, 256, 512, 1024 per guide, on the geometry of a typical
click pair (span 250 px, guide half-width 25 px, uniform offsets, fixed
endpoints, max turn 30 degrees) with random float32 link scores (a fresh seed
each run, printed), this times the public call ``core.polyline.solve(problem,
"window", "cpu")`` (validation, turn ranges, DP, backtracking): on a new
geometry every call (the spacing changed by a millionth, so that no turn
ranges are reused) and again on the same problem (the ranges kept per
geometry), then the kernels, ``core.polyline.solve_prepared`` on the prepared
tables (the DP and the backtracking; ranges computed before) for ``window`` and
``mitm`` on the CPU, median after warm-up, and checks that both find the same
optimum.  Seredin's (2016) GPU timings on a
GTX 750 Ti are printed beside them for scale.  A full run writes the "dp-cpu"
section of BENCHMARKS.md; ``--quick`` runs 128 and 256 points only and writes
nothing.  numba's threading layer (its default unless ``--threading-layer``
says otherwise) is named in the section: with OpenMP, a parallel stage can
wait milliseconds for a worker thread when other processes load the cores.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import secrets

import numba
import numpy as np

from core.polyline import PolylineProblem, prepare, solve, solve_prepared
from tests.benchmarks.report import machine_description, markdown_table, median_ms, write_section

NODES = (5, 6, 7, 8)
POINTS = (128, 256, 512, 1024)
SPAN_PX, HALF_WIDTH_PX, MAX_TURN_DEG = 250.0, 25.0, 30.0

#: Seredin (2016), Table 2: his CUDA implementation on a GTX 750 Ti, ms, by nodes then points.
SEREDIN_GPU_MS = {
    5: (1.9, 7.5, 53.1, 460.9),
    6: (2.5, 11.4, 88.5, 787.8),
    7: (3.6, 14.8, 108.1, 1004.4),
    8: (5.4, 22.0, 157.0, 1397.8),
}


def random_problem(nodes: int, points: int, rng: np.random.Generator) -> PolylineProblem:
    """Random float32 scores on the benchmark geometry."""
    m = nodes - 2
    return PolylineProblem(
        rng.random(points, dtype=np.float32),
        rng.random((m - 1, points, points), dtype=np.float32),
        rng.random(points, dtype=np.float32),
        np.linspace(-HALF_WIDTH_PX, HALF_WIDTH_PX, points),
        SPAN_PX / (nodes - 1),
        MAX_TURN_DEG,
    )


def measure(nodes: int, points: int, rng: np.random.Generator, repeat: int, mitm_repeat: int) -> dict:
    """Median DP times (ms) of both solvers on one random problem, and their optimum."""
    problem = random_problem(nodes, points, rng)
    prepared = prepare(problem)
    row = {"nodes": nodes, "points": points}
    moved = iter(range(1, 10**9))

    def solve_new_geometry():
        solve(dataclasses.replace(problem, spacing=problem.spacing * (1 + 1e-6 * next(moved))), "window", "cpu")

    row["solve_ms"] = median_ms(solve_new_geometry, repeat=repeat, warmup=1)
    row["solve_same_ms"] = median_ms(lambda: solve(problem, "window", "cpu"), repeat=repeat, warmup=1)
    for method, runs in (("window", repeat), ("mitm", mitm_repeat)):
        row[method] = solve_prepared(prepared, method, "cpu").score
        row[f"{method}_ms"] = median_ms(lambda: solve_prepared(prepared, method, "cpu"), repeat=runs, warmup=1)
    row["same"] = math.isclose(row["window"], row["mitm"], rel_tol=1e-9)
    return row


def mitm_runs(points: int, mitm_repeat: int) -> int:
    """mitm at 1024 points takes seconds: fewer runs there."""
    return max(1, mitm_repeat // 3) if points >= 1024 else mitm_repeat


def section(rows: list[dict], seed: int, loads: tuple, repeat: int, mitm_repeat: int) -> str:
    """The markdown of the "dp-cpu" section."""
    header = ["nodes", "points", "solve() new geometry (ms)", "solve() same geometry (ms)", "solve() / window",
              "window (ms)", "mitm (ms)", "mitm / window", "same optimum", "Seredin GPU (ms)"]
    table = [
        [r["nodes"], r["points"], f"{r['solve_ms']:.2f}", f"{r['solve_same_ms']:.2f}",
         f"{r['solve_ms'] / r['window_ms']:.2f}x", f"{r['window_ms']:.2f}", f"{r['mitm_ms']:.1f}",
         f"{r['mitm_ms'] / r['window_ms']:.0f}x", "yes" if r["same"] else "**NO**",
         SEREDIN_GPU_MS[r["nodes"]][POINTS.index(r["points"])]]
        for r in rows
    ]
    lines = [
        "## CPU dynamic program (`python -m tests.benchmarks.bench_dp_cpu`)",
        "",
        machine_description(),
        "",
        f"Load average (1 min) before / after the run: {loads[0]:.2f} / {loads[1]:.2f}. "
        f"numba threading layer: {numba.threading_layer()}, {numba.get_num_threads()} threads. "
        f"Seed {seed}. Median of {repeat} runs for `window`, {mitm_repeat} for `mitm` "
        f"({max(1, mitm_repeat // 3)} at 1024 points), after one warm-up run.",
        "",
        "Public call first: `core.polyline.solve(problem, \"window\", \"cpu\")` (validation, turn ranges, DP, "
        "backtracking) on a new geometry each call (the spacing moved by a millionth: no ranges reused) and on "
        "the same problem (ranges kept per geometry); \"solve() / window\" divides the first by the kernel. "
        f"Kernels: `core.polyline.solve_prepared(prepared, method, \"cpu\")`: the DP and the backtracking on "
        f"prepared tables (random float32 scores; span {SPAN_PX:g} px, half-width {HALF_WIDTH_PX:g} px, "
        f"uniform offsets, fixed endpoints, max turn {MAX_TURN_DEG:g} degrees; nodes include both "
        "endpoints, so there are nodes - 2 guides). Both solvers are exact; \"same optimum\" compares "
        "their scores. The last column is Seredin's (2016) Table 2, his CUDA code on a GTX 750 Ti, "
        "for scale only (another machine, another implementation).",
        "",
        markdown_table(header, table),
    ]
    targets = {(r["nodes"], r["points"]): r for r in rows}
    if (8, 1024) in targets and (8, 512) in targets:
        big, mid = targets[8, 1024], targets[8, 512]
        ratio = big["solve_ms"] / big["window_ms"]
        lines += [
            "",
            f"Targets: `solve()` at 8 nodes x 1024 points {big['solve_ms']:.1f} ms on a new geometry, "
            f"{big['solve_same_ms']:.1f} ms on the same one: {ratio:.2f}x and "
            f"{big['solve_same_ms'] / big['window_ms']:.2f}x `solve_prepared` (target <= 1.3x: "
            f"{'met' if ratio <= 1.3 else 'missed'} on a new geometry, "
            f"{'met' if big['solve_same_ms'] <= 1.3 * big['window_ms'] else 'missed'} on the same one); "
            f"`window` at 8 nodes x 1024 points {big['window_ms']:.1f} ms (target <= 100 ms: "
            f"{'met' if big['window_ms'] <= 100 else 'missed'}); `mitm` / `window` at 8 x 512 "
            f"{mid['mitm_ms'] / mid['window_ms']:.0f}x (target >= 50x: "
            f"{'met' if mid['mitm_ms'] >= 50 * mid['window_ms'] else 'missed'}), same optimum: "
            f"{'yes' if mid['same'] else 'NO'}.",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="128 and 256 points only; writes nothing")
    parser.add_argument("--seed", type=int, default=None, help="seed of the random scores (default: fresh)")
    parser.add_argument("--repeat", type=int, default=11, help="timed runs of window per size")
    parser.add_argument("--mitm-repeat", type=int, default=3, help="timed runs of mitm (a third at 1024)")
    parser.add_argument("--threading-layer", choices=["omp", "workqueue", "tbb"], default=None,
                        help="numba threading layer (default: numba's choice)")
    parser.add_argument("--no-write", action="store_true", help="print only, leave BENCHMARKS.md alone")
    args = parser.parse_args(argv)
    if args.threading_layer:
        numba.config.THREADING_LAYER = args.threading_layer  # before the first parallel launch
    seed = secrets.randbits(32) if args.seed is None else args.seed
    print(f"seed {seed}", flush=True)
    rng = np.random.default_rng(seed)
    points = POINTS[:2] if args.quick else POINTS
    load_before = os.getloadavg()[0]
    rows = []
    for nodes in NODES:
        for d in points:
            rows.append(measure(nodes, d, rng, args.repeat, mitm_runs(d, args.mitm_repeat)))
            r = rows[-1]
            print(f"nodes {nodes} points {d}: solve {r['solve_ms']:.2f} / {r['solve_same_ms']:.2f} ms, "
                  f"window {r['window_ms']:.2f} ms, mitm {r['mitm_ms']:.1f} ms, "
                  f"same optimum {r['same']}", flush=True)
    markdown = section(rows, seed, (load_before, os.getloadavg()[0]), args.repeat, args.mitm_repeat)
    print(markdown)
    if not (args.quick or args.no_write):
        write_section("dp-cpu", markdown)


if __name__ == "__main__":
    main()
