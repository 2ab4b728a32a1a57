"""Knapsack solvers over grids of generator parameters and capacities: what is refused or slow.

    python -m tests.benchmarks.bench_knapsack_sweep [--quick]

The other knapsack benchmarks time one capacity per family (Pisinger's ``v = 50``
of 100, or his MCKP capacity and the room halved).  This one runs each family
over many capacities and parameters, as instances nobody tuned the solvers to:

- KP1, Pisinger's hard classes 11-16, n = 1000 and 10000, R = 1000 and 10000,
  capacities ``v`` = 1, 10, 25, 75, 99 of 100;
- KP1, his classes 1-6, n = 1000 and 10000, R = 10^6 and 10^7, ``v`` = 1, 25, 75, 99;
- KP1, Jooken-style, n = 400, C = 10^6, 10^8, 10^10, g = 2, 6, 10, 14,
  f = 0.1, 0.3, 0.5, eps = 0.1, 0.01, 0.001, s = 300;
- MCKP, Pisinger's three classes, 10, 100 and 1000 classes of 10 and 100
  items, R = 10^3, 10^5, 10^7, 10^9, the capacity at 10, 25, 75 and 90 % of
  the way from the lightest to the heaviest choice.

Seed 1 throughout.  Each solve (``method="auto"`` on the CPU) runs in a child
process with a 2 GiB memory budget and is abandoned past 60 s.  ``--quick``
keeps every other capacity.  Writes the section "knapsack-sweep" of BENCHMARKS.md:
per family the instances, how many were solved within 1 s, 10 s and 60 s, refused
or past 60 s, the median and the largest time, and every instance not solved.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from tests.benchmarks.children import in_forked_child
from tests.benchmarks.report import machine_description, markdown_table, publish

LIMIT_S = 60.0
BUDGET_BYTES = 2 * 2**30
#: Small instances solved first in each child, so that the timed solve compiles nothing.
WARMUP = {"kp1": ("classic", "strongly", 300, 1000, 50), "mckp": ("mckp", "weakly", 20, 10, 1000, 0.5)}


def grids(quick: bool) -> dict[str, list[tuple]]:
    """Family name -> generator arguments (see :func:`_make`)."""
    def every(values):
        return values[::2] if quick else values

    return {
        "KP1 Pisinger hard classes 11-16": [
            ("hard", k, n, r, v) for k in range(11, 17) for n in (1000, 10000) for r in (1000, 10000)
            for v in every((1, 10, 25, 75, 99))],
        "KP1 Pisinger classes 1-6, R = 10^6, 10^7": [
            ("classic", kind, n, r, v)
            for kind in ("uncorrelated", "weakly", "strongly", "inverse-strongly", "almost-strongly", "subset-sum")
            for n in (1000, 10000) for r in (10**6, 10**7) for v in every((1, 25, 75, 99))],
        "KP1 Jooken-style, n = 400": [
            ("jooken", 400, c, g, f, e) for c in (10**6, 10**8, 10**10) for g in (2, 6, 10, 14)
            for f in every((0.1, 0.3, 0.5)) for e in (0.1, 0.01, 0.001)],
        "MCKP Pisinger classes": [
            ("mckp", kind, m, k, r, share) for kind in ("uncorrelated", "weakly", "strongly") for m in (10, 100, 1000)
            for k in (10, 100) for r in (10**3, 10**5, 10**7, 10**9) for share in every((0.1, 0.25, 0.75, 0.9))],
    }


def _make(args):
    from core.knapsack import MCKP
    from core.knapsack.generators import jooken, pisinger, pisinger_hard, pisinger_mckp

    family, *rest = args
    if family == "hard":
        return pisinger_hard(*rest, series=100, seed=1)
    if family == "classic":
        return pisinger(*rest, series=100, seed=1)
    if family == "jooken":
        return jooken(*rest, spread=300, seed=1)
    kind, m, k, r, share = rest
    drawn = pisinger_mckp(kind, m, k, r, seed=1)
    lightest = sum(int(w.min()) for _, w in drawn.classes)
    heaviest = sum(int(w.max()) for _, w in drawn.classes)
    return MCKP(drawn.classes, lightest + int(share * (heaviest - lightest)))


def _timed(args):
    from core.knapsack import MemoryBudgetError, solve

    try:
        solve(_make(WARMUP["mckp" if args[0] == "mckp" else "kp1"]), backend="cpu")  # compiles
        problem = _make(args)
        start = time.perf_counter()
        solution = solve(problem, backend="cpu", memory_budget_bytes=BUDGET_BYTES)
        return "ok", solution.method, time.perf_counter() - start
    except MemoryBudgetError:
        return "refused", "MemoryBudgetError", None
    except Exception as exc:  # noqa: BLE001 - any other failure is reported as such, not as a refusal
        return "error", f"{type(exc).__name__}: {exc}", None


def run_one(args) -> tuple[str, str, float | None]:
    """(status, method or error, seconds) of one solve in a child process, abandoned past LIMIT_S."""
    out = in_forked_child(_timed, (args,), LIMIT_S + 30) or ("past 60 s", "", None)  # + compiling
    if out[0] == "ok" and out[2] > LIMIT_S:
        out = ("past 60 s", out[1], out[2])
    return out


def _label(args) -> str:
    family, *rest = args
    if family == "hard":
        return "class {}, n={}, R={}, v={}".format(*rest)
    if family == "classic":
        return "{}, n={}, R={:.0e}, v={}".format(*rest)
    if family == "jooken":
        return "c={:.0e}, g={}, f={}, eps={}".format(*rest[1:])
    return "{}, {} x {}, R={:.0e}, capacity {:.0%}".format(*rest)


def sweep(quick: bool) -> tuple[list[list], list[list]]:
    summary, failures = [], []
    for name, cases in grids(quick).items():
        times, counts = [], {"1": 0, "10": 0, "60": 0, "refused": 0, "past": 0, "error": 0}
        for args in cases:
            status, what, seconds = run_one(args)
            print(name, _label(args), status, what, seconds, flush=True)
            if status == "ok":
                times.append(seconds)
                counts["1" if seconds <= 1 else "10" if seconds <= 10 else "60"] += 1
            else:
                counts["refused" if status == "refused" else "past" if status == "past 60 s" else "error"] += 1
                failures.append([name, _label(args), status if status == "past 60 s" else f"{status} ({what})"])
        summary.append([name, len(cases), counts["1"], counts["10"], counts["60"], counts["refused"], counts["past"],
                        f"{statistics.median(times):.2f}" if times else "", f"{max(times):.2f}" if times else ""])
    return summary, failures


def _described() -> str:
    """The docstring's description of the grids: a paragraph, its list with one line per item, how each ran."""
    intro, items, how = __doc__.split("\n\n")[2:5]
    return "\n\n".join([intro.replace("\n", " "), items.replace("\n  ", " "), how.replace("\n", " ")])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="every other capacity or parameter")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    summary, failures = sweep(args.quick)
    load_after = os.getloadavg()[0]
    errors = [row for row in failures if row[2].startswith("error")]
    if errors:  # a failure that is no refusal is a fault of the solver or of this script: no section written
        print(markdown_table(["family", "instance", "outcome"], errors))
        return 1
    parts = [
        "## Knapsack over grids of parameters and capacities (`python -m tests.benchmarks.bench_knapsack_sweep`)",
        machine_description() + f" Load average {load_before:.1f} before, {load_after:.1f} after the run"
        + (" (quick run)." if args.quick else "."),
        _described(),
        markdown_table(["family", "instances", "solved <= 1 s", "1-10 s", "10-60 s", "refused", "past 60 s",
                        "median s (solved)", "max s (solved)"], summary),
    ]
    if failures:
        parts += ["Not solved:", markdown_table(["family", "instance", "outcome"], failures)]
    publish("knapsack-sweep", parts)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
