"""The knapsack panel: generate/load, solve in the worker process, cancel, compare, export, errors, in the window.

The panel tests share one worker process (module fixture) so that the
process starts once; every test checks that no job is left running.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import re
import time
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt, QTimer

from app.knapsack import widgets as knapsack_widgets
from app.knapsack.jobs import JobResult, SolveJob, run_job
from app.knapsack.panel import KnapsackPanel
from app.knapsack.runner import KnapsackRunner
from app.model.knapsack import (
    export_csv,
    generate_instance,
    instance_table,
    item_rows,
    load_instance_files,
    result_summary,
    solutions_document,
)
from core.engine import gpu_available
from core.knapsack import KP1, KP2, MCKP, SubsetSum, solve, solve_many
from core.knapsack.generators import curtis, pisinger, pisinger_hard, suri
from core.knapsack.io import KnapsackInstance, instance_to_dict, write_json
from core.knapsack.problems import load_text
from tests.shared_data import shared_file

WAIT_MS = 60_000  # a fresh checkout compiles the solvers in the worker on first use


@pytest.fixture(scope="module")
def shared_runner(qapp):
    runner = KnapsackRunner()
    yield runner
    runner.shutdown()
    assert runner.process is None


@pytest.fixture
def panel(qtbot, shared_runner, shown_errors):
    widget = KnapsackPanel(runner=shared_runner)
    qtbot.addWidget(widget)
    widget.show()
    widget.backend_combo.setCurrentIndex(widget.backend_combo.findData("cpu"))  # "auto" may mean a GPU
    yield widget
    widget.shutdown()
    assert not widget.busy and not shared_runner.busy, "a knapsack job outlived its test"


def click(qtbot, button):
    assert button.isEnabled() and button.isVisible(), button.text()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def solve_and_wait(qtbot, panel, button=None):
    with qtbot.waitSignal(panel.solve_finished, timeout=WAIT_MS) as blocker:
        click(qtbot, button or panel.solve_button)
    assert not panel.busy
    return blocker.args[0]


def wait_failed(qtbot, panel, shown_errors):
    qtbot.waitUntil(lambda: not panel.busy, timeout=WAIT_MS)
    assert len(shown_errors) == 1, shown_errors
    return shown_errors[0]


def column(panel, header):
    model = panel.instances_model
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    index = headers.index(header)
    return [model.cell(r, index) for r in range(model.rowCount())]


def generate(qtbot, panel, problem, kind, items, seed=0, **fields):
    panel.set_problem(problem)
    panel.kind_combo.setCurrentText(kind)
    panel.items_spin.setValue(items)
    panel.seed_spin.setValue(seed)
    for name, value in fields.items():
        getattr(panel, f"{name}_spin").setValue(value)
    click(qtbot, panel.generate_button)
    assert len(panel.instances) == 1
    assert (panel.kind_combo.currentText(), panel.items_spin.value()) == (kind, items)  # the fields stay
    return panel.instances[0]


def load_random_kp2(panel, path, n, capacity):
    """A random KP2 of ``n`` items, capacities ``capacity`` x ``capacity``, written to ``path`` and loaded."""
    rng = np.random.default_rng(0)
    w1, w2 = rng.integers(1, capacity // 4, n), rng.integers(1, capacity // 4, n)
    profits = w1 + w2 + rng.integers(0, 10, n)
    problem = KP2(profits.tolist(), w1.tolist(), w2.tolist(), capacity, capacity)
    write_json(path, KnapsackInstance(Path(path).stem, problem))
    panel.set_problem("kp2")
    panel.load_paths([str(path)])


# ------------------------------------------------------------------ the panel and its worker
@pytest.mark.parametrize("problem, kind, items, direct", [
    ("kp1", "strongly", 300, lambda: pisinger("strongly", 300, 1000, 1, 100, 7)),
    ("kp1", "hard 14: multiple strongly correlated", 300, lambda: pisinger_hard(14, 300, 1000, 1, 100, 7)),
    ("subset-sum", "half", 60, lambda: curtis("half", 60, 7)),
    ("mckp", "set 2", 30, lambda: suri(2, 7, 30)),
])
def test_generated_instance_optimum_equals_core_solve(qtbot, panel, shown_errors, problem, kind, items, direct):
    instance = generate(qtbot, panel, problem, kind, items, seed=7)
    assert instance_to_dict(instance.problem) == instance_to_dict(direct())  # the generator's own instance
    result = solve_and_wait(qtbot, panel)
    expected = solve(instance.problem, backend="cpu")
    (solution,) = result.solutions["cpu"]
    assert solution.value == expected.value
    assert column(panel, "Optimum (CPU)") == [str(expected.value)]
    assert panel.status_label.text().startswith(f"Optimum {expected.value} ")
    shown_items = [[panel.items_model.cell(r, c) for c in range(panel.items_model.columnCount())]
                   for r in range(panel.items_model.rowCount())]
    np.testing.assert_array_equal(shown_items, item_rows(instance.problem, solution.selected))
    assert panel.export_json_button.isEnabled() and shown_errors == []
    panel.set_problem("kp2" if problem != "kp2" else "kp1")  # no instances left: nor the line on their result
    assert panel.instances == () and panel.status_label.text() == ""


def test_real_instance_known_optimum_is_matched(qtbot, panel, shown_errors, monkeypatch):
    path = shared_file("knapsack/pisinger/large_scale/knapPI_2_200_1000_1")
    monkeypatch.setattr(knapsack_widgets, "ask_instance_files", lambda parent, folder="": [str(path)])
    click(qtbot, panel.load_button)
    (instance,) = panel.instances
    assert instance.optimum is not None and str(instance.optimum) in panel.summary_label.text()
    result = solve_and_wait(qtbot, panel)
    assert result.solutions["cpu"][0].value == instance.optimum
    assert column(panel, "Matches known") == ["yes"]
    assert "matches the file's known optimum" in panel.status_label.text()
    assert shown_errors == []


def test_the_summary_states_the_solve_time_of_the_table_and_labels_the_job_time(qtbot, panel, monkeypatch):
    # The summary showed the backend's wall time (solves plus their checks and messages: 18.0 ms where the table
    # showed 12.3 ms on this instance) as "CPU 18.0 ms" beside the table's solve time of the same instance.
    path = shared_file("knapsack/pisinger/large_scale/knapPI_3_10000_1000_1")
    monkeypatch.setattr(knapsack_widgets, "ask_instance_files", lambda parent, folder="": [str(path)])
    click(qtbot, panel.load_button)
    result = solve_and_wait(qtbot, panel)
    text = panel.status_label.text()
    shown = re.fullmatch(r"Optimum \d+ \(CPU solve ([\d.]+) ms, method \w+; job ([\d.]+) ms"
                         r"( including [\d.]+ ms preparing the solvers)?\); .*", text)
    assert shown, text
    assert shown[1] == column(panel, "Time ms (CPU)")[0] == f"{result.solutions['cpu'][0].time_ms:.1f}"
    assert shown[2] == f"{result.job_ms:.1f}" and result.job_ms >= result.wall_ms["cpu"]


def test_several_instances_show_the_sum_of_the_table_times(qtbot, panel, tmp_path):
    paths = []
    for k in range(3):
        instance = KnapsackInstance(f"i{k}", pisinger("strongly", 200 + 100 * k, 1000, 1, 100, k))
        write_json(tmp_path / f"i{k}.json", instance)
        paths.append(str(tmp_path / f"i{k}.json"))
    panel.load_paths(paths)
    result = solve_and_wait(qtbot, panel)
    total_ms = sum(s.time_ms for s in result.solutions["cpu"])
    assert [float(t) for t in column(panel, "Time ms (CPU)")] == pytest.approx(
        [s.time_ms for s in result.solutions["cpu"]], abs=0.051)
    assert panel.status_label.text().startswith(f"3 instances solved (CPU solves {total_ms:.1f} ms in all; "
                                                f"job {result.job_ms:.1f} ms")


def test_batch_of_msb_files_is_solved_as_one_batch(qtbot, panel, shown_errors, monkeypatch):
    folder = shared_file("knapsack/msb630")
    paths = sorted(str(p) for p in folder.glob("*.ins2D"))[::105]  # 6 files spread over the set
    monkeypatch.setattr(knapsack_widgets, "ask_instance_files", lambda parent, folder="": paths)
    panel.set_problem("kp1")
    panel.load_files()
    assert panel.problem == "kp2-batch" and panel.problem_combo.currentData() == "kp2-batch"
    assert len(panel.instances) == len(paths) and "switched to" in panel.status_label.text()
    result = solve_and_wait(qtbot, panel)
    assert result.batch
    expected = solve_many([i.problem for i in panel.instances], backend="cpu")
    assert [s.value for s in result.solutions["cpu"]] == [s.value for s in expected]
    assert column(panel, "Optimum (CPU)") == [str(s.value) for s in expected]
    assert set(column(panel, "Time ms (CPU)")) == {"batch"}
    batch_ms = result.solutions["cpu"][0].time_ms
    assert f"solved as one batch (CPU batch {batch_ms:.1f} ms; job {result.job_ms:.1f} ms" in panel.status_label.text()
    panel.instances_view.selectRow(3)
    assert panel.items_label.text().startswith(panel.instances[3].name)
    assert shown_errors == []


def test_cancel_ends_a_long_solve_and_its_process(qtbot, panel, shared_runner, shown_errors, tmp_path):
    # A KP2 of 10,000 items and capacities 2500 x 2500: half a minute or more of DP on 2 cores (the state
    # lists solve large KP1s in a second, so a KP1 is no longer long); the budget forces the memory-light method
    load_random_kp2(panel, tmp_path / "long.json", 10_000, 2500)
    panel.budget_spin.setValue(256)
    click(qtbot, panel.solve_button)
    assert panel.busy and panel.cancel_button.isEnabled() and not panel.solve_button.isEnabled()
    qtbot.waitUntil(lambda: "solving long" in panel.status_label.text(), timeout=WAIT_MS)
    # the capacity table is 6 x 10^10 cells: the state lists run first and report their bound gap
    qtbot.waitUntil(lambda: "states, bound gap" in panel.status_label.text(), timeout=WAIT_MS)
    pid = shared_runner.process.pid
    gaps = _event_loop_gaps(qtbot, 0.5)
    assert max(gaps) < 1.5, f"the GUI thread stalled for {max(gaps):.2f} s during the solve"
    started = time.perf_counter()
    click(qtbot, panel.cancel_button)
    assert time.perf_counter() - started < 5
    assert not panel.busy and not shared_runner.busy
    assert "Cancelled" in panel.status_label.text() and panel.solve_button.isEnabled()
    assert not Path(f"/proc/{pid}").exists(), "the cancelled worker was not reaped (a zombie has a /proc entry)"
    # the next worker starts at once (loading the KP2 solvers), so the next solve does not wait for it
    fresh = shared_runner.process
    assert fresh is not None and fresh.pid != pid and fresh.is_alive()
    load_random_kp2(panel, tmp_path / "short.json", 30, 40)
    result = solve_and_wait(qtbot, panel)
    assert shared_runner.process is fresh and result.solutions["cpu"][0].value == solve(
        panel.instances[0].problem, "cpu").value
    assert shown_errors == []
    panel.budget_spin.setValue(0)
    generate(qtbot, panel, "kp1", "weakly", 50)
    assert solve_and_wait(qtbot, panel).solutions["cpu"][0].value == solve(panel.instances[0].problem, "cpu").value


def _event_loop_gaps(qtbot, seconds: float) -> list[float]:
    """Gaps between the ticks of a 10 ms timer over ``seconds``: how long the GUI thread was away."""
    ticks = []
    timer = QTimer(interval=10, timeout=lambda: ticks.append(time.perf_counter()))
    timer.start()
    qtbot.wait(int(seconds * 1000))
    timer.stop()
    return list(np.diff(ticks)) or [seconds]


@pytest.mark.parametrize("problem", ["kp1", "mckp"])
def test_export_json_and_csv_read_back(qtbot, panel, shown_errors, monkeypatch, tmp_path, problem):
    kind, items = ("almost-strongly", 120) if problem == "kp1" else ("set 1", 12)
    instance = generate(qtbot, panel, problem, kind, items, seed=3)
    (solution,) = solve_and_wait(qtbot, panel).solutions["cpu"]
    for file_format in ("json", "csv"):
        target = tmp_path / f"out.{file_format}"
        monkeypatch.setattr(knapsack_widgets, "ask_export_path", lambda parent, fmt, suggestion="": str(target))
        click(qtbot, panel.export_json_button if file_format == "json" else panel.export_csv_button)
        assert target.exists() and str(target) in panel.status_label.text()
    document = json.loads((tmp_path / "out.json").read_text())
    (record,) = document["solutions"]
    assert record["value"] == solution.value and record["selected"] == solution.selected.tolist()
    assert record["name"] == instance.name and record["backend"] == "cpu"
    with open(tmp_path / "out.csv", newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert {int(r["optimum"]) for r in rows} == {solution.value}
    assert [int(r["item"]) for r in rows] == solution.selected.tolist()
    assert sum(int(r["profit"]) for r in rows) == solution.value
    if problem == "mckp":
        assert [int(r["class"]) for r in rows] == list(range(instance.problem.n_classes))
    assert not list(tmp_path.glob(".*.tmp")) and shown_errors == []


def test_malformed_file_shows_a_dialog_and_keeps_the_instances(qtbot, panel, shown_errors, tmp_path):
    instance = generate(qtbot, panel, "kp1", "strongly", 20)
    bad = tmp_path / "broken.ins2D"
    bad.write_text("3\n100 100\n1 10 10 1 0 0\n2 x 10 1 0 0\n")
    panel.load_paths([str(bad)])
    (report,) = shown_errors
    assert report.title == "Could not load the instances"
    assert "broken.ins2D:4" in report.message and report.kind == "KnapsackFormatError"
    assert panel.instances == (instance,)


def test_infeasible_mckp_file_shows_a_dialog(qtbot, panel, shown_errors, tmp_path):
    path = tmp_path / "infeasible.json"
    path.write_text(json.dumps({"format": "linesnap-knapsack", "version": 1, "problem": "mckp", "capacity": 3,
                                "classes": [{"profits": [1, 2], "weights": [2, 5]}, {"profits": [4], "weights": [2]}]}))
    panel.load_paths([str(path)])
    (report,) = shown_errors
    assert "infeasible" in report.message and panel.instances == ()


def test_memory_budget_error_comes_back_as_a_dialog(qtbot, panel, shared_runner, shown_errors, tmp_path):
    load_random_kp2(panel, tmp_path / "big.json", 5000, 1_000_000)  # no method fits 5000 items in 1 MiB
    panel.budget_spin.setValue(1)
    click(qtbot, panel.solve_button)
    report = wait_failed(qtbot, panel, shown_errors)
    assert report.title == "Not enough memory to solve the instance"
    assert "bytes" in report.message and report.kind == "MemoryBudgetError"
    assert "Failed" in panel.status_label.text() and panel.solve_button.isEnabled()
    assert shared_runner.process is not None and shared_runner.process.is_alive()  # the worker survives


@pytest.mark.skipif(gpu_available(), reason="checks the panel on a machine without a GPU")
def test_without_a_gpu_the_gpu_choices_are_off_and_forcing_one_is_a_dialog(qtbot, panel, shown_errors):
    assert not panel.backend_combo.model().item(2).isEnabled()
    assert "CPU" in panel.backend_label.text()
    generate(qtbot, panel, "kp1", "strongly", 20)
    assert not panel.compare_button.isEnabled() and panel.solve_button.isEnabled()
    panel.backend_combo.setCurrentIndex(2)  # what a stale setting could do
    click(qtbot, panel.solve_button)
    report = wait_failed(qtbot, panel, shown_errors)
    assert report.title == "The GPU is not available" and report.kind == "BackendUnavailableError"


def test_compared_backends_show_both_times_and_whether_they_agree(qtbot, panel, shown_errors):
    """The comparison display, fed a CPU result and the same solutions labelled as a GPU's."""
    generate(qtbot, panel, "mckp", "set 1", 20)
    cpu = solve_and_wait(qtbot, panel)
    (solution,) = cpu.solutions["cpu"]
    solution = dataclasses.replace(solution, time_ms=3.0)
    gpu = dataclasses.replace(solution, backend="gpu", time_ms=0.25)
    panel.show_result(JobResult({"cpu": [solution], "gpu": [gpu]}, {"cpu": 3.5, "gpu": 0.75}, False, 1342.0, 790.0))
    assert column(panel, "Optimum (GPU)") == [str(solution.value)]
    assert column(panel, "Time ms (CPU)") == ["3.0"] and column(panel, "Time ms (GPU)") == ["0.2"]
    assert column(panel, "Backends agree") == ["yes"]
    assert (f"(CPU solve 3.0 ms, GPU solve 0.2 ms, method {solution.method}; "
            "job 1342.0 ms including 790.0 ms preparing the solvers)") in panel.status_label.text()
    assert "agree" in panel.status_label.text()
    wrong = dataclasses.replace(gpu, value=solution.value - 1)
    panel.show_result(JobResult({"cpu": [solution], "gpu": [wrong]}, {"cpu": 3.5, "gpu": 0.75}))
    assert column(panel, "Backends agree") == ["NO"] and "DISAGREE on 1" in panel.status_label.text()


