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
4. Once a list grows long, the choices that leave the LP's integral choice in
   at most six classes are searched from the LP bound down
   (:mod:`core.knapsack.mckp_swaps`), and two lists (Horowitz and Sahni) over
   the items of least reduced cost look for an exact fill of the capacity:
   near-degenerate classes reach or come next to the LP bound that way, which
   ends the lists or leaves only the classes with items of reduced cost within
   the gap.
5. When the incumbent is then within a few units of the LP bound, two bounded
   lists over alternate halves of the classes settle the values above it one
   at a time, from the bound down (:func:`core.knapsack.mckp_halves.levels`): each half
   keeps only the items and states whose bound reaches the value, so their join finds
   every solution worth that much or proves there is none; where a half
   outgrows its cap, its states of best bound are kept and a solution found
   is still optimal, since every value above was ruled out.  When the lists
   would outgrow their memory or work, the levels get a last try from any
   incumbent, with halves 16 times longer: a few classes of many items lie
   tens of units below the bound with lists that grow a hundredfold a class,
   while the halves' lists stay short near the bound.

Notes: docs/notes/knapsack.md, "MCKP without a capacity-long row".
"""

from __future__ import annotations

import math

import numpy as np

from core.knapsack import limits
from core.knapsack.mckp_halves import FILL_S, FILLS, MEET_LAST_STATES, MEET_LEVELS, MEET_WORK, fill, levels, meet
from core.knapsack.mckp_lists import BOUND_SLACK, NO_DIVISOR, can_beat, extend, state_bounds
from core.knapsack.mckp_lp import Increments, divisibility, improve, lp_relaxation
from core.knapsack.mckp_swaps import few_swaps
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
#: Pairing (:meth:`_Subproblem._pair`, a pass over the outside items) once a list holds this many states:
#: short lists are cheap to grow, and their pass would cost as much as the extension.
PAIRING_STATES = 1000
#: Few classes (:meth:`_Subproblem.run`): when the products of the class sizes over both halves of the core
#: are at most this many states each, two lists over the halves (Horowitz and Sahni) give the optimum
#: outright.  Ten classes of ten items at R = 10^9 are 10^5 states a half, where the one list grows to
#: 10^9 (the LP bound, 3.8 x 10^6 above the first solution, prunes nothing) and was refused.
FEW_CLASSES_STATES = 1 << 22


def _reaches(bound, costs, floor):
    """Whether ``bound - costs`` reaches the integer ``floor``, a rounding of the float ``bound`` allowed for
    (:data:`BOUND_SLACK`): an item (or choice) of reduced cost ``costs`` under a Lagrangian bound ``bound``."""
    return bound - costs >= floor - BOUND_SLACK * (abs(bound) + 1.0)


def _top(bound) -> int:
    """The most any solution is worth under the float LP bound ``bound`` (its floor, rounding allowed for)."""
    return int(np.floor(bound * (1 + BOUND_SLACK) + BOUND_SLACK))


def _reduced_cost_keep(profits, weights, class_start, capacity, lam, incumbent, lp_choice):
    """Items whose Lagrangian bound at ``lam`` can still beat ``incumbent`` (the LP items always kept).

    Returns the mask, the reduced costs (N,) and the bound ``U`` (float).
    """
    value = profits - lam * weights
    cls = np.repeat(np.arange(len(class_start) - 1), np.diff(class_start))
    best = np.maximum.reduceat(value, class_start[:-1])
    bound = lam * capacity + best.sum()
    rc = best[cls] - value
    keep = _reaches(bound, rc, incumbent + 1)
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
    if value >= _top(lp_bound):
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
        self.top = None  # the floor of the LP bound within that capacity, lowered by levels()
        self.met, self.met_work = None, 0  # the incumbent levels() last started from, and the lists' work then
        self.beam_cut = False  # whether levels()' beam stopped on its work (set by levels())
        self.lagrange = None  # the Lagrangian bound U of run()'s capacity (the classes' own frame)
        self.mu, self.g, self.reduced = divisibility(flat_p, flat_w, starts, lam)

    def bounds(self, outside):
        """The arguments ``lp`` and ``div`` of :func:`core.knapsack.mckp_lists.extend` with ``outside`` classes."""
        lp = self.inc.prefix(outside)[:3]
        if self.reduced is None:
            return lp, NO_DIVISOR
        return lp, (self.mu, self.g) + self.reduced.prefix(outside)[:3]

    def live(self, k, floor):
        """Items (own class-local) of class ``k`` that a solution worth ``floor`` may hold: the Lagrangian
        bound less the item's reduced cost reaches ``floor`` (every item before :meth:`run`)."""
        if self.lagrange is None:
            return np.arange(len(self.costs[k]))
        return np.flatnonzero(_reaches(self.lagrange, self.costs[k], floor))

    def run(self, capacity, incumbent, lagrange, max_work, max_states):
        """``(status, class-local choice per free class or None, value)``; ``incumbent`` must be beaten.

        ``lagrange``: the Lagrangian bound ``U`` less the profit of the fixed classes; an item of
        reduced cost ``rc`` only enters when ``lagrange - rc`` can still beat the incumbent.
        """
        capacity -= self.base_w
        target = incumbent - self.base_p
        self.lagrange = lagrange - self.base_p
        if not len(self.order) or capacity < 0:
            return DONE, None, incumbent
        lam, bound, self.star = lp_relaxation(self.flat_p, self.flat_w, self.starts, capacity)
        self.top = _top(bound)  # no solution is worth more (lowered by levels())
        if self._few(target + 1):
            met = meet(self, capacity, target + 1, FEW_CLASSES_STATES, False, max_states, max_work)
            if met is not None and met[1]:  # exact: the best choice above the incumbent, or none
                if met[0] is None:
                    return DONE, None, incumbent
                best, value = self._improved(met[0], capacity)
                return DONE, self._mapped(best), value + self.base_p
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
            if status != DONE:  # the lists end here: the meet in the middle gets a last try (step 5)
                settled = self._settle(capacity, target, best, max_states - stored,
                                       min(MEET_WORK, max_work - work + candidates), None, MEET_LAST_STATES)
                if settled is None and limits.expired():  # the limit passed within the last try
                    self._out_of_time(t, work, len(sw), target + self.base_p, capacity, 0.0)
                return settled or (status, self._mapped(best), target + self.base_p)
            outside[k] = False
            live = self.live(k, target + 1)
            lp, div = self.bounds(outside)
            grown = extend(sw, sp, self.wts[k][live], self.prof[k][live], capacity, lp, div,
                           target + 1, BOUND_SLACK, limits.stop_flag())
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
            filled_before = filled
            while filled < len(FILLS) and len(w) >= FILLS[filled][0]:
                if not filled:  # a few swaps from the LP's choice first (step 4)
                    found = few_swaps(self.flat_p, self.flat_w, self.starts, capacity, lam, bound, self.top, self.star,
                                      target, limits.stop_flag(), (max_states - stored) // 2)  # a set: 2 states
                    if found is not None and found[0] > target:
                        best, target = self._improved(found[1], capacity)
                # its joins and backtracking do not poll the time limit: not started when it could outlast it
                found = fill(self, capacity, FILLS[filled][1], max_states) if limits.remaining_s() > FILL_S else None
                filled += 1
                if found is not None and found[0] > target:
                    best, target = self._improved(found[1], capacity)
            again = self.beam_cut and work >= 2 * self.met_work
            if self.top - target <= MEET_LEVELS and ((filled > filled_before and target != self.met) or again):
                # after a fill (once per incumbent), and again each time the lists' work doubles while the
                # beam was cut short: it may spend what the lists have spent so far, so a futile beam costs
                # no more than the lists themselves
                self.met, self.met_work = target, work
                settled = self._settle(capacity, target, best, max_states - stored, min(MEET_WORK, max_work - work),
                                       work)
                if settled is not None:
                    return settled
            paired = self._pair(w, p, outside, capacity) if len(w) >= PAIRING_STATES else None
            if paired is not None and paired[0] > target:
                _, i, c, j = paired
                best, target = self._improved(self._paired(t, int(parent[i]), int(item[i]), steps, outside, c, j),
                                              capacity)
            if target >= self.top:  # the best found reaches a bound: what the levels ruled out, or the LP's
                return DONE, self._mapped(best), target + self.base_p
            alive = np.flatnonzero(can_beat(base, frac, target + 1, BOUND_SLACK))
            report("states", float((base[alive] - target + frac[alive]).max(initial=0.0)))
            sw, sp = w[alive], p[alive]
            steps.append((parent[alive], item[alive]))
            stored += len(alive)
            if not len(alive):
                break
        return DONE, self._mapped(best), target + self.base_p

    def _settle(self, capacity, target, best, max_states, max_work, beam_work, exact_states=None):
        """``run``'s answer when the levels above ``target`` (the value of the choice ``best``) settle the
        optimum (:func:`core.knapsack.mckp_halves.levels` with its arguments): a better choice, or ``best``
        when they rule out every value above it; else None."""
        settled = levels(self, capacity, target, max_states, max_work, beam_work, exact_states)
        if settled is None:
            return (DONE, self._mapped(best), target + self.base_p) if target >= self.top else None
        settled, value = self._improved(settled, capacity)
        return DONE, self._mapped(settled), value + self.base_p

    def _few(self, floor):
        """Whether both halves of :func:`core.knapsack.mckp_halves.meet` hold at most
        :data:`FEW_CLASSES_STATES` states before any bound, over the items a choice worth ``floor`` may hold."""
        return all(math.prod(len(self.live(k, floor)) for k in half) <= FEW_CLASSES_STATES
                   for half in (self.order[0::2], self.order[1::2]))

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
