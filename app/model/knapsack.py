"""What the knapsack panel shows, without Qt: loading, generating, comparing, exporting."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass

import numpy as np

from core.io.geojson import atomic_write_text
from core.knapsack import generators
from core.knapsack.io import KnapsackInstance, instance_files, read_instances, solution_to_dict
from core.knapsack.problems import SubsetSum, problem_kind

__all__ = [
    "CORE_KIND",
    "GENERATORS",
    "HARD_KINDS",
    "PROBLEMS",
    "InstanceOutcome",
    "LoadedInstances",
    "compare",
    "export_csv",
    "export_json",
    "generate_instance",
    "instance_table",
    "item_columns",
    "item_rows",
    "load_instance_files",
    "loaded_summary",
    "result_summary",
]

#: The panel's problem choices: key -> label.  "kp2-batch" solves all KP2 instances as one batch.
PROBLEMS = {
    "kp1": "KP1: 0-1 knapsack",
    "kp2": "KP2: two capacities, one instance at a time",
    "kp2-batch": "Batched KP2, (KP2)^k: all instances at once",
    "subset-sum": "Subset sum",
    "mckp": "MCKP: one item from every class",
}
#: The core problem kind (core.knapsack.problems.PROBLEM_KINDS) of each choice.
CORE_KIND = {"kp1": "kp1", "kp2": "kp2", "kp2-batch": "kp2", "subset-sum": "subset-sum", "mckp": "mckp"}


#: The generators of each choice: (family, instance types).
#: The panel's names of Pisinger's hard classes 11-16 (core.knapsack.generators.pisinger_hard).
HARD_KINDS = {f"hard {k}: {name}": k for k, name in generators.PISINGER_HARD_CLASSES.items()}
GENERATORS = {
    "kp1": ("Pisinger", generators.PISINGER_KINDS + tuple(HARD_KINDS)),
    "subset-sum": ("Curtis", generators.CURTIS_KINDS),
    "mckp": ("Suri et al.", tuple(f"set {k}" for k in generators.SURI_SETS)),
}


#: problem -> (family, instance types) of the generators of core.knapsack.generators (none for KP2).


@dataclass(frozen=True, eq=False)
class LoadedInstances:
    """Instances read from files, with the problem the panel should switch to.

    Attributes
    ----------
    problem : str
        A key of :data:`PROBLEMS`.
    instances : tuple of KnapsackInstance
    sources : tuple of str
        The file of each instance.
    note : str
        What was changed to fit the files ("" when nothing).
    """

    problem: str
    instances: tuple
    sources: tuple
    note: str = ""


def load_instance_files(paths, problem: str) -> LoadedInstances:
    """Read every instance of ``paths`` and choose the problem they fit.

    KP1 files read while subset sum is chosen become subset sums of their
    weights; otherwise files of another kind switch the problem.  Raises
    ValueError for no paths, an unknown problem, mixed kinds, or
    KnapsackFormatError for a bad file.
    """
    if problem not in PROBLEMS:
        raise ValueError(f"problem must be one of {', '.join(PROBLEMS)}; got {problem!r}")
    paths = instance_files(paths)  # (a Pisinger folder's .opt files are its instances' optima)
    if not paths:
        raise ValueError("choose at least one instance file")
    pairs = [(inst, path) for path in paths for inst in read_instances(path)]
    kinds = sorted({problem_kind(inst.problem) for inst, _ in pairs})
    if len(kinds) > 1:
        raise ValueError(f"the files hold {' and '.join(kinds)} instances; load one problem type at a time")
    instances, sources = [inst for inst, _ in pairs], [path for _, path in pairs]
    kind, note = kinds[0], ""
    if kind == "kp1" and problem == "subset-sum":
        instances = [KnapsackInstance(i.name, SubsetSum(i.problem.weights, i.problem.capacity)) for i in instances]
        note = "KP1 instances read as the subset sum of their weights"
    elif kind != CORE_KIND[problem]:
        problem = "kp2-batch" if kind == "kp2" and len(instances) > 1 else kind
        note = f"the files hold {kind} instances: switched to {PROBLEMS[problem]}"
    return LoadedInstances(problem, tuple(instances), tuple(sources), note)


def generate_instance(problem: str, kind: str, size: int, seed: int, coefficient_range: int = 1000,
                      capacity_instance: int = 1) -> KnapsackInstance:
    """One generated instance (core.knapsack.generators), named after its parameters.

    ``kind`` is a type of :data:`GENERATORS` ``[problem]`` (KP1: Pisinger's classes 1-6 and his hard classes
    11-16, :data:`HARD_KINDS`); ``size`` the items
    (per class for MCKP; 0 draws 10..1024); ``coefficient_range`` and
    ``capacity_instance`` are Pisinger's ``R`` and ``v``.
    """
    if problem not in GENERATORS:
        raise ValueError(f"no generator for {PROBLEMS.get(problem, problem)!r}: load its instances from files")
    if kind not in GENERATORS[problem][1]:
        raise ValueError(f"kind must be one of {', '.join(GENERATORS[problem][1])}; got {kind!r}")
    if problem == "kp1" and kind in HARD_KINDS:
        klass = HARD_KINDS[kind]
        made = generators.pisinger_hard(klass, size, coefficient_range, capacity_instance, 100, seed)
        name = f"pisinger-hard{klass}-n{size}-R{coefficient_range}-v{capacity_instance}-s{seed}"
    elif problem == "kp1":
        made = generators.pisinger(kind, size, coefficient_range, capacity_instance, 100, seed)
        name = f"pisinger-{kind}-n{size}-R{coefficient_range}-v{capacity_instance}-s{seed}"
    elif problem == "subset-sum":
        made, name = generators.curtis(kind, size, seed), f"curtis-{kind}-n{size}-s{seed}"
    else:
        set_number = int(kind.split()[-1])
        made = generators.suri(set_number, seed, size or None)
        name = f"suri-set{set_number}-{size or 'mixed'}-s{seed}"
    return KnapsackInstance(name, made)


# ------------------------------------------------------------------ describing
def items_text(problem) -> str:
    """Size of a problem: its item count, or classes and items for an MCKP."""
    if problem_kind(problem) == "mckp":
        return f"{problem.n_classes} classes, {_item_count(problem)}"
    return str(problem.n_items)


def capacity_text(problem) -> str:
    if problem_kind(problem) == "kp2":
        return f"{problem.capacity1} × {problem.capacity2}"
    return str(problem.capacity)


def loaded_summary(problem: str, instances) -> str:
    """One line on the loaded instances (their count, size, capacity, known optima)."""
    if not instances:
        return "No instances loaded: load files or generate one."
    if len(instances) == 1:
        inst = instances[0]
        known = "no known optimum" if inst.optimum is None else f"known optimum {inst.optimum}"
        return (f"{inst.name}: {PROBLEMS[problem]}, {items_text(inst.problem)} items, "
                f"capacity {capacity_text(inst.problem)}, {known}")
    sizes = [_item_count(i.problem) for i in instances]
    size = f"{min(sizes)} items each" if min(sizes) == max(sizes) else f"{min(sizes)} to {max(sizes)} items"
    known = sum(i.optimum is not None for i in instances)
    return f"{len(instances)} instances: {PROBLEMS[problem]}, {size}, known optimum for {known} of them"


def _item_count(problem) -> int:
    if problem_kind(problem) == "mckp":
        return sum(len(p) for p, _ in problem.classes)
    return problem.n_items


@dataclass(frozen=True)
class InstanceOutcome:
    """One instance's results across backends.

    Attributes
    ----------
    values, times_ms, methods : dict of backend to int / float / str
    matches_known : bool or None
        Whether every backend's optimum equals the known one (None: none known).
    backends_agree : bool or None
        Whether all backends found the same optimum (None: one backend).
    """

    values: dict
    times_ms: dict
    methods: dict
    matches_known: bool | None
    backends_agree: bool | None


def compare(instances, result) -> list[InstanceOutcome]:
    """The :class:`InstanceOutcome` of each instance of a :class:`app.knapsack.jobs.JobResult`."""
    out = []
    for k, inst in enumerate(instances):
        sols = {backend: result.solutions[backend][k] for backend in result.backends}
        values = {b: s.value for b, s in sols.items()}
        known = None if inst.optimum is None else all(v == inst.optimum for v in values.values())
        agree = None if len(values) < 2 else len(set(values.values())) == 1
        out.append(InstanceOutcome(values, {b: s.time_ms for b, s in sols.items()},
                                   {b: s.method for b, s in sols.items()}, known, agree))
    return out


def _verdict(flag: bool | None) -> str:
    return "–" if flag is None else ("yes" if flag else "NO")


def instance_table(instances, result=None) -> tuple[list[str], list[list[str]]]:
    """Headers and rows of the instances table: summary columns, then one pair per backend."""
    headers = ["Instance", "Items", "Capacity", "Known optimum"]
    rows = [[i.name, items_text(i.problem), capacity_text(i.problem), "–" if i.optimum is None else str(i.optimum)]
            for i in instances]
    if result is None:
        return headers, rows
    for backend in result.backends:
        headers += [f"Optimum ({backend.upper()})", f"Time ms ({backend.upper()})"]
    headers.append("Matches known")
    if len(result.backends) > 1:
        headers.append("Backends agree")
    for row, outcome in zip(rows, compare(instances, result)):
        for backend in result.backends:
            time_text = "batch" if result.batch else f"{outcome.times_ms[backend]:.1f}"
            row += [str(outcome.values[backend]), time_text]
        row.append(_verdict(outcome.matches_known))
        if len(result.backends) > 1:
            row.append(_verdict(outcome.backends_agree))
    return headers, rows


def result_summary(instances, result) -> str:
    """A few words on a result: optimum or counts, solve and job times, and the checks.

    Its times are the solver calls' own, those of the results table (each solution's ``time_ms``); the
    job's wall time, which also holds the warm-up (loading or compiling the solvers on first use), the checks
    around each solver call and the messages to the window, follows under its own label.

    Parameters
    ----------
    instances : sequence of core.knapsack.io.KnapsackInstance
        The job's instances, in its order.
    result : app.knapsack.jobs.JobResult

    Returns
    -------
    str
        E.g. ``"Optimum 146919 (CPU solve 12.3 ms, method states; job 18.0 ms); matches the file's
        known optimum."``
    """
    outcomes = compare(instances, result)
    times, job = _solve_times_text(result, len(instances)), _job_time_text(result)
    job = f"; {job}" if job else ""
    if len(instances) == 1:
        first = result.solutions[result.backends[0]][0]
        text = f"Optimum {first.value} ({times}, method {first.method}{job})"
    else:
        together = " as one batch" if result.batch else ""
        text = f"{len(instances)} instances solved{together} ({times}{job})"
    known = [o.matches_known for o in outcomes if o.matches_known is not None]
    if len(instances) == 1 and known:
        text += ("; matches the file's known optimum" if known[0]
                 else f"; DIFFERS from the known optimum {instances[0].optimum}")
    elif known:
        text += f"; {sum(known)} of {len(known)} known optima matched"
    if len(result.backends) > 1:
        differ = sum(not o.backends_agree for o in outcomes)
        text += "; the backends agree" if not differ else f"; the backends DISAGREE on {differ} instance(s)"
    return text + "."


def _solve_times_text(result, n_instances: int) -> str:
    """Each backend's solve time as the table shows it (the sum over its rows, or the batch's time).

    Parameters
    ----------
    result : app.knapsack.jobs.JobResult
    n_instances : int
        How many instances the job solved.

    Returns
    -------
    str
        ``"CPU solve 537.2 ms"`` for one instance, ``"CPU solves 812.5 ms in all"`` for several,
        ``"CPU batch 61.3 ms"`` for a batch; backends joined by ", ".
    """
    if result.batch:
        what, after = "batch", ""
    else:
        what, after = ("solve", "") if n_instances == 1 else ("solves", " in all")
    return ", ".join(f"{b.upper()} {what} {result.solve_ms(b):.1f} ms{after}" for b in result.backends)


def _job_time_text(result) -> str:
    """The job's wall time in the worker, labelled as such: ``"job 1342.0 ms including 790.4 ms preparing the
    solvers"`` (the warm-up named only where one ran), or "" where the result does not know it."""
    if result.job_ms is None:
        return ""
    text = f"job {result.job_ms:.1f} ms"
    if result.warm_up_ms > 0:
        text += f" including {result.warm_up_ms:.1f} ms preparing the solvers"
    return text