@pytest.mark.skipif(not gpu_available(), reason="needs a GPU (or NUMBA_ENABLE_CUDASIM=1)")
def test_compare_runs_both_backends(qtbot, panel, shown_errors):
    generate(qtbot, panel, "kp1", "strongly", 30)
    result = solve_and_wait(qtbot, panel, panel.compare_button)
    assert result.backends == ["cpu", "gpu"] and column(panel, "Backends agree") == ["yes"]


def _dying_worker(conn):
    conn.send(("ready",))
    conn.recv()
    os._exit(3)


def _slowly_dying_worker(conn):
    conn.send(("ready",))
    conn.recv()
    conn.close()  # the pipe closes a moment before the process ends (as when the system kills it)
    time.sleep(0.3)
    os._exit(3)


@pytest.mark.parametrize("target", [_dying_worker, _slowly_dying_worker])
def test_a_worker_that_dies_is_reported_and_reaped(qtbot, shown_errors, target):
    runner = KnapsackRunner(target=target)
    failures = []
    runner.failed.connect(lambda job_id, report: failures.append(report))
    runner.submit(SolveJob((KnapsackInstance("tiny", KP1([1], [1], 1)),)))
    qtbot.waitUntil(lambda: not runner.busy, timeout=WAIT_MS)
    (report,) = failures
    assert "exit code 3" in report.message and runner.process is None
    runner.shutdown()


