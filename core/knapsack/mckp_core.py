"""MCKP without a capacity-long row: LP bound, reduced-cost fixing and state lists over a core of classes.

Pisinger's mcknap ideas on classes already reduced by dominance (lightest item
first at weight and profit 0, profits strictly increasing with weight):

1. LP dominance: only the upper convex hull of a class matters to the LP
   relaxation; its increments, sorted by slope, give the LP optimum greedily
   (slope ``lam`` at the break), its integral part a first solution
   (:mod:`core.knapsack.mckp_lp`).
2. Reduced-cost fixing: every choice is worth at most
   ``U = lam C + sum_k max_j (p_kj - lam w_kj)`` minus the reduced costs of its
   items, so an item whose reduced cost alone brings ``U`` below the incumbent
   + 1 is dropped; classes left with one item are fixed.
3. The classes left (a core around the LP solution, nearest reduced cost first)
   enter undominated ``(weight, profit)`` state lists one at a time; a state
   is dropped when it plus the LP of the classes still outside cannot beat the
   incumbent, and each state completed by the integral part of that LP is a
   solution, as is each state paired with the outside classes at the LP's
   integral choice, one of them moved to any item (combo's pairing).  Where
   profits are an integer times the weight plus a multiple of ``g > 1``, a
   divisibility bound tightens the LP.  The
   extension itself (a merge, candidates bounded first) is compiled in
   :mod:`core.knapsack.mckp_lists`.  Nothing depends on the capacity's size.
4. Once a list grows long, two lists (Horowitz and Sahni) over the items of
   least reduced cost look for an exact fill of the capacity: near-degenerate
   classes reach the LP bound that way, which ends the lists.
5. When the incumbent is then within a few units of the LP bound, two bounded
   lists over alternate halves of the classes settle the values above it one
   at a time, from the bound down (:meth:`_Subproblem._levels`): each half
   keeps only the states whose bound reaches the value, so their join finds
   every solution worth that much or proves there is none; where a half
   outgrows its cap, its states of best bound are kept and a solution found
   is still optimal, since every value above was ruled out.

Notes: docs/notes/knapsack.md, "MCKP without a capacity-long row".
"""

from __future__ import annotations

import numpy as np

from core.knapsack import limits
from core.knapsack.mckp_lists import NO_DIVISOR, can_beat, extend, state_bounds
from core.knapsack.mckp_lp import Increments, divisibility, improve, lp_relaxation
from core.knapsack.progress import report

__all__ = ["DONE", "OUT_OF_MEMORY", "OUT_OF_WORK", "STATE_BYTES", "solve_classes_by_states"]

DONE, OUT_OF_WORK, OUT_OF_MEMORY = 0, 1, 2
#: Bytes per stored state (parent index and item of every step kept for backtracking).
STATE_BYTES = 16
#: Seconds per candidate state of one class's extension (the pairwise merge of
#: :func:`core.knapsack.mckp_lists.extend`; ~45 ns
#: measured on the shared 2-core VM, half of it assumed): a class whose extension would outlast the time
#: limit is not started.
EXTEND_S = 25e-9
#: Relative slack of the float bound tests: rounding may keep a state, never drop one that matters.
_SLACK = 1e-12
#: Pairing (:meth:`_Subproblem._pair`, a pass over the outside items) once a list holds this many states:
#: short lists are cheap to grow, and their pass would cost as much as the extension.
PAIRING_STATES = 1000
#: Exact fills among the least reduced costs (:meth:`_Subproblem._fill`): once a list holds the first many
#: states, with items of reduced cost up to the second (profit units); at most ``FILL_HALF_STATES`` states
#: per list (about 0.2 s).
FILLS, FILL_HALF_STATES = ((100_000, 0.5), (1_000_000, 1.5)), 1 << 20
#: Seconds a fill may take at most (two lists of FILL_HALF_STATES states: 0.03-0.4 s measured on the shared
#: 2-core VM): under a time limit with less left, none is started.
FILL_S = 0.5
#: Meet in the middle under a floor (:meth:`_Subproblem._levels`): tried when the incumbent is at most
#: ``MEET_LEVELS`` below the LP bound; a half list may hold ``MEET_EXACT_STATES`` states before the level is
#: searched with its ``MEET_BEAM_STATES`` states of best bound instead; at most ``MEET_WORK`` candidate states
#: in all (about 5 s at EXTEND_S), and no more than the lists' own work limit leaves.
MEET_LEVELS, MEET_EXACT_STATES, MEET_BEAM_STATES, MEET_WORK = 8, 1 << 18, 1 << 16, 200_000_000
#: ``lp`` and ``floor`` of :func:`core.knapsack.mckp_lists.extend` that keep every state (no bound).
_NO_LP, _NO_FLOOR = (np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1)), -(1 << 62)


