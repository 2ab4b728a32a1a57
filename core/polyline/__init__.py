"""The angle-constrained polyline search: problem types, preparation and the exact solvers.

``solve`` and ``solve_prepared`` (``dispatch``) run ``window``, ``mitm`` (CPU:
``cpu``; GPU: ``gpu.polyline`` through ``core.engine``) or the ``brute`` reference.
"""

from core.polyline.dispatch import solve, solve_prepared
from core.polyline.prepare import prepare
from core.polyline.problem import (
    METHODS,
    TURN_SLACK_RAD,
    NoFeasiblePolylineError,
    PolylineProblem,
    PolylineSolution,
    PreparedProblem,
    path_score,
)

__all__ = [
    "METHODS",
    "TURN_SLACK_RAD",
    "NoFeasiblePolylineError",
    "PolylineProblem",
    "PolylineSolution",
    "PreparedProblem",
    "path_score",
    "prepare",
    "solve",
    "solve_prepared",
]