def test_the_panel_is_a_tab_of_the_main_window_and_stops_with_it(qtbot, make_window):
    window = make_window()
    titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    panel = window.tabs.widget(titles.index("Knapsack"))
    assert isinstance(panel, KnapsackPanel)
    window.tabs.setCurrentWidget(panel)  # shown: the worker process starts
    assert panel.runner.process is not None
    panel.backend_combo.setCurrentIndex(panel.backend_combo.findData("cpu"))
    generate(qtbot, panel, "subset-sum", "p", 40)
    result = solve_and_wait(qtbot, panel)
    assert result.solutions["cpu"][0].value == solve(panel.instances[0].problem, "cpu").value
    pid = panel.runner.process.pid
    window.tool.mark_saved()
    window.close()
    assert panel.runner.process is None and not Path(f"/proc/{pid}").exists()


# ------------------------------------------------------------------ Qt-free parts
def test_kp1_files_read_as_subset_sum_and_mixed_kinds_refused(tmp_path):
    kp1 = KnapsackInstance("a", KP1([5, 4, 3], [4, 3, 2], 5), optimum=7)
    kp2 = KnapsackInstance("b", KP2([5], [4], [3], 5, 5))
    write_json(tmp_path / "a.json", kp1)
    write_json(tmp_path / "b.json", kp2)
    loaded = load_instance_files([tmp_path / "a.json"], "subset-sum")
    (instance,) = loaded.instances
    assert loaded.problem == "subset-sum" and isinstance(instance.problem, SubsetSum)
    assert instance.optimum is None and instance.problem.capacity == 5 and "subset sum" in loaded.note
    single = load_instance_files([tmp_path / "b.json"], "mckp")
    assert single.problem == "kp2" and single.sources == (str(tmp_path / "b.json"),)
    assert load_instance_files([tmp_path / "b.json"] * 2, "kp1").problem == "kp2-batch"
    with pytest.raises(ValueError, match="kp1 and kp2"):
        load_instance_files([tmp_path / "a.json", tmp_path / "b.json"], "kp1")
    with pytest.raises(ValueError, match="at least one"):
        load_instance_files([], "kp1")