# ------------------------------------------------------------------ items and export
def item_columns(kind: str) -> tuple[str, ...]:
    """Headers of the chosen-items table of a problem kind."""
    return {"kp1": ("Item", "Profit", "Weight"), "kp2": ("Item", "Profit", "Weight 1", "Weight 2"),
            "subset-sum": ("Item", "Weight"), "mckp": ("Class", "Item", "Profit", "Weight")}[kind]


def item_rows(problem, selected) -> np.ndarray:
    """The chosen items, one row each with the columns of :func:`item_columns`: (k, columns) int64."""
    kind, selected = problem_kind(problem), np.asarray(selected, np.int64)
    if kind == "mckp":
        classes = np.arange(len(selected))
        profits = [int(p[j]) for (p, _), j in zip(problem.classes, selected)]
        weights = [int(w[j]) for (_, w), j in zip(problem.classes, selected)]
        return np.column_stack([classes, selected, profits, weights]).astype(np.int64).reshape(-1, 4)
    if kind == "subset-sum":
        columns = [selected, problem.weights[selected]]
    elif kind == "kp1":
        columns = [selected, problem.profits[selected], problem.weights[selected]]
    else:
        columns = [selected, problem.profits[selected], problem.weights1[selected], problem.weights2[selected]]
    return np.column_stack(columns).astype(np.int64).reshape(-1, len(columns))


