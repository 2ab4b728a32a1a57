"""Device-resident polyline problems and the two GPU DP drivers.

A :class:`DeviceProblem` holds the score tables and turn ranges of one problem
on the GPU, whether uploaded from a :class:`core.polyline.PreparedProblem`
(:func:`upload`) or scored there (:mod:`gpu.polyline`).  :func:`solve_device`
runs ``window`` or ``mitm`` on it and brings back only the path: the optimum,
``m + 2`` point indices and the ``m + 1`` table values along the path.

Scratch arrays (states, argmax tables, partial maxima) live in one workspace of
named device buffers that are reused while their shapes stay the same.  Callers
hold :data:`LOCK` around every use (the GUI runs extractions on worker threads).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np
from numba import cuda

from gpu import config
from gpu.kernels_polyline import finish, merge_partial, mitm_stage, reverse_ranges
from gpu.kernels_window import shared_bytes, window_stage

__all__ = ["LOCK", "DeviceProblem", "buffer", "upload", "solve_device", "range_slots", "WINDOW_SHARED_LIMIT"]

#: Serialises all use of the shared workspace and the device.
LOCK = threading.RLock()

#: Shared memory (bytes) a block may use without opting in: bounds ``d`` of ``window``.
WINDOW_SHARED_LIMIT = 48 * 1024

_buffers: dict = {}


def buffer(name: str, shape: tuple, dtype) -> cuda.devicearray.DeviceNDArray:
    """The workspace's device array ``name``, (re)allocated when its shape or dtype changes."""
    shape = tuple(int(s) for s in shape)
    array = _buffers.get(name)
    if array is None or array.shape != shape or array.dtype != np.dtype(dtype):
        _buffers.pop(name, None)  # free the old one before allocating the new one
        array = cuda.device_array(shape, dtype=dtype)
        _buffers[name] = array
    return array


def range_slots(m: int) -> list[int]:
    """Which distinct range pair each inner layer k = 1..m uses (0: first, 1: inner, 2: last)."""
    if m == 1:
        return [0]
    return [0] + [1] * (m - 2) + [2]


@dataclass(eq=False)
class DeviceProblem:
    """Tables and turn ranges of one problem on the device.

    Attributes
    ----------
    m, d, n0, n1 : int
        Guides, points per guide, start and end candidates.
    first : (n0, d) float32 device array
        T0; ``first_t`` (d, n0) is its transpose (the first forward states).
    links : (max(m - 1, 1), d, d) float32 device array
        T1..T(m-1) in ``links[:m - 1]``.
    last : (d, n1) float32 device array
        Tm.
    ranges : list of m (lo, hi) pairs of (d, n_next) int32 device arrays
        Feasible previous points of every inner layer (shared by the inner layers).
    private : bool
        The arrays are the problem's own, not the workspace's buffers (so its
        derived arrays must be its own too).
    """

    m: int
    d: int
    n0: int
    n1: int
    first: object
    first_t: object
    links: object
    last: object
    ranges: list
    private: bool = False
    _reverse: dict = field(default_factory=dict)

    def table(self, k: int):
        """T_k (k = 0..m) as a device array."""
        if k == 0:
            return self.first
        return self.last if k == self.m else self.links[k - 1]

    def size(self, layer: int) -> int:
        """Number of points of layer 0..m+1."""
        if layer == 0:
            return self.n0
        return self.n1 if layer == self.m + 1 else self.d

    def reverse(self, k: int):
        """Feasible next points ``(rlo, rhi)`` (n_(k-1), d) of the links into layer k (cached)."""
        slot = range_slots(self.m)[k - 1]
        if slot not in self._reverse:
            lo, hi = self.ranges[k - 1]
            shape = (2, self.size(k - 1), self.d)
            pair = cuda.device_array(shape, np.int32) if self.private else buffer(f"reverse{slot}", shape, np.int32)
            reverse_ranges[grid_blocks(pair[0].size), config.THREADS_PER_BLOCK](lo, hi, pair[0], pair[1])
            self._reverse[slot] = (pair[0], pair[1])
        return self._reverse[slot]