def test_generators_refuse_kp2_and_unknown_types():
    with pytest.raises(ValueError, match="no generator"):
        generate_instance("kp2-batch", "strongly", 10, 0)
    with pytest.raises(ValueError, match="kind must be one of"):
        generate_instance("mckp", "set 9", 10, 0)
    mixed = generate_instance("mckp", "set 1", 0, 4)
    assert mixed.name == "suri-set1-mixed-s4" and mixed.problem.n_classes == 5


def test_item_rows_and_summaries_on_a_hand_made_case():
    problem = KP2([10, 7, 4], [3, 2, 1], [1, 2, 3], 4, 4)
    np.testing.assert_array_equal(item_rows(problem, [0, 2]), [[0, 10, 3, 1], [2, 4, 1, 3]])
    mckp = MCKP([([1, 9], [1, 5]), ([3, 4, 8], [1, 2, 9])], 7)
    np.testing.assert_array_equal(item_rows(mckp, [1, 1]), [[0, 1, 9, 5], [1, 1, 4, 2]])
    np.testing.assert_array_equal(item_rows(SubsetSum([4, 6], 5), [0]), [[0, 4]])
    instance = KnapsackInstance("hand", problem, optimum=14)
    result = run_job(SolveJob((instance,), ("cpu",)))
    assert result.solutions["cpu"][0].value == 14  # items 0 and 2: weights (4, 4)
    headers, rows = instance_table([instance], result)
    assert rows == [["hand", "3", "4 × 4", "14", "14", rows[0][5], "yes"]]
    assert "matches the file's known optimum" in result_summary([instance], result)


