"""``linesnap knapsack``: solve, batch-solve and generate knapsack instances from the shell.

    linesnap knapsack solve FILE [--problem kp1|kp2|subset-sum|mckp] [--backend auto|cpu|gpu]
                            [--memory-budget BYTES] [--time-limit SECONDS|none] [--json]
    linesnap knapsack batch FILES... [--backend ...] [--time-limit SECONDS|none] [--json]
    linesnap knapsack generate {pisinger,pisinger-hard,jooken,curtis,suri} ... -o FILE

Errors print one line on stderr and exit with status 1 (2 for bad arguments).
``--time-limit`` defaults to :data:`DEFAULT_TIME_LIMIT_S` so that a shell is never
left waiting long without an answer; past it the solve stops with one line
saying how far it got.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

from core.cli.pipes import stdout_closed
from core.engine import BACKENDS

__all__ = ["main"]

CONVERSIONS = {("kp1", "subset-sum")}  # a KP1 file read as the subset sum of its weights
#: Seconds a solve (or a batch) may take by default on the command line.
DEFAULT_TIME_LIMIT_S = 60.0


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not argparse's usage block
        raise _UsageError(message)


def _budget_bytes(text: str) -> int:
    """``--memory-budget``: a positive integer number of bytes (argparse names the flag in its error)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 0 < value < 2**63:  # (past it, numpy's "int too big to convert")
        raise argparse.ArgumentTypeError(f"expected a positive number of bytes below 2^63; got {text!r}")
    return value


def _time_limit(text: str) -> float | None:
    """``--time-limit``: a positive number of seconds, or ``none`` for no limit."""
    if text.strip().lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds or 'none'; got {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="linesnap knapsack", description="Exact knapsack-family solvers (CPU and GPU).")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    solve = sub.add_parser("solve", help="solve every instance of one file")
    solve.add_argument("file")
    solve.add_argument("--problem", choices=["kp1", "kp2", "subset-sum", "mckp"], help="default: from the file")
    solve.add_argument("--backend", choices=BACKENDS, default="auto")
    solve.add_argument("--memory-budget", type=_budget_bytes, metavar="BYTES",
                       help="default: half the available memory")
    solve.add_argument("--json", action="store_true", help="print one JSON object")
    batch = sub.add_parser("batch", help="solve the instances of several files together (KP2 as one batch)")
    batch.add_argument("files", nargs="+")
    batch.add_argument("--backend", choices=BACKENDS, default="auto")
    batch.add_argument("--memory-budget", type=_budget_bytes, metavar="BYTES")
    batch.add_argument("--json", action="store_true")
    for command in (solve, batch):
        command.add_argument("--time-limit", type=_time_limit, default=DEFAULT_TIME_LIMIT_S, metavar="SECONDS",
                            help=f"stop a solve past this many seconds ('none': no limit; default "
                                 f"{DEFAULT_TIME_LIMIT_S:g}, for all instances of the file(s) together)")
    _add_generate(sub)
    return parser


