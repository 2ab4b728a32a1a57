"""The ``brute`` solver: every polyline enumerated, the reference of the tests.

It tests each turn with :func:`core.polyline.turns.turn_is_feasible` and never
uses the index ranges of the fast solvers, so it checks them independently
(compiled with numba only for speed: number every polyline, decode, test, sum).
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from core.polyline.problem import PolylineSolution, PreparedProblem, infeasible_error, solution_for_path
from core.polyline.turns import link_angles, turn_is_feasible, turn_limit_rad

__all__ = ["MAX_BRUTE_PATHS", "solve_brute"]

#: The most polylines ``brute`` agrees to enumerate (about a second of work).
MAX_BRUTE_PATHS = 2_000_000


@njit(cache=True, nogil=True)
def _decode(number, n0, d, n1, path):
    """Write polyline ``number`` as its layer indices (mixed radix n0, d, ..., d, n1)."""
    m = path.shape[0] - 2
    path[m + 1] = number % n1
    number //= n1
    for layer in range(m, 0, -1):
        path[layer] = number % d
        number //= d
    path[0] = number


@njit(cache=True, nogil=True)
def _link_value(path, t, first_table, inner_tables, last_table):
    """The entry of link t (layer t -> t+1) in the tables of the first, inner or last link."""
    m = path.shape[0] - 2
    if t == 0:
        return first_table[path[0], path[1]]
    if t == m:
        return last_table[path[m], path[m + 1]]
    return inner_tables[t - 1, path[t], path[t + 1]]


@njit(cache=True, nogil=True)
def _is_feasible(path, angles_first, angles_inner, angles_last, limit_rad):
    m = path.shape[0] - 2
    for k in range(1, m + 1):  # the turn at every guide; none at the start and end
        angle_in = _link_value(path, k - 1, angles_first, angles_inner, angles_last)
        angle_out = _link_value(path, k, angles_first, angles_inner, angles_last)
        if not turn_is_feasible(angle_in, angle_out, limit_rad):
            return False
    return True


@njit(cache=True, nogil=True)
def _enumerate(first, links, last, angles_first, angles_inner, angles_last, limit_rad):
    m = links.shape[0] + 1
    n0, d = first.shape
    n1 = last.shape[1]
    path = np.zeros(m + 2, dtype=np.int64)
    best_path = np.full(m + 2, -1, dtype=np.int64)
    best = -np.inf
    for number in range(n0 * d**m * n1):
        _decode(number, n0, d, n1, path)
        if not _is_feasible(path, angles_first, angles_inner, angles_last, limit_rad):
            continue
        score = 0.0  # float64, summed in path order like core.polyline.path_score
        for t in range(m + 1):
            score += _link_value(path, t, first, links, last)
        if score > best:
            best = score
            best_path[:] = path
    return best, best_path


def solve_brute(prepared: PreparedProblem, cancel=None) -> PolylineSolution:
    """Enumerate every polyline of a small problem and return the best feasible one.

    Parameters
    ----------
    prepared : PreparedProblem
        At most :data:`MAX_BRUTE_PATHS` polylines (``n0 * d**m * n1``).
    cancel : core.cancel.CancelToken, optional
        Not polled (at most about a second; the caller checks it).

    Returns
    -------
    PolylineSolution
        The first optimal polyline in enumeration order (method "brute", backend "cpu").

    Raises
    ------
    ValueError
        When the problem has more than :data:`MAX_BRUTE_PATHS` polylines.
    core.polyline.NoFeasiblePolylineError
        When no polyline satisfies the angle limit.
    """
    m, d = prepared.n_guides, prepared.n_points
    n0, n1 = prepared.first.shape[0], prepared.last.shape[1]
    n_paths = n0 * d**m * n1  # Python integers: no overflow
    if n_paths > MAX_BRUTE_PATHS:
        raise ValueError(
            f"method 'brute' would enumerate n0 * d^m * n1 = {n0} * {d}^{m} * {n1} = {n_paths:,} "
            f"polylines; it is a reference for small problems (at most {MAX_BRUTE_PATHS:,}): "
            "use method 'window' or 'mitm'"
        )
    started = time.perf_counter()
    spacing = prepared.spacing
    # One (d, d) table of inner link directions per inner link, like ``links``
    # (no (d, d) table at all when m = 1, where d may be large).
    inner = link_angles(prepared.offsets, prepared.offsets, spacing) if m > 1 else np.empty((1, 0))
    best, path = _enumerate(
        prepared.first, prepared.links, prepared.last,
        link_angles(prepared.start_offsets, prepared.offsets, spacing),
        np.repeat(inner[None], m - 1, axis=0),
        link_angles(prepared.offsets, prepared.end_offsets, spacing),
        turn_limit_rad(prepared.max_turn_deg),
    )
    if best == -np.inf:
        raise infeasible_error(prepared.max_turn_deg, m, prepared.offsets, spacing)
    timings_ms = {"dp": (time.perf_counter() - started) * 1e3, "backtrack": 0.0}
    return solution_for_path(prepared, int(path[0]), path[1:-1], int(path[-1]), "brute", "cpu", timings_ms)
