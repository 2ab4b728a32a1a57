"""KP1 on instances whose capacity a capacity-indexed DP cannot afford (issue 15).

Run through ``python -m tests.benchmarks.bench_knapsack_cpu --hard [--quick]``;
writes the section "knapsack-cpu-hard" of BENCHMARKS.md.

Instances regenerated with ``core.knapsack.generators``: Pisinger's hard
classes 11-16 (R = 1000), his classes 1-6 with R = 10^6 and 10^7, and
Jooken-style instances (g = 10, f = 0.1, eps = 0.01, s = 100), capacity of
instance v = 50 of 100.  Each LineSnap solve runs in a child process with a
60 s limit and a 2 GiB memory budget (the machine is shared), forked after
every KP1 path was loaded (``core.warmup.compile_knapsack_kernels``); OR-Tools'
branch and bound gets 10 s and is reported as proven or not.  Combo is timed
on these classes by ``bench_knapsack_combo`` (section "knapsack-combo"), where
its build is installed.
"""

from __future__ import annotations

import time

from core.knapsack.generators import PISINGER_KINDS, jooken, pisinger, pisinger_hard
from tests.benchmarks.children import in_forked_child

LIMIT_S = 60.0
BUDGET_BYTES = 2 * 2**30
ORTOOLS_LIMIT_S = 10.0


def instances(quick: bool) -> list[tuple[str, str, object]]:
    """(group, name, KP1) of the benchmark."""
    out = []
    sizes = (1000, 10000) if quick else (1000, 5000, 10000)
    for klass in range(11, 17):
        for n in sizes:
            out.append((f"class {klass}", f"hard {klass}, n={n}", pisinger_hard(klass, n, 1000, 50, 100, seed=1)))
    for k, kind in enumerate(PISINGER_KINDS, start=1):
        for r in (10**6, 10**7):
            for n in (1000,) if quick else (1000, 10000):
                out.append((f"class {k}, R=1e{len(str(r)) - 1}", f"{kind}, n={n}, R={r:.0e}",
                            pisinger(kind, n, r, 50, 100, seed=1)))
    for c in (10**6, 10**8, 10**10):
        for n in (400,) if quick else (400, 1000):
            out.append((f"Jooken c=1e{len(str(c)) - 1}", f"Jooken n={n}, c={c:.0e}",
                        jooken(n, c, 10, 0.1, 0.01, 100, seed=1)))
    return out


def _timed(problem):
    from core.knapsack.kp1 import solve_kp1

    try:
        solve_kp1(KP1_WARMUP)  # compile (or load) the state lists outside the timing...
        solve_kp1(KP1_WARMUP, method="dp")  # ... and the capacity DP, which grouped items reach more often
        start = time.perf_counter()
        result = solve_kp1(problem, BUDGET_BYTES)
        return "ok", result.value, result.method, (time.perf_counter() - start) * 1e3
    except Exception as exc:  # noqa: BLE001 - reported in the table
        return "error", None, type(exc).__name__, None


KP1_WARMUP = pisinger("strongly", 300, 1000, 50, 100, seed=0)


def linesnap(problem) -> tuple[str, int | None, str, float | None]:
    """(status, value, method, ms) of one solve in a child process, killed past LIMIT_S."""
    return in_forked_child(_timed, (problem,), LIMIT_S + 30) or ("past 60 s", None, "", None)  # + compiling


def ortools(problem) -> tuple[int, bool, float]:
    from ortools.algorithms.python import knapsack_solver

    solver = knapsack_solver.KnapsackSolver(
        knapsack_solver.SolverType.KNAPSACK_MULTIDIMENSION_BRANCH_AND_BOUND_SOLVER, "bench")
    solver.init(problem.profits.tolist(), [problem.weights.tolist()], [problem.capacity])
    solver.set_time_limit(ORTOOLS_LIMIT_S)
    start = time.perf_counter()
    value = solver.solve()
    return int(value), solver.is_solution_optimal(), (time.perf_counter() - start) * 1e3


def rows(quick: bool) -> list[list]:
    from core import warmup

    # Every KP1 path loaded here, so that the forked children inherit them: a child's first use of a path loaded
    # its compiled code from numba's cache inside the timing (13 functions, 0.2 s, on uncorrelated n = 10000).
    warmup.compile_knapsack_kernels(("kp1",))
    out = []
    for group, name, problem in instances(quick):
        status, value, method, ms = linesnap(problem)
        ref, proven, or_ms = ortools(problem)
        if status == "ok" and proven:
            assert value == ref, f"{name}: LineSnap {value}, OR-Tools {ref}"
        if status == "ok" and not proven:
            assert value >= ref, f"{name}: LineSnap {value} below OR-Tools' feasible {ref}"
        shown = f"{ms:.1f}" if status == "ok" else status if status != "error" else f"refused ({method})"
        verdict = "optimal, same value" if proven else f"not proven in {ORTOOLS_LIMIT_S:.0f} s"
        out.append([group, name, f"{problem.capacity:.3g}", shown, method if status == "ok" else "",
                    f"{or_ms:.0f}", verdict])
        print(" | ".join(out[-1]), flush=True)
    return out