def _add_generate(sub) -> None:
    from core.knapsack.generators import CURTIS_KINDS, PISINGER_HARD_CLASSES, PISINGER_KINDS, SURI_SETS

    gen = sub.add_parser("generate", help="write a generated instance as LineSnap JSON")
    family = gen.add_subparsers(dest="family", required=True, parser_class=_Parser)
    pis = family.add_parser("pisinger", help="Pisinger's KP1 classes")
    pis.add_argument("--type", choices=PISINGER_KINDS, default="strongly")
    hard = family.add_parser("pisinger-hard", help="Pisinger's hard KP1 classes 11-16")
    hard.add_argument("--class", dest="klass", type=int, choices=sorted(PISINGER_HARD_CLASSES), default=13)
    jook = family.add_parser("jooken", help="Jooken, Leyman and De Causmaecker's hard KP1 instances")
    jook.add_argument("--capacity", type=int, default=10**8)
    jook.add_argument("--groups", type=int, default=10)
    jook.add_argument("--last-fraction", type=float, default=0.1, help="share of small items")
    jook.add_argument("--epsilon", type=float, default=0.01)
    jook.add_argument("--spread", type=int, default=100, help="s: profits and weights get U[1, s] on top")
    for parser in (pis, hard, jook):
        parser.add_argument("-n", "--items", type=int, default=100 if parser is pis else 1000)
    for parser in (pis, hard):
        parser.add_argument("--range", type=int, default=1000, help="coefficient range R")
        parser.add_argument("--instance", type=int, default=1, help="v of the capacity v * sum(w) / (S + 1)")
        parser.add_argument("--series", type=int, default=100, help="S of the capacity")
    cur = family.add_parser("curtis", help="Curtis's subset-sum benchmarks")
    cur.add_argument("--type", choices=CURTIS_KINDS, default="half")
    cur.add_argument("-n", "--items", type=int, default=1000)
    suri = family.add_parser("suri", help="Suri et al.'s MCKP sets")
    suri.add_argument("--set", type=int, choices=sorted(SURI_SETS), default=5)
    suri.add_argument("--items-per-class", type=int, help="default: 10..1024 at random per class")
    for parser in (pis, hard, jook, cur, suri):
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("-o", "--output", required=True, help="JSON file to write")


def main(argv: list[str] | None = None) -> int:
    """Run ``linesnap knapsack ARGS``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _parser().parse_args(argv)
    except _UsageError as exc:
        print(f"linesnap: error: {exc} (see linesnap knapsack -h)", file=sys.stderr)
        return 2
    except SystemExit as exc:  # -h / --help
        return int(exc.code or 0)
    try:
        if args.command == "generate":
            return _generate(args)
        with _ctrl_c_stops_the_solve():  # (before the solvers' threads start: they inherit its signal mask)
            return _solve_files(args)
    except BrokenPipeError:  # linesnap knapsack solve ... --json | head
        return stdout_closed()
    except (ValueError, TypeError, OSError, RuntimeError, OverflowError) as exc:
        from core.knapsack import limits

        if limits.interrupted():
            return _interrupted()  # (a solve stopped by Ctrl+C, as at a deadline)
        print(f"linesnap: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    except MemoryError as exc:  # numpy's allocation failures for sizes the checks let through
        print(f"linesnap: error: not enough memory: {_one_line(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return _interrupted()
    except SystemError as exc:  # Ctrl+C inside a compiled call: numba reports the interrupt as this
        if _interrupt_within(exc):
            return _interrupted()
        raise


def _interrupt_within(exc: BaseException) -> bool:
    """Whether a KeyboardInterrupt lies anywhere down ``exc``'s chain (numba wraps it in several SystemErrors,
    one a compiled frame)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _interrupted() -> int:
    print("\nlinesnap: interrupted", file=sys.stderr)
    return 130


def _one_line(exc: BaseException) -> str:
    # the API names its keyword; here it is a flag
    text = (str(exc).replace("raise memory_budget_bytes", "raise --memory-budget")
            .replace("raise time_limit_s (None: no limit)", "raise --time-limit (none: no limit)"))
    return " ".join(text.split()) or type(exc).__name__


def _load(path: str, kind: str | None):
    """The instances of a file, converted to ``kind`` when asked and possible."""
    from core.knapsack.io import KnapsackInstance, read_instances
    from core.knapsack.problems import SubsetSum, problem_kind

    instances = read_instances(path)
    if kind is None:
        return instances
    out = []
    for inst in instances:
        have = problem_kind(inst.problem)
        if have == kind:
            out.append(inst)
        elif (have, kind) in CONVERSIONS:
            out.append(KnapsackInstance(inst.name, SubsetSum(inst.problem.weights, inst.problem.capacity), None))
        else:
            raise ValueError(f"{path} holds {have} instances; --problem {kind} does not apply to them")
    return out


