"""GPU polyline engine on Seredin's grid, and end-to-end GPU extraction (needs an NVIDIA GPU).

    python -m tests.benchmarks.bench_gpu_polyline [--quick] [--out FILE] [--no-write]
    python -m tests.benchmarks.bench_gpu_polyline --apply FILE   # copy a run's section into BENCHMARKS.md

For nodes 5, 6, 7, 8 and points 128, 256, 512, 1024 (the geometry of
bench_dp_cpu: span 250 px, half-width 25 px, fixed endpoints, max turn 30
degrees, random float32 scores, a fresh seed each run), it times the DP on the
GPU (``mitm`` and ``window``: tables already on the device, three problems in
rotation so that the 50 MB L2 cache does not hold the previous run's tables;
the time runs from the first launch to the path on the host) and the CPU
``window`` solver (``core.polyline.solve_prepared`` on the machine's own CPU),
and checks every GPU path against the CPU optimum.  Then it times the
end-to-end GPU extraction at 8 x 1024 (``gpu.polyline.solve.score_and_solve`` from a
gradient window in host memory: upload, link scores, turn ranges, DP,
backtracking), splits the kernels' time with CUDA events to say what bounds
each, and sweeps the ``mitm`` threads per state.  The markdown goes to ``--out``
(default ``$OUT/bench_gpu_polyline.md`` when ``$OUT`` is set) and, unless
``--no-write``, to the "gpu-polyline" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import secrets
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from core.polyline import PolylineProblem, path_score, prepare, solve_prepared
from tests.benchmarks.bench_dp_cpu import HALF_WIDTH_PX, MAX_TURN_DEG, SEREDIN_GPU_MS, SPAN_PX
from tests.benchmarks.report import machine_description, markdown_table, save_device_report, write_section

NODES = (5, 6, 7, 8)
POINTS = (128, 256, 512, 1024)
TARGETS_MS = {"mitm": 14.0, "window": 1.4, "end-to-end": 5.0}
DRAM_TBPS = 3.0  # device-to-device copy measured on this H100 (KINDS.md)
FP64_TFLOPS = 34.0  # H100 SXM datasheet, non-tensor FP64


def random_problem(nodes: int, points: int, rng, max_turn_deg: float = MAX_TURN_DEG) -> PolylineProblem:
    m = nodes - 2
    return PolylineProblem(
        rng.random(points, dtype=np.float32), rng.random((m - 1, points, points), dtype=np.float32),
        rng.random(points, dtype=np.float32), np.linspace(-HALF_WIDTH_PX, HALF_WIDTH_PX, points),
        SPAN_PX / (nodes - 1), max_turn_deg,
    )


def median_run_ms(fn, repeat: int, warmup: int = 2) -> float:
    """Median wall time (ms) of ``fn(i)`` for i = 0..repeat-1; fn returns after a device sync."""
    for i in range(warmup):
        fn(i)
    times = []
    for i in range(repeat):
        started = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - started) * 1e3)
    return statistics.median(times)


def check_path(prepared, out, expected_score: float, label: str) -> None:
    """The GPU path (solve_device's DevicePath) scores the CPU optimum, within float32 DP rounding."""
    m = prepared.n_guides
    path = out.layers
    score = path_score(prepared, int(path[0]), path[1 : m + 1], int(path[-1]))
    if not abs(score - expected_score) <= 1e-5 * max(1.0, abs(expected_score)):
        raise AssertionError(f"{label}: GPU path scores {score!r}, the CPU optimum is {expected_score!r}")


def grid_row(nodes: int, points: int, rng, repeat: int, cpu_repeat: int) -> dict:
    """Median DP times of GPU mitm, GPU window and CPU window on one grid cell, all checked."""
    from gpu.polyline.dp import LOCK, solve_device, upload

    prepared = [prepare(random_problem(nodes, points, rng)) for _ in range(3)]
    expected = [solve_prepared(p, "window", "cpu").score for p in prepared]
    row = {"nodes": nodes, "points": points}
    with LOCK:
        device = [upload(p, reuse=False) for p in prepared]
        for method in ("mitm", "window"):
            for i, problem in enumerate(device):
                check_path(prepared[i], solve_device(problem, method), expected[i], f"{method} {nodes}x{points}")
            row[method] = median_run_ms(lambda i: solve_device(device[i % 3], method), repeat)
    row["cpu"] = median_run_ms(lambda i: solve_prepared(prepared[i % 3], "window", "cpu"), cpu_repeat)
    row["triples"] = feasible_triples(prepared[0])
    return row


def feasible_triples(prepared) -> int:
    """Feasible (p, q, r) triples of all layers: the candidates ``mitm`` evaluates."""
    return int(sum(np.maximum(hi - lo + 1, 0).sum() for lo, hi in prepared.ranges))


def grid_table(rows) -> str:
    header = ["nodes", "points", "GPU mitm (ms)", "GPU window (ms)", "CPU window (ms)",
              "Seredin GTX 750 Ti (ms)", "mitm speed-up", "window speed-up", "window vs CPU"]
    body = []
    for row in rows:
        seredin = SEREDIN_GPU_MS[row["nodes"]][POINTS.index(row["points"])] if row["points"] in POINTS else None
        body.append([
            row["nodes"], row["points"], f"{row['mitm']:.3f}", f"{row['window']:.3f}", f"{row['cpu']:.2f}",
            seredin if seredin else "-",
            f"{seredin / row['mitm']:.0f}x" if seredin else "-",
            f"{seredin / row['window']:.0f}x" if seredin else "-",
            f"{row['cpu'] / row['window']:.0f}x",
        ])
    return markdown_table(header, body)


def synthetic_gradient(guides, rng, sigma_px: float = 1.5):
    """A textured window with a bright 12 px road wandering along the axis, and its gradient."""
    from core.extraction.gradient import gradient_window

    col_off, row_off, width, height = guides.bounds_px(3 * sigma_px + 2)
    ys, xs = np.mgrid[row_off : row_off + height, col_off : col_off + width] + 0.5
    rel = np.stack((xs - guides.start_xy[0], ys - guides.start_xy[1]), axis=-1)
    along, across = rel @ guides.axis, rel @ guides.normal
    centre = 12.0 * np.sin(along / 90.0)
    image = 80.0 + 10.0 * rng.standard_normal((height, width)) + 90.0 * (np.abs(across - centre) < 6.0)
    return gradient_window(image.astype(np.float32), sigma_px, col_off, row_off)


def end_to_end(rng, points: int, repeat: int) -> dict:
    """Median phases (ms) of score_and_solve at 8 nodes, fresh gradient objects (uploaded every run)."""
    from core.extraction import ExtractionSettings
    from core.extraction.guides import build_guides
    from core.extraction.scores import link_score_tables
    from gpu.polyline.solve import score_and_solve

    start = np.array([500.0, 600.0])
    angle = rng.uniform(0, 2 * np.pi)
    guides = build_guides(start, start + SPAN_PX * np.array([np.cos(angle), np.sin(angle)]), 8, points, HALF_WIDTH_PX)
    gradient = synthetic_gradient(guides, rng)
    settings = ExtractionSettings(nodes=8, points=points, half_width_px=HALF_WIDTH_PX, max_turn_deg=MAX_TURN_DEG,
                                  mode="ribbon", ribbon_width_px=12.0, polarity="bright", snap_endpoints=False)
    phases = {"scoring": [], "dp": [], "backtrack": [], "total": []}
    for i in range(repeat + 2):
        fresh = dataclasses.replace(gradient)  # a new object (uploaded again), same grid step
        started = time.perf_counter()
        solution = score_and_solve(fresh, guides, settings.scoring, settings.solver, settings.max_turn_deg)
        timings = solution.timings_ms
        total = (time.perf_counter() - started) * 1e3
        if i >= 2:
            for key in ("scoring", "dp", "backtrack"):
                phases[key].append(timings[key])
            phases["total"].append(total)
    score_args = (gradient, guides, settings.scoring)
    tables = link_score_tables(*score_args)  # warm-up: numba compiles here
    cpu_started = time.perf_counter()
    tables = link_score_tables(*score_args)
    cpu_scores_ms = (time.perf_counter() - cpu_started) * 1e3
    prepared = prepare(PolylineProblem(*tables, guides.offsets, guides.spacing, MAX_TURN_DEG))
    cpu = solve_prepared(prepared, "window", "cpu")
    if abs(solution.score - cpu.score) > 1e-4 * max(1.0, abs(cpu.score)):
        raise AssertionError(f"end-to-end: GPU score {solution.score!r}, CPU {cpu.score!r}")
    result = {key: statistics.median(values) for key, values in phases.items()}
    result.update(window_px=gradient.shape, samples=link_samples(guides), cpu_scores_ms=cpu_scores_ms,
                  guides=guides, gradient=gradient)
    return result


def link_samples(guides) -> int:
    """Samples K = max(2, ceil(length)) summed over every link of every stage."""
    layers = guides.layer_points()
    total = 0
    for src, dst in zip(layers[:-1], layers[1:]):
        lengths = np.hypot(*(dst[None, :, :] - src[:, None, :]).transpose(2, 0, 1))
        total += int(np.maximum(2, np.ceil(lengths)).sum())
    return total


def event_ms(fn, repeat: int = 20) -> float:
    """Median device time (ms) of the work ``fn()`` launches, between two CUDA events."""
    from numba import cuda

    fn()
    begin, end = cuda.event(), cuda.event()
    times = []
    for _ in range(repeat):
        begin.record()
        fn()
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end))
    return statistics.median(times)


