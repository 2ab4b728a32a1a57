"""Knapsack-family solvers on the GPU: KP1, KP2, batched KP2, subset sum, MCKP.

Each function takes a validated problem of :mod:`core.knapsack.problems` and
returns ``(value, selected)``: the optimum (an int) and the sorted int64 indices
of the chosen items (MCKP: the chosen item's index in each class); with
``with_method=True`` it returns ``(value, selected, method)``, ``method`` naming
the GPU method that ran (``"mitm"``, ``"wavefront"``, ``"dp-rows"``,
``"trivial"``, ``"bitset"``, ``"g-vector"``, ``"dp"``).  Results are exact and
checked on the host before they are returned.

Methods (launch parameters in :mod:`gpu.config`), after the weights and the
capacity of every dimension are divided by the weights' gcd, as on the CPU:

- Instances with few usable items (``KNAPSACK_MITM_MAX_ITEMS``, e.g. MSB's 20):
  :mod:`gpu.knapsack.mitm`, an exact meet-in-the-middle search, one block per
  instance, one launch per batch.
- KP1 with many items: :mod:`gpu.knapsack.wavefront`, one persistent launch
  in which blocks own capacity chunks and exchange rows with their neighbours;
  otherwise (and for KP2 and batches) :mod:`gpu.knapsack.rows`, one launch per
  step of ``KNAPSACK_ITEMS_PER_STEP`` items for all instances at once (Lemos
  et al.), within per-stage capacity windows.
- Subset sum: :mod:`gpu.knapsack.subset_sum` (gcd, complement, bounds and
  trivial-solution checks) over a word-parallel bitset with Curtis's ``g``
  vector for recovery, or the ``g`` vector alone (``SUBSET_SUM_METHOD``).
- MCKP: :mod:`gpu.knapsack.mckp`, one launch per class, multi-cell threads,
  class data and the previous row staged in shared memory.

Memory: no solve allocates more device memory than its budget (by default
``KNAPSACK_DEVICE_MEMORY_SHARE`` of the free device memory).  A batch that does
not fit is split into smaller batches; a single instance that does not fit
raises :class:`core.knapsack.problems.MemoryBudgetError` with the bytes needed.
The large buffers are kept for the next solve (``KNAPSACK_KEEP_WORKSPACE``);
:func:`release_memory` frees them.  Solves are serialised by a lock.

Importing this module needs no GPU; the functions raise
:class:`core.engine.BackendUnavailableError` when numba.cuda finds none.
"""

from __future__ import annotations

import numpy as np

from core.engine import BackendUnavailableError, gpu_available
from core.knapsack.problems import KP1, KP2, MCKP, MemoryBudgetError, SubsetSum

__all__ = ["release_memory", "solve_kp1", "solve_kp2", "solve_kp2_batch", "solve_mckp", "solve_subset_sum"]


def _serialised(solver):
    """Run ``solver`` under the lock that guards the shared device workspace."""
    import functools

    @functools.wraps(solver)
    def locked(*args, **kwargs):
        from gpu import device

        with device.LOCK, device.memory_errors():
            return solver(*args, **kwargs)

    return locked


def release_memory() -> None:
    """Free the device memory that the solvers keep between calls (see ``KNAPSACK_KEEP_WORKSPACE``)."""
    if gpu_available():
        from gpu import device

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
    from gpu import config, device

    return device.budget_bytes(memory_budget_bytes, config.KNAPSACK_DEVICE_MEMORY_SHARE)


def _check(kind: str, value: int, worth: int, feasible: bool) -> None:
    if worth != value or not feasible:
        raise RuntimeError(
            f"GPU {kind} solver returned an inconsistent solution (value {value}, chosen items "
            f"worth {worth}, feasible: {feasible}); this is a bug"
        )


