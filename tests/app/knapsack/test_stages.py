"""The worker's progress texts carry the solver's method and bound gap (Qt-free)."""

from __future__ import annotations

from app.knapsack.jobs import SolveJob, run_job
from core.knapsack import MCKP
from core.knapsack.generators import pisinger_mckp
from core.knapsack.io import KnapsackInstance


def test_run_job_appends_the_solver_stages_to_its_progress():
    drawn = pisinger_mckp("uncorrelated", 200, 30, 10**9, seed=2)
    instance = KnapsackInstance("large", MCKP(drawn.classes, (drawn.capacity + drawn.min_weight) // 2))
    texts = []
    result = run_job(SolveJob((instance,), ("cpu",)), lambda done, total, text: texts.append(text))
    assert result.solutions["cpu"][0].method == "states"
    assert any(t.startswith("solving large (1 of 1) on the CPU: states, bound gap") for t in texts)
    assert texts[-1] == "done"
