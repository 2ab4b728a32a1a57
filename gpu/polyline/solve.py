"""The GPU polyline engine: public entry points (numba.cuda).

- :func:`solve_prepared` solves a :class:`core.polyline.PreparedProblem` whose
  tables come from the host (``core.polyline.solve(..., backend="gpu")``).
- :func:`score_and_solve` scores every link from a gradient window on the GPU
  and solves there, the tables never leaving the device
  (``core.extract(..., backend="gpu")``).

Both bring back only the path.  Without a usable CUDA GPU they raise
:class:`core.engine.BackendUnavailableError`.  When the device runs out of
memory, :func:`solve_prepared` raises :class:`GpuMemoryError` (a MemoryError:
``core.polyline`` falls back to the CPU) and :func:`score_and_solve` warns and
solves on the CPU itself.
"""

from __future__ import annotations

import contextlib
import time
import warnings
import weakref

import numpy as np

from core.engine import resolve_backend
from core.polyline import NoFeasiblePolylineError, PolylineSolution

__all__ = ["GpuMemoryError", "GPU_METHODS", "solve_prepared", "score_and_solve"]

#: The methods that run on the GPU ("brute" is a CPU reference).
GPU_METHODS = ("window", "mitm")

_gradient_cache: dict = {}


class GpuMemoryError(MemoryError):
    """The GPU has too little memory (or shared memory) for this problem."""


def _check_method(method: str) -> None:
    if method not in GPU_METHODS:
        raise ValueError(
            f"method must be one of {', '.join(GPU_METHODS)} on the GPU; got {method!r}"
            + (" ('brute' runs on the CPU only)" if method == "brute" else "")
        )


@contextlib.contextmanager
def _device_errors():
    """Turn CUDA out-of-memory errors into :class:`GpuMemoryError` (and free the workspace)."""
    from numba.cuda.cudadrv.driver import CudaAPIError

    from gpu.polyline import dp as polyline_dp

    try:
        yield
    except CudaAPIError as exc:
        code = getattr(exc.code, "value", exc.code)
        if code != 2 and "OUT_OF_MEMORY" not in str(exc.code):
            raise
        polyline_dp.release_workspace()
        _gradient_cache.clear()
        raise GpuMemoryError(f"the GPU ran out of memory: {exc}") from exc


def _check_fits(m: int, d: int, n0: int, n1: int, method: str) -> None:
    """Refuse early (GpuMemoryError) what cannot fit in device or shared memory."""
    from gpu import config
    from gpu.polyline import dp as polyline_dp
    from gpu.polyline.kernels_window import shared_bytes

    if method == "window" and shared_bytes(max(d, n0), config.RMQ_BLOCK_BITS) > polyline_dp.WINDOW_SHARED_LIMIT:
        raise GpuMemoryError(
            f"{max(d, n0)} points per guide exceed the shared memory of the GPU 'window' "
            f"kernel ({polyline_dp.WINDOW_SHARED_LIMIT} bytes per block)"
        )
    if polyline_dp.workspace_ready(m, d, n0, n1, method):
        return  # solved before at this shape: everything is allocated already
    need = polyline_dp.bytes_needed(m, d, n0, n1, method)
    free = polyline_dp.free_bytes()
    if free is not None and need > free:
        raise GpuMemoryError(f"the problem needs {need / 2**20:.0f} MiB of GPU memory; {free / 2**20:.0f} MiB are free")


def _infeasible(max_turn_deg: float, m: int, d: int) -> NoFeasiblePolylineError:
    return NoFeasiblePolylineError(
        f"no polyline satisfies max_turn_deg = {max_turn_deg:g}: every path through the {m} "
        f"guide(s) of {d} points turns more than that somewhere; raise max_turn_deg or change the guides"
    )


def _decode(out: np.ndarray, m: int):
    """``(path (m + 2,) int64, table values (m + 1,) float64)`` of a solve_device result, or None.

    None means the DP optimum is -inf: no polyline satisfies the angle limit.
    """
    if out[0] == -np.inf:
        return None
    return out[1 : m + 3].astype(np.int64), out[m + 3 :]


def solve_prepared(prepared, method: str):
    """Solve a prepared polyline problem on the GPU.

    Parameters
    ----------
    prepared : core.polyline.PreparedProblem
        Validated tables and turn ranges (copied to the device here).
    method : {"window", "mitm"}
        Range-maximum DP (O(m d^2) work: O(1) per query after O(d) per column)
        or Seredin's meet-in-the-middle pair-state DP (O(m d^3); a group of
        ``gpu.config.MITM_THREADS_PER_STATE`` threads per state, Seredin's one
        block per state when that equals ``MITM_BLOCK_THREADS``).

    Returns
    -------
    start_index : int
    indices : (m,) int64 ndarray
    end_index : int

    Raises
    ------
    core.engine.BackendUnavailableError
        Without a usable CUDA GPU.
    core.polyline.NoFeasiblePolylineError
        When no polyline satisfies the angle limit.
    GpuMemoryError
        When the problem does not fit on the device.
    ValueError
        For a method other than "window" or "mitm".
    """
    resolve_backend("gpu")
    _check_method(method)
    from gpu.polyline import dp as polyline_dp

    m, d = prepared.n_guides, prepared.n_points
    n0, n1 = prepared.first.shape[0], prepared.last.shape[1]
    with polyline_dp.LOCK, _device_errors():
        _check_fits(m, d, n0, n1, method)
        out = polyline_dp.solve_device(polyline_dp.upload(prepared), method)
    decoded = _decode(out, m)
    if decoded is None:
        from core.polyline.problem import infeasible_error

        raise infeasible_error(prepared)
    path = decoded[0]
    return int(path[0]), path[1 : m + 1], int(path[m + 1])


