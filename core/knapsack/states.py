"""Nemhauser-Ullmann state lists grown from a core around the break item (KP1, C-independent).

The items are in efficiency order (``p/w`` descending) with break item ``b``;
the list starts from the break solution (items ``0..b-1`` taken) and each step
either adds the next free item ``t >= b`` or removes the next free item
``s < b`` (Pisinger's expanding core).  A state is an undominated
``(weight, profit)`` pair; the list is kept sorted by weight with strictly
increasing profits, and a state is dropped as soon as its upper bound
(Dantzig's, with the efficiency of the next item on the side that can still
help) cannot beat the incumbent.  Nothing depends on the capacity's size.

Recovery of the chosen items: every state carries a 64-bit word of its
decisions since the last multiple of 64 steps, and the whole list is saved at
each such step; backtracking walks those snapshots back to the break solution.
Notes: docs/notes/knapsack.md, "KP1 without a capacity-long row".
"""

from __future__ import annotations

import numpy as np
from numba import njit

from core.knapsack.state_steps import completion_list, grow, has_chance, merge_prune, narrow, pair, room_for

__all__ = ["DONE", "OUT_OF_MEMORY", "OUT_OF_TIME", "OUT_OF_WORK", "STATE_BYTES", "StateRun", "backtrack", "expand_core"]

DONE, OUT_OF_WORK, OUT_OF_MEMORY, OUT_OF_TIME = 0, 1, 2, 3
#: Bytes per stored state (weight, profit, decision word).
STATE_BYTES = 24
_WORD = 64
#: Pairing with the items outside the core runs once the list holds this many states
#: and this many times the items outside (its cost: a binary search per item).
PAIRING_STATES, PAIRING_RATIO = 1000, 64
#: ... and once, whatever the items outside, when it first holds this many (combo's one pass of its
#: heuristic, at its MINHEUR states), or before a run gives up (kp1.KP1_QUICK_HELD is below it): one binary
#: search per item outside, which can settle a run at once.
PAIRING_ONCE_STATES = 10_000
#: The completion bound (:func:`completion_list`: a sparse DP over the items outside
#: the core, weights floored to a power-of-two grid) once the list holds this many
#: states, with at most ``COMPLETION_CELLS`` entries at first, built once the merges
#: have read twice as many states as the items outside times those entries: a build
#: reads about 1.4 entries per item and table entry, so the table is bought once the
#: lists have cost more than it (at 1x, Pisinger's profit ceiling class, n = 5000,
#: v = 50, read 136 M entries, more than its lists' 118 M states, for a table that
#: dropped 1 state in 10^4); rebuilt when the
#: merges since have cost as much as its last build, each time with as many entries
#: as the merges so far pay for (up to ``COMPLETION_MAX_CELLS``, and a 32nd of the
#: states the budget allows).
COMPLETION_STATES, COMPLETION_CELLS, COMPLETION_MAX_CELLS = 20_000, 2**16, 2**20