def _reduced_cost_keep(profits, weights, class_start, capacity, lam, incumbent, lp_choice):
    """Items whose Lagrangian bound at ``lam`` can still beat ``incumbent`` (the LP items always kept).

    Returns the mask, the reduced costs (N,) and the bound ``U`` (float).
    """
    value = profits - lam * weights
    cls = np.repeat(np.arange(len(class_start) - 1), np.diff(class_start))
    best = np.maximum.reduceat(value, class_start[:-1])
    bound = lam * capacity + best.sum()
    rc = best[cls] - value
    keep = bound - rc >= incumbent + 1 - _SLACK * (abs(bound) + 1.0)
    keep[class_start[:-1] + lp_choice] = True
    return keep, rc, bound


def solve_classes_by_states(profits, weights, class_start, capacity, max_work, max_states):
    """Exact MCKP over reduced classes (see the module docstring): ``(status, choice, value)``.

    Parameters
    ----------
    profits, weights : (N,) int64, classes concatenated, each sorted by weight with its
        first item at weight 0 and profit 0 and profits strictly increasing
    class_start : (k + 1,) int64
    capacity : int, at least 0
    max_work, max_states : int, most candidate states generated / states stored before giving up

    Returns
    -------
    status : DONE, OUT_OF_WORK or OUT_OF_MEMORY
    choice : (k,) int64, class-local item of the best solution found (optimal when DONE)
    value : int, its profit
    """
    lam, lp_bound, choice = lp_relaxation(profits, weights, class_start, capacity)
    choice = improve(profits, weights, class_start, choice, capacity)
    value = int(profits[class_start[:-1] + choice].sum())
    if value >= np.floor(lp_bound * (1 + _SLACK) + _SLACK):
        return DONE, choice, value
    report("states", lp_bound - value)
    keep, rc, lagrange = _reduced_cost_keep(profits, weights, class_start, capacity, lam, value, choice)
    sizes = np.add.reduceat(keep.astype(np.int64), class_start[:-1])
    free = np.flatnonzero(sizes > 1)
    fixed_weight = int(weights[class_start[:-1] + choice][sizes == 1].sum())
    fixed_profit = int(profits[class_start[:-1] + choice][sizes == 1].sum())
    sub = _Subproblem(profits, weights, class_start, keep, free, rc, lam)
    status, sub_choice, sub_value = sub.run(capacity - fixed_weight, value - fixed_profit,
                                            lagrange - fixed_profit, max_work, max_states)
    if sub_choice is not None:
        choice[free] = sub_choice
        value = int(profits[class_start[:-1] + choice].sum())
    return status, choice, value