def test_the_chosen_items_say_how_much_capacity_they_take():
    kp1 = KP1([5, 4, 3], [4, 3, 2], 6)
    assert load_text(kp1, [1, 2]) == "weight 5 of 6 (1 left)"
    kp2 = KP2([5, 4, 3], [4, 3, 2], [1, 7, 2], 3000, 9)
    assert load_text(kp2, [0, 1]) == "weights 7 of 3,000 (2,993 left) and 8 of 9 (1 left)"
    mckp = MCKP([([1, 2], [3, 5]), ([4], [6])], 12)
    assert load_text(mckp, [1, 0]) == "weight 11 of 12 (1 left)"
    assert load_text(SubsetSum([3, 5, 7], 11), []) == "weight 0 of 11 (11 left)"
    # the JSON export carries the same figures
    record = solutions_document([KnapsackInstance("k", kp2)], run_job(SolveJob((KnapsackInstance("k", kp2),),
                                                                                ("cpu",))))["solutions"][0]
    assert record["weight_used"] == [7, 8] and record["capacity"] == [3000, 9] and record["value"] == 9


def test_a_cpu_warm_up_loads_every_path_of_the_kind_once_per_process(monkeypatch):
    from app.knapsack import jobs
    from core import warmup

    loaded = []
    monkeypatch.setattr(warmup, "compile_knapsack_kernels", lambda kinds: loaded.append(kinds))
    monkeypatch.setattr(jobs, "_warmed", set())
    small, large = KP1([3, 4, 1], [2, 3, 1], 4), KP1(np.arange(1, 5000), np.arange(1, 5000), 10**6)
    run_job(SolveJob((KnapsackInstance("small", small), KnapsackInstance("large", large)), ("cpu",)))
    run_job(SolveJob((KnapsackInstance("again", small),), ("cpu",)))
    assert loaded == [("kp1",)]  # two sizes of KP1, two jobs: the kind's paths are loaded once