def _solve_files(args) -> int:
    from core.knapsack import limits, solve, solve_many
    from core.knapsack.io import instance_files
    from core.knapsack.problems import problem_kind

    files = [args.file] if args.command == "solve" else instance_files(args.files)
    kind = getattr(args, "problem", None)
    instances = [(path, inst) for path in files for inst in _load(path, kind)]
    budget, limit_s = args.memory_budget, args.time_limit
    # (without a limit too: the times printed are the solves', as the README says, not the loading's)
    _compile_outside_the_limit({problem_kind(inst.problem) for _, inst in instances})
    start = time.perf_counter()
    watched_s = limit_s if limit_s is not None else UNLIMITED_S  # (a limit arms the flags Ctrl+C raises)
    if args.command == "solve":
        with limits.time_limit(watched_s):  # one limit for all instances of the file
            solutions = [solve(inst.problem, args.backend, budget) for _, inst in instances]
    else:
        solutions = solve_many([inst.problem for _, inst in instances], args.backend, budget, watched_s)
    wall_ms = (time.perf_counter() - start) * 1e3
    _report(instances, solutions, wall_ms, args.json)
    return 0


#: The limit a solve runs under with ``--time-limit none`` (a century): one that Ctrl+C can end.
UNLIMITED_S = 3e9


class _ctrl_c_stops_the_solve:  # noqa: N801 (used as a function)
    """Ctrl+C ends a solve at once: its compiled loops poll the time limit's flag, never Python's signals,
    whose handler waits for them (a 13 s solve ran on 10 s after the key).

    Python's C-level handler writes each signal's number to a wake-up pipe at once, from whichever thread
    the signal reached; a thread reading the pipe raises every limit's flag
    (:func:`core.knapsack.limits.interrupt`).  The solver stops as at its deadline, Python's own handler then
    raises KeyboardInterrupt, and the command says "interrupted" with status 130.
    """

    def __enter__(self):
        import os
        import signal
        import threading

        self._thread = None
        if threading.current_thread() is not threading.main_thread():
            return self
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)
        self._old_fd = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        self._thread = threading.Thread(target=self._wait, name="Ctrl+C", daemon=True)
        self._thread.start()
        return self

    def _wait(self) -> None:
        import os
        import signal

        from core.knapsack import limits

        while True:
            received = os.read(self._read, 64)
            if signal.SIGINT in received:
                limits.interrupt()
            if not received or 0 in received:  # (0, no signal's number: __exit__'s last byte)
                return

    def __exit__(self, *exc) -> bool:
        import os
        import signal

        if self._thread is not None:
            signal.set_wakeup_fd(self._old_fd)  # (no signal's byte comes after the 0 below)
            os.write(self._write, b"\0")  # (ends its reads once the bytes before it are read: a Ctrl+C that came
            self._thread.join()  # while the solve ended still says "interrupted", not the solve's own error)
            os.close(self._read)
            os.close(self._write)
        return False


def _compile_outside_the_limit(kinds) -> None:
    """Compile the solvers of the problem families ``kinds`` first where numba's cache lacks them: after an
    install the first solve compiles for a minute or more on a 2-core machine, which a time limit would
    otherwise count (a 300-item KP1 stopped at the default 60 s) and the times printed include; with the cache
    filled, load them into this process, which a first solve did inside the limit (about a second: a 100-item
    KP1 stopped at a limit of 0.5 s that its 0.3 ms solve met, and every solve's time read about a second)."""
    from core import warmup

    if warmup.knapsack_cache_is_cold():
        print("linesnap: compiling the knapsack solvers first (once after an install: a minute or two on a "
              "2-core machine; the time limit starts after it)", file=sys.stderr, flush=True)
    warmup.compile_knapsack_kernels(tuple(kinds))