def score_and_solve(gradient, guides, settings):
    """Score the links of the guides on the GPU and solve there.

    Parameters
    ----------
    gradient : core.extraction.gradient.GradientWindow
        Gradient window covering the guides (uploaded once; the same object
        passed again is not uploaded again).
    guides : core.extraction.guides.Guides
        Layers L0 (n0 points), guides 1..m (d points), L(m+1) (n1 points).
    settings : core.extraction.ExtractionSettings
        Uses ``solver`` ("window" or "mitm"), ``max_turn_deg`` and ``scoring``.

    Returns
    -------
    solution : core.polyline.PolylineSolution
        ``score`` is the float64 sum of the float32 link scores along the path
        (as :func:`core.polyline.path_score`); ``backend`` is "gpu", or "cpu"
        after an out-of-memory fallback (with a RuntimeWarning).
    timings_ms : dict
        ``scoring`` (gradient upload and link scores), ``dp`` (turn ranges, DP
        and merge), ``backtrack`` (backtracking and the copy of the path).

    Raises
    ------
    core.engine.BackendUnavailableError
        Without a usable CUDA GPU.
    core.polyline.NoFeasiblePolylineError
        When no polyline satisfies the angle limit.
    ValueError
        For settings the GPU cannot run ("brute") or out-of-range options.
    """
    resolve_backend("gpu")
    _check_method(settings.solver)
    from gpu.polyline import dp as polyline_dp

    m, d = guides.n_guides, guides.offsets.shape[0]
    n0, n1 = guides.start_offsets.shape[0], guides.end_offsets.shape[0]
    try:
        with polyline_dp.LOCK, _device_errors():
            _check_fits(m, d, n0, n1, settings.solver)
            return _score_and_solve_gpu(gradient, guides, settings.max_turn_deg, settings.solver, settings.scoring)
    except GpuMemoryError as exc:
        warnings.warn(f"{exc}; solving on the CPU instead", RuntimeWarning, stacklevel=2)
        return _score_and_solve_cpu(gradient, guides, settings)


def _score_and_solve_gpu(gradient, guides, max_turn_deg, method, options):
    from gpu.polyline import scores as scoring
    from gpu.polyline.dp import solve_device

    timings = {}
    started = time.perf_counter()
    grad = _device_gradient(gradient)
    problem = scoring.score_on_device(grad, gradient, guides, options)
    scoring.synchronize()
    timings["scoring"] = (time.perf_counter() - started) * 1e3
    started = time.perf_counter()
    scoring.turn_ranges_on_device(problem, guides, max_turn_deg)
    ranges_ms = (time.perf_counter() - started) * 1e3  # launches only: the device time lands in "dp"
    out = solve_device(problem, method, timings)
    timings["dp"] += ranges_ms
    decoded = _decode(out, problem.m)
    if decoded is None:
        raise _infeasible(max_turn_deg, problem.m, problem.d)
    path, values = decoded
    score = 0.0
    for value in values:  # left to right in float64, as core.polyline.path_score
        score += float(value)
    solution = PolylineSolution(score, path[1 : problem.m + 1], int(path[0]), int(path[-1]), method, "gpu")
    return solution, timings


def _device_gradient(gradient):
    """The gradient window on the device, (H, W) complex64; reused for the same object."""
    cached = _gradient_cache.get("source")
    if cached is not None and cached() is gradient:
        return _gradient_cache["array"]
    array = _upload_gradient(gradient)
    _gradient_cache.clear()
    try:
        _gradient_cache.update(source=weakref.ref(gradient), array=array)
    except TypeError:  # not weak-referenceable: upload every time
        pass
    return array


def _upload_gradient(gradient):
    """Copy ``gx + i gy`` (complex64) into the workspace's gradient buffer."""
    from gpu.polyline.dp import buffer

    host = np.empty(gradient.gx.shape, dtype=np.complex64)
    host.real = gradient.gx
    host.imag = gradient.gy
    array = buffer("gradient", host.shape, np.complex64)
    array.copy_to_device(host)
    return array


def _score_and_solve_cpu(gradient, guides, settings):
    """The CPU path of :func:`score_and_solve` (after a GPU memory error)."""
    from core.extraction.scores import link_score_tables
    from core.polyline import PolylineProblem, prepare
    from core.polyline import solve_prepared as solve_on_cpu

    started = time.perf_counter()
    first, links, last = link_score_tables(gradient, guides, settings.scoring)
    timings = {"scoring": (time.perf_counter() - started) * 1e3}
    problem = PolylineProblem(
        first, links, last, guides.offsets, guides.spacing, settings.max_turn_deg,
        guides.start_offsets, guides.end_offsets,
    )
    solution = solve_on_cpu(prepare(problem), settings.solver, "cpu", timings_ms=timings)
    return solution, timings
