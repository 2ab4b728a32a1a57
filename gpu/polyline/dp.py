"""Device-resident polyline problems and the two GPU DP drivers.

A :class:`DeviceProblem` holds the tables, turn ranges and scratch arrays of
one problem shape on the GPU; :func:`solve_device` runs ``window`` or ``mitm``
on it and brings back only the path.  Launch plans and the workspace cache:
docs/notes/extraction-and-polyline.md, "GPU launch plans".  Callers hold
``LOCK`` (:data:`gpu.device.LOCK`) around every use.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
from numba import cuda

from gpu import config, device
from gpu.device import LOCK, buffer, free_bytes, release_workspace
from gpu.launching import LaunchList
from gpu.polyline.kernels_dp import clear_flags, finish, flag_nonfinite, merge_partial, mitm_stage, reverse_ranges
from gpu.polyline.kernels_window import shared_bytes, window_stage

__all__ = [
    "LOCK", "DevicePath", "DeviceProblem", "buffer", "workspace_problem", "workspace_ready", "upload", "solve_device",
    "range_slots", "grid_blocks", "release_workspace", "bytes_needed", "free_bytes", "window_fits",
    "WINDOW_SHARED_LIMIT", "nonfinite_table", "TABLE_NAMES",
]

#: Shared memory (bytes) a block may use without opting in: bounds ``d`` of ``window``.
WINDOW_SHARED_LIMIT = 48 * 1024

#: The score tables, in the order of their finiteness flags.
TABLE_NAMES = ("start_scores", "link_scores", "end_scores")

#: Problem shapes the workspace keeps at most (an adaptive click solves 3-4 in turn), and the device bytes
#: past which it frees its least recently used ones (the newest is always kept).
WORKSPACE_SHAPES, WORKSPACE_BYTES = 32, 256 * 2**20

_workspace: OrderedDict = OrderedDict()


def _problem_bytes(problem) -> int:
    """Device bytes of one problem's tables, ranges and scratch arrays."""
    pairs = dict(zip(range_slots(problem.m), problem.ranges))  # inner layers share one pair
    ranges = [array for pair in pairs.values() for array in pair]
    arrays = [problem.first, problem.first_t, problem.links, problem.last, *ranges, *problem.scratch_arrays.values()]
    return sum(int(array.nbytes) for array in arrays)


def _workspace_bytes() -> int:
    return sum(_problem_bytes(problem) for problem in _workspace.values())


device.register_cache(_workspace.clear, _workspace_bytes)


def range_slots(m: int) -> list[int]:
    """Which distinct range pair each inner layer k = 1..m uses (0: first, 1: inner, 2: last)."""
    if m == 1:
        return [0]
    return [0] + [1] * (m - 2) + [2]