def test_a_warm_message_loads_the_kinds_before_the_next_job(monkeypatch):
    # the worker started after a cancel is told the kinds shown, and loads their solvers while idle
    import multiprocessing
    import threading

    from app.knapsack import jobs
    from app.knapsack.jobs import worker_main
    from core import warmup

    loaded = []
    monkeypatch.setattr(warmup, "compile_knapsack_kernels", lambda kinds: loaded.append(kinds))
    monkeypatch.setattr(jobs, "_warmed", set())
    parent_end, child_end = multiprocessing.Pipe()
    worker = threading.Thread(target=worker_main, args=(child_end,), daemon=True)
    worker.start()
    assert parent_end.recv() == ("ready",)
    parent_end.send(("warm", ("subset-sum", "kp1")))
    parent_end.send(("job", 7, SolveJob((KnapsackInstance("s", SubsetSum([3, 5, 7], 10)),), ("cpu",))))
    while (message := parent_end.recv())[0] == "progress":
        pass
    parent_end.send(("stop",))
    worker.join(10)
    assert message[:2] == ("done", 7) and message[2].solutions["cpu"][0].value == 10
    assert loaded == [("subset-sum",), ("kp1",)]  # before the job, which then loads nothing again


def test_a_runner_started_with_kinds_sends_them_before_the_first_job(qtbot):
    runner = KnapsackRunner(target=_recording_worker)
    runner.start(warm_kinds=("mckp",))
    messages = []
    runner.failed.connect(lambda job_id, report: messages.append(report.message))
    runner.submit(SolveJob((KnapsackInstance("tiny", KP1([1], [1], 1)),)))
    qtbot.waitUntil(lambda: not runner.busy, timeout=WAIT_MS)
    assert messages == ["warm ('mckp',), then job"]
    runner.shutdown()


