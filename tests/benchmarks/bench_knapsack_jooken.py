"""KP1 on Jooken, Leyman and De Causmaecker's published instances, against combo's published times.

    python -m tests.benchmarks.bench_knapsack_jooken DIR [--limit 60] [--budget BYTES] [--names FILE] [--combo-here]

``DIR`` is a copy of the ``problemInstances`` folder of their repository
(github.com/JorikJooken/knapsackProblemInstances), or of any of its subfolders:
every ``NAME/test.in`` below it is one instance, read with
``core.knapsack.io.read_jooken``; ``NAME/time.out`` holds the seconds combo took
on their machine (-1 when it ran out of time or memory) and ``NAME/outp.out``
combo's optimum (its first line).  ``--names`` keeps the instances named in a
file (one name per line).  Nothing of the data set is kept in this repository.

Each instance is solved through the public ``core.knapsack.solve`` (CPU) in a
child process forked after the solvers were compiled (so nothing is compiled
within the timing), with the time limit (default 60 s) and the memory budget (default
the solver's own: half the available memory, as on the command line).  Every
value is checked against combo's optimum where combo found one.  Writes the
section "knapsack-jooken" of BENCHMARKS.md: over the instances that combo solved
within the limit, how many LineSnap solves within it, and the median ratio of
the times; per size and capacity; and every instance that LineSnap did not
solve within the limit or solved more slowly than combo.  ``--combo-here`` also
runs combo on this machine (``tests/benchmarks/combo_baseline.py``; instances
within its 32 bits, the same limit) and adds a table of the times against it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from tests.benchmarks import combo_baseline
from tests.benchmarks.children import in_forked_child
from tests.benchmarks.report import machine_description, markdown_table, publish

LIMIT_S = 60.0


def instance_folders(root: Path, names: set[str] | None = None) -> list[Path]:
    """The folders below ``root`` that hold a ``test.in`` (``root`` itself included), sorted by name."""
    folders = sorted({p.parent for p in Path(root).rglob("test.in")}, key=lambda p: p.name)
    return [f for f in folders if names is None or f.name in names]


def combo_seconds(folder: Path) -> float | None:
    """Combo's published time in seconds; None when it failed (-1) or the folder has no ``time.out``."""
    path = folder / "time.out"
    if not path.is_file():
        return None
    seconds = float(path.read_text().split()[0])
    return seconds if seconds >= 0 else None


def warm_up() -> None:
    """Compile (or load) the KP1 solvers in this process, so that the forked children time none of it."""
    from core.knapsack import solve
    from core.knapsack.generators import jooken, pisinger

    for problem in (pisinger("strongly", 300, 1000, 50, 100, seed=0), jooken(60, 10**8, 6, 0.1, 0.001, 100, seed=0)):
        solve(problem, backend="cpu")


def _timed(path, budget, limit_s):
    from core.knapsack import solve
    from core.knapsack.io import read_jooken

    try:
        (instance,) = read_jooken(path)
        start = time.perf_counter()
        solution = solve(instance.problem, backend="cpu", memory_budget_bytes=budget, time_limit_s=limit_s)
        return "ok", solution.method, int(solution.value), time.perf_counter() - start
    except Exception as exc:  # noqa: BLE001 - a refusal or the time limit: reported in the table
        return "not solved", type(exc).__name__, None, None


def run_one(folder: Path, budget: int | None, limit_s: float) -> tuple[str, str, int | None, float | None]:
    """(status, method or exception, value, seconds) of LineSnap on one instance, in a child process."""
    return (in_forked_child(_timed, (folder / "test.in", budget, limit_s), limit_s + 60)
            or ("not solved", "killed", None, None))


def _group(name: str) -> str:
    """``n_400_c_100000000_g_10_...`` -> ``n = 400, C = 1e8``."""
    fields = name.split("_")
    try:
        n, c = int(fields[fields.index("n") + 1]), int(fields[fields.index("c") + 1])
    except (ValueError, IndexError):
        return "other"
    return f"n = {n}, C = 1e{len(str(c)) - 1}"


def compare(folders: list[Path], budget: int | None, limit_s: float,
            combo_here: bool = False) -> tuple[list[dict], list[str]]:
    """One record per instance, and the instances whose value differs from combo's (published, or run here
    with ``combo_here``: record key ``here``, its seconds, None when it did not fit 32 bits or finish)."""
    from core.knapsack.io import read_jooken

    records, wrong = [], []
    for folder in folders:
        status, method, value, seconds = run_one(folder, budget, limit_s)
        combo = combo_seconds(folder)
        (instance,) = read_jooken(folder / "test.in")
        optimum = instance.optimum if combo is not None else None
        if status == "ok" and optimum is not None and value != optimum:
            wrong.append(f"{folder.name}: LineSnap {value}, combo {optimum}")
        here = None
        if combo_here and combo_baseline.fits(instance.problem):
            found = combo_baseline.solve(instance.problem, limit_s)
            if found is not None and status == "ok" and found[0] != value:
                wrong.append(f"{folder.name}: LineSnap {value}, combo here {found[0]}")
            here = None if found is None else found[1]
        records.append({"name": folder.name, "group": _group(folder.name), "combo": combo, "status": status,
                        "method": method, "seconds": seconds, "here": here,
                        "here_tried": combo_here and combo_baseline.fits(instance.problem)})
        print(folder.name, combo, here, status, method, value, seconds, flush=True)
    return records, wrong


