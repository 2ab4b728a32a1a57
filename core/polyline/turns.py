"""Link directions and the turning-angle constraint, shared by every solver.

All links advance by the guide spacing ``h`` along the axis, so the direction of
the link from offset ``o1`` to offset ``o2`` is ``atan2(o2 - o1, h)``, in
(-90, 90) degrees, and the turn at the middle point of three consecutive points
is the difference of the two link directions.  Every solver decides
feasibility through :func:`turn_is_feasible` (the brute-force reference) or the
equivalent index ranges of :func:`feasible_ranges` (here from tables of link
directions, the reference of :func:`core.polyline.ranges.turn_ranges`, which the
fast solvers use), so they agree exactly on which polylines are allowed.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["TURN_SLACK_RAD", "link_angles", "turn_limit_rad", "turn_is_feasible", "feasible_ranges"]

#: Turns up to ``max_turn + TURN_SLACK_RAD`` count as feasible, so that a turn
#: exactly at the limit survives floating-point rounding in every solver alike.
TURN_SLACK_RAD = 1e-9


@njit(cache=True, nogil=True)
def _link_angles(from_offsets, to_offsets, spacing, angles):
    for i in range(from_offsets.shape[0]):
        for j in range(to_offsets.shape[0]):
            angles[i, j] = math.atan2(to_offsets[j] - from_offsets[i], spacing)


def link_angles(from_offsets: np.ndarray, to_offsets: np.ndarray, spacing: float) -> np.ndarray:
    """Directions (rad) of all links between two consecutive guides.

    Parameters
    ----------
    from_offsets : (n_from,) float64 ndarray
    to_offsets : (n_to,) float64 ndarray
    spacing : float
        Guide spacing ``h`` in pixels.

    Returns
    -------
    (n_from, n_to) float64 ndarray
        ``angles[i, j] = atan2(to_offsets[j] - from_offsets[i], spacing)``, by the
        C library's ``atan2`` (numpy's SIMD arctan2 differs in the last bit on some
        machines), as :func:`core.polyline.ranges.turn_ranges` decides doubtful turns.
    """
    from_offsets = np.ascontiguousarray(from_offsets, dtype=np.float64).reshape(-1)
    to_offsets = np.ascontiguousarray(to_offsets, dtype=np.float64).reshape(-1)
    angles = np.empty((from_offsets.shape[0], to_offsets.shape[0]))
    _link_angles(from_offsets, to_offsets, float(spacing), angles)
    return angles


def turn_limit_rad(max_turn_deg: float) -> float:
    """The largest feasible turn in radians, slack included."""
    return float(np.deg2rad(max_turn_deg)) + TURN_SLACK_RAD


@njit(cache=True, nogil=True)
def turn_is_feasible(angle_in: float, angle_out: float, limit_rad: float) -> bool:
    """The one feasibility predicate: ``|angle_out - angle_in| <= limit_rad``."""
    return abs(angle_out - angle_in) <= limit_rad


@njit(cache=True, nogil=True)
def _feasible_ranges(angles_in, angles_out, limit_rad, lo, hi):
    n_prev = angles_in.shape[0]
    d, n_next = angles_out.shape
    for q in range(d):
        # With D(p) = angles_out[q, r] - angles_in[p, q] (rounded), feasibility is
        # -limit <= D(p) <= limit.  D does not decrease with p (angles_in[:, q]
        # does not increase) nor with r (angles_out[q, :] does not decrease), so
        # the feasible p form an interval whose two ends only move towards
        # smaller p as r grows: two pointers find all n_next intervals in
        # O(n_prev + n_next).
        first = n_prev  # smallest p with D(p) >= -limit
        last = n_prev - 1  # largest p with D(p) <= limit
        for r in range(n_next):
            a_out = angles_out[q, r]
            while last >= 0 and a_out - angles_in[last, q] > limit_rad:
                last -= 1
            while first > 0 and a_out - angles_in[first - 1, q] >= -limit_rad:
                first -= 1
            lo[q, r] = first
            hi[q, r] = last


def feasible_ranges(angles_in: np.ndarray, angles_out: np.ndarray, max_turn_deg: float):
    """For every middle point ``q`` and next point ``r``, the feasible previous points.

    Parameters
    ----------
    angles_in : (n_prev, d) float64 ndarray
        Directions of the links into the middle guide (:func:`link_angles`).
    angles_out : (d, n_next) float64 ndarray
        Directions of the links out of the middle guide.
    max_turn_deg : float

    Returns
    -------
    lo, hi : (d, n_next) int64 ndarrays
        Point ``p`` of the previous guide may precede ``q -> r`` exactly when
        ``lo[q, r] <= p <= hi[q, r]``; an empty range has ``hi < lo``.
        Both ends are non-increasing in ``r``.
    """
    angles_in = np.ascontiguousarray(angles_in, dtype=np.float64)
    angles_out = np.ascontiguousarray(angles_out, dtype=np.float64)
    d, n_next = angles_out.shape
    lo = np.empty((d, n_next), dtype=np.int64)
    hi = np.empty((d, n_next), dtype=np.int64)
    _feasible_ranges(angles_in, angles_out, turn_limit_rad(max_turn_deg), lo, hi)
    return lo, hi
