"""Two-list searches of the MCKP state lists (:mod:`core.knapsack.mckp_core`): exact fills and meet in the middle.

Both split the free classes of a ``_Subproblem`` (``sub``) into two lists
(Horowitz and Sahni) and join them: the heaviest state of one list that
leaves room for a state of the other is the best partner for it, since both
lists are undominated (sorted by weight, profits increasing).

- :func:`fill`: the best choice among the items of least reduced cost, the
  classes the lists cannot hold at the LP's choice (an incumbent; step 4 of
  the core's docstring).
- :func:`levels`: the optimum when it lies a few units above the incumbent:
  each value from the LP bound down in turn, both halves bounded by it
  (step 5).

Notes: docs/notes/knapsack.md, "MCKP without a capacity-long row".
"""

from __future__ import annotations

import numpy as np

from core.knapsack import limits
from core.knapsack.mckp_lists import BOUND_SLACK, NO_DIVISOR, extend, state_bounds
from core.knapsack.progress import report

__all__ = ["FILLS", "FILL_S", "MEET_LAST_STATES", "MEET_LEVELS", "MEET_WORK", "fill", "levels", "meet"]

#: Exact fills among the least reduced costs (:func:`fill`): once a list holds the first many states, with
#: items of reduced cost up to the second (profit units); at most ``FILL_HALF_STATES`` states per list
#: (about 0.2 s).
FILLS, FILL_HALF_STATES = ((100_000, 0.5), (1_000_000, 1.5)), 1 << 20
#: Seconds a fill may take at most (two lists of FILL_HALF_STATES states: 0.03-0.4 s measured on the shared
#: 2-core VM): under a time limit with less left, none is started.
FILL_S = 0.5
#: Meet in the middle under a floor (:func:`levels`): tried when the incumbent is at most ``MEET_LEVELS``
#: below the LP bound; a half list may hold ``MEET_EXACT_STATES`` states before the level is searched with
#: its ``MEET_BEAM_STATES`` states of best bound instead; at most ``MEET_WORK`` candidate states in all
#: (about 5-20 s), no more than the lists' own work limit leaves, and for the beam no more than the lists
#: have generated so far (:meth:`core.knapsack.mckp_core._Subproblem.run` retries as their work doubles).
#: Once more, from any incumbent, when the lists would outgrow their memory or work: then a half list may
#: hold ``MEET_LAST_STATES`` (two of them with their steps: about 256 MiB; a futile attempt costs 1-2 s).
MEET_LEVELS, MEET_EXACT_STATES, MEET_BEAM_STATES, MEET_WORK = 8, 1 << 18, 1 << 16, 200_000_000
MEET_LAST_STATES = 1 << 22
#: ``lp`` and ``floor`` of :func:`core.knapsack.mckp_lists.extend` that keep every state (no bound).
_NO_LP, _NO_FLOOR = (np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1)), -(1 << 62)


