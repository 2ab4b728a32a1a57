"""Link scores and the exact DP of one extraction, on the CPU or the GPU.

The candidates off the raster are excluded from the DP (:func:`solve_on_raster`):
guides laid across a click on the raster's border reach past it, and there a
ribbon whose outer edge the border cuts off scores best with its centre line
beyond the border (docs/notes/extraction-and-polyline.md).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from core import engine
from core.extraction.options import ScoringOptions
from core.extraction.scores import link_score_tables
from core.polyline import cpu
from core.polyline.prepare import prepare
from core.polyline.problem import PolylineProblem, PolylineSolution
from core.polyline.turns import link_angles, turn_is_feasible, turn_limit_rad

__all__ = ["score_and_solve", "score_and_solve_on", "solve_on_raster", "straight_among_ties"]


def score_and_solve(gradient, guides, options: ScoringOptions, method: str, max_turn_deg: float,
                    cancel=None, excluded=None) -> PolylineSolution:
    """Score the links of the guides and solve the polyline problem on the CPU.

    The CPU twin of ``gpu.polyline.score_and_solve`` (same signature and result).

    Parameters
    ----------
    gradient : core.extraction.gradient.GradientWindow
        Gradient window covering the guides.
    guides : core.extraction.guides.Guides
    options : ScoringOptions
    method : {"window", "mitm", "brute"}
    max_turn_deg : float
        Largest turn at a guide point, in (0, 180].
    cancel : core.cancel.CancelToken, optional
        Polled by the scoring kernel and the DP stages.
    excluded : (n_points,) bool array_like, optional
        Candidate points (layer after layer) whose links score
        :func:`core.extraction.scores.excluded_link_score` (e.g. ``guides.off_raster(size)``).

    Returns
    -------
    core.polyline.PolylineSolution
        Backend "cpu"; ``timings_ms``: ``scoring``, ``dp`` and ``backtrack``.

    Raises
    ------
    core.polyline.NoFeasiblePolylineError, core.cancel.Cancelled
    """
    started = time.perf_counter()
    first, links, last = link_score_tables(gradient, guides, options, cancel, excluded)
    scored = time.perf_counter()
    problem = PolylineProblem(first, links, last, guides.offsets, guides.spacing, max_turn_deg,
                              start_offsets=guides.start_offsets, end_offsets=guides.end_offsets)
    solution = cpu.solve_prepared(prepare(problem), method, cancel)
    backtrack = solution.timings_ms["backtrack"]
    timings = {"scoring": (scored - started) * 1e3, "dp": (time.perf_counter() - scored) * 1e3 - backtrack,
               "backtrack": backtrack}
    return dataclasses.replace(solution, timings_ms=timings)


def score_and_solve_on(backend: str, gradient, guides, options: ScoringOptions, method: str, max_turn_deg: float,
                       cancel=None, excluded=None) -> PolylineSolution:
    """:func:`score_and_solve` on a resolved backend, "cpu" or "gpu".

    When the GPU lacks memory the CPU runs instead, with a RuntimeWarning
    (:func:`core.engine.run_with_cpu_fallback`); on the GPU ``cancel`` is
    checked before and after the device work.
    """
    args = (gradient, guides, options, method, max_turn_deg, cancel, excluded)
    return engine.run_with_cpu_fallback(
        backend,
        lambda: engine.gpu_package("polyline").score_and_solve(*args),
        lambda: score_and_solve(*args),
    )


def solve_on_raster(backend: str, gradient, guides, options: ScoringOptions, method: str, max_turn_deg: float,
                    size, cancel=None) -> PolylineSolution:
    """:func:`score_and_solve_on` among the polylines whose candidates lie on the raster.

    Parameters
    ----------
    backend, gradient, guides, options, method, max_turn_deg, cancel
        As :func:`score_and_solve_on`.
    size : (width, height)
        The raster's, in pixels: candidates off ``[0, width] x [0, height]``
        are excluded (core.extraction.guides.Guides.off_raster).

    Returns
    -------
    core.polyline.PolylineSolution
        The optimum on the raster; where no feasible polyline keeps to it
        (candidates farther apart than the raster is wide, or the angle limit
        forbidding the step from a click on the border to the nearest
        candidate inside), the optimum over all candidates, whose vertices the
        caller clips (core.extraction.guides.clipped_to_raster).
    """
    excluded = guides.off_raster(size)
    args = (backend, gradient, guides, options, method, max_turn_deg, cancel)
    if not excluded.any():
        return score_and_solve_on(*args)
    solution = score_and_solve_on(*args, excluded)
    # links off the raster score below minus any polyline on it, and those all score >= 0
    return solution if solution.score >= 0.0 else score_and_solve_on(*args)


def straight_among_ties(solution: PolylineSolution, guides, max_turn_deg: float, excluded=None) -> PolylineSolution:
    """The feasible polyline nearest the straight segment, where every polyline scores 0.

    An optimum of 0 means nothing to follow (a flat or nodata window), and the
    solver's tie-break would pick an arbitrary zigzag; the straight segment is
    one of the optima.  Candidates flagged in ``excluded`` (n_points,) bool,
    layer after layer, are passed over.  Kept as it is when the angle limit
    forbids it.
    """
    n0, d = guides.start_offsets.size, guides.offsets.size
    flags = np.zeros(n0 + guides.n_guides * d + guides.end_offsets.size, bool) if excluded is None else excluded
    inner = flags[n0:n0 + guides.n_guides * d].reshape(guides.n_guides, d).any(axis=0)  # off on some guide
    choices = [_centre(guides.start_offsets, flags[:n0]), _centre(guides.offsets, inner),
               _centre(guides.end_offsets, flags[n0 + guides.n_guides * d:])]
    if None in choices:
        return solution
    start, centre, end = choices
    offsets = [guides.start_offsets[start]] + [guides.offsets[centre]] * guides.n_guides + [guides.end_offsets[end]]
    angles = [link_angles([a], [b], guides.spacing)[0, 0] for a, b in zip(offsets[:-1], offsets[1:])]
    limit = turn_limit_rad(max_turn_deg)
    if not all(turn_is_feasible(a, b, limit) for a, b in zip(angles[:-1], angles[1:])):
        return solution
    indices = np.full(guides.n_guides, centre, dtype=np.int64)
    return dataclasses.replace(solution, indices=indices, start_index=start, end_index=end)


def _centre(offsets, excluded):
    """The index of the offset nearest 0 among those not ``excluded`` (the first of ties); None if all are."""
    distance = np.where(excluded, np.inf, np.abs(offsets))
    best = int(np.argmin(distance))
    return None if np.isinf(distance[best]) else best
