"""Knapsack instance files: the benchmark formats of the literature and LineSnap's JSON.

Readers (each returns a list of :class:`KnapsackInstance`):

- Pisinger's large-scale ``knapPI_*`` files (KP1): ``n``, ``c``, then ``p w``
  per item, then (optionally) the optimal 0/1 vector; the ``.opt`` file beside
  one holds its optimum.
- Files of ``n c`` on the first line, then ``p w`` per item (KP1; the layout of
  many published small instances, e.g. the low-dimensional set's
  ``f1_l-d_kp_10_269``), named after the file.
- Jooken, Leyman and De Causmaecker's ``test.in`` files (KP1): ``n``, then
  ``id p w`` per item, then ``c``; named after their folder, with the optimum
  of an ``outp.out`` beside them (its first line, when combo solved it).
- Pisinger's ``*.csv`` files (KP1), blocks of ``name``, ``n N``, ``c C``,
  ``z OPT``, ``time T``, ``i,p,w,x`` per item and ``-----`` (the first block's
  name lacks its leading "k"; it is restored).
- 2DPackLib ``.ins2D`` files (KP2 as Lemos et al. use the MSB set): ``m``,
  ``W H``, then ``id w h demand b p`` per item type; one object per unit of
  demand with weights ``(h, w)``, capacities ``(H, W)`` and profit ``w * h``.
- 2DPackLib class-A lines (``class_a.txt``; KP2): ``name;n;W;H;w,h[,demand];...``
  with one object per item type, weights ``(w, h)``, capacities ``(W, H)``,
  profit ``w * h``.
- LineSnap's JSON (every problem), which :func:`write_json` writes.

Malformed files raise :class:`KnapsackFormatError` naming the file and line.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from core.io.geojson import atomic_write_text
from core.io.jsonfile import load_json
from core.knapsack.problems import KP1, KP2, MCKP, SubsetSum, exact_int, problem_kind, used_capacity
from core.knapsack.textfile import KnapsackFormatError, KnapsackInstance, NumberedLines, build_problem

__all__ = [
    "FORMAT_NAME",
    "KnapsackFormatError",
    "KnapsackInstance",
    "instance_files",
    "instance_from_dict",
    "instance_to_dict",
    "read_class_a",
    "read_header_pairs",
    "read_ins2d",
    "read_instances",
    "read_jooken",
    "read_json",
    "read_pisinger",
    "read_pisinger_csv",
    "solution_to_dict",
    "write_json",
]

FORMAT_NAME = "linesnap-knapsack"
FORMAT_VERSION = 1


def read_pisinger(path) -> list[KnapsackInstance]:
    """A large-scale ``knapPI_*`` file (one KP1), with the optimum of its ``.opt`` file if present."""
    path = Path(path)
    lines = NumberedLines(path)
    (n,) = lines.ints(1, 1)
    _check_count(lines, n)
    (capacity,) = lines.ints(2, 1)
    items = np.array([lines.ints(3 + k, 2) for k in range(n)], dtype=np.int64).reshape(n, 2)
    lines.check_in_range(2, [capacity], "the capacity")
    lines.check_in_range(range(3, 3 + n), items, "an item's profit and weight")
    problem = build_problem(lines, 1, lambda: KP1(items[:, 0], items[:, 1], capacity))
    choice, last = None, 2 + n
    if len(lines.lines) > 2 + n and lines.lines[2 + n].strip():
        vector = np.array(lines.ints(3 + n, n), dtype=np.int64)
        if np.any((vector != 0) & (vector != 1)):
            raise lines.error(3 + n, "the solution vector must hold 0 or 1 per item")
        choice, last = np.flatnonzero(vector), 3 + n
    lines.check_nothing_after(last, f"the file says {n} item{'' if n == 1 else 's'} (then its solution vector)")
    optimum = None
    opt_path = path.with_name(path.name + ".opt")
    if opt_path.exists():
        (optimum,) = NumberedLines(opt_path).ints(1, 1)
    return [KnapsackInstance(path.name, problem, optimum, choice)]


def read_header_pairs(path) -> list[KnapsackInstance]:
    """A file of ``n c`` on its first line, then ``p w`` per item (one KP1); nothing but blank lines after."""
    path = Path(path)
    lines = NumberedLines(path)
    n, capacity = lines.ints(1, 2)
    _check_count(lines, n)
    items = np.array([lines.ints(2 + k, 2) for k in range(n)], dtype=np.int64).reshape(n, 2)
    lines.check_nothing_after(1 + n, f"the first line says {n} item{'' if n == 1 else 's'} ('n c')")
    lines.check_in_range(1, [capacity], "the capacity")
    lines.check_in_range(range(2, 2 + n), items, "an item's profit and weight")
    return [KnapsackInstance(path.stem, build_problem(lines, 1, lambda: KP1(items[:, 0], items[:, 1], capacity)))]


def _check_count(lines: NumberedLines, n: int, line: int = 1) -> None:
    """An item count (a file's first line, or ``line``) must be at least 1."""
    if n < 1:
        raise lines.error(line, f"the item count must be at least 1; got {n}")


def read_jooken(path) -> list[KnapsackInstance]:
    """A Jooken-style file (one KP1): ``n``, ``id p w`` per item, ``c``."""
    path = Path(path)
    lines = NumberedLines(path)
    (n,) = lines.ints(1, 1)
    _check_count(lines, n)
    items = np.array([lines.ints(2 + k, 3) for k in range(n)], dtype=np.int64).reshape(n, 3)
    (capacity,) = lines.ints(2 + n, 1)
    lines.check_nothing_after(2 + n, f"the first line says {n} item{'' if n == 1 else 's'}, then the capacity")
    lines.check_in_range(range(2, 2 + n), items[:, 1:], "an item's profit and weight")
    lines.check_in_range(2 + n, [capacity], "the capacity")
    problem = build_problem(lines, 1, lambda: KP1(items[:, 1], items[:, 2], capacity))
    name = path.parent.name if path.name == "test.in" and path.parent.name else path.stem
    return [KnapsackInstance(name, problem, _combo_optimum(path.with_name("outp.out")))]


def _combo_optimum(path: Path) -> int | None:
    """The first line of combo's ``outp.out`` when it is a value (the file holds an error message otherwise)."""
    first = path.read_text(errors="replace").split("\n", 1)[0].strip() if path.is_file() else ""
    return int(first) if first.isdigit() else None


def read_pisinger_csv(path) -> list[KnapsackInstance]:
    """A Pisinger ``*.csv`` file: one KP1 per block, with its optimum ``z``."""
    lines = NumberedLines(Path(path))
    out, number = [], 1
    while number <= len(lines.lines):
        if not lines.lines[number - 1].strip():
            number += 1
            continue
        instance, number = _csv_block(lines, number)
        out.append(instance)
    if not out:
        raise lines.error(1, "no instance blocks")
    return out


def _csv_block(lines: NumberedLines, start: int):
    name = lines.lines[start - 1].strip()
    if name.startswith("napPI"):  # the files' first block lost its "k"
        name = "k" + name
    shown = name if len(name) <= 60 else name[:59] + "…"  # (a file of another format quoted itself whole)
    header = {}
    for offset, key in enumerate(("n", "c", "z", "time"), start=1):
        fields = lines.lines[start + offset - 1].split() if start + offset <= len(lines.lines) else []
        if len(fields) != 2 or fields[0] != key:
            raise lines.error(start + offset, f"expected '{key} <value>' in block {shown!r}")
        header[key] = fields[1]
    try:
        n, capacity, optimum = int(header["n"]), int(header["c"]), int(header["z"])
    except ValueError:
        raise lines.error(start + 1, f"n, c and z must be integers in block {shown!r}") from None
    _check_count(lines, n, start + 1)
    first = start + 5
    rows = np.array([lines.ints(first + k, 4, sep=",") for k in range(n)], dtype=np.int64).reshape(n, 4)
    end = first + n
    if end > len(lines.lines) or lines.lines[end - 1].strip() != "-----":
        raise lines.error(end, f"expected '-----' after the {n} items of block {name!r}")
    lines.check_in_range(start + 2, [capacity], "the capacity")
    lines.check_in_range(range(first, end), rows[:, 1:3], "an item's profit and weight")
    if np.any((rows[:, 3] != 0) & (rows[:, 3] != 1)):  # the solution's 0/1 (a 7 was read as chosen)
        raise lines.error(first + int(np.argmax((rows[:, 3] != 0) & (rows[:, 3] != 1))), "x must be 0 or 1")
    problem = build_problem(lines, start, lambda: KP1(rows[:, 1], rows[:, 2], capacity))
    return KnapsackInstance(name, problem, optimum, np.flatnonzero(rows[:, 3])), end + 1


def read_ins2d(path) -> list[KnapsackInstance]:
    """A 2DPackLib ``.ins2D`` file as a KP2 (capacities H, W; weights h, w; profit w * h)."""
    path = Path(path)
    lines = NumberedLines(path)
    (m,) = lines.ints(1, 1)
    _check_count(lines, m)
    width, height = lines.ints(2, 2)
    rows = np.array([lines.ints(3 + k, 6) for k in range(m)], dtype=np.int64).reshape(m, 6)
    lines.check_nothing_after(2 + m, f"the first line says {m} item{'' if m == 1 else 's'}")
    demand = rows[:, 3]
    if np.any(demand < 1):
        raise lines.error(3 + int(np.argmax(demand < 1)), "demand must be at least 1")
    if int(demand.sum(dtype=object)) > MAX_EXPANDED_ITEMS:
        raise lines.error(3, f"the demands add up to {int(demand.sum(dtype=object)):,} items; "
                             f"at most {MAX_EXPANDED_ITEMS:,} are supported")
    lines.check_in_range(2, [width, height], "the bin's width and height")
    lines.check_in_range(range(3, 3 + m), rows[:, 1:3], "an item's width and height")
    areas = _areas(lines, rows[:, 1], rows[:, 2], range(3, 3 + m))
    w, h, areas = (np.repeat(column, demand) for column in (rows[:, 1], rows[:, 2], areas))
    problem = build_problem(lines, 1, lambda: KP2(areas, h, w, height, width))
    return [KnapsackInstance(path.stem, problem, None)]


#: Items an ``.ins2D`` file's demands may expand to (a KP2 that large cannot be solved anyway).
MAX_EXPANDED_ITEMS = 1_000_000
#: Profits w * h of 2DPackLib items must stay below this (the solvers' int64 sums).
MAX_AREA = 2**62


def _areas(lines: NumberedLines, w, h, item_lines) -> np.ndarray:
    """The profits ``w * h`` (int64), checked in exact integers: int64 products wrap silently.

    ``item_lines`` gives each item's line number, for the error.
    """
    areas = [int(a) * int(b) for a, b in zip(w, h)]
    for k, (area, number) in enumerate(zip(areas, item_lines)):
        if not -MAX_AREA < area < MAX_AREA:
            raise lines.error(number, f"the profit w * h = {area} of item {k} is too large (at least 2**62)")
    return np.array(areas, dtype=np.int64)


def read_class_a(path) -> list[KnapsackInstance]:
    """2DPackLib class-A lines as KP2 instances (one object per item type)."""
    lines = NumberedLines(Path(path))
    out = []
    for number, line in enumerate(lines.lines, start=1):
        if line.strip():
            out.append(_class_a_line(lines, number, line.strip()))
    if not out:
        raise lines.error(1, "no instances")
    return out


def _class_a_line(lines: NumberedLines, number: int, line: str) -> KnapsackInstance:
    fields = line.split(";")
    if len(fields) < 5:
        raise lines.error(number, "expected 'name;n;W;H;w,h[,demand];...'")
    try:
        n, width, height = int(fields[1]), int(fields[2]), int(fields[3])
        types = [[int(v) for v in item.split(",")] for item in fields[4:]]
    except ValueError:
        raise lines.error(number, "expected integers after the name") from None
    if len(types) != n or any(len(t) not in (2, 3) for t in types):
        raise lines.error(number, f"expected {n} item types 'w,h' or 'w,h,demand'")
    lines.check_int64(number, (width, height, *(v for t in types for v in t)))
    if any(len(t) == 3 and t[2] < 1 for t in types):  # (one object per type is read; a demand still counts 1+)
        raise lines.error(number, "demand must be at least 1")
    w = np.array([t[0] for t in types], np.int64)
    h = np.array([t[1] for t in types], np.int64)
    lines.check_in_range(number, [width, height, *w, *h], "widths and heights")
    areas = _areas(lines, w, h, [number] * len(w))
    problem = build_problem(lines, number, lambda: KP2(areas, w, h, width, height))
    return KnapsackInstance(fields[0], problem, None)


def instance_to_dict(instance) -> dict:
    """LineSnap's JSON object of a :class:`KnapsackInstance` (or a bare problem)."""
    if not isinstance(instance, KnapsackInstance):
        instance = KnapsackInstance("", instance, None)
    problem, kind = instance.problem, problem_kind(instance.problem)
    out = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "problem": kind, "name": instance.name}
    if kind == "kp1":
        out.update(profits=problem.profits.tolist(), weights=problem.weights.tolist(), capacity=problem.capacity)
    elif kind == "kp2":
        out.update(
            profits=problem.profits.tolist(),
            weights1=problem.weights1.tolist(),
            weights2=problem.weights2.tolist(),
            capacity1=problem.capacity1,
            capacity2=problem.capacity2,
        )
    elif kind == "subset-sum":
        out.update(weights=problem.weights.tolist(), capacity=problem.capacity)
    else:
        out.update(
            classes=[{"profits": p.tolist(), "weights": w.tolist()} for p, w in problem.classes],
            capacity=problem.capacity,
        )
    if instance.optimum is not None:
        out["optimum"] = int(instance.optimum)
    return out