def fill(sub, capacity, slack, max_states):
    """Best choice whose items all have reduced cost at most ``slack`` (the LP's own items always allowed),
    by two lists (Horowitz and Sahni) over the classes with a choice, as many as two lists of at most
    :data:`FILL_HALF_STATES` hold, the rest at the LP's choice or moved off it (:func:`_balanced`):
    ``(value, class-local choice)`` or None.

    Near-degenerate classes (``p = w + U[-10, 10]`` at large ``R``) tie at the LP's slope in many
    classes; the optimum is then often the LP bound, reached by an exact fill among the ties, which the
    state lists (whose LP bound never sees the fill) find only after exponentially many states.
    """
    items = [np.union1d(np.flatnonzero(costs <= slack), [sub.star[c]]) for c, costs in enumerate(sub.costs)]
    cap = min(FILL_HALF_STATES, max_states // 8)
    halves, sizes = ([], []), [1, 1]
    for c in sorted((c for c, x in enumerate(items) if len(x) > 1), key=lambda c: -len(items[c])):
        h = int(sizes[1] < sizes[0])
        for side in (h, 1 - h):
            if sizes[side] * len(items[c]) <= cap:
                halves[side].append(c)
                sizes[side] *= len(items[c])
                break
    if not halves[0]:
        return None
    free = halves[0] + halves[1]
    chosen = _balanced(sub, items, free, capacity)
    fixed = np.ones(len(items), np.bool_)
    fixed[free] = False
    picked = (sub.starts[:-1] + chosen)[fixed]
    room = capacity - int(sub.flat_w[picked].sum())
    lists = [_half_list(sub, half, items, room) for half in halves]
    if any(x is None for x in lists):
        return None
    joined = _join(lists[0][:2], lists[1][:2], room)
    if joined is None:
        return None
    for half, (*_, half_steps), j in zip(halves, lists, joined[1:]):
        for c, item in _trace(half, half_steps, j):
            chosen[c] = items[c][item]
    return joined[0] + int(sub.flat_p[picked].sum()), chosen


def _balanced(sub, items, free, capacity):
    """The LP's choice with the classes outside ``free`` moved, one at a time, among those of their ``items``
    no dearer (in reduced cost) than the LP's own, towards leaving the free classes a room mid-way in their
    range of weights: a copy (the LP's choice when the room lies in the middle half of that range already).

    At the LP's choice the free classes often stand at their heaviest (or lightest) items already, so the
    room falls at or past the end of their range, where their sums seldom fill it exactly (weakly correlated
    classes at R = 10^7-10^9, the capacity 3/4 of the way up, were refused for that).
    """
    chosen = sub.star.copy()
    lo = sum(int(sub.flat_w[sub.starts[c] + items[c]].min()) for c in free)
    hi = sum(int(sub.flat_w[sub.starts[c] + items[c]].max()) for c in free)
    fixed = np.setdiff1d(np.arange(len(items)), free)
    room = capacity - int(sub.flat_w[(sub.starts[:-1] + chosen)[fixed]].sum())
    if hi - lo < 4 or lo + (hi - lo) // 4 <= room <= hi - (hi - lo) // 4:
        return chosen
    need = room - (lo + hi) // 2  # the weight the classes outside should gain
    for c in fixed:
        cheap = items[c][sub.costs[c][items[c]] <= sub.costs[c][chosen[c]]]  # the LP's own item among them
        gains = sub.flat_w[sub.starts[c] + cheap] - int(sub.flat_w[sub.starts[c] + chosen[c]])
        best = int(np.argmin(np.abs(need - gains)))
        chosen[c], need = cheap[best], need - int(gains[best])
    return chosen


def levels(sub, capacity, target, max_states, max_work, beam_work=None, exact_states=None):
    """The optimum when it lies above ``target`` and the meet in the middle settles it: ``sub``'s own
    class-local choice, or None.

    Each value from ``sub.top`` (the LP bound's floor) down to ``target + 1`` in turn: both halves' lists
    keep the states whose bound reaches it, so the best join is the optimum when it reaches it, and when
    it does not and no state was cut, no solution is worth that much (``sub.top`` drops below it) and the
    next value is tried.  A value whose halves outgrow ``exact_states`` (default
    :data:`MEET_EXACT_STATES`) is searched by the beam,
    within ``beam_work`` candidates (default: all of ``max_work``); ``sub.beam_cut`` says whether the
    beam stopped on that (or on the memory or the time) rather than finishing.
    """
    work, beam_work = 0, max_work if beam_work is None else beam_work
    sub.beam_cut = False
    for floor in range(sub.top, target, -1):
        report("meet in the middle", floor - target)
        for cap, beam in ((exact_states or MEET_EXACT_STATES, False), (MEET_BEAM_STATES, True)):
            allowed = min(max_work - work, beam_work) if beam else max_work - work
            met = meet(sub, capacity, floor, cap, beam, max_states, allowed)
            if met is None:
                sub.beam_cut = beam  # (the caller may try the beam again with more)
                return None  # over the work, the memory or the time: the lists go on
            chosen, exact, spent = met
            work += spent
            if chosen is not None:
                return chosen  # worth the floor, and every value above was ruled out
            if exact:
                sub.top = floor - 1  # nothing is worth the floor: the next value
                break
        else:
            return None  # the beam found nothing, so this value stays open
    return None


def meet(sub, capacity, floor, cap, beam, max_states, max_work):
    """Best choice worth at least ``floor`` from two lists over alternate halves of the classes, each
    keeping the states whose bound reaches ``floor`` (of the items whose reduced cost leaves the Lagrangian
    bound at ``floor`` or above): ``(choice or None, exact, work)``, or None when
    the lists outgrew ``max_states`` or ``max_work``, or the time limit passed.

    A list past ``cap`` ends the search unanswered (``(None, False, work)``), or with ``beam`` keeps its
    ``cap`` states of best bound; the answer is then not ``exact`` (a choice found is still worth at
    least ``floor``).
    """
    halves, lists, stored, work, exact = (sub.order[0::2], sub.order[1::2]), [], 0, 0, True
    for half in halves:
        outside = np.ones(len(sub.order), np.bool_)
        sw, sp, steps = np.zeros(1, np.int64), np.zeros(1, np.int64), []
        for k in half:
            live = sub.live(k, floor)  # the items a choice worth the floor may hold
            candidates = len(sw) * len(live)
            work += candidates
            if work > max_work or stored + 3 * candidates > max_states:
                return None
            outside[k] = False
            lp, div = sub.bounds(outside)
            grown = extend(sw, sp, sub.wts[k][live], sub.prof[k][live], capacity, lp, div, floor, BOUND_SLACK,
                           limits.stop_flag())
            if grown is None:
                return None
            grown = grown[:3] + (live[grown[3]],)
            if len(grown[0]) > cap:
                if not beam:
                    return None, False, work
                bounded = state_bounds(grown[0], grown[1], capacity, lp, div, limits.stop_flag())
                if bounded is None:
                    return None
                score = (bounded[0] - floor) + bounded[1]
                kept = np.sort(np.argpartition(-score, cap)[:cap])
                grown, exact = tuple(x[kept] for x in grown), False
            sw, sp = grown[0], grown[1]
            steps.append(grown[2:])
            stored += len(sw)
            if not len(sw):
                return None, exact, work
        lists.append((sw, sp, steps))
    joined = _join(lists[0][:2], lists[1][:2], capacity)
    if joined is None or joined[0] < floor:
        return None, exact, work
    chosen = np.zeros(len(sub.order), np.int64)
    for half, (*_, half_steps), j in zip(halves, lists, joined[1:]):
        for c, item in _trace(half, half_steps, j):
            chosen[c] = item
    return chosen, exact, work


def _join(a, b, room):
    """Best pair of states of two undominated lists ``(w, p)`` within ``room``: ``(profit, i, j)`` or None.

    Both lists are sorted by weight with profits increasing, so the heaviest state of ``b`` that leaves
    room for a state of ``a`` is its best partner (one binary search per state of ``a``).
    """
    (aw, ap), (bw, bp) = a, b
    at = np.searchsorted(bw, room - aw, side="right") - 1
    fits = np.flatnonzero(at >= 0)
    if not len(fits):
        return None
    joined = ap[fits] + bp[at[fits]]
    m = int(np.argmax(joined))
    return int(joined[m]), int(fits[m]), int(at[fits[m]])


def _trace(classes, steps, j):
    """``(class, list-local item)`` of state ``j`` of a list grown over ``classes`` with ``steps``
    (``(parent, item)`` per class), last class first."""
    for c, (parent, item) in zip(classes[::-1], steps[::-1]):
        yield c, int(item[j])
        j = int(parent[j])


def _half_list(sub, classes, items, room):
    """Undominated states of ``classes`` restricted to ``items`` within ``room``: ``(w, p, steps)`` or None
    when the time limit passed."""
    sw, sp, steps = np.zeros(1, np.int64), np.zeros(1, np.int64), []
    for c in classes:
        start = sub.starts[c]
        grown = extend(sw, sp, sub.flat_w[start + items[c]], sub.flat_p[start + items[c]], room, _NO_LP,
                       NO_DIVISOR, _NO_FLOOR, 0.0, limits.stop_flag())
        if grown is None:
            return None
        sw, sp = grown[0], grown[1]
        steps.append(grown[2:])
    return sw, sp, steps