def _recording_worker(conn):
    from app.errors import ErrorReport

    conn.send(("ready",))
    first, second = conn.recv(), conn.recv()
    conn.send(("failed", second[1], ErrorReport("t", f"{first[0]} {first[1]}, then {second[0]}", "", "x")))
    conn.recv()


def test_an_error_of_the_warm_up_copy_is_not_the_jobs(monkeypatch):
    # past a small budget the scaled-down copy failed first, and the dialog described an instance the user
    # never loaded (its 70 free items, or a KP2 copy "with 2 items and capacities 1,181 x 961"); the
    # instance's own error comes instead
    from app.knapsack import jobs
    from core.knapsack import MemoryBudgetError

    monkeypatch.setattr(jobs, "_warmed", set())
    rng = np.random.default_rng(0)
    weights = rng.integers(1, 100_000, 300)
    problem = KP1(weights + rng.integers(0, 10, 300), weights, int(weights.sum() // 2))
    with pytest.raises(MemoryBudgetError, match=r"\(300 free items\)"):
        run_job(SolveJob((KnapsackInstance("big", problem),), ("cpu",), memory_budget_bytes=1000))


def test_run_job_reports_progress_and_refuses_a_backend_twice(tmp_path):
    instances = tuple(KnapsackInstance(f"i{k}", KP1([3, 4, k + 1], [2, 3, 1], 4)) for k in range(3))
    steps = []
    result = run_job(SolveJob(instances, ("cpu",)), lambda done, total, text: steps.append((done, total)))
    assert [s.value for s in result.solutions["cpu"]] == [solve(i.problem, "cpu").value for i in instances]
    assert steps[-1] == (3, 3) and sorted(steps) == steps
    with pytest.raises(ValueError, match="same backend twice"):
        run_job(SolveJob(instances, ("cpu", "cpu")))
    export_csv(tmp_path / "three.csv", instances, result)
    with open(tmp_path / "three.csv", newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert {r["instance"] for r in rows} == {"i0", "i1", "i2"}


@pytest.mark.parametrize("problem", [
    pisinger("strongly", 400, 1000, 30, 100, 1),
    KP2([10, 7, 4, 9], [3, 2, 1, 5], [1, 2, 3, 4], 9, 8),
    curtis("half", 80, 2),
    suri(1, 3, 40),
])
def test_warm_up_copies_keep_the_items_and_cost_no_more(problem):
    from app.knapsack.jobs import scaled_down

    small = scaled_down(problem)
    assert type(small) is type(problem)
    for name in ("profits", "weights", "weights1", "weights2"):
        if hasattr(problem, name):
            np.testing.assert_array_equal(getattr(small, name), getattr(problem, name))
    for (p, w), (p_small, w_small) in zip(getattr(problem, "classes", ()), getattr(small, "classes", ())):
        np.testing.assert_array_equal(p_small, p)  # MCKP: the same classes
        np.testing.assert_array_equal(w_small, w)
    for name in ("capacity", "capacity1", "capacity2"):
        if hasattr(problem, name):
            assert getattr(small, name) <= getattr(problem, name)
    assert solve(small, "cpu").value <= solve(problem, "cpu").value


def test_a_large_kp2_warms_up_on_a_small_dp():
    from app.knapsack.jobs import WARM_UP_KP2_CELLS, scaled_down

    rng = np.random.default_rng(3)
    w1, w2 = rng.integers(1, 2000, 20_000), rng.integers(1, 2000, 20_000)
    problem = KP2(rng.integers(1, 1000, 20_000), w1, w2, 8000, 8000)
    small = scaled_down(problem)
    assert small.n_items * (small.capacity1 + 1) * (small.capacity2 + 1) <= WARM_UP_KP2_CELLS
    assert solve(small, "cpu").method == "dp"  # the capacity DP, as the real instance's stages use


ORPHAN_SCRIPT = """
import multiprocessing, os, sys
from app.knapsack.jobs import SolveJob, worker_main
from app.model.knapsack import generate_instance
if __name__ == "__main__":
    ctx = multiprocessing.get_context("spawn")
    ours, theirs = ctx.Pipe()
    ctx.Process(target=worker_main, args=(theirs,), daemon=True).start()
    assert ours.recv() == ("ready",)
    long_job = SolveJob((generate_instance("kp1", "uncorrelated", 20000, 0, 1000, 50),), ("cpu",), False, 2**28)
    ours.send(("job", 1, long_job))
    while "solving" not in str(ours.recv()):
        pass
    with open(sys.argv[1], "w") as out:
        out.write(str(multiprocessing.active_children()[0].pid))
    os._exit(0)  # the window's process dies in the middle of the solve, cleaning nothing up
"""


def test_a_worker_whose_window_process_dies_ends_itself(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "orphan.py"
    script.write_text(ORPHAN_SCRIPT)
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    # No pipes: the worker inherits the script's stdout and stderr, and would hold them open.
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "pid")], env=env, timeout=120,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert done.returncode == 0
    pid = int((tmp_path / "pid").read_text())
    deadline = time.monotonic() + 10
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(pid), "the orphaned worker kept solving"


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (an orphan may wait for a lazy reaper)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status
