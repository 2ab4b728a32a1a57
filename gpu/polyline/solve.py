"""The GPU polyline engine, twin of ``core.polyline.cpu``, ``core.extraction.solving`` and the map scores.

The solvers bring back only the path, :func:`map_link_tables` the small score
tables; all raise :class:`core.engine.BackendUnavailableError` without a
usable GPU and :class:`GpuMemoryError` when the device lacks memory.  The
device modules import numba.cuda, so they are imported on first use.
"""

from __future__ import annotations

import time

import numpy as np

from core import validation
from core.cancel import check
from core.engine import resolve_backend
from core.extraction.map_scores import map_inputs
from core.extraction.scores import split_tables
from core.polyline.problem import PolylineSolution, infeasible_error, score_in_path_order, solution_for_path
from core.polyline.tables import nonfinite_message
from gpu import device
from gpu.device import GpuMemoryError

__all__ = ["corner_path_means", "GpuMemoryError", "GPU_METHODS", "map_link_tables", "solve_prepared",
           "score_and_solve"]

#: The methods that run on the GPU ("brute" is a CPU reference).
GPU_METHODS = ("window", "mitm")

_gradient_cache: dict = {}
device.register_cache(_gradient_cache.clear)  # its array lies in the workspace's "gradient" buffer


def _device():
    """The modules ``gpu.polyline.dp`` and ``gpu.polyline.scores``, after checking that a GPU is here."""
    resolve_backend("gpu")
    from gpu.polyline import dp, scores  # numba.cuda: only once a GPU is known to be present

    return dp, scores


def _check_method(method: str) -> None:
    if method not in GPU_METHODS:
        raise ValueError(
            f"method must be one of {', '.join(GPU_METHODS)} on the GPU; got {method!r}"
            + (" ('brute' runs on the CPU only)" if method == "brute" else "")
        )


def _device_errors():
    """CUDA out-of-memory errors as :class:`GpuMemoryError`, the workspace freed (:func:`gpu.device.memory_errors`)."""
    return device.memory_errors()


def _check_fits(dp, m: int, d: int, n0: int, n1: int, method: str) -> None:
    """Refuse early (GpuMemoryError) what cannot fit in device or shared memory."""
    if method == "window" and not dp.window_fits(max(d, n0)):
        raise GpuMemoryError(
            f"{max(d, n0)} points per guide exceed the shared memory of the GPU 'window' "
            f"kernel ({dp.WINDOW_SHARED_LIMIT} bytes per block)"
        )
    if dp.workspace_ready(m, d, n0, n1, method):
        return  # solved before at this shape: everything is allocated already
    need = dp.bytes_needed(m, d, n0, n1, method)
    free = dp.free_bytes()
    if free is not None and need > free:
        raise GpuMemoryError(f"the problem needs {need / 2**20:.0f} MiB of GPU memory; {free / 2**20:.0f} MiB are free")


def solve_prepared(prepared, method: str, cancel=None) -> PolylineSolution:
    """Solve a prepared polyline problem on the GPU (the twin of :func:`core.polyline.cpu.solve_prepared`).

    ``method`` is "window" or "mitm"; ``cancel`` is checked before and after the
    device work.  Small ``window`` problems go to the device padded to a few
    shapes (:mod:`gpu.polyline.padding`; same path), with turn ranges from the
    host; the others' turn ranges are computed on the device unless the host
    has them already, and so is the tables' finiteness unless ``prepare``
    checked it, during the DP (ValueError naming the table).  The solution's backend is "gpu"
    and its ``score`` :func:`core.polyline.path_score` on the host's tables.
    Raises as the CPU twin, plus BackendUnavailableError and GpuMemoryError.
    """
    dp, scores = _device()
    _check_method(method)
    check(cancel)
    m = prepared.n_guides
    on_device = prepared
    if method == "window":  # a few shapes for the workspace (gpu.polyline.padding)
        from gpu import config
        from gpu.polyline.padding import padded

        on_device = padded(prepared, dp.WINDOW_SHARED_LIMIT, config.RMQ_BLOCK_BITS)
    with dp.LOCK, _device_errors():
        _check_fits(dp, m, on_device.n_points, on_device.first.shape[0], on_device.last.shape[1], method)
        problem = dp.upload(on_device, ranges=on_device.ranges_computed)
        if not on_device.ranges_computed:  # from the offsets alone, on the device: no tables to upload
            scores.turn_ranges_on_device(problem, on_device, prepared.max_turn_deg)
        path = dp.solve_device(problem, method, check_finite=not prepared.finite_checked)
        if np.isnan(path.optimum):
            raise ValueError(nonfinite_message(dp.nonfinite_table(problem)))
    check(cancel)
    if not path.feasible:
        raise infeasible_error(prepared.max_turn_deg, m, prepared.offsets, prepared.spacing)
    layers = path.layers
    return solution_for_path(prepared, layers[0], layers[1:-1], layers[-1], method, "gpu", path.timings_ms)


