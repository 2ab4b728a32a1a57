"""Knapsack-family solvers on the GPU: KP1, KP2, batched KP2, subset sum, MCKP.

The twins of :mod:`core.knapsack`'s CPU solvers (same signatures,
:class:`core.knapsack.problems.SolverResult`, checked on the host).  Methods
and memory policy: docs/notes/gpu.md, "Knapsack methods".  Solves hold
:data:`gpu.device.LOCK`; the method modules, which load numba.cuda, are
imported inside the solvers.  An instance whose dynamic program does not fit
the device (a capacity of 10^10) is solved by the host's state lists instead
(:func:`_on_host`; ``method`` ``"host-..."``), as ``backend="cpu"`` would.
"""

from __future__ import annotations

import functools

import numpy as np

from core.engine import BackendUnavailableError, gpu_available
from core.knapsack import limits
from core.knapsack.problems import KP1, KP2, MCKP, MemoryBudgetError, SolverResult, SubsetSum, weights_gcd
from gpu import config, device
from gpu.knapsack.common import value_dtype, weights_gcds

__all__ = ["release_memory", "solve_kp1", "solve_kp2", "solve_kp2_batch", "solve_mckp", "solve_subset_sum"]


def _on_device(solver):
    """Run ``solver`` under the device lock, CUDA's out-of-memory error turned into GpuMemoryError."""

    @functools.wraps(solver)
    def guarded(*args, **kwargs):
        with device.LOCK, device.memory_errors():
            return solver(*args, **kwargs)

    return guarded


def release_memory() -> None:
    """Free the device memory kept between solves (see ``KNAPSACK_KEEP_WORKSPACE``)."""
    if gpu_available():
        device.release_workspace()


def _require(problem, cls, name="problem", check_gpu=True):
    """TypeError unless ``problem`` is a ``cls``; BackendUnavailableError without a GPU."""
    if not isinstance(problem, cls):
        raise TypeError(f"{name} must be a {cls.__name__}; got {type(problem).__name__}")
    if check_gpu and not gpu_available():
        raise BackendUnavailableError(
            "the GPU knapsack solvers need an NVIDIA GPU with a working CUDA driver and "
            "numba-cuda; none was found (use backend 'cpu')"
        )


def _budget(memory_budget_bytes) -> int:
    return device.budget_bytes(memory_budget_bytes, config.KNAPSACK_DEVICE_MEMORY_SHARE)


def _check(kind: str, value: int, worth: int, feasible: bool) -> None:
    if worth != value or not feasible:
        raise RuntimeError(
            f"GPU {kind} solver returned an inconsistent solution (value {value}, chosen items "
            f"worth {worth}, feasible: {feasible}); this is a bug"
        )


