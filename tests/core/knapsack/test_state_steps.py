"""One step of the KP1 state lists (``state_steps.merge_prune``) against a slow reference."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from core.knapsack.state_steps import completion_list, merge_prune, room_for

SLACK = 1e-9


def _reference(w, p, v, dw, dp, bit, capacity, best, eff_add, eff_remove, table, removable):
    """The union of the list and its shifted copy, its undominated states, the best within the capacity, and
    the states whose bounds (Dantzig's; the completion table's) can beat that best, all by plain Python."""
    union = [(int(a), int(b), int(c)) for a, b, c in zip(w, p, v)]
    union += [(int(a) + dw, int(b) + dp, int(c) | bit) for a, b, c in zip(w, p, v)]
    union.sort(key=lambda s: (s[0], -s[1], s[2] & bit))  # at an equal weight and profit the unshifted first
    undominated = []
    for state in union:
        if not undominated or state[1] > undominated[-1][1]:
            if undominated and undominated[-1][0] == state[0]:
                undominated.pop()
            undominated.append(state)
    feasible = [s for s in undominated if s[0] <= capacity]
    top = max(feasible, key=lambda s: s[1]) if feasible else None
    raised = top is not None and top[1] > best
    best = top[1] if raised else best
    kept = []
    for weight, profit, word in undominated:
        eff = eff_add if weight <= capacity else eff_remove
        if eff < 0:
            continue
        room = (capacity - weight) * eff
        if np.float64(profit - best - 1) + room < -SLACK * (abs(room) + 1.0):
            continue
        if table is not None:
            cells, values, grid = table
            space = capacity - weight + removable[0]
            if space < 0:
                continue
            reach = int(values[np.searchsorted(cells, space // grid, side="right") - 1])
            if profit - removable[1] + reach <= best:
                continue
        kept.append((weight, profit, word))
    return kept, len(undominated), best, top if raised else None


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 120), st.booleans(), st.booleans())
def test_merge_prune_equals_the_reference(seed, n, shift_down, with_table):
    rng = np.random.default_rng(seed)
    w = np.cumsum(rng.integers(1, 15, n)).astype(np.int64)
    p = np.cumsum(rng.integers(1, 15, n)).astype(np.int64)
    v = rng.integers(0, 2**40, n).astype(np.uint64) & ~np.uint64(8)
    dw, dp = int(rng.integers(1, 40)), int(rng.integers(1, 40))
    if shift_down:  # a removal: the shifted copy is lighter
        dw, dp = -dw, -dp
    capacity = int(rng.integers(0, int(w[-1]) + 40))
    best = int(rng.integers(0, int(p[-1]) + 30))
    eff_add = float(rng.uniform(0.2, 2.0)) if rng.random() < 0.9 else -1.0
    eff_remove = float(rng.uniform(0.2, 2.0)) if rng.random() < 0.9 else -1.0
    table, removable = None, (0, 0)
    cells, values, grid = np.zeros(0, np.int64), np.zeros(0, np.int64), np.int64(1)
    if with_table:
        items = rng.integers(1, 30, 12).astype(np.int64)
        cells, values, grid, _ = completion_list(items + rng.integers(0, 5, 12), items, np.arange(6),
                                                 np.arange(6, 12), np.int64(capacity + 200),
                                                 int(rng.choice([4, 16, 1024])), np.zeros(1, np.uint8))
        removable = (int(rng.integers(0, 40)), int(rng.integers(0, 40)))
        table = (cells, values, int(grid))
    source = np.zeros((3, n + 1), np.int64)
    source[0, :n], source[1, :n], source[2, :n] = w, p, v.astype(np.int64)
    # the output starts as garbage: expand_core grows its buffers without their contents
    out = rng.integers(-(2**62), 2**62, (3, 2 * n + 1))
    kept, merged, raised, at = merge_prune(source, out, n, np.int64(dw), np.int64(dp), np.int64(8),
                                           np.zeros(1, np.uint8), np.int64(capacity), np.int64(best), eff_add,
                                           eff_remove, cells, values, grid, np.int64(removable[0]),
                                           np.int64(removable[1]))
    want, want_merged, want_best, want_top = _reference(w, p, v, dw, dp, 8, capacity, best, eff_add, eff_remove,
                                                        table, removable)
    assert merged == want_merged and raised == want_best
    ow, op, ov = out
    assert list(zip(ow[:kept].tolist(), op[:kept].tolist(), ov[:kept].tolist())) == want
    assert (source[0, :n] == w).all() and (source[1, :n] == p).all()  # the input is left as it was
    if want_top is None:
        assert at == -1
    else:
        assert at == kept and (int(ow[at]), int(op[at]), int(ov[at])) == want_top


def test_merge_prune_stops_on_the_flag():
    n = 10
    source = np.zeros((3, n + 1), np.int64)
    source[0], source[1] = np.arange(n + 1), np.arange(n + 1)
    empty = np.zeros(0, np.int64)
    out = np.zeros((3, 2 * n + 1), np.int64)
    kept, *_ = merge_prune(source, out, n, np.int64(1), np.int64(1), np.int64(1), np.ones(1, np.uint8), np.int64(5),
                           np.int64(0), 1.0, 1.0, empty, empty, np.int64(1), np.int64(0), np.int64(0))
    assert kept == -1


def test_room_for_keeps_a_long_enough_buffer_and_replaces_a_short_one():
    buffer = np.arange(10, dtype=np.int64)
    assert room_for(buffer, 10) is buffer
    longer = room_for(buffer, 11)
    assert longer.dtype == buffer.dtype and len(longer) == 20  # twice as long: few reallocations
    assert len(room_for(buffer, 35)) == 35