def _report(instances, solutions, wall_ms: float, as_json: bool) -> None:
    from core.knapsack.io import solution_to_dict
    from core.knapsack.problems import chosen_text

    if as_json:
        rows = [{"file": path, **solution_to_dict(sol, inst)} for (path, inst), sol in zip(instances, solutions)]
        print(json.dumps({"instances": rows, "count": len(rows), "wall_time_ms": round(wall_ms, 3)}))
        return
    for (path, inst), sol in zip(instances, solutions):
        known = "" if inst.optimum is None else f" (known optimum {inst.optimum})"
        if inst.optimum is not None and inst.optimum != sol.value:
            known = f" (DIFFERS from the file's known optimum {inst.optimum})"
            print(f"linesnap: warning: {path}: {inst.name}: the optimum found, {sol.value}, differs from the "
                  f"known optimum {inst.optimum} the file states", file=sys.stderr)
        print(f"{inst.name}: optimum {sol.value}{known}; {sol.time_ms:.1f} ms on {sol.backend} ({sol.method})")
        print(f"  {chosen_text(inst.problem, sol.selected)}: " + " ".join(str(int(i)) for i in sol.selected))
    if len(solutions) > 1:
        print(f"{len(solutions)} instances solved in {wall_ms:.1f} ms")


def _generate(args) -> int:
    from core.knapsack.io import KnapsackInstance, write_json

    if Path(args.output).suffix.lower() not in ("", ".json"):  # (JSON under .csv then read as Pisinger's CSV)
        raise ValueError(f"-o {args.output}: generate writes LineSnap's JSON instances; name a .json file")
    if not Path(args.output).parent.is_dir():  # (as extract says it; Python's own error quoted errno and path)
        raise ValueError(f"output folder {Path(args.output).parent} does not exist")
    try:
        problem, name = _generated(args)
    except ValueError as exc:  # the generators name their Python arguments; here they are flags
        exc.args = (_as_flags(str(exc)),)  # (the same exception: HostMemoryError keeps its sizes)
        raise
    write_json(args.output, KnapsackInstance(name, problem, None))
    print(f"wrote {name} to {args.output}")
    return 0


#: The flag of each generator argument that the command sets under another name ("coefficient_range must be
#: ..." reads "--range must be ..."; "n = 10 asks for" reads "-n 10 asks for").  One-word arguments (seed,
#: instance, series, capacity, groups, spread, epsilon) read as their flag's word already, as in
#: ``linesnap extract``; kind, klass and set_number are argparse choices: a bad one never reaches a generator.
GENERATOR_FLAGS = {"n": "-n", "coefficient_range": "--range", "last_fraction": "--last-fraction",
                   "items_per_class": "--items-per-class"}
_GENERATOR_ARGUMENT = re.compile(r"\b(" + "|".join(GENERATOR_FLAGS) + r")\b(?: =)?")


def _as_flags(text: str) -> str:
    """A generator's message with its argument names as the command's flags."""
    return _GENERATOR_ARGUMENT.sub(lambda match: GENERATOR_FLAGS[match.group(1)], text)


def _generated(args):
    """The instance that ``linesnap knapsack generate`` asks for, and its name."""
    from core.knapsack import generators

    if args.family == "pisinger":
        problem = generators.pisinger(args.type, args.items, args.range, args.instance, args.series, args.seed)
        name = f"pisinger-{args.type}-n{args.items}-R{args.range}-v{args.instance}-s{args.seed}"
    elif args.family == "pisinger-hard":
        problem = generators.pisinger_hard(args.klass, args.items, args.range, args.instance, args.series, args.seed)
        name = f"pisinger-hard-{args.klass}-n{args.items}-R{args.range}-v{args.instance}-s{args.seed}"
    elif args.family == "jooken":
        problem = generators.jooken(args.items, args.capacity, args.groups, args.last_fraction, args.epsilon,
                                    args.spread, args.seed)
        name = f"jooken-n{args.items}-c{args.capacity}-g{args.groups}-s{args.seed}"
    elif args.family == "curtis":
        problem = generators.curtis(args.type, args.items, args.seed)
        name = f"curtis-{args.type}-n{args.items}-s{args.seed}"
    else:
        problem = generators.suri(args.set, args.seed, args.items_per_class)
        name = f"suri-set{args.set}-s{args.seed}"
    return problem, name
