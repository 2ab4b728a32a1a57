"""Host-side planning of the GPU row method (gpu/knapsack/plan.py): no kernels run here.

Weights and capacities near the int64 range must neither drop usable items
from the plan (a silently wrong optimum) nor wrap the plan's sizes around (a
plan that looks small and launches on garbage windows).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.knapsack import MemoryBudgetError
from core.knapsack.problems import weights_gcd
from gpu.knapsack.common import weights_gcds
from gpu.knapsack.plan import MAX_PLAN_CELLS, PlanTooLargeError, plan_batch


def usable_items(profits, w1, w2, c1, c2):
    return {k for k in range(len(profits)) if profits[k] > 0 and w1[k] <= c1 and w2[k] <= c2}


def planned_items(plan):
    """Original indices of the items the plan runs (the first n_kept processing positions)."""
    return set(plan.order[0, : plan.n_kept[0]].tolist())


def test_a_usable_item_is_kept_when_weight_times_capacity_exceeds_int64():
    # Item 1 fits both capacities exactly; w1 * (c2 + 1) of either item is beyond 2**63.
    profits = np.array([0, 1])
    w1 = np.array([3323926681, 2522389028])
    w2 = np.array([7297473996, 7051481307])
    plan = plan_batch([profits], [w1], [w2], [2522389028], [7051481307], 2, 32)
    assert planned_items(plan) == {1}
    assert plan.profits[0, 0] == 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 2**40), st.integers(1, 2**40)), min_size=1, max_size=8),
       st.data())
def test_the_plan_runs_exactly_the_usable_items_heaviest_first(items, data):
    profits, w1, w2 = (np.array(column, dtype=np.int64) for column in zip(*items))
    # Capacities of the usable sums (or just above): the DP windows stay a few cells wide.
    c1 = int(w1.sum()) if data.draw(st.booleans()) else int(data.draw(st.sampled_from(w1.tolist())))
    c2 = int(w2.sum()) if data.draw(st.booleans()) else int(data.draw(st.sampled_from(w2.tolist())))
    try:
        plan = plan_batch([profits], [w1], [w2], [c1], [c2], 2, 32)
    except PlanTooLargeError as err:
        assert err.needed_bytes > MAX_PLAN_CELLS
        return
    assert planned_items(plan) == usable_items(profits, w1, w2, c1, c2)
    kept = plan.n_kept[0]
    pairs = list(zip(plan.weights1[0, :kept].tolist(), plan.weights2[0, :kept].tolist()))
    assert pairs == sorted(pairs, reverse=True)


def test_windows_beyond_any_memory_are_refused_before_int64_sizes_wrap():
    weights = np.array([2**40 + 1, 2**40 + 3, 2**41 + 7, 2**41 + 9], dtype=np.int64)
    with pytest.raises(PlanTooLargeError) as refused:
        plan_batch([np.ones(4, np.int64)], [weights], [weights[::-1].copy()], [2**42], [2**42], 2, 32)
    assert refused.value.needed_bytes > 2**60


def test_the_gpu_row_method_reports_such_an_instance_with_the_bytes_needed():
    from gpu.knapsack import solve as knapsack

    weights = np.array([2**40 + 1, 2**40 + 3, 2**41 + 7, 2**41 + 9], dtype=np.int64)
    (refused,) = knapsack._solve_rows([np.ones(4, np.int64)], [weights], [weights[::-1].copy()], [2**42], [2**42],
                                      2**62)
    assert isinstance(refused, MemoryBudgetError) and "GPU" in str(refused) and refused.needed_bytes > 2**60
    with pytest.raises(MemoryBudgetError, match="GPU"):  # without a host to hand it to
        knapsack._solve_kp2_lists([np.ones(30, np.int64)], [np.full(30, 2**40 + 1)], [np.full(30, 2**40 + 3)],
                                  [2**42], [2**42], 2**62)


@given(st.lists(st.lists(st.integers(0, 6).map(lambda k: 0 if k == 0 else 6 * k), max_size=5)
                | st.lists(st.integers(0, 10**12), max_size=5), max_size=8))
def test_the_batch_gcds_are_each_arrays_gcd(batch):
    # Multiples of 6 (with zeros) and arbitrary weights; empty and all-zero arrays among them.
    weights = [np.array(w, dtype=np.int64) for w in batch]
    assert weights_gcds(weights).tolist() == [weights_gcd(w) for w in weights]
