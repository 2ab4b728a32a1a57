"""The line under a finished solve (the table's solve times, then the job's wall time under its own label), loading
a Pisinger folder, and the tables' alignment of numbers."""

from __future__ import annotations

import numpy as np

from app.knapsack import jobs
from app.knapsack.jobs import JobResult, SolveJob, run_job
from app.model.knapsack import instance_table, result_summary
from core.knapsack import KP1
from core.knapsack.io import KnapsackInstance
from core.knapsack.problems import KnapsackSolution


def _solution(value: int, time_ms: float, backend: str = "cpu") -> KnapsackSolution:
    return KnapsackSolution(value, np.array([0], np.int64), backend, "dp", time_ms)


def test_one_instance_shows_the_tables_solve_time_not_the_wall_time():
    instance = KnapsackInstance("one", KP1([5], [4], 4), optimum=5)
    result = JobResult({"cpu": [_solution(5, 537.2)]}, {"cpu": 611.0}, False, 1342.0, 790.4)
    headers, rows = instance_table([instance], result)
    assert rows[0][headers.index("Time ms (CPU)")] == "537.2"
    assert result_summary([instance], result) == ("Optimum 5 (CPU solve 537.2 ms, method dp; job 1342.0 ms including "
                                                 "790.4 ms preparing the solvers); matches the file's known optimum.")
    warm = JobResult({"cpu": [_solution(5, 537.2)]}, {"cpu": 540.0}, False, 541.0, 0.0)
    assert result_summary([instance], warm).startswith("Optimum 5 (CPU solve 537.2 ms, method dp; job 541.0 ms);")


def test_several_instances_sum_the_solve_times_and_a_batch_shows_its_time_once():
    instances = [KnapsackInstance(f"i{k}", KP1([5], [4], 4)) for k in range(3)]
    one_by_one = JobResult({"cpu": [_solution(5, t) for t in (1.25, 2.5, 100.0)]}, {"cpu": 110.0}, False, 900.0)
    assert result_summary(instances, one_by_one) == "3 instances solved (CPU solves 103.8 ms in all; job 900.0 ms)."
    batch = JobResult({"cpu": [_solution(5, 40.0)] * 3, "gpu": [_solution(5, 7.5, "gpu")] * 3},
                      {"cpu": 45.0, "gpu": 9.0}, True, 2000.0, 1500.0)
    assert result_summary(instances, batch) == (
        "3 instances solved as one batch (CPU batch 40.0 ms, GPU batch 7.5 ms; job 2000.0 ms including 1500.0 ms "
        "preparing the solvers); the backends agree.")


def test_run_job_times_the_whole_job_and_its_warm_up(monkeypatch):
    monkeypatch.setattr(jobs, "_warmed", set())
    job = SolveJob(tuple(KnapsackInstance(f"i{k}", KP1([3, 4, k + 1], [2, 3, 1], 4)) for k in range(2)), ("cpu",))
    cold, warm = run_job(job), run_job(job)
    assert cold.warm_up_ms > 0 and warm.warm_up_ms == 0.0
    for result in (cold, warm):
        assert result.job_ms >= result.warm_up_ms + result.wall_ms["cpu"]
        assert result.wall_ms["cpu"] >= result.solve_ms("cpu") == sum(s.time_ms for s in result.solutions["cpu"])


def test_loading_a_pisinger_folder_whole_reads_its_opt_files_as_optima(tmp_path):
    from app.model.knapsack import load_instance_files

    for k in (1, 2):
        (tmp_path / f"knapPI_1_3_1000_{k}").write_text("3\n10\n5 4\n3 2\n6 7\n")
        (tmp_path / f"knapPI_1_3_1000_{k}.opt").write_text("11\n")
    loaded = load_instance_files(sorted(tmp_path.iterdir()), "kp1")
    assert [(i.name, i.optimum) for i in loaded.instances] == [("knapPI_1_3_1000_1", 11), ("knapPI_1_3_1000_2", 11)]


def test_the_tables_right_align_numbers_shown_as_text(qapp):
    from PySide6.QtCore import Qt

    from app.knapsack.widgets import RowsModel

    model = RowsModel()
    model.set_rows(["Instance", "Items", "Capacity", "Known optimum", "Time ms (CPU)"],
                   [["knapPI_1_100", "100", "2750 × 1220", "–", "78.5"]])
    right = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    aligned = [model.data(model.index(0, c), Qt.ItemDataRole.TextAlignmentRole) == right for c in range(5)]
    assert aligned == [False, True, False, False, True]
