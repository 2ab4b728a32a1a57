"""The angle-constrained polyline search: its problem types, their preparation and the solvers.

``PolylineProblem`` holds the score tables and guide geometry (``problem``),
``prepare`` validates it once into the chain-of-layers form every backend
consumes (``prepare``, ``tables``, ``turns``), and ``solve`` / ``solve_prepared``
(``dispatch``) pick the backend and run one of the exact solvers: ``window``
and ``mitm`` on the CPU (``cpu``: ``window``, ``mitm``, ``stages``) or the GPU
(``gpu.polyline``, reached through ``core.engine``), or the ``brute`` reference.
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