_FIELDS = {
    "kp1": (KP1, ("profits", "weights", "capacity")),
    "kp2": (KP2, ("profits", "weights1", "weights2", "capacity1", "capacity2")),
    "subset-sum": (SubsetSum, ("weights", "capacity")),
    "mckp": (MCKP, ("classes", "capacity")),
}


def instance_from_dict(data: dict, where: str = "JSON") -> KnapsackInstance:
    """The :class:`KnapsackInstance` of one JSON object; KnapsackFormatError when malformed."""
    if not isinstance(data, dict):
        raise KnapsackFormatError(f"{where}: expected a JSON object, got {type(data).__name__}")
    kind = data.get("problem")
    if kind is None:
        raise KnapsackFormatError(f"{where}: not a knapsack instance: it has no 'problem' field "
                                  f"(one of {', '.join(_FIELDS)})")
    if not isinstance(kind, str) or kind not in _FIELDS:
        raise KnapsackFormatError(f"{where}: 'problem' must be one of {', '.join(_FIELDS)}; got {kind!r}")
    cls, fields = _FIELDS[kind]
    missing = [f for f in fields if f not in data]
    if missing:
        raise KnapsackFormatError(f"{where}: a {kind} needs the fields {', '.join(missing)}")
    values = {f: data[f] for f in fields}
    if kind == "mckp":
        try:
            values["classes"] = [(c["profits"], c["weights"]) for c in data["classes"]]
        except (TypeError, KeyError):
            raise KnapsackFormatError(f"{where}: 'classes' must be a list of {{profits, weights}} objects") from None
    try:
        problem = cls(**values)
    except (TypeError, ValueError) as exc:
        raise KnapsackFormatError(f"{where}: {exc}") from None
    optimum = data.get("optimum")
    if optimum is not None:
        try:
            optimum = exact_int(optimum, "'optimum'")
        except (TypeError, ValueError) as exc:
            raise KnapsackFormatError(f"{where}: {exc}") from None
    name = data.get("name")
    return KnapsackInstance("" if name is None else str(name), problem, optimum)


