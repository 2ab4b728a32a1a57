"""GPU knapsack solvers against the papers' benchmarks, with CPU and HiGHS beside them.

    python -m tests.benchmarks.bench_gpu_knapsack [--quick] [--out PATH] [--no-write]

Runs on a machine with a CUDA GPU (numba.cuda), in one go:

- launch overhead of a numba kernel (what bounds one-launch-per-item methods);
- KP1 on Pisinger's ``knapPI_{1,2,3}_10000_1000_1``: the persistent wavefront
  kernel (default) with a few launch geometries, the row method (one launch per
  1 or 2 items), the CPU solver; every optimum checked against the ``.opt`` file;
- MSB-630 as KP2 (Lemos et al. Table 1): the default batched GPU path (exact
  meet in the middle for instances of at most 22 usable items), the DP batch
  with 1, 2 or 3 items per launch, the instances one by one on the GPU, the CPU
  batch and HiGHS (on a tenth of the set), all optima compared;
- Curtis's Half subset sum, n = 10000: the default path (with the trivial-solution
  check) and the DP forced (bitset and g vector), CPU beside (n = 1000 and 10000);
- Suri's MCKP set 5: pruned (default) and unpruned with several cells per thread,
  the CPU solver and HiGHS.

KP1 runs with ``gpu.config.KNAPSACK_HOST_FIRST`` off: the GPU's own methods
(by default the twin first tries the host's quick lists, which settle these
instances in milliseconds).  Times are medians of wall time after warm-up calls (JIT compilation and module
load excluded); every call ends with the result copied to the host, so the
device is idle when the clock stops.  Phase times come from CUDA events.  The
markdown goes to ``--out`` (default ``$OUT/knapsack-gpu.md`` when ``$OUT`` is
set) and, for a full run, to the "knapsack-gpu" section of BENCHMARKS.md.
``--quick`` runs reduced sizes and writes nothing to BENCHMARKS.md;
``--profile`` runs one solve of each kind (for ``ncu``) and writes SASS to $OUT.
A section that fails is reported as such and the others still run.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from unittest import mock

import numpy as np
from numba import cuda

from core.knapsack import solve, solve_many
from core.knapsack.generators import curtis, suri
from core.knapsack.io import read_ins2d, read_pisinger
from tests.benchmarks.report import machine_description, markdown_table, median_ms, save_device_report, write_section
from tests.shared_data import SHARED_DATA

KNAPSACK = SHARED_DATA / "knapsack"


def log(*parts):
    print(*parts, flush=True)


def fmt(ms):
    return "-" if ms is None else (f"{ms:,.0f}" if ms >= 100 else f"{ms:.2f}")


def patched(**values):
    """Temporarily set names of gpu.config."""
    return mock.patch.multiple("gpu.config", **values)


def phases(run):
    """Run ``run(timer)`` once and return its CUDA-event phases in ms."""
    from gpu.knapsack.common import PhaseTimer

    timer = PhaseTimer()
    run(timer)
    return timer.phases_ms()


# --- launch overhead ------------------------------------------------------------


@cuda.jit
def noop(a, b, c, i, j):
    if cuda.grid(1) == 0 and i < 0:
        a[0] = b[0] + c[0] + j


def bench_launch(n=3000):
    arrays = [cuda.device_array(16, dtype=np.int64) for _ in range(3)]
    noop[1, 32](*arrays, 1, 2)
    cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(n):
        noop[1, 32](*arrays, i, 2)
    cuda.synchronize()
    us = (time.perf_counter() - t0) / n * 1e6
    log(f"launch overhead: {us:.2f} us per launch (3 arrays, 2 ints)")
    return us


# --- KP1 ------------------------------------------------------------------------


def bench_kp1(quick):
    from gpu.knapsack import solve as knapsack
    from gpu.knapsack import wavefront as wf
    from gpu.knapsack.common import value_dtype

    size = 1000 if quick else 10000
    rows = []
    for kind in (1, 2, 3):
        inst = read_pisinger(KNAPSACK / f"pisinger/large_scale/knapPI_{kind}_{size}_1000_1")[0]
        problem, opt = inst.problem, inst.optimum
        assert solve(problem, backend="cpu").value == opt
        cpu = median_ms(lambda: solve(problem, backend="cpu"), repeat=3, warmup=0)
        assert knapsack.solve_kp1(problem)[0] == opt
        gpu = median_ms(lambda: knapsack.solve_kp1(problem), repeat=7, warmup=2)
        per_step = {}
        for m in (1, 2):
            with patched(KNAPSACK_WAVEFRONT_MIN_ITEMS=10**9, KNAPSACK_ITEMS_PER_STEP=m):
                assert knapsack.solve_kp1(problem)[0] == opt
                per_step[m] = median_ms(lambda: knapsack.solve_kp1(problem), repeat=3, warmup=0)
        p, w, c = problem.profits, problem.weights, problem.capacity
        plan = wf.plan(len(p), int(w.max()), min(c, int(w.sum())), value_dtype(int(p.sum())))
        ph = phases(lambda t: wf.run(plan, w, p, timer=t))
        log("kp1 phases", {k: round(v, 3) for k, v in ph.items()})
        rows.append([inst.name, len(p), c, opt, fmt(cpu), fmt(gpu), fmt(ph["wavefront"]), fmt(ph["backtrack"]),
                     fmt(per_step[1]), fmt(per_step[2])])
        log("kp1", rows[-1])
    variants = bench_kp1_variants(problem, opt, plan)
    return rows, variants


def bench_kp1_variants(problem, opt, default_plan):
    """Wavefront geometries on the last (strongly correlated) instance, and the copy-back alternative."""
    from gpu.knapsack import solve as knapsack
    from gpu.knapsack import wavefront as wf
    from gpu.knapsack.common import value_dtype

    p, w, c = problem.profits, problem.weights, problem.capacity
    out = []
    for threads, batch, blocks, ring in ((384, 16, 0, 0), (384, 8, 0, 0), (384, 27, 0, 0), (512, 16, 0, 0),
                                         (512, 20, 0, 0), (256, 16, 0, 0), (384, 16, 0, 33)):
        with patched(KNAPSACK_WAVEFRONT_THREADS=threads, KNAPSACK_WAVEFRONT_BATCH=batch,
                     KNAPSACK_WAVEFRONT_BLOCKS=blocks, KNAPSACK_WAVEFRONT_RING_ROWS=ring):
            plan = wf.plan(len(p), int(w.max()), min(c, int(w.sum())), value_dtype(int(p.sum())))
            if plan is None:
                continue
            assert knapsack.solve_kp1(problem)[0] == opt
            wall = median_ms(lambda: knapsack.solve_kp1(problem), repeat=5, warmup=1)
            kernel = [phases(lambda t: wf.run(plan, w, p, timer=t))["wavefront"] for _ in range(3)]
            out.append([threads, plan.blocks, plan.S, plan.K, plan.D, plan.reach, fmt(float(np.median(kernel))),
                        f"{np.median(kernel) * 1e3 / len(p):.2f}", fmt(wall)])
            log("kp1 variant", out[-1])
    bits = cuda.device_array(default_plan.n * default_plan.nwords, dtype=np.uint32)
    copy = median_ms(lambda: bits.copy_to_host(), repeat=3, warmup=1)
    return out, copy, bits.nbytes


# --- MSB-630 as KP2 ------------------------------------------------------------


def highs_kp(profits, weight_rows, capacities):
    from scipy.optimize import Bounds, LinearConstraint, milp

    res = milp(-np.asarray(profits, float), integrality=np.ones(len(profits)), bounds=Bounds(0, 1),
               constraints=LinearConstraint(np.array(weight_rows, float), -np.inf, np.array(capacities, float)),
               options={"mip_rel_gap": 0.0})
    return int(round(-res.fun))


def bench_msb(quick):
    from gpu.knapsack import kernels_rows
    from gpu.knapsack import rows as kr
    from gpu.knapsack import solve as knapsack
    from gpu.knapsack.common import value_dtype
    from gpu.knapsack.plan import plan_batch

    files = sorted((KNAPSACK / "msb630").glob("*.ins2D"))[: 63 if quick else None]
    problems = [read_ins2d(f)[0].problem for f in files]
    solve_many(problems[:3], backend="cpu")
    t0 = time.perf_counter()
    cpu = [s.value for s in solve_many(problems, backend="cpu")]
    cpu_ms = (time.perf_counter() - t0) * 1e3
    sample = problems[:63]  # HiGHS needs ~30 ms an instance: a tenth of the set
    t0 = time.perf_counter()
    highs = [highs_kp(q.profits, [q.weights1, q.weights2], [q.capacity1, q.capacity2]) for q in sample]
    highs_ms = (time.perf_counter() - t0) * 1e3
    assert highs == cpu[: len(sample)]
    knapsack.solve_kp2(problems[0])
    t0 = time.perf_counter()
    sequential = [knapsack.solve_kp2(q)[0] for q in problems]
    sequential_ms = (time.perf_counter() - t0) * 1e3
    assert sequential == cpu
    assert [r.value for r in knapsack.solve_kp2_batch(problems)] == cpu
    mitm_ms = median_ms(lambda: knapsack.solve_kp2_batch(problems), repeat=7, warmup=2)
    log("msb default (meet in the middle)", mitm_ms)
    rows = []
    for m, threads, cpt in ((2, 256, 4), (2, 128, 8), (1, 256, 4), (3, 128, 8)):
        with patched(KNAPSACK_ITEMS_PER_STEP=m, KNAPSACK_THREADS_PER_BLOCK=threads, KNAPSACK_CELLS_PER_THREAD=cpt,
                     KNAPSACK_MITM_MAX_ITEMS=0):
            assert [r.value for r in knapsack.solve_kp2_batch(problems)] == cpu
            wall = median_ms(lambda: knapsack.solve_kp2_batch(problems), repeat=5, warmup=1)
            args = ([q.profits for q in problems], [q.weights1 for q in problems], [q.weights2 for q in problems],
                    [q.capacity1 for q in problems], [q.capacity2 for q in problems], m, threads, cpt)
            t0 = time.perf_counter()
            plan = plan_batch(*args)
            plan_ms = (time.perf_counter() - t0) * 1e3
            dtype = value_dtype(max(int(q.profits.sum()) for q in problems))
            ph = phases(lambda t: kr.run_plan(plan, dtype, timer=t))
            cells = int((plan.meta[..., kernels_rows.ROWS] * plan.meta[..., kernels_rows.W2N]).sum())
            moved = cells * dtype.itemsize * 2 + plan.bit_words * 4  # each row read once and written once
            rows.append([m, threads, cpt, f"{cells / 1e9:.2f}", fmt(wall), fmt(plan_ms), fmt(ph["alloc"]),
                         fmt(ph["upload"]), fmt(ph["steps"]), f"{moved / max(ph['steps'], 1e-6) / 1e6:,.0f}",
                         fmt(ph["backtrack"] + ph["download"])])
            log("msb", rows[-1])
    return rows, dict(cpu_ms=cpu_ms, highs_ms=highs_ms, highs_n=len(sample), sequential_ms=sequential_ms,
                      n=len(problems), mitm_ms=mitm_ms)


# --- subset sum -------------------------------------------------------------------


def subset_row(plan, method, persistent, budget, cpu_value, n, per_sm):
    """One forced-DP subset-sum variant: wall ms, item-loop ms and the traffic it implies."""
    from gpu.knapsack import subset_sum as ssh

    value, _, items = ssh.solve_plan(plan, method, budget, persistent=persistent)
    assert value == cpu_value
    wall = median_ms(lambda: ssh.solve_plan(plan, method, budget, persistent=persistent), repeat=3, warmup=0)
    ph = phases(lambda t: ssh.solve_plan(plan, method, budget, timer=t, persistent=persistent))
    first, last = plan.windows()
    cells = int((last[:items] - first[:items] + 1).sum())
    traffic = cells / 64 * 24 if method == "bitset" else cells * (2 if plan.weights.size < 32767 else 4)
    how = f"one launch, {per_sm or 'all resident'} blocks/SM" if persistent else "a launch per item"
    return [f"Half n={n}", f"DP forced: {method}, {how}", items, fmt(wall), fmt(ph["items"]),
            f"{traffic / max(ph['items'], 1e-6) / 1e6:,.0f}"]


def bench_subset(quick):
    from gpu.knapsack import solve as knapsack
    from gpu.knapsack import subset_sum as ssh

    n = 2000 if quick else 10000
    problem = curtis("half", n, seed=1)
    cpu_value = solve(problem, backend="cpu").value
    rows = []
    assert knapsack.solve_subset_sum(problem)[0] == cpu_value
    default = median_ms(lambda: knapsack.solve_subset_sum(problem), repeat=5, warmup=1)
    trivial = isinstance(ssh.reduce_instance(problem.weights, problem.capacity), tuple)
    rows.append([f"Half n={n}", "default (trivial-solution check" + (" solved it)" if trivial else ")"), "-",
                 fmt(default), "-", "-"])
    plan = ssh.reduce_instance(problem.weights, problem.capacity, trivial_checks=False)
    budget = 40 * 2**30
    for method, persistent, per_sm in (("bitset", True, 0), ("bitset", True, 2), ("gvector", True, 0),
                                       ("bitset", False, 0), ("gvector", False, 0)):
        with patched(SUBSET_SUM_BLOCKS_PER_SM=per_sm):
            rows.append(subset_row(plan, method, persistent, budget, cpu_value, n, per_sm))
        log("subset", rows[-1])
    cpu_rows = []
    for size in ((1000, n) if not quick else (1000,)):
        q = curtis("half", size, seed=1)
        solve(q, backend="cpu")
        cpu_ms = median_ms(lambda: solve(q, backend="cpu"), repeat=3, warmup=0)
        cpu_rows.append([f"Half n={size}", "CPU (core.knapsack)", "-", fmt(cpu_ms), "-", "-"])
    for kind in ("p", "uniform"):
        q = curtis(kind, n, seed=1)
        assert knapsack.solve_subset_sum(q)[0] == solve(q, backend="cpu").value
        gpu_ms = median_ms(lambda: knapsack.solve_subset_sum(q), repeat=3, warmup=0)
        cpu_rows.append([f"{kind} n={n}", "GPU default", "-", fmt(gpu_ms), "-", "-"])
    return rows + cpu_rows, plan


# --- MCKP -----------------------------------------------------------------------------


def highs_mckp(problem, time_limit_s=300.0):
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    sizes = [len(p) for p, _ in problem.classes]
    n, m = sum(sizes), len(sizes)
    profits = np.concatenate([p for p, _ in problem.classes]).astype(float)
    weights = np.concatenate([w for _, w in problem.classes]).astype(float)
    members = coo_matrix((np.ones(n), (np.repeat(np.arange(m), sizes), np.arange(n))), shape=(m, n))
    t0 = time.perf_counter()
    res = milp(-profits, integrality=np.ones(n), bounds=Bounds(0, 1),
               constraints=[LinearConstraint(members, 1, 1),
                            LinearConstraint(weights[None, :], -np.inf, problem.capacity)],
               options={"time_limit": time_limit_s, "mip_rel_gap": 0.0})
    return (int(round(-res.fun)) if res.x is not None else None), (time.perf_counter() - t0) * 1e3, res.status


def bench_mckp(quick):
    from gpu.knapsack import mckp as km
    from gpu.knapsack import solve as knapsack
    from gpu.knapsack.common import value_dtype

    problem = suri(3 if quick else 5, seed=1)
    sizes = [len(p) for p, _ in problem.classes]
    cpu_value = solve(problem, backend="cpu").value
    cpu = median_ms(lambda: solve(problem, backend="cpu"), repeat=3, warmup=0)
    highs_value, highs_ms, status = highs_mckp(problem)
    assert knapsack.solve_mckp(problem)[0] == cpu_value
    default = median_ms(lambda: knapsack.solve_mckp(problem), repeat=7, warmup=2)
    kept = sum(len(km.prune_dominated(p, w)) for p, w in problem.classes)
    rows = [["pruned (default)", kept, "-", fmt(default), "-", "-"]]
    dtype = value_dtype(sum(int(p.max()) for p, _ in problem.classes))
    for cpt in (4, 8, 16):
        with patched(MCKP_PRUNE_DOMINATED=False, MCKP_CELLS_PER_THREAD=cpt):
            assert knapsack.solve_mckp(problem)[0] == cpu_value
            wall = median_ms(lambda: knapsack.solve_mckp(problem), repeat=3, warmup=0)
            ph = phases(lambda t: km.solve(problem.classes, problem.capacity, 40 * 2**30, dtype, False, timer=t))
            updates = sum(sizes) * (problem.capacity + 1)
            rows.append([f"unpruned, {cpt} cells/thread", sum(sizes), cpt, fmt(wall), fmt(ph["classes"]),
                         f"{updates / max(ph['classes'], 1e-6) / 1e6:,.0f}"])
            log("mckp", rows[-1])
    info = dict(classes=len(sizes), items=sum(sizes), min=min(sizes), max=max(sizes), capacity=problem.capacity,
                cpu_ms=cpu, highs_ms=highs_ms, highs_ok=highs_value == cpu_value, highs_status=status, value=cpu_value)
    return rows, info


# --- report ---------------------------------------------------------------------------


def guarded(name, section, *args):
    """Run one section; a failure is logged and reported instead of ending the run."""
    import traceback

    try:
        return section(*args)
    except Exception as exc:
        log(f"section {name} FAILED:\n{traceback.format_exc()}")
        return f"{name}: FAILED ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})"


def render(launch_us, kp1, msb, subset, mckp):
    parts = [
        "### GPU knapsack solvers (gpu/knapsack/solve*.py)",
        machine_description(with_gpu=True),
        f"A numba kernel launch costs {launch_us:.1f} us of host time here (3 arrays, 2 ints); "
        "that bounds every one-launch-per-item method.",
    ]
    for section, renderer in ((kp1, render_kp1), (msb, render_msb), (subset, render_subset), (mckp, render_mckp)):
        parts += [section] if isinstance(section, str) else renderer(section)
    return "\n\n".join(parts)


def render_kp1(kp1):
    kp1_rows, (variants, copy_ms, bits_bytes) = kp1
    return [
        "#### KP1, Pisinger large scale (ms; every optimum equals the .opt file)",
        markdown_table(["instance", "n", "c", "optimum", "CPU", "GPU (default: wavefront)", "wavefront kernel",
                        "device backtrack", "rows, 1 item/launch", "rows, 2 items/launch"], kp1_rows),
        f"Copying the decision bits back instead of backtracking on the device would cost {fmt(copy_ms)} ms "
        f"for {bits_bytes / 1e6:.0f} MB.",
        "Wavefront geometries on the last instance (kernel ms median of 3; us per item = kernel / n):",
        markdown_table(["threads", "blocks", "cells/block", "items/batch", "ring rows", "reach", "kernel ms",
                        "us/item", "solve ms"], variants),
    ]


def render_msb(msb):
    msb_rows, msb_info = msb
    return [
        f"#### MSB-630 as KP2 (Lemos et al. Table 1: 168,890 ms sequential, 1,098 ms batched on a Tesla T4); "
        f"{msb_info['n']} instances",
        f"CPU batch (core.knapsack, numba): {fmt(msb_info['cpu_ms'])} ms; HiGHS one by one on the first "
        f"{msb_info['highs_n']}: {fmt(msb_info['highs_ms'])} ms; "
        f"GPU one by one: {fmt(msb_info['sequential_ms'])} ms; all optima equal.",
        f"**Batched GPU, default (exact meet in the middle, one block per instance, one launch): "
        f"{fmt(msb_info['mitm_ms'])} ms.** The dynamic program over the batch (Lemos et al.'s method with "
        "per-stage capacity windows; the meet in the middle switched off):",
        markdown_table(["items/launch", "threads", "cells/thread", "cells (1e9)", "batched GPU ms", "host plan ms",
                        "alloc ms", "upload ms", "steps ms", "rows+bits GB/s", "backtrack+download ms"], msb_rows),
    ]


def render_subset(subset):
    subset_rows, _ = subset
    return [
        "#### Subset sum, Curtis's Half (his best GPU code: 12,570 ms on a GTX 560 for n = 10000)",
        markdown_table(["instance", "path", "items run", "ms", "item kernels ms", "traffic GB/s"], subset_rows),
    ]


def render_mckp(mckp):
    mckp_rows, mi = mckp
    return [
        f"#### MCKP, Suri's set {5 if mi['classes'] == 100 else 3}: {mi['classes']} classes, "
        f"{mi['items']} items ({mi['min']}-{mi['max']} per class), C = {mi['capacity']}",
        f"CPU (core.knapsack): {fmt(mi['cpu_ms'])} ms; HiGHS: {fmt(mi['highs_ms'])} ms "
        f"(status {mi['highs_status']}, optimum {'equal' if mi['highs_ok'] else 'DIFFERENT'}).",
        markdown_table(["GPU variant", "items", "cells/thread", "ms", "class kernels ms", "G cell-item updates/s"],
                       mckp_rows),
    ]


def profile_run():
    """One solve of each profiled kind, for ``ncu`` (no timing, no report)."""
    from gpu.knapsack import solve as knapsack

    problem = read_pisinger(KNAPSACK / "pisinger/large_scale/knapPI_3_10000_1000_1")[0].problem
    knapsack.solve_kp1(problem)
    problems = [read_ins2d(f)[0].problem for f in sorted((KNAPSACK / "msb630").glob("*.ins2D"))]
    knapsack.solve_kp2_batch(problems)
    knapsack.solve_mckp(suri(5, seed=1))
    out = Path(os.environ.get("OUT", "."))
    from gpu.knapsack import kernels_rows as knapsack_rows
    from gpu.knapsack import kernels_wavefront as knapsack_wavefront

    for name, kernel in (("kp_step", knapsack_rows.step_kernel(2, 4)),
                         ("wavefront", knapsack_wavefront.wavefront_kernel("int32", 1))):
        try:
            (out / f"sass_{name}.txt").write_text("\n".join(kernel.inspect_sass().values()))
        except Exception as exc:  # nvdisasm missing: the profile still stands
            log("no SASS for", name, exc)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--profile", action="store_true", help="one solve of each kind for ncu, no report")
    args = parser.parse_args(argv)
    with patched(KNAPSACK_HOST_FIRST=False):  # the GPU's methods, not the host's quick KP1 lists
        if args.profile:
            return profile_run()
        launch = bench_launch()
        results = [guarded(name, section, args.quick) for name, section in
                   (("KP1", bench_kp1), ("MSB", bench_msb), ("subset sum", bench_subset), ("MCKP", bench_mckp))]
    markdown = render(launch, *results)
    save_device_report(markdown, args.out, "knapsack-gpu.md")
    if not args.quick and not args.no_write:
        write_section("knapsack-gpu", markdown)
    print(markdown)


if __name__ == "__main__":
    main()