def launch_overhead_us(count: int = 300) -> float:
    """Host time (us) of one launch of an empty numba kernel."""
    from numba import cuda

    @cuda.jit
    def empty():
        pass

    empty[1, 32]()
    cuda.synchronize()
    started = time.perf_counter()
    for _ in range(count):
        empty[1, 32]()
    cuda.synchronize()
    return (time.perf_counter() - started) / count * 1e6


def copy_tbps(n_bytes: int = 1 << 29) -> float:
    """Device-to-device copy bandwidth (TB/s, bytes read plus written)."""
    from numba import cuda

    source = cuda.to_device(np.ones(n_bytes // 4, np.float32))
    target = cuda.device_array_like(source)
    ms = event_ms(lambda: target.copy_to_device(source), 10)
    return 2 * n_bytes / (ms * 1e-3) / 1e12


def kernel_breakdown(rng, e2e: dict) -> dict:
    """Device time (events) of each kernel group at 8 x 1024, with the work it does."""
    from core.extraction.options import ScoringOptions
    from gpu.launching import LaunchList
    from gpu.polyline import dp as polyline_dp
    from gpu.polyline import scores as scoring
    from gpu.polyline import solve as gpu_polyline

    points = e2e["guides"].offsets.size
    prepared = prepare(random_problem(8, points, rng))
    out = {"launch_us": launch_overhead_us(), "copy_tbps": copy_tbps(), "triples": feasible_triples(prepared)}
    with polyline_dp.LOCK:
        problem = polyline_dp.upload(prepared, reuse=False)
        out["ordinary_us"], out["replay_us"] = launch_costs_us(problem)
        for method, repeat in (("window", 20), ("mitm", 10)):
            stages = LaunchList(polyline_dp._plan(problem, method).dp.launches[:-1])  # without the merge
            out[f"{method}_stages"] = event_ms(stages.run, repeat)
            out[f"{method}_all"] = event_ms(lambda: polyline_dp.solve_device(problem, method), repeat)
        guides = e2e["guides"]
        gradient = e2e["gradient"]
        grad = gpu_polyline._device_gradient(gradient, polyline_dp)
        options = ScoringOptions("ribbon", 12.0, "bright", "mean")
        out["scores"] = event_ms(lambda: scoring.score_on_device(grad, gradient, guides, options))
        target = polyline_dp.workspace_problem(6, points, 1, 1)
        out["ranges"] = event_ms(lambda: scoring.turn_ranges_on_device(target, guides, MAX_TURN_DEG))
    out["window_bytes"] = window_bytes(6, points)
    out["host_ranges"] = host_ranges_ms(guides)
    return out


def host_ranges_ms(guides) -> float:
    """Host time (ms) of the inner layers' angles and turn ranges (core.polyline.turns), for comparison."""
    from core.polyline.turns import feasible_ranges, link_angles

    def run():
        angles = link_angles(guides.offsets, guides.offsets, guides.spacing)
        feasible_ranges(angles, angles, MAX_TURN_DEG)

    run()
    started = time.perf_counter()
    run()
    return (time.perf_counter() - started) * 1e3


def window_bytes(m: int, d: int) -> int:
    """Bytes the window stages read and write (fixed endpoints): per stage the states in,
    the table, lo and hi, the states out and the argmax table, 4 bytes each."""
    sizes = [1] + [d] * m + [1]
    return sum(4 * (d * sizes[k - 1] + 5 * d * sizes[k + 1]) for k in range(1, m + 1))


def sweep_mitm(rng, points: int, repeat: int) -> list:
    """Median mitm time at 8 x points for several threads-per-state / block sizes."""
    from gpu import config
    from gpu.polyline.dp import LOCK, solve_device, upload

    saved = (config.MITM_THREADS_PER_STATE, config.MITM_BLOCK_THREADS)
    rows = []
    with LOCK:
        problem = upload(prepare(random_problem(8, points, rng)), reuse=False)
        try:
            for per_state, block in ((2, 128), (4, 128), (8, 128), (16, 128), (32, 128), (64, 128), (128, 128)):
                config.MITM_THREADS_PER_STATE, config.MITM_BLOCK_THREADS = per_state, block
                rows.append([per_state, block, f"{median_run_ms(lambda i: solve_device(problem, 'mitm'), repeat):.3f}"])
        finally:
            config.MITM_THREADS_PER_STATE, config.MITM_BLOCK_THREADS = saved
    return rows


def launch_costs_us(problem) -> tuple[float, float]:
    """Host time (us) per launch of a window plan's DP: ordinary numba launches, and replayed ones."""
    from numba import cuda

    from gpu.launching import run_launches
    from gpu.polyline import dp as polyline_dp

    polyline_dp.solve_device(problem, "window")  # builds and packs the plan
    plan = next(plan for key, plan in problem.plans.items() if key[0] == "window")
    costs = []
    for run in (lambda: run_launches(plan.dp.launches), plan.dp.run):
        cuda.synchronize()
        started = time.perf_counter()
        for _ in range(50):
            run()
        costs.append((time.perf_counter() - started) / (50 * len(plan.dp.launches)) * 1e6)
        cuda.synchronize()
    return costs[0], costs[1]


def bounds_text(b: dict, e2e: dict, row: dict) -> str:
    """What bounds each kernel at 8 x 1024, from the measured times and counted work."""
    window_gbs = b["window_bytes"] / (b["window_stages"] * 1e-3) / 1e9
    candidates = b["triples"] / (b["mitm_stages"] * 1e-3)
    bilinear = e2e["samples"] * 2  # ribbon: two bilinear samples per sample point
    return "\n".join([
        f"- Launches: numba spends {b['launch_us']:.0f} us of host time on an empty kernel and "
        f"{b['ordinary_us']:.0f} us on one of the DP's launches (it packs every argument again each time); "
        "the plans pack each launch once and replay it through `cuda.core.launch`: "
        f"{b['replay_us']:.1f} us per launch. `window` is m + 2 = 8 launches, `mitm` m / 2 + 2 = 5, the "
        "end-to-end extraction 15 (14 replayed) plus 4 small copies. Without the replay the host, not the "
        "GPU, would bound `window`.",
        f"- `window` stages: {b['window_stages']:.3f} ms of device time for 6 stages "
        f"({b['window_all']:.3f} ms with merge, backtracking and the copy of the path; {row['window']:.3f} ms "
        f"wall). They read and write {b['window_bytes'] / 1e6:.0f} MB: {window_gbs:.0f} GB/s, "
        f"{window_gbs / (b['copy_tbps'] * 1e3):.0%} of the {b['copy_tbps']:.2f} TB/s device-to-device copy "
        "measured here, and the arithmetic is O(32) compares per element: neither bound applies. Each of the "
        "1024 blocks (two waves: 5 blocks of 256 threads fit an SM at 44 registers) runs a dependent chain - "
        "load a column, build the masks, five "
        "sparse-table levels with a barrier each, answer the queries - so a stage costs its latency.",
        f"- `mitm` stages: {b['mitm_stages']:.2f} ms of device time for {b['triples'] / 1e9:.2f} G feasible "
        f"(p, q, r) candidates: {candidates / 1e9:.0f} G candidates/s, {4 * candidates / 1e12:.2f} TB/s of "
        "4-byte loads that L1 serves (neighbouring states reduce the same row), far from any DRAM bound. "
        "The time goes to the shared-memory reductions and their barriers: fewer threads per state (more "
        "states per block, longer loops per thread, shorter reductions) run faster, see the sweep below.",
        f"- Link scores: {b['scores']:.3f} ms for {e2e['samples'] / 1e6:.0f} M sample points "
        f"({bilinear / 1e6:.0f} M bilinear samples, {bilinear / (b['scores'] * 1e-3) / 1e9:.0f} G/s). The "
        f"{e2e['window_px'][1]} x {e2e['window_px'][0]} px window "
        f"({8 * e2e['window_px'][0] * e2e['window_px'][1] / 1e6:.2f} MB) "
        "stays in L1/L2, so memory does not bound it. Each bilinear sample costs two float64 floors, two "
        "float64-to-int and two float64-to-float32 conversions besides its float32 arithmetic (the positions "
        "are float64, as on the CPU twin); we read it as bound by instruction issue of that float64 and "
        "conversion work (an inference from the counts, not a profiler measurement).",
        f"- Turn ranges: {b['ranges']:.3f} ms (three angle tables, 1.0 M float64 atan2, and binary searches; "
        f"replayed launches); the host takes {b['host_ranges']:.1f} ms for the inner layers alone "
        "(numpy arctan2 of the d x d angles and core.polyline.turns.feasible_ranges).",
    ])


def markdown(rows, e2e, bounds, sweep, seed: int, repeat: int) -> str:
    last = rows[-1]
    targets = [
        ("GPU `mitm` at 8 x 1024", last["mitm"], TARGETS_MS["mitm"]),
        ("GPU `window` at 8 x 1024", last["window"], TARGETS_MS["window"]),
        ("end-to-end GPU extraction at 8 x 1024", e2e["total"], TARGETS_MS["end-to-end"]),
    ] if (last["nodes"], last["points"]) == (8, 1024) else []
    parts = [
        "## GPU polyline engine (`python -m tests.benchmarks.bench_gpu_polyline`)",
        machine_description(with_gpu=True),
        f"Geometry of bench_dp_cpu (span {SPAN_PX:g} px, half-width {HALF_WIDTH_PX:g} px, fixed endpoints, max "
        f"turn {MAX_TURN_DEG:g} degrees), random float32 scores (seed {seed}). DP time: tables already on the "
        "device, three problems in rotation, from the first launch to the path on the host (medians of "
        f"{repeat} after 2 warm-ups); CPU `window`: `core.polyline.solve_prepared` on this machine's CPU. "
        "Every GPU path was checked against the CPU optimum in the same run. Seredin (2016), Table 2, "
        "GTX 750 Ti, beside it.",
        grid_table(rows),
        f"At 8 x 1024, {last['triples'] / 1e9:.2f} G (p, q, r) triples are feasible, "
        f"{last['triples'] / (6 * last['points'] ** 3):.0%} of the m d^3 that an unconstrained mitm evaluates.",
        "### End-to-end GPU extraction at 8 x 1024 (`gpu.polyline.solve.score_and_solve`)",
        f"Ribbon mode (12 px, bright), gradient window {e2e['window_px'][1]} x {e2e['window_px'][0]} px in host "
        "memory, uploaded every run (a fresh GradientWindow object each time).",
        markdown_table(["phase", "median (ms)"], [
            ["scoring (gradient upload + link scores)", f"{e2e['scoring']:.3f}"],
            ["dp (turn ranges + window DP + merge)", f"{e2e['dp']:.3f}"],
            ["backtrack (+ copy of the path)", f"{e2e['backtrack']:.3f}"],
            ["total (wall, score_and_solve)", f"{e2e['total']:.3f}"],
            ["CPU link scores alone, same window (numba on this machine's cores, one run after warm-up)",
             f"{e2e['cpu_scores_ms']:.1f}"],
        ]),
        "### What bounds each kernel (8 x 1024)",
        bounds,
        "### `mitm` threads per state at 8 x 1024 (the default is config.MITM_THREADS_PER_STATE)",
        markdown_table(["threads per state", "threads per block", "median (ms)"], sweep),
    ]
    if targets:
        parts.append("Targets: " + "; ".join(
            f"{name} {value:.3f} ms (target <= {target:g} ms: {'met' if value <= target else 'NOT met'})"
            for name, value, target in targets) + ".")
    return "\n\n".join(parts)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="nodes 5 and 8, points 128 and 1024, fewer repeats")
    parser.add_argument("--nodes", type=int, nargs="+", default=list(NODES))
    parser.add_argument("--points", type=int, nargs="+", default=list(POINTS))
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--no-write", action="store_true", help="leave BENCHMARKS.md alone")
    parser.add_argument("--apply", type=Path, default=None, help="write this markdown file into BENCHMARKS.md")
    args = parser.parse_args(argv)
    if args.apply:
        write_section("gpu-polyline", args.apply.read_text(encoding="utf-8"))
        return 0
    if args.quick:
        args.nodes, args.points, args.repeat = [5, 8], [128, 1024], 5
    seed = secrets.randbits(32) if args.seed is None else args.seed
    rng = np.random.default_rng(seed)
    rows = []
    for nodes in args.nodes:
        for points in args.points:
            rows.append(grid_row(nodes, points, rng, args.repeat, max(3, args.repeat // 3)))
            print(f"{nodes} x {points}: {rows[-1]}", file=sys.stderr, flush=True)
    e2e_points = args.points[-1]
    e2e = end_to_end(rng, e2e_points, args.repeat)
    bounds = bounds_text(kernel_breakdown(rng, e2e), e2e, rows[-1])
    sweep = sweep_mitm(rng, e2e_points, max(3, args.repeat // 3))
    text = markdown(rows, e2e, bounds, sweep, seed, args.repeat)
    save_device_report(text, args.out, "bench_gpu_polyline.md")
    if not args.no_write:
        write_section("gpu-polyline", text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
