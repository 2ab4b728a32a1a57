"""The CPU backend of the polyline search: the twin of ``gpu.polyline.solve_prepared``."""

from __future__ import annotations

from core.polyline.brute import solve_brute
from core.polyline.mitm import solve_mitm
from core.polyline.problem import PolylineSolution, PreparedProblem
from core.polyline.window import solve_window

__all__ = ["solve_prepared"]

_SOLVERS = {"brute": solve_brute, "mitm": solve_mitm, "window": solve_window}


def solve_prepared(prepared: PreparedProblem, method: str, cancel=None) -> PolylineSolution:
    """Solve a prepared problem on the CPU.

    Parameters
    ----------
    prepared : PreparedProblem
    method : {"window", "mitm", "brute"}
    cancel : core.cancel.CancelToken, optional
        Checked between the stages of ``window`` and ``mitm`` (and inside
        those of ``mitm``); ``brute`` runs for at most about a second.

    Returns
    -------
    PolylineSolution
        Backend "cpu"; ``timings_ms`` holds ``dp`` and ``backtrack``.

    Raises
    ------
    core.polyline.NoFeasiblePolylineError
        When no polyline satisfies the angle limit.
    ValueError
        For too large a problem (``brute``, or tables beyond the host-memory budget).
    core.cancel.Cancelled
        When ``cancel`` was cancelled.
    """
    return _SOLVERS[method](prepared, cancel)