def grid_blocks(n_items: int) -> int:
    """Blocks of a grid-stride launch over ``n_items`` (at least one)."""
    return max(1, min(65536, -(-n_items // config.THREADS_PER_BLOCK)))


def upload(prepared, reuse: bool = True) -> DeviceProblem:
    """Copy a :class:`core.polyline.PreparedProblem` to the device.

    Parameters
    ----------
    prepared : core.polyline.PreparedProblem
    reuse : bool
        Copy into the workspace's buffers (the default: one problem at a time)
        rather than into fresh device arrays.
    """
    m, d = prepared.n_guides, prepared.n_points
    n0, n1 = prepared.first.shape[0], prepared.last.shape[1]
    links = prepared.links if m > 1 else np.zeros((1, 1, 1), dtype=np.float32)
    host = {
        "first": prepared.first,
        "first_t": np.ascontiguousarray(prepared.first.T),
        "links": links,
        "last": prepared.last,
    }
    dev = {}
    for name, array in host.items():
        dev[name] = buffer("problem_" + name, array.shape, array.dtype) if reuse else cuda.device_array_like(array)
        dev[name].copy_to_device(array)
    ranges, seen = [], {}
    for slot, (lo, hi) in zip(range_slots(m), prepared.ranges):
        if id(lo) not in seen:
            pair = np.stack((lo, hi)).astype(np.int32)
            target = buffer(f"problem_ranges{slot}", pair.shape, np.int32) if reuse else cuda.device_array_like(pair)
            target.copy_to_device(pair)
            seen[id(lo)] = (target[0], target[1])
        ranges.append(seen[id(lo)])
    return DeviceProblem(m, d, n0, n1, ranges=ranges, private=not reuse, **dev)


def _state(problem: DeviceProblem, name: str, rows: int, cols: int):
    """A (rows, cols) float32 view of the state buffer ``name`` (sized for the largest state)."""
    largest = max(problem.d, problem.n0, problem.n1) ** 2
    return buffer(name, (largest,), np.float32)[: rows * cols].reshape(rows, cols)


def _forward_window(problem: DeviceProblem):
    """All m forward steps with range-maximum queries; returns F_(m+1) transposed."""
    bits = config.RMQ_BLOCK_BITS
    fwd_arg = buffer("fwd_arg", (problem.m, problem.d, max(problem.d, problem.n1)), np.int32)
    fwd = problem.first_t
    for k in range(1, problem.m + 1):
        n_next = problem.size(k + 1)
        out = _state(problem, f"fwd{k % 2}", n_next, problem.d)
        lo, hi = problem.ranges[k - 1]
        n_shared = shared_bytes(fwd.shape[1], bits)
        window_stage[problem.d, config.WINDOW_THREADS, 0, n_shared](
            fwd, out, problem.table(k), lo, hi, fwd_arg[k - 1, :, :n_next], bits
        )
        fwd = out
    return fwd


def _next_pow2(n: int) -> int:
    return 1 << max(0, (int(n) - 1).bit_length())


def _mitm_launch(fwd_step, bwd_step):
    """One launch of :func:`mitm_stage` over a forward and a backward step.

    ``fwd_step`` is ``(fwd_in, fwd_out, table, lo, hi, arg)`` and ``bwd_step``
    ``(bwd_in, bwd_out, table, rlo, rhi, arg, add_table)``; either may be None
    (the kernel then gets the other's arrays with zero states).
    """
    steps = [step for step in (fwd_step, bwd_step) if step is not None]
    longest = max(step[0].shape[1] for step in steps)  # the reduction length
    group = min(config.MITM_THREADS_PER_STATE, _next_pow2(longest))
    per_block = max(1, config.MITM_BLOCK_THREADS // group)
    n_fwd = fwd_step[1].size if fwd_step is not None else 0
    n_bwd = bwd_step[1].size if bwd_step is not None else 0
    fwd_args = fwd_step if fwd_step is not None else bwd_step[:6]
    bwd_args = bwd_step if bwd_step is not None else fwd_step + (0,)
    blocks = -(-n_fwd // per_block) + -(-n_bwd // per_block)
    mitm_stage[blocks, per_block * group](group, n_fwd, *fwd_args, n_bwd, *bwd_args)


def _meet_in_the_middle(problem: DeviceProblem):
    """Forward over layers 1..j-1 and backward over layers m..j at once (j = m // 2 + 1).

    Returns the merge layer j, ``F_j`` transposed (n_j, n_(j-1)) and the best
    continuation ``M_j`` (n_(j-1), n_j) of every link into layer j.
    """
    m, d = problem.m, problem.d
    n_fwd_steps = m // 2
    n_bwd_steps = m - n_fwd_steps
    merge_layer = n_fwd_steps + 1
    nmax = max(d, problem.n0, problem.n1)
    fwd_arg = buffer("fwd_arg", (m, d, max(d, problem.n1)), np.int32)
    bwd_arg = buffer("bwd_arg", (m, nmax, d), np.int32)
    fwd, bwd = problem.first_t, problem.last
    for step in range(n_bwd_steps):
        fwd_step = bwd_step = None
        if step < n_fwd_steps:
            k = step + 1  # the turn at layer k; n_(k+1) = d since k < m
            lo, hi = problem.ranges[k - 1]
            out = _state(problem, f"fwd{k % 2}", d, d)
            fwd_step = (fwd, out, problem.table(k), lo, hi, fwd_arg[k - 1])
            fwd = out
        k = m - step
        n_prev = problem.size(k - 1)
        rlo, rhi = problem.reverse(k)
        out = _state(problem, f"bwd{k % 2}", n_prev, d)
        add_table = 1 if k > merge_layer else 0
        bwd_step = (bwd, out, problem.table(k - 1), rlo, rhi, bwd_arg[k - 1, :n_prev], add_table)
        bwd = out
        _mitm_launch(fwd_step, bwd_step)
    return merge_layer, fwd, bwd, fwd_arg, bwd_arg


def solve_device(problem: DeviceProblem, method: str, timings_ms: dict | None = None) -> np.ndarray:
    """Run the DP on the device and backtrack there.

    Parameters
    ----------
    problem : DeviceProblem
    method : {"window", "mitm"}
    timings_ms : dict, optional
        When given, receives ``"dp"`` (the DP and the merge maximum) and
        ``"backtrack"`` (backtracking and the copy of the path to the host) in
        milliseconds; the device is synchronised in between.

    Returns
    -------
    (2 m + 4,) float64 ndarray
        ``[optimum, point of layer 0..m+1, T_0..T_m along the path]``; the
        optimum is -inf when no polyline is feasible.
    """
    started = time.perf_counter()
    if method == "window":
        fwd = _forward_window(problem)
        merge_layer, bwd = problem.m + 1, fwd
        fwd_arg = buffer("fwd_arg", (problem.m, problem.d, max(problem.d, problem.n1)), np.int32)
        bwd_arg = buffer("no_bwd_arg", (1, 1, 1), np.int32)
    else:
        merge_layer, fwd, bwd, fwd_arg, bwd_arg = _meet_in_the_middle(problem)
    n_links = fwd.size
    threads = config.MERGE_THREADS
    blocks = max(1, min(config.MERGE_BLOCKS, -(-n_links // threads)))
    part_val = buffer("part_val", (blocks,), np.float32)
    part_idx = buffer("part_idx", (blocks,), np.int32)
    merge_partial[blocks, threads](fwd, bwd, 0 if method == "window" else 1, part_val, part_idx)
    if timings_ms is not None:
        cuda.synchronize()
        timings_ms["dp"] = (time.perf_counter() - started) * 1e3
        started = time.perf_counter()
    out = buffer("path_out", (2 * problem.m + 4,), np.float64)
    finish[1, threads](part_val, part_idx, fwd.shape[0], merge_layer, fwd_arg, bwd_arg,
                       problem.first, problem.links, problem.last, out)
    host = out.copy_to_host()
    if timings_ms is not None:
        timings_ms["backtrack"] = (time.perf_counter() - started) * 1e3
    return host


def release_workspace() -> None:
    """Drop every workspace buffer (after an out-of-memory error, or to give memory back)."""
    _buffers.clear()


def bytes_needed(m: int, d: int, n0: int, n1: int, method: str) -> int:
    """Device memory (bytes) of one solve: tables, ranges, states and argmax tables."""
    nmax = max(d, n0, n1)
    tables = 4 * (2 * n0 * d + max(m - 1, 1) * d * d + d * n1)
    ranges = 3 * 2 * 4 * d * nmax * (2 if method == "mitm" else 1)
    states = 4 * 4 * nmax * nmax
    arguments = 4 * m * d * nmax * (2 if method == "mitm" else 1)
    return tables + ranges + states + arguments


def free_bytes() -> int | None:
    """Free device memory plus what the workspace already holds (None when unknown)."""
    try:
        free, _ = cuda.current_context().get_memory_info()
    except Exception:  # no memory information: do not refuse
        return None
    if not np.isfinite(free):  # the simulator reports infinite memory
        return None
    return int(free) + sum(int(array.nbytes) for array in _buffers.values())
