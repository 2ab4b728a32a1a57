"""Knapsack solves for the panel: the job, its result, and the worker process's main loop (Qt-free).

The processes exchange pickled tuples over a ``multiprocessing`` pipe::

    parent -> child   ("job", job_id, SolveJob) | ("warm", kinds) | ("stop",)
    child -> parent   ("ready",)
                      ("progress", job_id, done_steps, total_steps, text)
                      ("done", job_id, JobResult)
                      ("failed", job_id, app.errors.ErrorReport)
"""

from __future__ import annotations

import math
import multiprocessing
import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable

from app.errors import report_from_exception
from core.engine import BackendUnavailableError, resolve_backend
from core.knapsack import KP1, KP2, MCKP, SubsetSum, solve, solve_many
from core.knapsack.problems import MemoryBudgetError, TimeLimitError, problem_kind
from core.knapsack.progress import listening

__all__ = ["JobResult", "SolveJob", "error_title", "run_job", "warm_cpu_paths", "worker_main"]

#: Least seconds between two reports of the same solver stage (its bound gap moving).
STAGE_INTERVAL_S = 0.25
#: (backend, problem kind, batch) whose solvers this process has already run once.
_warmed: set = set()
#: Most cells of a KP2 warm-up's DP (items x capacity pairs): a copy with its capacities cut to the heaviest
#: item's was still a solve of seconds on 20,000 items (capacities up to 2,000 x 2,000: 8-12 s, a third of the
#: real solve's time, repeated in every new worker).
WARM_UP_KP2_CELLS = 2**22


@dataclass(frozen=True, eq=False)
class SolveJob:
    """Instances to solve on one or more backends.

    Attributes
    ----------
    instances : tuple of core.knapsack.io.KnapsackInstance
    backends : tuple of str
        Each ``"auto"``, ``"cpu"`` or ``"gpu"``; several compare the backends
        (they must resolve to different backends).
    batch : bool
        Solve all instances in one :func:`core.knapsack.solve_many` call (KP2
        instances as one batch) instead of one :func:`core.knapsack.solve` each.
    memory_budget_bytes : int or None
        Passed to the solvers; None for their default share of free memory.
    time_limit_s : float or None
        Passed to the solvers (per solve, or per batch); None for no limit: the
        panel's Cancel ends the worker process at once whatever runs.
    """

    instances: tuple
    backends: tuple = ("auto",)
    batch: bool = False
    memory_budget_bytes: int | None = None
    time_limit_s: float | None = None

    @property
    def total_steps(self) -> int:
        """Progress steps: one per instance and backend (one per backend for a batch)."""
        return len(self.backends) * (1 if self.batch else len(self.instances))


@dataclass(frozen=True, eq=False)
class JobResult:
    """The solutions of a :class:`SolveJob`.

    Attributes
    ----------
    solutions : dict of str to list of KnapsackSolution
        Keyed by the backend that ran (``"cpu"`` / ``"gpu"``, in the order
        they ran); each list in the order of the job's instances.
    wall_ms : dict of str to float
        Wall time of all solves on that backend in milliseconds: warm-up excluded,
        but the checks around each solver call (cost estimate, the answer's
        verification) and the progress messages included, which a solution's
        ``time_ms`` (the solver call alone, the time the panel's table shows) leaves out.
    batch : bool
        Whether the instances were solved together (each solution's ``time_ms``
        is then the time of the whole batch).
    job_ms : float or None
        Wall time of the whole job in the worker in milliseconds: the warm-ups,
        every backend's solves and their checks (None where unknown).
    warm_up_ms : float
        The part of ``job_ms`` spent preparing the solvers on first use (loading
        or compiling them, solving the scaled-down copies); 0 when they were ready.
    """

    solutions: dict = field(default_factory=dict)
    wall_ms: dict = field(default_factory=dict)
    batch: bool = False
    job_ms: float | None = None
    warm_up_ms: float = 0.0

    @property
    def backends(self) -> list[str]:
        return list(self.solutions)

    def solve_ms(self, backend: str) -> float:
        """Time of ``backend``'s solver calls in milliseconds, from the solutions' ``time_ms``.

        The sum over the instances solved one at a time; the batch's time for a batch
        (every solution of it carries the batch's time).
        """
        times = [solution.time_ms for solution in self.solutions[backend]]
        return max(times) if self.batch else sum(times)


