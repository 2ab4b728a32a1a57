"""Link scores and the exact DP of one extraction, on the CPU or the GPU."""

from __future__ import annotations

import dataclasses
import time

from core import engine
from core.extraction.options import ScoringOptions
from core.extraction.scores import link_score_tables
from core.polyline import cpu
from core.polyline.prepare import prepare
from core.polyline.problem import PolylineProblem, PolylineSolution

__all__ = ["score_and_solve", "score_and_solve_on"]


def score_and_solve(gradient, guides, options: ScoringOptions, method: str, max_turn_deg: float,
                    cancel=None) -> PolylineSolution:
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

    Returns
    -------
    core.polyline.PolylineSolution
        Backend "cpu"; ``timings_ms``: ``scoring``, ``dp`` and ``backtrack``.

    Raises
    ------
    core.polyline.NoFeasiblePolylineError, core.cancel.Cancelled
    """
    started = time.perf_counter()
    first, links, last = link_score_tables(gradient, guides, options, cancel)
    scored = time.perf_counter()
    problem = PolylineProblem(first, links, last, guides.offsets, guides.spacing, max_turn_deg,
                              start_offsets=guides.start_offsets, end_offsets=guides.end_offsets)
    solution = cpu.solve_prepared(prepare(problem), method, cancel)
    backtrack = solution.timings_ms["backtrack"]
    timings = {"scoring": (scored - started) * 1e3, "dp": (time.perf_counter() - scored) * 1e3 - backtrack,
               "backtrack": backtrack}
    return dataclasses.replace(solution, timings_ms=timings)


def score_and_solve_on(backend: str, gradient, guides, options: ScoringOptions, method: str, max_turn_deg: float,
                       cancel=None) -> PolylineSolution:
    """:func:`score_and_solve` on a resolved backend, "cpu" or "gpu".

    When the GPU lacks memory the CPU runs instead, with a RuntimeWarning
    (:func:`core.engine.run_with_cpu_fallback`); on the GPU ``cancel`` is
    checked before and after the device work.
    """
    args = (gradient, guides, options, method, max_turn_deg, cancel)
    return engine.run_with_cpu_fallback(
        backend,
        lambda: engine.gpu_package("polyline").score_and_solve(*args),
        lambda: score_and_solve(*args),
    )
