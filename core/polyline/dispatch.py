"""The public solver entry: :func:`solve` and :func:`solve_prepared` pick the backend and the method."""

from __future__ import annotations

import warnings

import numpy as np

from core import engine
from core.cancel import check
from core.polyline.brute import solve_brute
from core.polyline.cpu import solve_mitm, solve_window
from core.polyline.prepare import prepare
from core.polyline.problem import METHODS, PolylineProblem, PolylineSolution, PreparedProblem, path_score

__all__ = ["solve", "solve_prepared"]


def _solve_on_gpu(prepared: PreparedProblem, method: str):
    """(start, indices, end) from the GPU, or None (with a warning) when the GPU lacks memory."""
    try:
        return engine.gpu_package("polyline").solve_prepared(prepared, method)
    except MemoryError as exc:  # gpu.polyline.GpuMemoryError: the CPU solves it, never a crash
        warnings.warn(f"{exc}; solving on the CPU instead", RuntimeWarning, stacklevel=4)
        return None


def _solve_on_cpu(prepared: PreparedProblem, method: str, timings_ms: dict | None, cancel):
    if method == "brute":
        return solve_brute(prepared)
    solver = solve_window if method == "window" else solve_mitm
    return solver(prepared, timings_ms, cancel)


def solve_prepared(
    prepared: PreparedProblem, method: str = "window", backend: str = "auto", timings_ms: dict | None = None,
    cancel=None,
) -> PolylineSolution:
    """Solve a :class:`PreparedProblem` (the entry of callers that prepare once).

    Parameters
    ----------
    prepared : PreparedProblem
    method, backend : str
        As in :func:`solve`.
    timings_ms : dict, optional
        When given, receives ``"dp"`` and ``"backtrack"`` (milliseconds) from
        the CPU solvers.
    cancel : core.cancel.CancelToken, optional
        Stops the CPU solvers between (and ``mitm`` within) stages when it is
        cancelled from another thread; checked before and after the GPU and
        ``brute`` solvers, which run for milliseconds.

    Returns
    -------
    PolylineSolution
        ``score`` is :func:`path_score` of the returned path; ``backend`` is
        "cpu" when the GPU ran out of memory and the CPU solved it instead
        (with a RuntimeWarning).

    Raises
    ------
    core.cancel.Cancelled
        When ``cancel`` was cancelled; other errors as :func:`solve`.
    """
    if not isinstance(prepared, PreparedProblem):
        raise TypeError(f"prepared must be a PreparedProblem (core.polyline.prepare); got {type(prepared).__name__}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    if backend not in engine.BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(engine.BACKENDS)}; got {backend!r}")
    if method == "brute" and backend == "gpu":
        raise ValueError("method 'brute' runs on the CPU only; use backend 'cpu' or 'auto'")
    ran = "cpu" if method == "brute" else engine.resolve_backend(backend)
    check(cancel)
    path = _solve_on_gpu(prepared, method) if ran == "gpu" else None
    if path is None:  # the CPU, also when the GPU ran out of memory
        ran = "cpu"
        path = _solve_on_cpu(prepared, method, timings_ms, cancel)
    check(cancel)
    start, indices, end = path
    indices = np.asarray(indices, dtype=np.int64)
    score = path_score(prepared, int(start), indices, int(end))
    return PolylineSolution(score, indices, int(start), int(end), method, ran)


def solve(problem: PolylineProblem, method: str = "window", backend: str = "auto") -> PolylineSolution:
    """Find the highest-scoring polyline that satisfies the turning-angle limit.

    Parameters
    ----------
    problem : PolylineProblem
    method : {"window", "mitm", "brute"}
        ``window`` (sliding-window maximum, O(m d^2)), ``mitm`` (Seredin's
        meet-in-the-middle pair-state DP, O(m d^3)) or ``brute`` (enumerates
        every polyline; a reference for small problems, CPU only).
    backend : {"auto", "cpu", "gpu"}
        ``auto`` uses the GPU when numba.cuda finds one, else the CPU.

    Returns
    -------
    PolylineSolution
        An optimal polyline (any one of them when several tie); ``score`` is
        recomputed in float64 from the float32 tables along it.

    Raises
    ------
    NoFeasiblePolylineError
        When no polyline satisfies the angle limit.
    ValueError
        For malformed problems or unknown method/backend names.
    TypeError
        For a problem that is not a PolylineProblem or non-numeric fields.
    core.engine.BackendUnavailableError
        For ``backend="gpu"`` without a usable CUDA GPU.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    return solve_prepared(prepare(problem), method, backend)