@njit(cache=True, nogil=True)
def expand_core(profits, weights, capacity, efficiency, removable, addable, break_weight, break_profit,
                break_efficiency, incumbent, upper_bound, max_work, max_held, max_states, eager, stop, width, shared):
    """Run the expanding-core state DP (exact), or a beam of it.

    Parameters
    ----------
    profits, weights : (n,) int64, efficiency order
    efficiency : (n,) float64, ``profits / weights``
    removable : (r,) int64, free items before the break item, nearest first
    addable : (a,) int64, free items from the break item on, nearest first
    break_weight, break_profit : int64, the break solution
    break_efficiency : float64, the break item's efficiency: an item whose flip from the break solution
        cannot beat the incumbent by this bound (Dantzig's) is skipped, as combo's ``haschance`` does, so
        that items the reductions left free fall away as the incumbent rises (negative: none skipped)
    incumbent : int64, value of a known solution (the greedy one)
    upper_bound : int64, no solution is worth more: the run stops when the incumbent reaches it
    max_work : int64, most states generated before giving up
    max_held : int64, most states in the list after a step before giving up (``OUT_OF_WORK`` too: a
        quick run that stops early where the lists grow wide and lets stronger bounds in)
    max_states : int64, most states held (lists and snapshots) before giving up
    eager : bool, pairing and the completion bound at every step (tests; normally only
        once the list is long enough for them to pay, see ``PAIRING_*`` and ``COMPLETION_*``)
    stop : (1,) uint8, polled within every merge and after every step: nonzero stops the
        run (``OUT_OF_TIME``, :mod:`core.knapsack.limits`)
    width : int64, 0 for the exact lists; otherwise a beam (a heuristic): after each step only the
        ``width`` states of highest Dantzig bound are kept, and ``shared[0]`` is raised to every
        better value found
    shared : (1,) or (3,) int64, ``shared[0]`` a value another run has found a solution of: the exact
        lists read it before every step and prune against it when it beats their own (``best_step`` then
        goes back to -1: the solution is that run's); a beam writes it.  With three, the exact lists write
        their best value and the items decided so far to ``shared[1:3]`` before every step (for a watcher
        of their progress, :func:`core.knapsack.progress.watching`)

    Returns
    -------
    status, best, best_step, best_weight, best_profit, best_word, best_extra, step_items, snap_w, snap_p, snap_v,
    snap_off, work, held
        ``best_step`` -1 when nothing beat ``incumbent``; ``best_extra`` the item outside
        the core that the best state was paired with (-1 none); snapshot ``k`` (the list after
        step ``64 (k + 1)``) is ``snap_*[snap_off[k]:snap_off[k + 1]]``; ``held`` the states
        in the list when the run ended.
    """
    cap = 1024
    # The two lists, each as rows of weights, profits and decision words (:func:`merge_prune`): the input is
    # first_list where flip is 0, else second_list, and the step's output the other.
    first_list, second_list = np.empty((3, cap), np.int64), np.empty((3, cap), np.int64)
    flip = 0
    first_list[0, 0], first_list[1, 0], first_list[2, 0] = break_weight, break_profit, 0
    n = 1
    snap_w, snap_p, snap_v = np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.uint64)
    snap_off = np.zeros((len(removable) + len(addable)) // _WORD + 2, np.int64)
    step_items = np.full(len(removable) + len(addable) + 1, -1, np.int64)
    best, best_step, best_w, best_p, best_v = incumbent, -1, np.int64(0), np.int64(0), np.int64(0)
    best_extra = -1
    limit, effort = COMPLETION_CELLS, -1
    cells, values, grid = np.zeros(0, np.int64), np.zeros(0, np.int64), np.int64(1)
    since, m = 0, 0
    rem_w, rem_p = np.zeros(len(removable) + 1, np.int64), np.zeros(len(removable) + 1, np.int64)
    for q in range(len(removable) - 1, -1, -1):
        rem_w[q], rem_p[q] = rem_w[q + 1] + weights[removable[q]], rem_p[q + 1] + profits[removable[q]]
    r = 0
    a = 0
    step = 0
    work = 0
    snaps = 0
    status = DONE
    keys = np.empty(0, np.float64)
    paired_once = False
    watched = width == 0 and len(shared) > 2  # (core.knapsack.progress.watching reads shared[1:3])
    # Arrays are replaced (grown, or the completion table rebuilt) only in the outer loop: an array variable
    # that may be replaced anywhere in a loop costs numba's reference counts on every pass, a few dozen
    # atomic updates a step, a sixth of an uncorrelated n = 1000 solve.  A step that needs one stops before
    # its merge, the outer loop makes it, and the step goes on from there (``resume``).
    running, resume, rebuild = True, False, False
    while running:
        if rebuild:
            cells, values, grid, effort = completion_list(profits, weights, addable[a:], removable[r:], capacity,
                                                           limit, stop)
            since, rebuild = 0, False
        if flip == 0 and second_list.shape[1] < 2 * n + 1:  # (the output is written before it is read)
            second_list = np.empty((3, max(2 * n + 1, 2 * second_list.shape[1])), np.int64)
        if flip == 1 and first_list.shape[1] < 2 * n + 1:
            first_list = np.empty((3, max(2 * n + 1, 2 * first_list.shape[1])), np.int64)
        if width > 0 and len(keys) < 2 * n + 1:
            keys = room_for(keys, 2 * n + 1)
        if resume and step % _WORD == 0 and len(snap_w) < snap_off[snaps] + 2 * n + 1:  # (this step's snapshot:
            need = snap_off[snaps] + 2 * n + 1  # at most 2 n + 1 states)
            snap_w, snap_p, snap_v = grow(snap_w, need), grow(snap_p, need), grow(snap_v, need)
        while True:
            if not resume:
                if not (n > 0 and best < upper_bound and (r < len(removable) or a < len(addable))):
                    running = False
                    break
                if watched:
                    shared[1], shared[2] = best, r + a
                if width == 0 and shared[0] > best:
                    best, best_step, best_extra = shared[0], -1, -1
                    if best >= upper_bound:
                        running = False
                        break
                a, r = _skip_hopeless(profits, weights, addable, removable, a, r, step % 2 == 0,
                                      capacity - break_weight, break_profit, break_efficiency, best)
                if r >= len(removable) and a >= len(addable):
                    running = False
                    break
                add = a < len(addable) and (r >= len(removable) or step % 2 == 0)
                step += 1
                bit = np.int64(1) << np.int64((step - 1) % _WORD)
                if add:
                    item = addable[a]
                    a += 1
                    dw, dp = weights[item], profits[item]
                else:
                    item = removable[r]
                    r += 1
                    dw, dp = -weights[item], -profits[item]
                step_items[step] = item
                eff_add = efficiency[addable[a]] if a < len(addable) else -1.0
                eff_remove = efficiency[removable[r]] if r < len(removable) else -1.0
                outside = len(addable) - a + len(removable) - r
                since += 2 * n
                if eager or (m >= COMPLETION_STATES and since >= (2 * outside * limit if effort < 0 else effort)):
                    if effort >= 0:  # twice the entries cost at most twice the effort
                        while 2 * limit <= COMPLETION_MAX_CELLS and 2 * effort <= work and 32 * limit <= max_states:
                            limit, effort = 2 * limit, 2 * effort
                    rebuild = True
                room = second_list.shape[1] if flip == 0 else first_list.shape[1]
                if rebuild or room < 2 * n + 1 or (width > 0 and len(keys) < 2 * n + 1) or \
                        (step % _WORD == 0 and len(snap_w) < snap_off[snaps] + 2 * n + 1):
                    resume = True
                    break
            resume = False
            source = first_list if flip == 0 else second_list  # (defined in each pass: no reference counts
            out = second_list if flip == 0 else first_list  # carried around the loop)
            kept, m, raised, k = merge_prune(source, out, n, dw, dp, bit, stop, capacity, best, eff_add, eff_remove,
                                              cells, values, grid, rem_w[r], rem_p[r])
            if kept < 0 or stop[0]:  # (after a whole pass too: over millions of states it is long)
                status = OUT_OF_TIME  # the input list is intact: the best state and the snapshots stay valid
                running = False
                break
            work += 2 * n
            if k >= 0:
                best, best_step, best_w, best_p, best_v, best_extra = raised, step, out[0, k], out[1, k], \
                    out[2, k], -1
            wide = m >= PAIRING_STATES and m >= PAIRING_RATIO * outside
            giving_up = work > max_work or kept > max_held  # (a quick run: pairing first may settle it)
            if eager or wide or (not paired_once and (m >= PAIRING_ONCE_STATES or giving_up)):
                paired_once = True
                paired, k, item = pair(out[0], out[1], kept, capacity, profits, weights, addable, a, removable, r,
                                       best)
                if k >= 0:
                    best, best_step, best_w, best_p, best_v, best_extra = paired, step, out[0, k], out[1, k], \
                        out[2, k], item
            if width > 0:
                if kept > width:
                    kept = narrow(out[0], out[1], out[2], kept, width, capacity, eff_add, eff_remove, keys)
                if best > shared[0]:
                    shared[0] = best
            flip ^= 1
            n = kept
            if step % _WORD == 0:
                start = snap_off[snaps]
                snap_w[start : start + n], snap_p[start : start + n] = out[0, :n], out[1, :n]
                snap_v[start : start + n] = out[2, :n].view(np.uint64)
                out[2, :n] = 0
                snaps += 1
                snap_off[snaps] = start + n
            if giving_up:
                status = OUT_OF_WORK
                running = False
                break
            if snap_off[snaps] + 2 * first_list.shape[1] + 2 * second_list.shape[1] > max_states:
                status = OUT_OF_MEMORY
                running = False
                break
            if stop[0]:
                status = OUT_OF_TIME
                running = False
                break
    return (status, best, best_step, best_w, best_p, np.uint64(best_v), best_extra, step_items[: step + 1], snap_w,
            snap_p, snap_v, snap_off[: snaps + 1], work, n)


@njit(cache=True, nogil=True)
def _skip_hopeless(profits, weights, addable, removable, a, r, add_first, residual, break_profit, break_efficiency,
                   best):
    """Past the items whose flip from the break solution cannot beat ``best`` (``break_efficiency`` < 0: none),
    on the side the next step takes (``add_first``: the added side while it has items), until an item
    with a chance: its ``(a, r)``, both past their ends where none is left.  A loop of its own: in
    :func:`expand_core`'s, whose arrays are reassigned, each pass costs reference counting on all of them
    (about 0.15 us a skipped item, against 5 ns here)."""
    while a < len(addable) or r < len(removable):
        add = a < len(addable) and (r >= len(removable) or add_first)
        if break_efficiency < 0 or has_chance(profits[addable[a]] if add else -profits[removable[r]],
                                              weights[addable[a]] if add else -weights[removable[r]],
                                              residual, break_profit, break_efficiency, best):
            return a, r
        if add:
            a += 1
        else:
            r += 1
    return a, r


class StateRun:
    """The outcome of :func:`expand_core`, named (see its Returns)."""

    def __init__(self, raw):
        (self.status, self.best, self.best_step, self.best_weight, self.best_profit, self.best_word,
         self.best_extra, self.step_items, self.snap_w, self.snap_p, self.snap_v, self.snap_off, self.work,
         self.held) = raw
        self.best = int(self.best)


def backtrack(run: StateRun, profits, weights, break_item: int) -> np.ndarray:
    """Items taken by the best state, as a bool mask over the efficiency order.

    Starts from the break solution and applies the decisions of each 64-step
    block, walking the snapshots back from the best state's step (compiled: the
    Python loop cost an easy instance's solve about a tenth of its time).
    """
    found, taken = _backtrack(profits, weights, int(break_item), run.best_step, run.best_weight, run.best_profit,
                              np.uint64(run.best_word), run.best_extra, run.step_items, run.snap_w, run.snap_p,
                              run.snap_v, run.snap_off)
    if not found:
        raise RuntimeError("state-list backtracking did not reach the break solution or lost the chosen state")
    return taken


@njit(cache=True, nogil=True)
def _backtrack(profits, weights, break_item, step, weight, profit, word, extra, step_items, snap_w, snap_p, snap_v,
               snap_off):
    """:func:`backtrack` over the run's arrays: ``(found, taken)``, ``found`` False where the walk does not end
    at the break solution."""
    taken = np.zeros(len(profits), np.bool_)
    taken[:break_item] = True
    while step > 0:
        block = (step - 1) // _WORD * _WORD
        for s in range(block + 1, step + 1):
            if (word >> np.uint64((s - 1) % _WORD)) & np.uint64(1):
                item = step_items[s]
                sign = -1 if item >= break_item else 1  # an added item was absent before, a removed one present
                taken[item] = not taken[item]
                weight += sign * weights[item]
                profit += sign * profits[item]
        step = block
        if block:  # the decision word of the state (weight, profit) in the snapshot after step ``block``
            lo, hi = snap_off[block // _WORD - 1], snap_off[block // _WORD]
            k = lo + np.searchsorted(snap_w[lo:hi], weight)
            if k >= hi or snap_w[k] != weight or snap_p[k] != profit:
                return False, taken
            word = snap_v[k]
    if weight != weights[:break_item].sum() or profit != profits[:break_item].sum():
        return False, taken
    if extra >= 0:
        taken[extra] = not taken[extra]
    return True, taken
