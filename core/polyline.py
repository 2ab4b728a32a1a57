"""The angle-constrained polyline problem and its public solver entry.

A polyline runs from a start point, through one point on each of ``m`` guides,
to an end point.  Every guide carries the same ``d`` candidate points at the
sorted ``offsets`` (pixels, along the left normal of the axis), consecutive
guides are ``spacing`` pixels apart along the axis, so every link advances by
``spacing`` and its direction is ``atan2(delta_offset, spacing)``.  The turning
angle at a guide point is the difference of the directions of the link into it
and the link out of it; it must not exceed ``max_turn_deg`` at any guide point.
There is no limit at the start and end points.

In the fixed-endpoint case (DESIGN.md's contract) the start and end points lie
on the axis (offset 0).  With endpoint snapping they become guides of their own:
``start_scores`` is then ``(n0, d)`` over ``start_offsets`` and ``end_scores``
``(d, n1)`` over ``end_offsets``, and the solver chooses the start and end too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "NoFeasiblePolylineError",
    "PolylineProblem",
    "PolylineSolution",
    "solve",
    "METHODS",
    "TURN_SLACK_RAD",
]

METHODS = ("brute", "mitm", "window")

#: Turns up to ``max_turn + TURN_SLACK_RAD`` count as feasible, so that a turn
#: exactly at the limit survives floating-point rounding in every solver alike.
TURN_SLACK_RAD = 1e-9


class NoFeasiblePolylineError(ValueError):
    """No polyline between the endpoints satisfies the turning-angle limit."""


@dataclass(frozen=True, eq=False)
class PolylineProblem:
    """Score tables and geometry of one angle-constrained polyline search.

    Parameters
    ----------
    start_scores : (d,) float32 ndarray, or (n0, d) with snapping
        Score of the link from the start point to point ``p`` of guide 1.
    link_scores : (m - 1, d, d) float32 ndarray
        ``link_scores[t, p, q]`` scores the link from point ``p`` of guide
        ``t + 1`` to point ``q`` of guide ``t + 2``.  Shape ``(0, d, d)`` when
        ``m == 1``.
    end_scores : (d,) float32 ndarray, or (d, n1) with snapping
        Score of the link from point ``p`` of guide ``m`` to the end point.
    offsets : (d,) float64 ndarray
        Ascending offsets (px) of the candidate points, shared by all guides.
    spacing : float
        Distance (px) between consecutive guides along the axis, ``h > 0``.
    max_turn_deg : float
        Largest turning angle allowed at a guide point, in ``(0, 180]``.
    start_offsets, end_offsets : (n,) float64 ndarray, optional
        Ascending offsets of the start and end candidates; default ``[0.0]``
        (the fixed endpoints on the axis).
    """

    start_scores: np.ndarray
    link_scores: np.ndarray
    end_scores: np.ndarray
    offsets: np.ndarray
    spacing: float
    max_turn_deg: float
    start_offsets: np.ndarray | None = field(default=None)
    end_offsets: np.ndarray | None = field(default=None)


@dataclass(frozen=True, eq=False)
class PolylineSolution:
    """Optimal polyline of a :class:`PolylineProblem`.

    Attributes
    ----------
    score : float
        Sum of the link scores of the chosen polyline (recomputed in float64
        from the tables, in path order).
    indices : (m,) int64 ndarray
        Chosen point index on each guide.
    start_index, end_index : int
        Chosen candidate of the start and end (always 0 for fixed endpoints).
    method, backend : str
        The solver and the backend that produced the solution.
    """

    score: float
    indices: np.ndarray
    start_index: int = 0
    end_index: int = 0
    method: str = ""
    backend: str = ""


def solve(problem: PolylineProblem, method: str = "window", backend: str = "auto") -> PolylineSolution:
    """Find the highest-scoring polyline that satisfies the turning-angle limit.

    Parameters
    ----------
    problem : PolylineProblem
    method : {"window", "mitm", "brute"}
        ``window`` (sliding-window maximum, O(m d^2)), ``mitm`` (Seredin's
        meet-in-the-middle pair-state DP, O(m d^3)) or ``brute`` (enumerates
        every polyline; a reference for small problems).
    backend : {"auto", "cpu", "gpu"}
        ``auto`` uses the GPU when numba.cuda finds one, else the CPU.

    Raises
    ------
    NoFeasiblePolylineError
        When no polyline satisfies the angle limit.
    ValueError
        For malformed problems or unknown method/backend names.
    """
    raise NotImplementedError("filled in by the solver work")