def _divided(weights: np.ndarray, capacity: int):
    """Weights and capacity divided by the weights' gcd (core.knapsack.problems.weights_gcd), as on the CPU."""
    from core.knapsack.problems import weights_gcd

    divisor = weights_gcd(weights)
    return (weights // divisor, capacity // divisor) if divisor > 1 else (weights, capacity)


def _solve_kp2_lists(profits, w1, w2, c1, c2, budget):
    """Meet in the middle for the instances with few items, the row DP for the rest."""
    from gpu import config
    from gpu.knapsack import mitm as knapsack_mitm

    solved, results = knapsack_mitm.solve_batch(profits, w1, w2, c1, c2, config.KNAPSACK_MITM_MAX_ITEMS, budget)
    out = [None] * len(profits)
    for k, (value, selected) in zip(solved, results):
        out[k] = (value, selected, "mitm")
    rest = [k for k in range(len(profits)) if out[k] is None]
    if rest:
        pick = lambda seq: [seq[k] for k in rest]  # noqa: E731
        rows = _solve_rows(pick(profits), pick(w1), pick(w2), pick(c1), pick(c2), budget)
        for k, (value, selected) in zip(rest, rows):
            out[k] = (value, selected, "dp-rows")
    return out


def _solve_rows(profits, w1, w2, c1, c2, budget):
    """Row method for a list of KP2 instances (KP1: w1 = 0, c1 = 0), split to fit the budget."""
    from gpu import config
    from gpu.knapsack import rows as kr
    from gpu.knapsack.common import value_dtype
    from gpu.knapsack.plan import PlanTooLargeError, plan_batch

    try:
        plan = plan_batch(profits, w1, w2, c1, c2, config.KNAPSACK_ITEMS_PER_STEP, config.KNAPSACK_THREADS_PER_BLOCK,
                          config.KNAPSACK_CELLS_PER_THREAD)
    except PlanTooLargeError as too_large:
        plan, needed = None, too_large.needed_bytes
    else:
        dtype = value_dtype(int(plan.profits.sum(axis=1).max()))
        needed = kr.device_bytes(plan, dtype.itemsize)
    if plan is None or needed > budget:
        if len(profits) == 1:
            raise MemoryBudgetError("the KP dynamic program on the GPU", needed, budget)
        half = len(profits) // 2
        return (_solve_rows(profits[:half], w1[:half], w2[:half], c1[:half], c2[:half], budget)
                + _solve_rows(profits[half:], w1[half:], w2[half:], c1[half:], c2[half:], budget))
    values, taken = kr.run_plan(plan, dtype)
    return [(int(v), s) for v, s in zip(values, kr.selections(plan, taken, values))]


@_serialised
def solve_kp1(problem: KP1, memory_budget_bytes=None, with_method=False):
    """Exact 0-1 knapsack on the GPU.

    Parameters
    ----------
    problem : KP1
    memory_budget_bytes : int, optional
        Most device bytes to allocate; default a safe share of the free device memory.

    Returns
    -------
    value : int
    selected : (k,) int64 ndarray
        Sorted indices of the chosen items.
    """
    _require(problem, KP1)
    from gpu import config
    from gpu.knapsack import wavefront as wf
    from gpu.knapsack.common import value_dtype

    budget = _budget(memory_budget_bytes)
    p = problem.profits
    w, c = _divided(problem.weights, problem.capacity)
    usable = np.flatnonzero((w <= c) & (p > 0))
    plan = None
    if usable.size >= config.KNAPSACK_WAVEFRONT_MIN_ITEMS:
        capacity = min(c, int(w[usable].sum()))
        dtype = value_dtype(int(p[usable].sum()))
        plan = wf.plan(usable.size, int(w[usable].max()), capacity, dtype)
    if plan is not None and plan.device_bytes <= budget:
        value, taken = wf.run(plan, w[usable], p[usable])
        selected, method = usable[taken == 1].astype(np.int64), "wavefront"
    else:
        zeros = np.zeros_like(w)
        (value, selected, method), = _solve_kp2_lists([p], [zeros], [w], [0], [c], budget)
    _check("KP1", value, int(p[selected].sum()), int(problem.weights[selected].sum()) <= problem.capacity)
    return (value, selected, method) if with_method else (value, selected)


def solve_kp2(problem: KP2, memory_budget_bytes=None, with_method=False):
    """Exact two-constraint 0-1 knapsack on the GPU; returns ``(value, selected)``."""
    return solve_kp2_batch([problem], memory_budget_bytes, with_method)[0]


@_serialised
def solve_kp2_batch(problems, memory_budget_bytes=None, with_method=False) -> list:
    """Many KP2 instances at once ((KP2)^k of Lemos et al.): one launch per step for all.

    Parameters
    ----------
    problems : sequence of KP2
    memory_budget_bytes : int, optional
        Budget of the whole batch; a batch that does not fit runs in parts.

    Returns
    -------
    list of (value, selected), or of (value, selected, method) with ``with_method``
        In the order of ``problems``.
    """
    problems = list(problems)
    if not problems:
        return []
    for k, problem in enumerate(problems):
        _require(problem, KP2, f"problems[{k}]", check_gpu=k == len(problems) - 1)
    budget = _budget(memory_budget_bytes)
    # The choices are checked against the optima and capacities (knapsack_rows.selections,
    # knapsack_mitm._selections).
    first = [_divided(q.weights1, q.capacity1) for q in problems]
    second = [_divided(q.weights2, q.capacity2) for q in problems]
    results = _solve_kp2_lists([q.profits for q in problems], [w for w, _ in first], [w for w, _ in second],
                               [c for _, c in first], [c for _, c in second], budget)
    return results if with_method else [(value, selected) for value, selected, _ in results]


@_serialised
def solve_subset_sum(problem: SubsetSum, memory_budget_bytes=None, with_method=False):
    """Largest subset sum not above the capacity, on the GPU; returns ``(value, selected)``."""
    _require(problem, SubsetSum)
    from gpu import config
    from gpu.knapsack import subset_sum as ssh

    budget = _budget(memory_budget_bytes)
    reduced = ssh.reduce_instance(problem.weights, problem.capacity)
    if isinstance(reduced, tuple):
        (value, selected), method = reduced, "trivial"
    else:
        value, selected, _ = ssh.solve_plan(reduced, config.SUBSET_SUM_METHOD, budget)
        method = config.SUBSET_SUM_METHOD
    _check("subset-sum", value, int(problem.weights[selected].sum()), value <= problem.capacity)
    return (value, selected, method) if with_method else (value, selected)


@_serialised
def solve_mckp(problem: MCKP, memory_budget_bytes=None, with_method=False):
    """Exact multiple-choice knapsack on the GPU.

    Returns
    -------
    value : int
    selected : (m,) int64 ndarray
        The chosen item's index within each class.
    """
    _require(problem, MCKP)
    from gpu import config
    from gpu.knapsack import mckp as km
    from gpu.knapsack.common import value_dtype

    budget = _budget(memory_budget_bytes)
    dtype = value_dtype(sum(int(p.max()) for p, _ in problem.classes))
    sizes = np.cumsum([len(w) for _, w in problem.classes])[:-1]
    weights, capacity = _divided(np.concatenate([w for _, w in problem.classes]), problem.capacity)
    classes = [(p, w) for (p, _), w in zip(problem.classes, np.split(weights, sizes))]
    value, selected = km.solve(classes, capacity, budget, dtype, config.MCKP_PRUNE_DOMINATED)
    worth = sum(int(p[t]) for (p, _), t in zip(problem.classes, selected))
    weight = sum(int(w[t]) for (_, w), t in zip(problem.classes, selected))
    _check("MCKP", value, worth, weight <= problem.capacity)
    return (value, selected, "dp") if with_method else (value, selected)
