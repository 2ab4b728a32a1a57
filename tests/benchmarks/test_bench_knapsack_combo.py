"""bench_knapsack_combo and its combo baseline: the 32-bit filter, combo's answers against LineSnap's (when
combo is installed), and the per-class summary and exception rows."""

from __future__ import annotations

import numpy as np
import pytest

from core.knapsack import KP1
from core.knapsack.generators import pisinger, pisinger_hard
from core.knapsack.kp1 import solve_kp1
from tests.benchmarks import bench_knapsack_combo as bc
from tests.benchmarks import combo_baseline

needs_combo = pytest.mark.skipif(not combo_baseline.available(), reason="combo not installed "
                                 "(pip install --no-deps digneapy)")


def test_only_instances_within_32_bits_are_given_to_combo():
    assert combo_baseline.fits(pisinger("strongly", 1000, 10**6, 50, 100, seed=1))  # capacity ~2.5e8
    assert not combo_baseline.fits(pisinger("strongly", 10000, 10**6, 50, 100, seed=1))  # ~2.5e9
    # an item heavier than a 32-bit capacity can never be taken: it does not count
    assert combo_baseline.fits(KP1([5, 7], [3, 2**40], 10))
    assert not combo_baseline.fits(KP1([2**40, 7], [3, 4], 10))
    with pytest.raises(ValueError, match="32-bit"):
        combo_baseline.solve(KP1([5, 7], [3, 4], 2**40), 10.0)
    cases = bc.instances(quick=True)
    assert {klass for klass, _, _ in cases} >= {"11", "16", "1 (uncorrelated)", "6 (subset-sum)"}


def test_combo_is_not_called_on_trivial_instances():
    """Everything fits (or nothing usable): the sum of the usable profits, no child process."""
    assert combo_baseline.solve(KP1([5, 7, 0, 4], [3, 4, 2, 0], 10), 10.0) == (16, 0.0)


@needs_combo
@pytest.mark.parametrize("problem", [pisinger_hard(14, 300, 1000, 50, 100, seed=3),
                                     pisinger("almost-strongly", 200, 10**6, 30, 100, seed=2),
                                     KP1([10, 1, 6, 8, 0], [5, 0, 4, 5, 2], 9)])
def test_combo_agrees_with_linesnap(problem):
    value, seconds = combo_baseline.solve(problem, 30.0)
    assert value == solve_kp1(problem).value and seconds >= 0


def _record(klass, name, seconds, combo, status="ok"):
    return {"class": klass, "name": name, "status": status, "method": "states" if status == "ok" else "X",
            "seconds": seconds, "combo": combo}


def test_summary_and_slow_rows():
    records = [_record("11", "a", 0.002, 0.001), _record("11", "b", 0.001, 0.004), _record("11", "c", 0.5, 0.1),
               _record("3", "d", 0.030, None), _record("3", "e", None, 0.001, status="not solved")]
    rows = {row[0]: row for row in bc.summary_rows(records, 60.0)}
    # class 11: ratios 2, 0.25, 5: median 2, one no slower, largest 5
    assert rows["11"] == ["11", 3, 3, "2.00", "4.00", "2.00", 1, "5.0", 0]
    assert rows["3"] == ["3", 2, 0, "", "", "", "", "", ""]
    assert rows["all"][1:3] == [5, 3] and rows["all"][-1] == 2
    slow = {row[0]: row for row in bc.slow_rows(records)}
    # "a" is 2x but within the 10 ms floor; "c" is 5x and past it
    assert set(slow) == {"c", "d", "e"}
    assert slow["c"][1:] == ["500.0", "100.0", "5.0"]
    assert slow["d"][2] == "not solved" and slow["e"][1].startswith("not solved")


def test_without_combo_nothing_is_written(monkeypatch, capsys):
    monkeypatch.setattr(combo_baseline, "available", lambda: False)
    assert bc.main(["--quick"]) == 0
    assert "not installed" in capsys.readouterr().out


def test_the_timed_child_solves_through_the_public_call():
    problem = pisinger("weakly", 300, 1000, 50, 100, seed=4)
    status, method, value, seconds = bc.linesnap(problem, 30.0)
    assert (status, value) == ("ok", solve_kp1(problem, method="dp").value)
    assert method in ("states", "dp", "reduction") and 0 < seconds < 30
    assert np.isfinite(seconds)


def _exits_without_an_answer(profits, weights, capacity):
    import os

    os._exit(1)  # as combo does when its state space runs out ("multiply, no space")


def test_a_combo_that_stops_the_process_is_reported_at_once(monkeypatch):
    monkeypatch.setattr(combo_baseline, "_combo", _exits_without_an_answer)
    assert combo_baseline.solve(KP1([5, 7, 3], [3, 4, 2], 6), 600.0) is None  # without waiting for the limit