def solutions_document(instances, result) -> dict:
    """The JSON export: every instance's solution on every backend (core's solution_to_dict)."""
    outcomes = compare(instances, result)
    records = []
    for k, (inst, outcome) in enumerate(zip(instances, outcomes)):
        for backend in result.backends:
            record = solution_to_dict(result.solutions[backend][k], inst)
            record["matches_known"] = outcome.matches_known
            records.append(record)
    return {"format": "linesnap-knapsack-solutions", "version": 1, "batch": result.batch,
            "wall_time_ms": {b: round(t, 3) for b, t in result.wall_ms.items()}, "solutions": records}


def export_json(path, instances, result) -> None:
    """Write :func:`solutions_document` to ``path`` atomically."""
    atomic_write_text(path, json.dumps(solutions_document(instances, result), indent=1) + "\n")


CSV_COLUMNS = ("instance", "problem", "backend", "method", "optimum", "known_optimum", "time_ms",
               "class", "item", "profit", "weight", "weight2")


def export_csv(path, instances, result) -> None:
    """Write the chosen items as CSV (columns :data:`CSV_COLUMNS`, one row per chosen item) atomically.

    A solution that chose nothing still gets one row, with empty item columns.
    """
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for k, inst in enumerate(instances):
        kind = problem_kind(inst.problem)
        for backend in result.backends:
            sol = result.solutions[backend][k]
            head = [inst.name, kind, backend, sol.method, sol.value,
                    "" if inst.optimum is None else inst.optimum, f"{sol.time_ms:.3f}"]
            items = [_csv_item(kind, row) for row in item_rows(inst.problem, sol.selected)] or [[""] * 5]
            writer.writerows(head + item for item in items)
    atomic_write_text(path, stream.getvalue())


def _csv_item(kind: str, row) -> list:
    """An item row of :func:`item_rows` as the class, item, profit, weight, weight2 columns."""
    row = [int(v) for v in row]
    if kind == "mckp":
        return row + [""]
    if kind == "subset-sum":
        return ["", row[0], row[1], row[1], ""]  # a subset sum's profit is its weight
    if kind == "kp1":
        return ["", *row, ""]
    return ["", *row]