def _solved(record: dict, limit_s: float) -> bool:
    return record["status"] == "ok" and record["seconds"] <= limit_s


def summary_rows(records: list[dict], limit_s: float) -> list[list]:
    """Per group and over all: combo within the limit, LineSnap within it on those, median time ratio."""
    groups = sorted({r["group"] for r in records}) + ["all"]
    out = []
    for group in groups:
        mine = [r for r in records if group in ("all", r["group"])]
        combo_ok = [r for r in mine if r["combo"] is not None and r["combo"] <= limit_s]
        both = [r for r in combo_ok if _solved(r, limit_s)]
        ratios = [r["seconds"] / max(r["combo"], 1e-3) for r in both]
        beyond = [r for r in mine if r["combo"] is None or r["combo"] > limit_s]
        out.append([group, len(mine), len(combo_ok), len(both),
                    f"{statistics.median(ratios):.2f}" if ratios else "",
                    sum(1 for x in ratios if x <= 1), len(beyond), sum(1 for r in beyond if _solved(r, limit_s))])
    return out


def here_rows(records: list[dict], limit_s: float) -> list[list]:
    """Per group and over all, against combo run here: instances given to it, solved by it within the limit,
    by LineSnap within it on those, the median time ratio and how many LineSnap solved no slower."""
    groups = sorted({r["group"] for r in records if r.get("here_tried")}) + ["all"]
    out = []
    for group in groups:
        tried = [r for r in records if r.get("here_tried") and group in ("all", r["group"])]
        done = [r for r in tried if r["here"] is not None and r["here"] <= limit_s]
        both = [r for r in done if _solved(r, limit_s)]
        ratios = [r["seconds"] / max(r["here"], 1e-3) for r in both]
        out.append([group, len(tried), len(done), len(both), f"{statistics.median(ratios):.2f}" if ratios else "",
                    sum(1 for x in ratios if x <= 1)])
    return out


def exception_rows(records: list[dict], limit_s: float) -> list[list]:
    """The instances LineSnap did not solve within the limit, or solved more slowly than combo."""
    out = []
    for r in records:
        slower = _solved(r, limit_s) and r["combo"] is not None and r["seconds"] > r["combo"]
        if slower or not _solved(r, limit_s):
            mine = f"{r['seconds']:.2f}" if r["status"] == "ok" else f"{r['status']} ({r['method']})"
            out.append([r["name"], "failed" if r["combo"] is None else f"{r['combo']:.2f}", mine])
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="a copy of the repository's problemInstances folder")
    parser.add_argument("--limit", type=float, default=LIMIT_S, help="seconds per solve (default 60)")
    parser.add_argument("--budget", type=int, default=None, help="memory budget in bytes (default: the solver's)")
    parser.add_argument("--names", type=Path, default=None, help="a file of instance names to keep")
    parser.add_argument("--combo-here", action="store_true", help="also run combo on this machine "
                        "(pip install --no-deps digneapy)")
    args = parser.parse_args(argv)
    if args.combo_here and not combo_baseline.available():
        parser.error("--combo-here needs combo: pip install --no-deps digneapy")
    names = None if args.names is None else {line.strip() for line in args.names.read_text().splitlines()
                                             if line.strip()}
    folders = instance_folders(args.root, names)
    if not folders:
        print(f"no NAME/test.in below {args.root}; nothing to run")
        return 0
    warm_up()
    load_before = os.getloadavg()[0]
    records, wrong = compare(folders, args.budget, args.limit, args.combo_here)
    load_after = os.getloadavg()[0]
    if wrong:  # a wrong optimum is a fault: no section written
        print("\n".join(wrong))
        return 1
    budget = "the solver's default budget (half the available memory)" if args.budget is None else \
        f"a memory budget of {args.budget / 2**30:.1f} GiB"
    limit = f"{args.limit:g} s"
    parts = [
        "## KP1 on Jooken et al.'s published instances against combo's published times "
        "(`python -m tests.benchmarks.bench_knapsack_jooken DIR`)",
        machine_description() + f" Load average {load_before:.1f} before, {load_after:.1f} after the run.",
        f"{len(records)} instances of their repository, each solved by `core.knapsack.solve` (CPU) in a child "
        f"process with a {limit} limit and {budget}; every value equals combo's optimum where combo found one. "
        "Combo's times are those the repository publishes (`time.out`, measured on their machine, not this one).",
        markdown_table(["instances", "count", f"combo solved within {limit}", f"LineSnap within {limit} on those",
                        "median time ratio LineSnap / combo", "LineSnap no slower than combo",
                        f"combo failed or past {limit}", f"LineSnap within {limit} on those"],
                       summary_rows(records, args.limit)),
    ]
    if args.combo_here:
        parts += ["Against combo run here (the same machine and limit; instances within its 32-bit interface, "
                  "combo's own timer, the least of up to five calls under 1 s):",
                  markdown_table(["instances", "given to combo", f"combo solved within {limit}",
                                  f"LineSnap within {limit} on those", "median time ratio LineSnap / combo here",
                                  "LineSnap no slower"], here_rows(records, args.limit))]
    exceptions = exception_rows(records, args.limit)
    if exceptions:
        parts += [f"Not solved within {limit}, or slower than combo:",
                  markdown_table(["instance", "combo s", "LineSnap s"], exceptions)]
    publish("knapsack-jooken", parts)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
