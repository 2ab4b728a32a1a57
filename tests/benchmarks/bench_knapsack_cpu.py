"""Knapsack solvers on the CPU against the targets of issue 5, with OR-Tools and HiGHS beside them.

    python -m tests.benchmarks.bench_knapsack_cpu [--quick]

Measures (medians after a warm-up call; every result checked against the known
optimum or the peer solver):

- KP1 knapPI_{1,2,3}_10000_1000_1 (target for class 3: <= 1 s), beside OR-Tools'
  multidimensional branch and bound with a 10 s limit;
- the 630 MSB instances as KP2, batched and one at a time (target <= 15 s),
  beside OR-Tools' branch and bound;
- Curtis's Half subset sum with n = 1000 (target <= 0.5 s), the bitset and the
  g-vector fill of the g vector;
- Suri's MCKP set 5 (100 classes, C = 303500, 10..1024 items per class), beside
  HiGHS (scipy.optimize.milp with a zero MIP gap).

Writes the section "knapsack-cpu" of BENCHMARKS.md.  ``--quick`` uses fewer
repetitions and instances and skips the slow g-vector runs.  ``--hard`` runs
instead the KP1 instances of issue 15 (``tests/benchmarks/knapsack_hard.py``)
and writes the section "knapsack-cpu-hard".
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from core.knapsack import solve, solve_many
from core.knapsack.generators import curtis, suri
from core.knapsack.io import read_instances
from core.knapsack.mckp import dominance_filter
from core.knapsack.subset_sum import solve_subset_sum
from core.memory import resolve_budget
from tests.benchmarks.report import machine_description, markdown_table, median_ms, write_section
from tests.shared_data import SHARED_DATA

DATA = SHARED_DATA / "knapsack"


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - start) * 1e3


def _ortools(profits, weight_rows, capacities, limit_s):
    from ortools.algorithms.python import knapsack_solver

    solver = knapsack_solver.KnapsackSolver(
        knapsack_solver.SolverType.KNAPSACK_MULTIDIMENSION_BRANCH_AND_BOUND_SOLVER, "bench"
    )
    solver.init([int(p) for p in profits], [[int(w) for w in row] for row in weight_rows], [int(c) for c in capacities])
    solver.set_time_limit(limit_s)
    value = solver.solve()
    return int(value), solver.is_solution_optimal()


def bench_kp1(repeat: int) -> list[list]:
    rows = []
    for k in (1, 2, 3):
        (inst,) = read_instances(DATA / f"pisinger/large_scale/knapPI_{k}_10000_1000_1")
        sol = solve(inst.problem, backend="cpu")
        assert sol.value == inst.optimum
        ms = median_ms(lambda: solve(inst.problem, backend="cpu"), repeat=repeat, warmup=1)
        p = inst.problem
        (value, proven), or_ms = _timed(lambda: _ortools(p.profits, [p.weights], [p.capacity], 10.0))
        verdict = "optimal" if proven else f"not proven ({value})"
        target = "<= 1000" if k == 3 else ""
        rows.append([inst.name, f"{inst.optimum}", f"{ms:.0f}", target, f"{or_ms:.0f}", verdict])
    return rows


def bench_msb(repeat: int) -> list[list]:
    problems = [read_instances(path)[0].problem for path in sorted((DATA / "msb630").glob("*.ins2D"))]
    batched = solve_many(problems, backend="cpu")
    batch_ms = median_ms(lambda: solve_many(problems, backend="cpu"), repeat=repeat, warmup=0)
    _, single_ms = _timed(lambda: [solve(p, backend="cpu") for p in problems])
    refs, or_ms = _timed(
        lambda: [_ortools(p.profits, [p.weights1, p.weights2], [p.capacity1, p.capacity2], 10.0) for p in problems]
    )
    assert all(proven for _, proven in refs)
    assert [s.value for s in batched] == [v for v, _ in refs]
    return [
        [f"{len(problems)} MSB instances as KP2, batched (prange over instances)", f"{batch_ms:.0f}", "<= 15000"],
        ["the same, one `solve` call at a time", f"{single_ms:.0f}", ""],
        ["OR-Tools branch and bound, one at a time (same optima)", f"{or_ms:.0f}", ""],
    ]


def bench_subset_sum(seeds: list[int], with_g_vector: bool) -> list[list]:
    budget = resolve_budget(None)
    rows = []
    for method in ("auto", "bitset", "g-vector") if with_g_vector else ("auto", "bitset"):
        times, values, ran = [], [], set()
        for seed in seeds:
            problem = curtis("half", 1000, seed)
            solve_subset_sum(problem, budget, method)  # warm-up (and compilation)
            (value, selected, used), ms = _timed(lambda: solve_subset_sum(problem, budget, method))
            ran.add(used)
            assert int(problem.weights[selected].sum()) == value <= problem.capacity
            times.append(ms)
            values.append(value)
        rows.append([f"Curtis Half, n = 1000, `{method}` (ran: {', '.join(sorted(ran))})", f"{len(seeds)}",
                     f"{statistics.median(times):.0f}", f"{max(times):.0f}", "<= 500" if method == "auto" else "",
                     _gaps(seeds, values)])
    return rows


def _gaps(seeds, values) -> str:
    """Capacity minus optimum per instance (Half has no exact solution: the gap is at least 5)."""
    return ", ".join(str(curtis("half", 1000, s).capacity - v) for s, v in zip(seeds, values))


def bench_mckp(seeds: list[int], repeat: int) -> list[list]:
    from tests.knapsack_reference import highs_mckp

    rows = []
    for seed in seeds:
        problem = suri(5, seed)
        n_items = sum(len(p) for p, _ in problem.classes)
        kept = sum(len(dominance_filter(p, w)) for p, w in problem.classes)
        sol = solve(problem, backend="cpu")
        ms = median_ms(lambda: solve(problem, backend="cpu"), repeat=repeat, warmup=1)
        ref, highs_ms = _timed(lambda: highs_mckp(problem.classes, problem.capacity))
        assert ref == sol.value
        rows.append([f"{seed}", f"{n_items}", f"{kept}", f"{sol.value}", f"{ms:.1f}", f"{highs_ms:.0f}"])
    return rows


def bench_hard(quick: bool) -> int:
    from tests.benchmarks import knapsack_hard

    load_before = os.getloadavg()[0]
    table = knapsack_hard.rows(quick)
    load_after = os.getloadavg()[0]
    text = "\n\n".join([
        "## KP1 with large capacities (`python -m tests.benchmarks.bench_knapsack_cpu --hard`)",
        machine_description() + f" Shared with other work: load average {load_before:.1f} before, "
        f"{load_after:.1f} after the run" + (" (quick run)." if quick else "."),
        knapsack_hard.__doc__.split("\n\n")[2].replace("\n", " "),
        markdown_table(["group", "instance", "capacity", "LineSnap CPU (ms)", "method", "OR-Tools B&B (ms)",
                        "OR-Tools result"], table),
    ])
    print(text)
    write_section("knapsack-cpu-hard", text)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and instances; no g-vector runs")
    parser.add_argument("--hard", action="store_true", help="the large-capacity KP1 instances of issue 15 only")
    args = parser.parse_args(argv)
    if args.hard:
        return bench_hard(args.quick)
    if not DATA.is_dir():
        print(f"{DATA} is absent: the benchmark needs ../shared/data")
        return 1
    repeat = 3 if args.quick else 7
    load_before = os.getloadavg()[0]
    kp1 = bench_kp1(repeat)
    msb = bench_msb(1 if args.quick else 3)
    subset = bench_subset_sum([0] if args.quick else [0, 1, 2, 3, 4], with_g_vector=not args.quick)
    mckp = bench_mckp([0] if args.quick else [0, 1, 2], repeat)
    load_after = os.getloadavg()[0]
    text = "\n\n".join([
        "## Knapsack solvers on the CPU (`python -m tests.benchmarks.bench_knapsack_cpu`)",
        machine_description() + f" Load average {load_before:.1f} before, {load_after:.1f} after the run"
        + (" (quick run)." if args.quick else "."),
        "KP1, Pisinger's large-scale instances (n = 10000, R = 1000); median of "
        f"{repeat} runs after a warm-up; OR-Tools' multidimensional branch and bound "
        "with a 10 s time limit, one run:",
        markdown_table(["instance", "optimum", "LineSnap CPU (ms)", "target (ms)", "OR-Tools B&B (ms)",
                        "OR-Tools result"], kp1),
        "KP2, the MSB set (n = 20, capacities 1000 x 1000, profit w h), every optimum equal to OR-Tools':",
        markdown_table(["run", "total (ms)", "target (ms)"], msb),
        "Subset sum, Curtis's Half instances (seeds 0..k of `core.knapsack.generators.curtis`); "
        "one timed run per instance after a warm-up:",
        markdown_table(["instances", "count", "median (ms)", "max (ms)", "target (ms)", "capacity - optimum"], subset),
        "MCKP, Suri's set 5 (100 classes, C = 303500, 10..1024 items per class drawn per class, "
        "`core.knapsack.generators.suri(5, seed)`); items kept after the dominance filter; "
        "HiGHS: scipy.optimize.milp with a zero MIP gap, one run (same optima):",
        markdown_table(["seed", "items", "undominated", "optimum", "LineSnap CPU (ms)", "HiGHS (ms)"], mckp),
    ])
    print(text)
    write_section("knapsack-cpu", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
