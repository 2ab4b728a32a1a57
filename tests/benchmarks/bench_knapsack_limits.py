"""How promptly the knapsack state lists stop at their time limit (issue 16).

Run with ``python -m tests.benchmarks.bench_knapsack_limits``; writes the
section "knapsack-time-limits" of BENCHMARKS.md.

Hard instances whose state lists run far past the limits: Jooken-style KP1
(n = 400, C = 10^8, g = 10, f = 0.1, eps = 0.01, s = 100, seed 2; about 7 s
unlimited since the sparse completion bound, 21 s before; seed 1, used before,
now takes 3 s), a subset sum of 60 weights drawn from 10^11..10^12 with half their
sum as capacity, Pisinger's weakly correlated MCKP (3000 classes of 10,
R = 10^9, the room above the lightest items halved; about 21 s unlimited on a
2-core Intel Xeon VM; the 100 classes used before take 2-6 s since the few-swap
search, 6 s before it; his strongly correlated 200 x 50 at R = 10^7, used
before those, now takes 0.3 s), and two KP2: correlated profits ``(w1 + w2) / 2 + U[1, 10^4]`` with
weights up to 10^6 (n = 1000, capacities half the weight sums: state lists only)
and a batch of six with 2000 random items and capacities 1200 x 1200 each (``solve_many``: the DP side
by side, about 1.7e10 cells).
Each is solved on the CPU with ``time_limit_s`` 0.5, 1 and 3 s after
one untimed warm-up (numba's compilation is not the solver's time); the table
gives the seconds until TimeLimitError and the overshoot past the limit.
"""

from __future__ import annotations

import os
import time

import numpy as np

from core.knapsack import KP2, MCKP, SubsetSum, TimeLimitError, solve, solve_many
from core.knapsack.generators import jooken, pisinger_mckp
from tests.benchmarks.report import machine_description, markdown_table, write_section

LIMITS_S = (0.5, 1.0, 3.0)


def _halved(problem: MCKP) -> MCKP:
    """``problem`` with the room above its lightest items halved (as the knapsack-cpu-large rows "room/2")."""
    return MCKP(problem.classes, (problem.capacity + problem.min_weight) // 2)


def instances() -> list[tuple[str, object]]:
    weights = np.random.default_rng(1).integers(10**11, 10**12, 60)
    rng = np.random.default_rng(1)
    w1, w2 = rng.integers(1, 10**6, 1000), rng.integers(1, 10**6, 1000)
    correlated = KP2((w1 + w2) // 2 + rng.integers(1, 10**4, 1000), w1, w2, int(w1.sum()) // 2, int(w2.sum()) // 2)
    rng = np.random.default_rng(4)
    batch = [KP2(rng.integers(1, 1000, 2000), rng.integers(1, 1200, 2000), rng.integers(1, 1200, 2000), 1200, 1200)
             for _ in range(6)]
    return [("KP1 Jooken n=400, C=1e8", jooken(400, 10**8, 10, 0.1, 0.01, 100, seed=2)),
            ("subset sum n=60, w up to 1e12", SubsetSum(weights, int(weights.sum()) // 2)),
            ("MCKP weakly, 3000 x 10, R=1e9, room/2", _halved(pisinger_mckp("weakly", 3000, 10, 10**9, seed=1))),
            ("KP2 correlated n=1000, w up to 1e6", correlated),
            ("6 KP2 batched, n=2000, capacities 1200 x 1200", batch)]


def stop_s(problem, limit_s: float) -> float | None:
    """Seconds until the solve ended in TimeLimitError (None: it finished within the limit)."""
    begin = time.perf_counter()
    try:
        if isinstance(problem, list):
            solve_many(problem, backend="cpu", time_limit_s=limit_s)
        else:
            solve(problem, backend="cpu", time_limit_s=limit_s)
    except TimeLimitError:
        return time.perf_counter() - begin
    return None


def rows() -> list[list]:
    out = []
    for name, problem in instances():
        stop_s(problem, 0.2)  # warm-up: compile
        for limit_s in LIMITS_S:
            took = stop_s(problem, limit_s)
            cells = ["finished"] * 2 if took is None else [f"{took:.2f}", f"{(took - limit_s) * 1e3:.0f}"]
            out.append([name, f"{limit_s:g}", *cells])
            print(" | ".join(out[-1]), flush=True)
    return out


def main(argv=None) -> int:
    load_before = os.getloadavg()[0]
    table = rows()
    load_after = os.getloadavg()[0]
    text = "\n\n".join([
        "## Knapsack time limits (`python -m tests.benchmarks.bench_knapsack_limits`)",
        machine_description() + f" Shared with other work: load average {load_before:.1f} before, "
        f"{load_after:.1f} after the run.",
        __doc__.split("\n\n")[2].replace("\n", " "),
        markdown_table(["instance", "time_limit_s", "stopped after (s)", "overshoot (ms)"], table),
    ])
    print(text)
    write_section("knapsack-time-limits", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