def _no_progress(done: int, total: int, text: str) -> None:
    pass


def run_job(job: SolveJob, progress: Callable[[int, int, str], None] = _no_progress) -> JobResult:
    """Solve every instance of ``job`` on each of its backends.

    ``progress(done_steps, total_steps, text)`` is called before each step and at
    the end.  Raises ValueError for an empty job or backends that resolve to the
    same one, and what the solvers raise.
    """
    if not job.instances or not job.backends:
        raise ValueError("a solve job needs at least one instance and one backend")
    resolved = [resolve_backend(b) for b in job.backends]
    if len(set(resolved)) != len(resolved):
        raise ValueError(f"backends {job.backends} resolve to the same backend twice ({resolved})")
    solutions, wall_ms, done, warm_up_ms = {}, {}, 0, 0.0
    job_start = time.perf_counter()
    for backend in resolved:
        warm_up_ms += _warm_up(backend, job, lambda text: progress(done, job.total_steps, text))
        start = time.perf_counter()
        solutions[backend], done = _solve_on(backend, job, done, progress)
        wall_ms[backend] = (time.perf_counter() - start) * 1e3
    job_ms = (time.perf_counter() - job_start) * 1e3
    progress(job.total_steps, job.total_steps, "done")
    return JobResult(solutions, wall_ms, job.batch, job_ms, warm_up_ms)


def _solve_on(backend: str, job: SolveJob, done: int, progress) -> tuple[list, int]:
    n, name = len(job.instances), backend.upper()
    if job.batch:
        with _stages(progress, done, job.total_steps, f"solving {n} instances together on the {name}"):
            return (solve_many([i.problem for i in job.instances], backend, job.memory_budget_bytes,
                               job.time_limit_s), done + 1)
    out = []
    for k, instance in enumerate(job.instances):
        with _stages(progress, done, job.total_steps, f"solving {instance.name} ({k + 1} of {n}) on the {name}"):
            out.append(solve(instance.problem, backend, job.memory_budget_bytes, job.time_limit_s))
        done += 1
    return out, done


@contextmanager
def _stages(progress, done: int, total: int, text: str):
    """Report ``text``, then the solvers' stages after it ("...: states, bound gap 12 (0.3%)").

    A new method (or its first gap) is reported at once, the same method's gap at most every
    ``STAGE_INTERVAL_S``.
    """
    progress(done, total, text)
    last = {"at": 0.0, "kind": None}

    def on_stage(stage):
        now, kind = time.perf_counter(), (stage.method, stage.gap is None)
        if kind == last["kind"] and now - last["at"] < STAGE_INTERVAL_S:
            return
        last.update(at=now, kind=kind)
        progress(done, total, f"{text}: {stage.describe()}")

    with listening(on_stage):
        yield