def read_json(path) -> list[KnapsackInstance]:
    """LineSnap's JSON: one instance object, or ``{"instances": [...]}``."""
    path = Path(path)
    data = load_json(path, KnapsackFormatError)
    if isinstance(data, dict) and "instances" in data:
        items = data["instances"]
        if not isinstance(items, list) or not items:
            raise KnapsackFormatError(f"{path}: 'instances' must be a non-empty list")
        out = [instance_from_dict(item, f"{path}: instance {k}") for k, item in enumerate(items)]
    else:
        out = [instance_from_dict(data, str(path))]
    return [i if i.name else KnapsackInstance(f"{path.stem}-{k}" if len(out) > 1 else path.stem, i.problem, i.optimum)
            for k, i in enumerate(out)]


def write_json(path, instances) -> None:
    """Write one instance (or problem), or a list of them, as LineSnap's JSON (atomically)."""
    path = Path(path)
    if isinstance(instances, (list, tuple)):
        data = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "instances": [instance_to_dict(i) for i in instances]}
    else:
        data = instance_to_dict(instances)
    atomic_write_text(path, json.dumps(data) + "\n")


def solution_to_dict(solution, instance: KnapsackInstance | None = None) -> dict:
    """A JSON-ready description of a :class:`KnapsackSolution` (and of its instance)."""
    out = {
        "value": int(solution.value),
        "selected": [int(i) for i in solution.selected],
        "backend": solution.backend,
        "method": solution.method,
        "time_ms": round(float(solution.time_ms), 3),
    }
    if instance is not None:
        out = {"name": instance.name, "problem": problem_kind(instance.problem), **out}
        used, capacity = used_capacity(instance.problem, solution.selected)
        out["weight_used"], out["capacity"] = (list(used), list(capacity)) if len(used) > 1 else (used[0], capacity[0])
        if instance.optimum is not None:
            out["known_optimum"] = int(instance.optimum)
    return out