def score_and_solve(gradient, guides, options, method: str, max_turn_deg: float, cancel=None,
                    excluded=None) -> PolylineSolution:
    """Score the links of the guides on the GPU and solve there.

    The twin of :func:`core.extraction.solving.score_and_solve` (``excluded``
    flags candidate points whose links score core.extraction.scores.excluded_link_score); the gradient
    is uploaded once per object.  ``score`` is the float64 sum of the device's
    float32 link scores along the path; ``timings_ms``: ``scoring`` (upload
    and scores), ``dp`` (turn ranges, DP, merge) and ``backtrack``.
    Raises as :func:`solve_prepared`.
    """
    dp, scores = _device()
    _check_method(method)
    check(cancel)
    m, d = guides.n_guides, guides.offsets.shape[0]
    with dp.LOCK, _device_errors():
        _check_fits(dp, m, d, guides.start_offsets.shape[0], guides.end_offsets.shape[0], method)
        started = time.perf_counter()
        problem = scores.score_on_device(_device_gradient(gradient, dp), gradient, guides, options, excluded)
        scores.synchronize()
        scored = time.perf_counter()
        scores.turn_ranges_on_device(problem, guides, max_turn_deg)
        ranges_ms = (time.perf_counter() - scored) * 1e3  # launches only: the device time lands in "dp"
        path = dp.solve_device(problem, method)
    check(cancel)
    if not path.feasible:
        raise infeasible_error(max_turn_deg, m, guides.offsets, guides.spacing)
    timings = {"scoring": (scored - started) * 1e3, "dp": path.timings_ms["dp"] + ranges_ms,
               "backtrack": path.timings_ms["backtrack"]}
    layers = path.layers
    return PolylineSolution(score_in_path_order(path.link_scores), layers[1:-1], int(layers[0]), int(layers[-1]),
                            method, "gpu", timings)


def corner_path_means(window, start, end, corners) -> np.ndarray:
    """The mean map value along every ``start -> corner -> end`` on the GPU (twin of
    :func:`core.extraction.scores.corner_path_means`: same arguments and (n,) float64 result).

    Raises BackendUnavailableError without a GPU and GpuMemoryError when the device lacks memory.
    """
    _, scores = _device()
    corners = np.ascontiguousarray(corners, dtype=np.float64).reshape(-1, 2)
    if corners.shape[0] == 0:
        return np.empty(0)
    with device.LOCK, _device_errors():
        return scores.corner_means_on_device(window, start, end, corners)


def map_link_tables(window, guides, base: float, lateral_penalty: float, excluded=None, cancel=None,
                    sample_step_px: float = 1.0):
    """Score the links of the guides over a map on the GPU (twin of :func:`core.extraction.scores.map_link_tables`).

    Same parameters, checks and float32 host tables ``(first (n0, d),
    links (m - 1, d, d), last (d, n1))``: a link scores ``integral (map -
    base)`` along it minus ``lateral_penalty`` per px it moves across the
    axis, or EXCLUDED_SCORE where it touches an ``excluded`` point.  The map
    is uploaded once per window object; ``cancel`` is checked before and after
    the device work.  Raises BackendUnavailableError without a GPU and
    GpuMemoryError when the device lacks memory.
    """
    _, scores = _device()
    points, excluded, sizes = map_inputs(guides, excluded)
    step = validation.real(sample_step_px, "sample_step_px", 0.0, low_open=True, unit="pixels")
    check(cancel)
    m = guides.n_guides
    with device.LOCK, _device_errors():
        flat = scores.map_scores_on_device(window, points, excluded, m, int(sizes[0]), int(sizes[-1]), float(base),
                                           guides.normal, float(lateral_penalty), step)
    check(cancel)
    return split_tables(flat, sizes, m)


def _device_gradient(gradient, dp):
    """The gradient window on the device, (H, W) complex64; reused for the same object."""
    return device.upload_once(_gradient_cache, gradient, lambda: _upload_gradient(gradient, dp))


def _upload_gradient(gradient, dp):
    """Copy ``gx + i gy`` (complex64) into the workspace's gradient buffer."""
    host = np.empty(gradient.gx.shape, dtype=np.complex64)
    host.real = gradient.gx
    host.imag = gradient.gy
    array = dp.buffer("gradient", host.shape, np.complex64)
    array.copy_to_device(host)
    return array
