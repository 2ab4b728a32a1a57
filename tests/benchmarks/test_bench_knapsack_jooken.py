"""bench_knapsack_jooken on a folder laid out as Jooken et al.'s repository: the instances are found, combo's
published times and optima read, a wrong optimum caught, and the counts of the summary add up."""

from __future__ import annotations

import numpy as np
import pytest

from core.knapsack.generators import jooken
from core.knapsack.kp1 import solve_kp1
from tests.benchmarks import bench_knapsack_jooken as bj


def _write(folder, problem, combo_time, optimum):
    """One instance in the repository's layout: ``test.in``, ``time.out`` and (when solved) ``outp.out``."""
    folder.mkdir(parents=True)
    lines = [str(len(problem.profits))]
    lines += [f"{k} {p} {w}" for k, (p, w) in enumerate(zip(problem.profits, problem.weights))]
    (folder / "test.in").write_text("\n".join(lines + [str(problem.capacity)]) + "\n")
    (folder / "time.out").write_text(str(combo_time))
    (folder / "outp.out").write_text(f"{optimum}\n" if optimum is not None else "multiply, no space\n")


@pytest.fixture
def repository(tmp_path):
    """Three small instances: combo fast, combo slow (100 s), combo failed (-1)."""
    root = tmp_path / "problemInstances"
    for name, combo_time, seed in (("n_30_c_1000000_g_4_f_0.1_eps_0.01_s_100", 1e-4, 1),
                                   ("n_30_c_100000000_g_4_f_0.1_eps_0.01_s_100", 100.0, 2),
                                   ("n_40_c_100000000_g_6_f_0.1_eps_0_s_100", -1, 3)):
        n, c = int(name.split("_")[1]), int(name.split("_")[3])
        problem = jooken(n, c, 4, 0.1, 0.01, spread=100, seed=seed)
        optimum = solve_kp1(problem, method="dp" if c <= 10**6 else "auto").value if combo_time >= 0 else None
        _write(root / name, problem, combo_time, optimum)
    return root


def test_finds_reads_and_summarises(repository):
    folders = bj.instance_folders(repository)
    assert [f.name for f in folders] == sorted(f.name for f in folders) and len(folders) == 3
    assert bj.instance_folders(repository, {folders[0].name}) == folders[:1]
    fast = repository / "n_30_c_1000000_g_4_f_0.1_eps_0.01_s_100"
    assert bj.combo_seconds(fast) == pytest.approx(1e-4)
    assert bj.combo_seconds(repository / "n_40_c_100000000_g_6_f_0.1_eps_0_s_100") is None
    records, wrong = bj.compare(folders, None, 30.0)
    assert wrong == []
    assert all(r["status"] == "ok" for r in records)
    rows = {row[0]: row for row in bj.summary_rows(records, 60.0)}
    assert set(rows) == {"n = 30, C = 1e6", "n = 30, C = 1e8", "n = 40, C = 1e8", "all"}
    # all: 3 instances, 1 that combo solved within 60 s, solved by LineSnap; 2 combo failed or took > 60 s
    assert rows["all"][1:4] == [3, 1, 1] and rows["all"][6:] == [2, 2]
    # combo's 0.1 ms cannot be beaten by a child process's solve: listed as slower, with combo's time
    slower = bj.exception_rows(records, 60.0)
    assert [row[:2] for row in slower] == [[fast.name, "0.00"]]


def test_wrong_optimum_is_caught(repository):
    folder = repository / "n_30_c_1000000_g_4_f_0.1_eps_0.01_s_100"
    optimum = int((folder / "outp.out").read_text().split()[0])
    (folder / "outp.out").write_text(f"{optimum + 1}\n")
    _, wrong = bj.compare([folder], None, 30.0)
    assert len(wrong) == 1 and str(optimum + 1) in wrong[0]


def test_unsolved_instance_is_listed(repository, monkeypatch):
    folders = bj.instance_folders(repository)
    monkeypatch.setattr(bj, "run_one", lambda folder, budget, limit: ("not solved", "TimeLimitError", None, None))
    records, _ = bj.compare(folders, None, 30.0)
    rows = bj.exception_rows(records, 60.0)
    assert [row[0] for row in rows] == [f.name for f in folders]
    assert [row[1] for row in rows] == ["100.00", "0.00", "failed"]
    assert {row[2] for row in rows} == {"not solved (TimeLimitError)"}
    assert np.all([row[3] == 0 for row in bj.summary_rows(records, 60.0)])


def test_rows_against_combo_run_here():
    def record(group, seconds, here, tried=True):
        return {"name": group, "group": group, "combo": 1.0, "status": "ok", "method": "states",
                "seconds": seconds, "here": here, "here_tried": tried}

    records = [record("a", 2.0, 1.0), record("a", 1.0, 4.0), record("a", 1.0, None), record("b", 1.0, 90.0),
               record("b", 1.0, None, tried=False)]
    rows = {row[0]: row for row in bj.here_rows(records, 60.0)}
    # a: three given to combo, two solved by it, ratios 2 and 0.25; b: one given, past the limit
    assert rows["a"] == ["a", 3, 2, 2, "1.12", 1]
    assert rows["b"] == ["b", 1, 0, 0, "", 0]
    assert rows["all"] == ["all", 4, 2, 2, "1.12", 1]


@pytest.mark.skipif(not bj.combo_baseline.available(), reason="combo not installed (pip install --no-deps digneapy)")
def test_combo_run_here_agrees(repository):
    records, wrong = bj.compare(bj.instance_folders(repository), None, 30.0, combo_here=True)
    assert wrong == []
    assert all(r["here_tried"] and r["here"] is not None for r in records)