def grid_blocks(n_items: int) -> int:
    """Blocks of a grid-stride launch over ``n_items`` (at least one)."""
    return max(1, min(65536, -(-n_items // config.THREADS_PER_BLOCK)))


def _config_key() -> tuple:
    """The launch configuration a plan was built with (tests and sweeps patch it)."""
    return (config.THREADS_PER_BLOCK, config.WINDOW_THREADS, config.MITM_THREADS_PER_STATE,
            config.MITM_BLOCK_THREADS, config.RMQ_BLOCK_BITS, config.MERGE_THREADS, config.MERGE_BLOCKS)


@dataclass(eq=False)
class DeviceProblem:
    """Tables, turn ranges and scratch arrays of one problem on the device.

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
        Feasible previous points of every inner layer (the inner layers share one pair).
    ranges_changed : bool
        Set by whoever writes the ranges: the reversed ranges of ``mitm`` are stale.
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
    ranges_changed: bool = True
    scratch_arrays: dict = field(default_factory=dict)
    plans: dict = field(default_factory=dict)

    @classmethod
    def allocate(cls, m: int, d: int, n0: int, n1: int) -> DeviceProblem:
        """A problem with all its tables and range arrays allocated (not filled)."""
        pairs = {}
        for slot in range_slots(m):
            n_next = n1 if slot == 2 or m == 1 else d
            pairs.setdefault(slot, cuda.device_array((2, d, n_next), np.int32))
        return cls(
            m, d, n0, n1,
            first=cuda.device_array((n0, d), np.float32),
            first_t=cuda.device_array((d, n0), np.float32),
            links=cuda.device_array((m - 1, d, d) if m > 1 else (1, 1, 1), np.float32),
            last=cuda.device_array((d, n1), np.float32),
            ranges=[(pairs[slot][0], pairs[slot][1]) for slot in range_slots(m)],
        )

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

    def scratch(self, name: str, shape: tuple, dtype):
        """This problem's device array ``name`` of that shape, allocated on first use."""
        key = (name, tuple(int(s) for s in shape), np.dtype(dtype).str)
        if key not in self.scratch_arrays:
            self.scratch_arrays[key] = cuda.device_array(key[1], dtype=dtype)
        return self.scratch_arrays[key]

    def reverse(self, k: int):
        """Feasible next points ``(rlo, rhi)`` (n_(k-1), d) of the links into layer k."""
        self.refresh_reverse()
        slot = range_slots(self.m)[k - 1]
        pair = self.scratch(f"reverse{slot}", (2, self.size(k - 1), self.d), np.int32)
        return pair[0], pair[1]

    def refresh_reverse(self) -> None:
        """Recompute the reversed ranges (for ``mitm``) when the ranges changed."""
        if not self.ranges_changed:
            return
        done = set()
        for k, slot in enumerate(range_slots(self.m), start=1):
            if slot not in done:
                done.add(slot)
                lo, hi = self.ranges[k - 1]
                pair = self.scratch(f"reverse{slot}", (2, self.size(k - 1), self.d), np.int32)
                reverse_ranges[grid_blocks(pair[0].size), config.THREADS_PER_BLOCK](lo, hi, pair[0], pair[1])
        self.ranges_changed = False


def workspace_problem(m: int, d: int, n0: int, n1: int) -> DeviceProblem:
    """The workspace's problem of this shape.  The workspace keeps the last :data:`WORKSPACE_SHAPES` shapes
    used, fewer where they hold more than :data:`WORKSPACE_BYTES` (scratch arrays are counted when the next
    shape comes); the least recently used go first.
    """
    key = (m, d, n0, n1)
    problem = _workspace.pop(key, None)
    if problem is None:
        held = _workspace_bytes()  # once per new shape
        while _workspace and (len(_workspace) >= WORKSPACE_SHAPES or held > WORKSPACE_BYTES):
            held -= _problem_bytes(_workspace.popitem(last=False)[1])
        problem = DeviceProblem.allocate(m, d, n0, n1)
    _workspace[key] = problem
    return problem


def workspace_ready(m: int, d: int, n0: int, n1: int, method: str) -> bool:
    """True when the workspace holds a problem of this shape that ``method`` already ran on."""
    problem = _workspace.get((m, d, n0, n1))
    return problem is not None and any(key[0] == method for key in problem.plans)


def upload(prepared, reuse: bool = True, ranges: bool = True) -> DeviceProblem:
    """Copy a :class:`core.polyline.PreparedProblem` to the device.

    With ``reuse``, into the workspace's problem of that shape; with
    ``ranges``, its (host) turn ranges too, else they are left stale.
    """
    m, d = prepared.n_guides, prepared.n_points
    n0, n1 = prepared.first.shape[0], prepared.last.shape[1]
    problem = workspace_problem(m, d, n0, n1) if reuse else DeviceProblem.allocate(m, d, n0, n1)
    device.copy_to_device(problem.first, prepared.first)
    device.copy_to_device(problem.first_t, np.ascontiguousarray(prepared.first.T))
    if m > 1:
        device.copy_to_device(problem.links, prepared.links)
    device.copy_to_device(problem.last, prepared.last)
    if not ranges:
        return problem
    done = set()
    for k, slot in enumerate(range_slots(m), start=1):
        if slot not in done:
            done.add(slot)
            lo, hi = prepared.ranges32[k - 1]
            problem.ranges[k - 1][0].copy_to_device(lo)
            problem.ranges[k - 1][1].copy_to_device(hi)
    problem.ranges_changed = True
    return problem


def _nonfinite_flags(problem: DeviceProblem):
    """One int32 flag per score table (:data:`TABLE_NAMES`): set when it holds inf or NaN."""
    return problem.scratch("nonfinite", (len(TABLE_NAMES),), np.int32)


def _check_launches(problem: DeviceProblem, check_finite: bool) -> LaunchList:
    """Clear the finiteness flags, then (``check_finite``) set them from the uploaded tables."""
    flags = _nonfinite_flags(problem)
    launches = [(clear_flags, (1, 32), (flags,))]
    if check_finite:
        tables = (problem.first, problem.links if problem.m > 1 else None, problem.last)  # m = 1: no links
        for slot, table in enumerate(tables):
            if table is not None:
                flat = table.reshape(table.size)
                grid = (grid_blocks(flat.size), config.THREADS_PER_BLOCK)
                launches.append((flag_nonfinite, grid, (flat, flags, slot)))
    return LaunchList(launches)


def nonfinite_table(problem: DeviceProblem) -> str | None:
    """The name of the first score table that the last :func:`solve_device` found inf or NaN in; None if none."""
    found = _nonfinite_flags(problem).copy_to_host()
    return next((name for name, flag in zip(TABLE_NAMES, found) if flag), None)


@dataclass
class _Plan:
    """One solve: the DP launches, the backtracking launch, and the path's device array."""

    dp: LaunchList
    backtrack: LaunchList
    out: object


def _window_launches(problem: DeviceProblem, fwd_arg) -> tuple[list, object]:
    """All m forward steps with range-maximum queries; returns the launches and F_(m+1) transposed."""
    bits = config.RMQ_BLOCK_BITS
    launches = []
    fwd = problem.first_t
    for k in range(1, problem.m + 1):
        n_next = problem.size(k + 1)
        out = problem.scratch(f"fwd{k % 2}", (n_next, problem.d), np.float32)
        lo, hi = problem.ranges[k - 1]
        launch = (problem.d, config.WINDOW_THREADS, 0, shared_bytes(fwd.shape[1], bits))
        launches.append((window_stage, launch, (fwd, out, problem.table(k), lo, hi, fwd_arg[k - 1, :, :n_next], bits)))
        fwd = out
    return launches, fwd


def _mitm_launch(fwd_step, bwd_step):
    """One launch of :func:`mitm_stage` over a forward and a backward step (either may be None)."""
    steps = [step for step in (fwd_step, bwd_step) if step is not None]
    longest = max(step[0].shape[1] for step in steps)  # the reduction length
    group = min(config.MITM_THREADS_PER_STATE, 1 << max(0, (longest - 1).bit_length()))
    per_block = max(1, config.MITM_BLOCK_THREADS // group)
    n_fwd = fwd_step[1].size if fwd_step is not None else 0
    n_bwd = bwd_step[1].size if bwd_step is not None else 0
    fwd_args = fwd_step if fwd_step is not None else bwd_step[:6]
    bwd_args = bwd_step if bwd_step is not None else fwd_step + (0,)
    blocks = -(-n_fwd // per_block) + -(-n_bwd // per_block)
    return mitm_stage, (blocks, per_block * group), (group, n_fwd, *fwd_args, n_bwd, *bwd_args)


def _mitm_launches(problem: DeviceProblem, fwd_arg, bwd_arg):
    """Forward over layers 1..j-1 and backward over m..j at once (j = m // 2 + 1).

    Returns the launches, j, ``F_j`` transposed (n_j, n_(j-1)) and the best
    continuation ``M_j`` (n_(j-1), n_j) of every link into layer j.
    """
    m, d = problem.m, problem.d
    n_fwd_steps = m // 2
    merge_layer = n_fwd_steps + 1
    fwd, bwd = problem.first_t, problem.last
    launches = []
    for step in range(m - n_fwd_steps):
        fwd_step = None
        if step < n_fwd_steps:
            k = step + 1  # the turn at layer k; n_(k+1) = d since k < m
            lo, hi = problem.ranges[k - 1]
            out = problem.scratch(f"fwd{k % 2}", (d, d), np.float32)
            fwd_step = (fwd, out, problem.table(k), lo, hi, fwd_arg[k - 1])
            fwd = out
        k = m - step
        n_prev = problem.size(k - 1)
        rlo, rhi = problem.reverse(k)
        out = problem.scratch(f"bwd{k % 2}", (n_prev, d), np.float32)
        add_table = 1 if k > merge_layer else 0
        bwd_step = (bwd, out, problem.table(k - 1), rlo, rhi, bwd_arg[k - 1, :n_prev], add_table)
        bwd = out
        launches.append(_mitm_launch(fwd_step, bwd_step))
    return launches, merge_layer, fwd, bwd


def _plan(problem: DeviceProblem, method: str) -> _Plan:
    m, d = problem.m, problem.d
    fwd_arg = problem.scratch("fwd_arg", (m, d, max(d, problem.n1)), np.int32)
    if method == "window":
        launches, fwd = _window_launches(problem, fwd_arg)
        merge_layer, bwd, with_bwd = m + 1, fwd, 0
        bwd_arg = problem.scratch("no_bwd_arg", (1, 1, 1), np.int32)
    else:
        bwd_arg = problem.scratch("bwd_arg", (m, max(d, problem.n0), d), np.int32)
        launches, merge_layer, fwd, bwd = _mitm_launches(problem, fwd_arg, bwd_arg)
        with_bwd = 1
    threads = config.MERGE_THREADS
    blocks = max(1, min(config.MERGE_BLOCKS, -(-fwd.size // threads)))
    part_val = problem.scratch("part_val", (blocks,), np.float32)
    part_idx = problem.scratch("part_idx", (blocks,), np.int32)
    launches.append((merge_partial, (blocks, threads), (fwd, bwd, with_bwd, part_val, part_idx)))
    out = problem.scratch("path_out", (2 * m + 4,), np.float64)
    backtrack = [(finish, (1, threads), (part_val, part_idx, fwd.shape[0], merge_layer, fwd_arg, bwd_arg,
                                         problem.first, problem.links, problem.last, _nonfinite_flags(problem), out))]
    return _Plan(LaunchList(launches), LaunchList(backtrack), out)


@dataclass(frozen=True, eq=False)
class DevicePath:
    """What :func:`solve_device` brings back: the DP optimum and its path.

    Attributes
    ----------
    optimum : float
        The float32 DP optimum; -inf when no polyline is feasible, NaN when a
        checked table holds inf or NaN (:func:`nonfinite_table` names it).
    layers : (m + 2,) int64 ndarray
        The chosen point of layers 0..m+1; empty when infeasible.
    link_scores : (m + 1,) float64 ndarray
        The device's entries T_0..T_m along the path; empty when infeasible.
    timings_ms : dict of str to float
        ``dp`` and ``backtrack`` (with the copy of the path).
    """

    optimum: float
    layers: np.ndarray
    link_scores: np.ndarray
    timings_ms: dict

    @property
    def feasible(self) -> bool:
        """False when no polyline satisfies the angle limit."""
        return self.optimum != -np.inf


def solve_device(problem: DeviceProblem, method: str, check_finite: bool = False) -> DevicePath:
    """Run ``method`` ("window" or "mitm") on the device and backtrack there; only the path comes back.

    With ``check_finite`` the tables are checked for inf and NaN on the way
    (no extra round trip): the optimum is then NaN when one holds any.
    """
    started = time.perf_counter()
    if method == "mitm":
        problem.refresh_reverse()
    key = (method, _config_key())
    plan = problem.plans.get(key)
    if plan is None:
        plan = problem.plans[key] = _plan(problem, method)
    check_key = ("check", check_finite, _config_key())
    if check_key not in problem.plans:
        problem.plans[check_key] = _check_launches(problem, check_finite)
    problem.plans[check_key].run()
    plan.dp.run()
    cuda.synchronize()
    dp_done = time.perf_counter()
    plan.backtrack.run()
    host = plan.out.copy_to_host()  # [optimum, point of layer 0..m+1, T_0..T_m along the path]
    timings = {"dp": (dp_done - started) * 1e3, "backtrack": (time.perf_counter() - dp_done) * 1e3}
    if not np.isfinite(host[0]):  # infeasible or a table not finite: the rest of ``host`` is stale
        return DevicePath(float(host[0]), np.empty(0, np.int64), np.empty(0), timings)
    m = problem.m
    return DevicePath(float(host[0]), host[1 : m + 3].astype(np.int64), host[m + 3 :], timings)


def window_fits(n_points: int) -> bool:
    """Whether the shared memory of the ``window`` kernel for columns of ``n_points`` fits in a block."""
    return shared_bytes(n_points, config.RMQ_BLOCK_BITS) <= WINDOW_SHARED_LIMIT


def bytes_needed(m: int, d: int, n0: int, n1: int, method: str) -> int:
    """Device memory (bytes) of one solve: tables, ranges, states and argmax tables."""
    nmax = max(d, n0, n1)
    tables = 4 * (2 * n0 * d + max(m - 1, 1) * d * d + d * n1)
    ranges = 3 * 2 * 4 * d * nmax * (2 if method == "mitm" else 1)
    states = 4 * 4 * nmax * nmax
    arguments = 4 * m * d * nmax * (2 if method == "mitm" else 1)
    return tables + ranges + states + arguments