def _divided(weights: np.ndarray, capacity: int):
    """Weights and capacity divided by the weights' gcd, as on the CPU."""
    divisor = weights_gcd(weights)
    return (weights // divisor, capacity // divisor) if divisor > 1 else (weights, capacity)


def _divided_batch(weights: list, capacities: list):
    """:func:`_divided` of each instance of a batch (one gcd pass over them all: 630 calls had cost 2-3 ms)."""
    gcds = weights_gcds(weights).tolist()
    return [w // g if g > 1 else w for w, g in zip(weights, gcds)], [c // g for c, g in zip(capacities, gcds)]


def _on_host(kind: str, problem, memory_budget_bytes, refused: MemoryBudgetError) -> SolverResult:
    """The host's solver (core.knapsack, ``method="auto"``) for a problem whose GPU dynamic program does not fit.

    Its state lists cost what the instance's structure makes them cost, not its
    capacity, so they solve many instances the device cannot hold a capacity DP
    for (KP1 with C = 10^10).  ``method`` is the host's, prefixed ``host-``;
    where the host refuses too, the GPU's refusal ``refused`` is raised.
    """
    from core.knapsack import kp1, kp2, mckp, subset_sum

    host = {"kp1": kp1.solve_kp1, "kp2": kp2.solve_kp2, "subset-sum": subset_sum.solve_subset_sum,
            "mckp": mckp.solve_mckp}[kind]
    try:
        value, selected, method = host(problem, memory_budget_bytes)
    except MemoryBudgetError:
        raise refused from None
    return SolverResult(value, selected, f"host-{method}")


def _solve_kp2_lists(profits, w1, w2, c1, c2, budget, host=None) -> list[SolverResult]:
    """Meet in the middle for the instances with few items, the row DP for the rest.

    ``host(k, refused)`` solves instance ``k`` whose row DP does not fit the budget
    (None: MemoryBudgetError).
    """
    from gpu.knapsack import mitm  # loads numba.cuda (see the module docstring)

    solved, results = mitm.solve_batch(profits, w1, w2, c1, c2, config.KNAPSACK_MITM_MAX_ITEMS, budget)
    out = [None] * len(profits)
    for k, (value, selected) in zip(solved, results):
        out[k] = SolverResult(value, selected, "mitm")
    rest = [k for k in range(len(profits)) if out[k] is None]
    if rest:
        pick = lambda seq: [seq[k] for k in rest]  # noqa: E731
        rows = _solve_rows(pick(profits), pick(w1), pick(w2), pick(c1), pick(c2), budget)
        for k, row in zip(rest, rows):
            if isinstance(row, MemoryBudgetError):
                if host is None:
                    raise row
                out[k] = host(k, row)
            else:
                out[k] = SolverResult(*row, "dp-rows")
    return out


def _solve_rows(profits, w1, w2, c1, c2, budget):
    """Row method for a list of KP2 instances (KP1: w1 = 0, c1 = 0), split to fit the budget.

    ``(value, selected)`` per instance, or the MemoryBudgetError of one that does not fit alone.
    """
    from gpu.knapsack import rows  # these two load numba.cuda (see the module docstring)
    from gpu.knapsack.plan import PlanTooLargeError, plan_batch

    try:
        plan = plan_batch(profits, w1, w2, c1, c2, config.KNAPSACK_ITEMS_PER_STEP, config.KNAPSACK_THREADS_PER_BLOCK,
                          config.KNAPSACK_CELLS_PER_THREAD)
    except PlanTooLargeError as too_large:
        plan, needed = None, too_large.needed_bytes
    else:
        dtype = value_dtype(int(plan.profits.sum(axis=1).max()))
        needed = rows.device_bytes(plan, dtype.itemsize)
    if plan is None or needed > budget:
        if len(profits) == 1:
            return [MemoryBudgetError("the KP dynamic program on the GPU", needed, budget)]
        half = len(profits) // 2
        return (_solve_rows(profits[:half], w1[:half], w2[:half], c1[:half], c2[:half], budget)
                + _solve_rows(profits[half:], w1[half:], w2[half:], c1[half:], c2[half:], budget))
    values, taken = rows.run_plan(plan, dtype)
    return [(int(v), s) for v, s in zip(values, rows.selections(plan, taken, values))]


@_on_device
def solve_kp1(problem: KP1, memory_budget_bytes: int | None = None) -> SolverResult:
    """Exact 0-1 knapsack on the GPU; ``memory_budget_bytes`` defaults to a share of the free device memory."""
    _require(problem, KP1)
    from core.knapsack.kp1 import solve_kp1_quick
    from gpu.knapsack import wavefront  # loads numba.cuda (see the module docstring)

    quick = solve_kp1_quick(problem) if config.KNAPSACK_HOST_FIRST else None  # most instances: in ms
    if quick is not None:
        return SolverResult(quick.value, quick.selected, f"host-{quick.method}")
    budget = _budget(memory_budget_bytes)
    p = problem.profits
    w, c = _divided(problem.weights, problem.capacity)
    usable = np.flatnonzero((w <= c) & (p > 0))
    plan = None
    if usable.size >= config.KNAPSACK_WAVEFRONT_MIN_ITEMS:
        capacity = min(c, int(w[usable].sum()))
        dtype = value_dtype(int(p[usable].sum()))
        plan = wavefront.plan(usable.size, int(w[usable].max()), capacity, dtype)
    if plan is not None and plan.device_bytes <= budget:
        limits.check_dp(usable.size * float(capacity + 1), f"KP1 by the wavefront on the GPU ({usable.size:,} items, "
                        f"capacity {capacity:,})", limits.GPU_DP_CELLS_PER_S)
        value, taken = wavefront.run(plan, w[usable], p[usable])
        result = SolverResult(value, usable[taken == 1].astype(np.int64), "wavefront")
    else:
        zeros = np.zeros_like(w)
        (result,) = _solve_kp2_lists([p], [zeros], [w], [0], [c], budget,
                                     lambda k, refused: _on_host("kp1", problem, memory_budget_bytes, refused))
    selected = result.selected
    _check("KP1", result.value, int(p[selected].sum()), int(problem.weights[selected].sum()) <= problem.capacity)
    return result


def solve_kp2(problem: KP2, memory_budget_bytes: int | None = None) -> SolverResult:
    """Exact two-constraint 0-1 knapsack on the GPU (a batch of one, :func:`solve_kp2_batch`)."""
    return solve_kp2_batch([problem], memory_budget_bytes)[0]


@_on_device
def solve_kp2_batch(problems, memory_budget_bytes: int | None = None) -> list[SolverResult]:
    """Many KP2 instances at once ((KP2)^k of Lemos et al.), results in the order of ``problems``.

    The budget holds for the whole batch; a batch that does not fit runs in parts.
    """
    problems = list(problems)
    if not problems:
        return []
    for k, problem in enumerate(problems):
        _require(problem, KP2, f"problems[{k}]", check_gpu=k == len(problems) - 1)
    budget = _budget(memory_budget_bytes)
    # The choices are checked against the optima and capacities (rows.selections, mitm._selections).
    w1, c1 = _divided_batch([q.weights1 for q in problems], [q.capacity1 for q in problems])
    w2, c2 = _divided_batch([q.weights2 for q in problems], [q.capacity2 for q in problems])
    return _solve_kp2_lists([q.profits for q in problems], w1, w2, c1, c2, budget,
                            lambda k, refused: _on_host("kp2", problems[k], memory_budget_bytes, refused))


@_on_device
def solve_subset_sum(problem: SubsetSum, memory_budget_bytes: int | None = None) -> SolverResult:
    """Largest subset sum not above the capacity, on the GPU (``method`` "trivial" or ``SUBSET_SUM_METHOD``)."""
    _require(problem, SubsetSum)
    from gpu.knapsack import subset_sum  # loads numba.cuda (see the module docstring)

    budget = _budget(memory_budget_bytes)
    reduced = subset_sum.reduce_instance(problem.weights, problem.capacity)
    if isinstance(reduced, tuple):
        (value, selected), method = reduced, "trivial"
    else:
        try:
            value, selected, _ = subset_sum.solve_plan(reduced, config.SUBSET_SUM_METHOD, budget)
            method = config.SUBSET_SUM_METHOD
        except MemoryBudgetError as refused:
            value, selected, method = _on_host("subset-sum", problem, memory_budget_bytes, refused)
    _check("subset-sum", value, int(problem.weights[selected].sum()), value <= problem.capacity)
    return SolverResult(value, selected, method)


@_on_device
def solve_mckp(problem: MCKP, memory_budget_bytes: int | None = None) -> SolverResult:
    """Exact multiple-choice knapsack on the GPU; ``selected`` is (m,), the chosen item within each class."""
    _require(problem, MCKP)
    from core.knapsack.mckp import solve_mckp_quick
    from gpu.knapsack import mckp  # loads numba.cuda (see the module docstring)

    quick = solve_mckp_quick(problem) if config.KNAPSACK_HOST_FIRST else None  # most instances: in ms
    if quick is not None:
        return SolverResult(quick.value, quick.selected, f"host-{quick.method}")

    budget = _budget(memory_budget_bytes)
    dtype = value_dtype(sum(int(p.max()) for p, _ in problem.classes))
    sizes = np.cumsum([len(w) for _, w in problem.classes])[:-1]
    weights, capacity = _divided(np.concatenate([w for _, w in problem.classes]), problem.capacity)
    classes = [(p, w) for (p, _), w in zip(problem.classes, np.split(weights, sizes))]
    try:
        value, selected = mckp.solve(classes, capacity, budget, dtype, config.MCKP_PRUNE_DOMINATED)
        method = "dp"
    except MemoryBudgetError as refused:
        value, selected, method = _on_host("mckp", problem, memory_budget_bytes, refused)
    worth = sum(int(p[t]) for (p, _), t in zip(problem.classes, selected))
    weight = sum(int(w[t]) for (_, w), t in zip(problem.classes, selected))
    _check("MCKP", value, worth, weight <= problem.capacity)
    return SolverResult(value, selected, method)