def scaled_down(problem):
    """The same items with a capacity of about one item's weight (a KP2's capacities also cut to keep its DP
    within :data:`WARM_UP_KP2_CELLS`): a cheap instance to warm up on."""
    kind = problem_kind(problem)
    if kind == "kp1":
        return KP1(problem.profits, problem.weights, min(problem.capacity, int(problem.weights.max())))
    if kind == "kp2":
        side = max(1, math.isqrt(WARM_UP_KP2_CELLS // max(1, problem.n_items)) - 1)  # each capacity's cells
        return KP2(problem.profits, problem.weights1, problem.weights2,
                   min(problem.capacity1, int(problem.weights1.max()), side),
                   min(problem.capacity2, int(problem.weights2.max()), side))
    if kind == "subset-sum":
        return SubsetSum(problem.weights, min(problem.capacity, 2 * int(problem.weights.max()) + 1))
    spread = max(int(w.max() - w.min()) for _, w in problem.classes)
    return MCKP(problem.classes, min(problem.capacity, problem.min_weight + spread))


def _warm_key(backend: str, problem, batch: bool) -> tuple:
    """What decides which compiled code a solve runs: backend, kind, batch, size class, value width."""
    kind = problem_kind(problem)
    if kind == "mckp":
        items, worth = sum(len(p) for p, _ in problem.classes), sum(int(p.max()) for p, _ in problem.classes)
    else:
        items = problem.n_items
        worth = int(problem.weights.sum() if kind == "subset-sum" else problem.profits.sum())
    return backend, kind, batch, items.bit_length(), worth >= 2**31 - 1


def _warm_up(backend: str, job: SolveJob, say: Callable[[str], None]) -> float:
    """Solve scaled-down copies of the job's instances first (outside the solves' times), once per kind of
    solve; on the CPU, first load every path of the kind's solvers (core.warmup.compile_knapsack_kernels), since
    a copy may take another path than the instance (a 20-item KP1's copy the state lists, the instance the
    capacity DP, whose first solve then showed 114-168 ms of loading against under 1 ms for the next).  A copy's
    error (MemoryBudgetError past a small budget, TimeLimitError) is not the job's: it named an instance the
    user never loaded; the instances' own solves report theirs.

    Returns the milliseconds it spent preparing solvers: 0.0 when all of them were ready.
    """
    start, cold, prepared = time.perf_counter(), {}, False
    for instance in job.instances:
        cold.setdefault(_warm_key(backend, instance.problem, job.batch), []).append(instance.problem)
    for key, problems in cold.items():
        if key in _warmed:
            continue
        say(f"preparing the {backend.upper()} {key[1]} solver for this size (first use)")
        if backend == "cpu":
            warm_cpu_paths((key[1],))
        try:
            if job.batch:
                solve_many([scaled_down(p) for p in problems], backend, job.memory_budget_bytes)
            else:
                solve(scaled_down(problems[0]), backend, job.memory_budget_bytes)
        except ValueError:  # (a copy past a small budget: the instances' own solves say what they need)
            prepared = True
            continue
        _warmed.add(key)
        prepared = True
    return (time.perf_counter() - start) * 1e3 if prepared else 0.0


def warm_cpu_paths(kinds) -> None:
    """Load every path of the CPU solvers of these problem kinds (core.warmup.compile_knapsack_kernels), once
    per process and kind."""
    from core import warmup

    for kind in kinds:
        if ("paths", kind) not in _warmed:
            warmup.compile_knapsack_kernels((kind,))
            _warmed.add(("paths", kind))


def error_title(err: BaseException) -> str:
    """The dialog title for an error of a solve."""
    if isinstance(err, MemoryBudgetError):
        return "Not enough memory to solve the instance"
    if isinstance(err, TimeLimitError):
        return "The solve ran past its time limit"
    if isinstance(err, BackendUnavailableError):
        return "The GPU is not available"
    return "Solving failed"


def worker_main(conn) -> None:
    """The worker process: solve the jobs that arrive on ``conn`` (the child's end of a pipe) until told to stop."""
    # Here, not at the top: only the child needs numba and the solvers, loaded before it says "ready".
    import core.knapsack.dispatch  # noqa: F401

    _exit_with_parent()
    conn.send(("ready",))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):  # the window went away
            return
        if message[0] == "warm":  # load the CPU solvers of these kinds ahead of the next job
            try:
                warm_cpu_paths(message[1])
            except Exception:  # noqa: BLE001 - not a job's error: the next job's own warm-up reports it
                pass
            continue
        if message[0] != "job":
            return
        _, job_id, job = message

        def progress(done, total, text, job_id=job_id):
            conn.send(("progress", job_id, done, total, text))

        try:
            result = run_job(job, progress)
        except Exception as err:  # reported to the window as a dialog
            conn.send(("failed", job_id, report_from_exception(error_title(err), err)))
        else:
            conn.send(("done", job_id, result))


def _exit_with_parent() -> None:
    """End this process as soon as its parent is gone, even in the middle of a solve."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch():
        parent.join()
        os._exit(0)

    threading.Thread(target=watch, name="watch-parent", daemon=True).start()