def instance_files(paths) -> list[str]:
    """``paths`` without the ``X.opt`` files whose instance ``X`` is among them (its known optimum, read with
    it: a whole folder of Pisinger's files selected at once holds both)."""
    paths = [str(p) for p in paths]
    given = set(paths)
    return [p for p in paths if not (p.endswith(".opt") and p[:-len(".opt")] in given)]


def read_instances(path) -> list[KnapsackInstance]:
    """Every instance of a file, its format told by the extension or else the content.

    Raises KnapsackFormatError for a missing, unreadable or malformed file, or one
    of no known format.
    """
    path = Path(path)
    if path.is_dir():
        raise KnapsackFormatError(f"{path} is a folder: give the instance files in it")
    if not path.is_file():
        raise KnapsackFormatError(f"{path}: no such file")
    suffix = path.suffix.lower()
    readers = {".json": read_json, ".ins2d": read_ins2d, ".csv": read_pisinger_csv}
    if suffix in readers:
        return readers[suffix](path)
    first = next((line.strip() for line in NumberedLines(path).lines if line.strip()), "")
    if not first:
        raise KnapsackFormatError(f"{path}: the file is empty")
    if first.startswith("{"):
        return read_json(path)
    if ";" in first:
        return read_class_a(path)
    if first.isdigit():
        second = next((line.split() for line in NumberedLines(path).lines[1:] if line.strip()), [])
        return read_jooken(path) if len(second) == 3 else read_pisinger(path)
    if len(first.split()) == 2 and all(field.lstrip("-").isdigit() for field in first.split()):
        return read_header_pairs(path)
    raise KnapsackFormatError(f"{path}: unknown instance format (expected knapPI, 'n c' then 'p w' lines, Jooken, "
                              ".csv, .ins2D, class-A lines or JSON)")