class _Subproblem:
    """The free classes, each shifted to its lightest kept item, in core order (nearest reduced cost first)."""

    def __init__(self, profits, weights, class_start, keep, free, rc, lam):
        self.local, prof, wts, near, self.costs = [], [], [], [], []
        for k in free:
            s, e = class_start[k], class_start[k + 1]
            items = np.flatnonzero(keep[s:e])
            self.local.append(items)
            prof.append(profits[s + items] - profits[s + items[0]])
            wts.append(weights[s + items] - weights[s + items[0]])
            costs = rc[s + items]
            self.costs.append(costs)
            near.append(np.partition(costs, 1)[1] - costs.min())
        self.base_w = sum(int(weights[class_start[k] + x[0]]) for k, x in zip(free, self.local))
        self.base_p = sum(int(profits[class_start[k] + x[0]]) for k, x in zip(free, self.local))
        self.order = np.argsort(near, kind="stable")
        self.prof, self.wts = prof, wts
        starts = np.concatenate([[0], np.cumsum([len(x) for x in wts])]).astype(np.int64)
        flat_p = np.concatenate(prof) if prof else np.zeros(0, np.int64)
        flat_w = np.concatenate(wts) if wts else np.zeros(0, np.int64)
        self.inc = Increments(flat_p, flat_w, starts)
        self.flat_p, self.flat_w, self.starts = flat_p, flat_w, starts
        self.item_cls = np.repeat(np.arange(len(wts)), np.diff(starts))
        self.star = None  # the LP's integral choice within the capacity of run()
        self.met = None  # the incumbent _levels last started from
        self.mu, self.g, self.reduced = divisibility(flat_p, flat_w, starts, lam)

    def bounds(self, outside):
        """The arguments ``lp`` and ``div`` of :func:`core.knapsack.mckp_lists.extend` with ``outside`` classes."""
        lp = self.inc.prefix(outside)[:3]
        if self.reduced is None:
            return lp, NO_DIVISOR
        return lp, (self.mu, self.g) + self.reduced.prefix(outside)[:3]

    def run(self, capacity, incumbent, lagrange, max_work, max_states):
        """``(status, class-local choice per free class or None, value)``; ``incumbent`` must be beaten.

        ``lagrange``: the Lagrangian bound ``U`` less the profit of the fixed classes; an item of
        reduced cost ``rc`` only enters when ``lagrange - rc`` can still beat the incumbent.
        """
        capacity -= self.base_w
        target = incumbent - self.base_p
        lagrange -= self.base_p
        if not len(self.order) or capacity < 0:
            return DONE, None, incumbent
        _, bound, self.star = lp_relaxation(self.flat_p, self.flat_w, self.starts, capacity)
        self.top = int(np.floor(bound * (1 + _SLACK) + _SLACK))  # no solution is worth more (lowered by _levels)
        outside = np.ones(len(self.order), np.bool_)
        sw, sp = np.zeros(1, np.int64), np.zeros(1, np.int64)
        steps, best, work, stored, filled = [], None, 0, 0, 0
        for t, k in enumerate(self.order):
            candidates = len(sw) * len(self.wts[k])
            if limits.expired() or candidates * EXTEND_S > limits.remaining_s():
                self._out_of_time(t, work, len(sw), target + self.base_p, capacity, candidates * EXTEND_S)
            work += candidates
            # the candidates (about six int64 arrays: three states' worth each) count against the budget
            status = (OUT_OF_WORK if work > max_work
                      else OUT_OF_MEMORY if stored + 3 * candidates > max_states else DONE)
            if status != DONE:
                return status, self._mapped(best), target + self.base_p
            outside[k] = False
            live = np.flatnonzero(lagrange - self.costs[k] >= target + 1 - _SLACK * (abs(lagrange) + 1.0))
            lp, div = self.bounds(outside)
            grown = extend(sw, sp, self.wts[k][live], self.prof[k][live], capacity, lp, div,
                           target + 1, _SLACK, limits.stop_flag())
            if grown is None:  # the time limit passed within the extension
                self._out_of_time(t, work, len(sw), target + self.base_p, capacity, 0.0)
            w, p, parent, item = grown
            item = live[item]
            if not len(w):
                break  # no item of this class, so no state, can beat the incumbent
            bounded = state_bounds(w, p, capacity, lp, div, limits.stop_flag())
            if bounded is None:  # the time limit passed while bounding the new list
                self._out_of_time(t + 1, work, len(w), target + self.base_p, capacity, 0.0)
            base, frac, whole, room = bounded
            i = int(np.argmax(whole))
            if whole[i] > target:
                best, target = self._improved(
                    self._completion(t, int(parent[i]), int(item[i]), int(room[i]), steps), capacity)
            while filled < len(FILLS) and len(w) >= FILLS[filled][0]:
                # its joins and backtracking do not poll the time limit: not started when it could outlast it
                found = self._fill(capacity, FILLS[filled][1], max_states) if limits.remaining_s() > FILL_S else None
                filled += 1
                if found is not None and found[0] > target:
                    best, target = self._improved(found[1], capacity)
                if self.top - target <= MEET_LEVELS and target != self.met:
                    self.met = target  # tried once per incumbent
                    settled = self._levels(capacity, target, max_states - stored, min(MEET_WORK, max_work - work))
                    if settled is not None:
                        settled, value = self._improved(settled, capacity)
                        return DONE, self._mapped(settled), value + self.base_p
            paired = self._pair(w, p, outside, capacity) if len(w) >= PAIRING_STATES else None
            if paired is not None and paired[0] > target:
                _, i, c, j = paired
                best, target = self._improved(self._paired(t, int(parent[i]), int(item[i]), steps, outside, c, j),
                                              capacity)
            if target >= self.top:  # the best found reaches a bound: what the levels ruled out, or the LP's
                return DONE, self._mapped(best), target + self.base_p
            alive = np.flatnonzero(can_beat(base, frac, target + 1, _SLACK))
            report("states", float((base[alive] - target + frac[alive]).max(initial=0.0)))
            sw, sp = w[alive], p[alive]
            steps.append((parent[alive], item[alive]))
            stored += len(alive)
            if not len(alive):
                break
        return DONE, self._mapped(best), target + self.base_p

    def _improved(self, chosen, capacity):
        """``(choice, value)``: ``chosen`` (own class-local items, within ``capacity``) with its residual capacity
        spent (:func:`core.knapsack.mckp_lp.improve`) and the profit of the result."""
        best = improve(self.flat_p, self.flat_w, self.starts, chosen, capacity)
        return best, int(self.flat_p[self.starts[:-1] + best].sum())

    def _out_of_time(self, t, work, held, best, capacity, next_s):
        """Raise TimeLimitError saying how far the lists got and how large they could grow."""
        bound = limits.mckp_state_bound(self.prof, self.wts, capacity)
        limits.check_stage(next_s, f"MCKP by state lists ({len(self.order):,} free classes, at most "
                                   f"{limits.count_text(bound)} states)",
                           f"{t:,} of {len(self.order):,} classes, {work:,} states generated, {held:,} held, "
                           f"best value {best:,} (before the fixed classes)")

    def _mapped(self, chosen):
        """Class-local items in the caller's classes (None stays None: nothing beat the incumbent)."""
        if chosen is None:
            return None
        return np.array([local[j] for local, j in zip(self.local, chosen)], np.int64)

    def _core_items(self, t, parent, item, steps):
        """Items (own class-local) of a state of step ``t`` in the classes it holds, 0 elsewhere."""
        chosen = np.zeros(len(self.order), np.int64)
        chosen[self.order[t]] = item
        for s in range(t - 1, -1, -1):
            chosen[self.order[s]] = steps[s][1][parent]
            parent = int(steps[s][0][parent])
        return chosen

    def _pair(self, w, p, outside, capacity):
        """Best state paired with the outside classes at the LP's integral choice, one of them moved to any
        of its items (combo's pairing, for MCKP): ``(value, state, class, item)``, or None when none fits.

        The states are sorted by weight with increasing profits, so the heaviest that leaves the outside
        part room is the best one for it: one binary search per outside item.
        """
        star = self.starts[:-1] + self.star
        rows = np.flatnonzero(outside[self.item_cls])
        if not len(rows):
            return None
        base = star[outside]
        free = capacity - int(self.flat_w[base].sum())
        moved = star[self.item_cls[rows]]
        room = free - (self.flat_w[rows] - self.flat_w[moved])
        at = np.searchsorted(w, room, side="right") - 1
        fits = np.flatnonzero(at >= 0)
        if not len(fits):
            return None
        gain = p[at[fits]] + (self.flat_p[rows[fits]] - self.flat_p[moved[fits]])
        m = int(np.argmax(gain))
        row = int(rows[fits[m]])
        k = int(self.item_cls[row])
        return (int(gain[m]) + int(self.flat_p[base].sum()), int(at[fits[m]]), k, row - int(self.starts[k]))

    def _fill(self, capacity, slack, max_states):
        """Best choice whose items all have reduced cost at most ``slack`` (the LP's own items always allowed),
        by two lists (Horowitz and Sahni) over the classes with a choice, as many as two lists of at most
        :data:`FILL_HALF_STATES` hold, the rest at the LP's choice: ``(value, class-local choice)`` or None.

        Near-degenerate classes (``p = w + U[-10, 10]`` at large ``R``) tie at the LP's slope in many
        classes; the optimum is then often the LP bound, reached by an exact fill among the ties, which the
        state lists (whose LP bound never sees the fill) find only after exponentially many states.
        """
        items = [np.union1d(np.flatnonzero(costs <= slack), [self.star[c]]) for c, costs in enumerate(self.costs)]
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
        fixed = np.ones(len(items), np.bool_)
        fixed[halves[0] + halves[1]] = False
        star = self.starts[:-1] + self.star
        room = capacity - int(self.flat_w[star[fixed]].sum())
        lists = [self._half_list(half, items, room) for half in halves]
        if any(x is None for x in lists):
            return None
        (aw, ap, a_steps), (bw, bp, b_steps) = lists
        at = np.searchsorted(bw, room - aw, side="right") - 1
        fits = np.flatnonzero(at >= 0)
        if not len(fits):
            return None
        joined = ap[fits] + bp[at[fits]]
        m = int(np.argmax(joined))
        chosen = self.star.copy()
        for half, half_steps, j in ((halves[0], a_steps, int(fits[m])), (halves[1], b_steps, int(at[fits[m]]))):
            for c, (parent, item) in zip(half[::-1], half_steps[::-1]):
                chosen[c] = items[c][item[j]]
                j = int(parent[j])
        return int(joined[m]) + int(self.flat_p[star[fixed]].sum()), chosen

    def _levels(self, capacity, target, max_states, max_work):
        """The optimum when it lies above ``target`` and the meet in the middle settles it (module docstring,
        step 5): own class-local choice, or None.

        Each value from the LP bound down to ``target + 1`` in turn: both halves' lists keep the states
        whose bound reaches it, so the best join is the optimum when it reaches it, and when it does not
        and no state was cut, no solution is worth that much and the next value is tried.
        """
        work = 0
        for floor in range(self.top, target, -1):
            report("meet in the middle", floor - target)
            for cap in (MEET_EXACT_STATES, MEET_BEAM_STATES):
                met = self._meet(capacity, floor, cap, cap == MEET_BEAM_STATES, max_states, max_work - work)
                if met is None:
                    return None  # over the work, the memory or the time: the lists go on
                chosen, exact, spent = met
                work += spent
                if chosen is not None:
                    return chosen  # worth the floor, and every value above was ruled out
                if exact:
                    self.top = floor - 1  # nothing is worth the floor: the next value
                    break
            else:
                return None  # the beam found nothing, so this value stays open
        return None

    def _meet(self, capacity, floor, cap, beam, max_states, max_work):
        """Best choice worth at least ``floor`` from two lists over alternate halves of the classes, each
        keeping the states whose bound reaches ``floor``: ``(choice or None, exact, work)``, or None when
        the lists outgrew ``max_states`` or ``max_work``, or the time limit passed.

        A list past ``cap`` ends the search unanswered (``(None, False, work)``), or with ``beam`` keeps its
        ``cap`` states of best bound; the answer is then not ``exact`` (a choice found is still worth at
        least ``floor``).
        """
        halves, lists, stored, work, exact = (self.order[0::2], self.order[1::2]), [], 0, 0, True
        for half in halves:
            outside = np.ones(len(self.order), np.bool_)
            sw, sp, steps = np.zeros(1, np.int64), np.zeros(1, np.int64), []
            for k in half:
                candidates = len(sw) * len(self.wts[k])
                work += candidates
                if work > max_work or stored + 3 * candidates > max_states:
                    return None
                outside[k] = False
                lp, div = self.bounds(outside)
                grown = extend(sw, sp, self.wts[k], self.prof[k], capacity, lp, div, floor, _SLACK,
                               limits.stop_flag())
                if grown is None:
                    return None
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
            lists.append((half, sw, sp, steps))
        (_, aw, ap, _), (_, bw, bp, _) = lists
        at = np.searchsorted(bw, capacity - aw, side="right") - 1
        fits = np.flatnonzero(at >= 0)
        joined = ap[fits] + bp[at[fits]]
        if not len(fits) or joined.max() < floor:
            return None, exact, work
        m = int(np.argmax(joined))
        chosen = np.zeros(len(self.order), np.int64)
        for (half, _, _, half_steps), j in zip(lists, (int(fits[m]), int(at[fits[m]]))):
            for c, (parent, item) in zip(half[::-1], half_steps[::-1]):
                chosen[c] = item[j]
                j = int(parent[j])
        return chosen, exact, work

    def _half_list(self, classes, items, room):
        """Undominated states of ``classes`` restricted to ``items`` within ``room``: ``(w, p, steps)`` or None
        when the time limit passed."""
        sw, sp, steps = np.zeros(1, np.int64), np.zeros(1, np.int64), []
        for c in classes:
            start = self.starts[c]
            grown = extend(sw, sp, self.flat_w[start + items[c]], self.flat_p[start + items[c]], room, _NO_LP,
                           NO_DIVISOR, _NO_FLOOR, 0.0, limits.stop_flag())
            if grown is None:
                return None
            sw, sp = grown[0], grown[1]
            steps.append(grown[2:])
        return sw, sp, steps

    def _paired(self, t, parent, item, steps, outside, k, j):
        """Items (own class-local) of a state of step ``t`` paired as :meth:`_pair` says."""
        chosen = self._core_items(t, parent, item, steps)
        chosen[outside] = self.star[outside]
        chosen[k] = j
        return chosen

    def _completion(self, t, parent, item, room, steps):
        """Items (own class-local) of a state of step ``t`` completed by the outside increments within ``room``."""
        chosen = self._core_items(t, parent, item, steps)
        outside = np.zeros(len(self.order), np.bool_)
        outside[self.order[t + 1:]] = True
        cum_w, _, _, rows = self.inc.prefix(outside)
        full = int(np.searchsorted(cum_w, room, side="right")) - 1
        for r in rows[:full]:  # increments of a class in order: the last one taken is its item
            k = self.inc.cls[r]
            chosen[k] = self.inc.item[r] - self.starts[k]
        return chosen
