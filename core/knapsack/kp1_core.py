"""KP1 preliminaries that do not depend on the capacity's size, and the state-list solve they feed.

Efficiency order, break item, Dantzig's upper bound, the greedy lower bound
and Dembo-Hammer reductions (items whose forced opposite decision cannot beat
the greedy solution are fixed), then :func:`core.knapsack.states.expand_core`
over the items left free.  Notes: docs/notes/knapsack.md, "KP1 without a
capacity-long row".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from core.knapsack import limits
from core.knapsack.cardinality import copies_per_item, most_that_fit, per_copy
from core.knapsack.kp1_beam import BUDGET_SHARE, NO_BEAMS, Beams
from core.knapsack.kp1_first import BROKEN, FIRST_PASS_ITEMS, FITS, HANDOVER, REDUCED, SOLVED, first_pass
from core.knapsack.kp1_greedy import free_items, in_caller_order, ordered, reduced_by
from core.knapsack.lp_bound import surrogate_lp
from core.knapsack.margins import NOT_APPLICABLE, margin_bound
from core.knapsack.progress import report, watching
from core.knapsack.states import DONE, OUT_OF_TIME, OUT_OF_WORK, STATE_BYTES, StateRun, backtrack, expand_core
from core.knapsack.surrogate import golden_section, surrogate_bound

__all__ = ["CoreSetup", "after_quick_run", "break_copies", "cardinality_bound", "improving_cardinality_bound",
           "improving_margin_bound",
           "in_caller_order", "out_of_time", "prepare", "setup_from_handover", "solve_by_bounds", "solve_by_states",
           "with_incumbent"]

#: The exact lists skip an item whose flip from the break solution cannot beat their incumbent (combo's
#: ``haschance``; states.expand_core's ``break_efficiency``). Tests turn it off to watch the lists without it.
SKIP_HOPELESS = True


@dataclass(frozen=True, eq=False)
class CoreSetup:
    """A KP1 in efficiency order with its break item, bounds and reductions.

    :func:`prepare` puts every item in that order; :mod:`core.knapsack.kp1_first` only the items free
    after the reductions (the fixed ones lie anywhere on their side of the break item), which is all
    that the state lists, the surrogate and the bounds over the free items read.

    Attributes
    ----------
    order : (n,) int64
        Caller's item index of each position of the efficiency order.
    profits, weights : (n,) int64, in that order
    efficiency : (n,) float64
    capacity : int
    break_item : int
        First item of the efficiency order that does not fit after all before it.
    greedy : (n,) bool
        The greedy solution (break solution, then every later item that still fits).
    lower_bound, upper_bound : int
        The greedy value and Dantzig's bound: every optimum lies between them.
    fixed : (n,) int8
        -1 free, 0 fixed out, 1 fixed in (Dembo-Hammer, against ``lower_bound``).
    break_weight, break_profit : int
        The break solution's (items ``0..break_item-1``).
    profit_gcd : int
        The gcd of the profits: every solution's value is a multiple of it, so the
        upper bound is one too, and an improvement is worth at least
        :meth:`next_value` (combo's rudimentary divisibility; Pisinger's profit
        ceiling class, ``p = 3 ceil(w / 3)``, is settled by it alone).
    counts : (n,) int64 or None
        Identical copies each item stands for (core.knapsack.grouping), in that
        order; the cardinality bounds count copies.  None: one each.
    """

    order: np.ndarray
    profits: np.ndarray
    weights: np.ndarray
    efficiency: np.ndarray
    capacity: int
    break_item: int
    greedy: np.ndarray
    lower_bound: int
    upper_bound: int
    fixed: np.ndarray
    break_weight: int
    break_profit: int
    profit_gcd: int = 1
    counts: np.ndarray | None = None

    def next_value(self, value: int) -> int:
        """The least value above ``value`` that a solution can be worth: the next multiple of the profits' gcd."""
        return _next_multiple(value, self.profit_gcd)

    def floor_bound(self, bound: int) -> int:
        """An upper bound rounded down to a value a solution can be worth."""
        return _floor_multiple(bound, self.profit_gcd)

    @property
    def n_free(self) -> int:
        return int(np.count_nonzero(self.fixed < 0))

    def free_capacity(self) -> int:
        """Capacity left for the free items once the items fixed in are packed."""
        return self.capacity - int(self.weights[self.fixed == 1].sum())


def _floor_multiple(value: int, step: int) -> int:
    return int(value) // step * step


def _next_multiple(value: int, step: int) -> int:
    return _floor_multiple(value, step) + step


def prepare(profits: np.ndarray, weights: np.ndarray, capacity: int, known: int = 0,
            counts: np.ndarray | None = None) -> CoreSetup:
    """Efficiency order, bounds and reductions of items with ``profits > 0``, ``0 < weights <= capacity``.

    The items must not all fit (then there is nothing to solve).  ``known``: a
    value to beat when it exceeds the greedy one (the reductions then fix more).
    ``counts``: the identical copies each item stands for (CoreSetup.counts).
    """
    (order, p, w, e, b, greedy, lower, gcd, break_profit, residual,
     fixed) = ordered(profits, weights, capacity, known)
    if b >= len(w):
        raise ValueError("prepare needs items that do not all fit the capacity")
    upper = _floor_multiple(break_profit + residual * int(p[b]) // int(w[b]), gcd)
    counts = None if counts is None else np.asarray(counts, np.int64)[order]
    return CoreSetup(order, p, w, e, int(capacity), b, greedy, lower, upper, fixed, int(capacity) - residual,
                     break_profit, gcd, counts)


def cardinality_bound(setup: CoreSetup, iterations: int = 48) -> int:
    """An upper bound from the cardinality constraint ``sum x <= k`` (k: most items that fit).

    The surrogate of ``w x <= c`` and ``k - sum x >= 0`` with multiplier
    ``lam >= 0`` is ``(w + lam) x <= c + lam k``; its LP bound holds for every
    ``lam`` and is convex in it, so a golden-section search finds a good one.
    Tight where Dantzig's is loose: strongly correlated items, ``p = w + K``.
    With ``setup.counts`` the constraint counts copies: ``(w + lam u) x <= c + lam k``.
    """
    bound = _cardinality_lp(setup.profits, setup.weights, setup.capacity, setup.counts, iterations)
    return min(setup.upper_bound, bound)


def improving_cardinality_bound(setup: CoreSetup, iterations: int = 48) -> int:
    """:func:`cardinality_bound` over the free items, those fixed in counted in: a bound on the solutions
    better than the incumbent (the reductions hold for those), so never below ``setup.lower_bound``.

    Over the few free items, where :func:`cardinality_bound` sorts every item dozens of times.
    """
    free = np.flatnonzero(setup.fixed < 0)
    room = setup.free_capacity()
    if not len(free) or room < 0:
        return setup.lower_bound
    base = int(setup.profits[setup.fixed == 1].sum())
    counts = None if setup.counts is None else setup.counts[free]
    bound = base + _cardinality_lp(setup.profits[free], setup.weights[free], room, counts, iterations)
    return max(setup.lower_bound, min(setup.upper_bound, setup.floor_bound(bound)))


def improving_margin_bound(setup: CoreSetup, part=None) -> int:
    """:func:`core.knapsack.margins.margin_bound` over the free items, those fixed in counted in (a bound on the
    solutions better than the incumbent, as :func:`improving_cardinality_bound`); ``setup.upper_bound`` where
    the margins take more than two values.  ``part``: ``_free_part(setup, True)`` where the caller has it."""
    free, profits, weights, base, room, _ = _free_part(setup, True) if part is None else part
    if not len(free) or room < 0:
        return setup.lower_bound
    bound = margin_bound(profits, weights, room, copies_per_item(None if setup.counts is None else setup.counts[free]))
    if bound == NOT_APPLICABLE:
        return setup.upper_bound
    return max(setup.lower_bound, min(setup.upper_bound, setup.floor_bound(base + int(bound))))


def _cardinality_lp(profits, weights, capacity, counts, iterations) -> int:
    """The least LP bound of ``(w + lam u) x <= c + lam k`` over ``lam``, floored (see :func:`cardinality_bound`)."""
    k = most_that_fit(weights, capacity, counts)
    # iterations - 1 narrowings probe the same points as ``iterations`` steps of two fresh probes each
    _, _, least = golden_section(profits, weights, capacity, k, 0.0, float(per_copy(profits, counts).max()),
                                 iterations - 1, counts)
    best = min(surrogate_lp(profits, weights, capacity, k, 0.0, counts), least)
    return int(np.floor(best * (1 + 1e-12) + 1e-6))


def with_incumbent(setup: CoreSetup, taken: np.ndarray) -> CoreSetup:
    """``setup`` with a better solution ``taken`` (bool, efficiency order) and the reductions it allows."""
    b = setup.break_item
    value, fixed = reduced_by(setup.profits, setup.weights, setup.efficiency[b], b, setup.break_profit,
                              setup.capacity - setup.break_weight, setup.profit_gcd, setup.fixed, taken,
                              setup.lower_bound)
    if value <= setup.lower_bound:
        return setup
    # (built directly: dataclasses.replace took twice as long, 9.6 against 4.7 us in a tight loop)
    return CoreSetup(setup.order, setup.profits, setup.weights, setup.efficiency, setup.capacity, b, taken, value,
                     setup.upper_bound, fixed, setup.break_weight, setup.break_profit, setup.profit_gcd, setup.counts)


def solve_by_states(setup: CoreSetup, max_work: int, max_states: int, upper_bound: int | None = None,
                    eager: bool = False, beams: bool = False, max_held: int = 2**62):
    """The optimal choice over the free items by state lists.

    ``eager``: pairing and the completion bound from the first state on (tests).
    ``max_held``: give up (as on ``max_work``) once a step leaves more states than this.
    ``beams``: beams on a second core meanwhile (:class:`core.knapsack.kp1_beam.Beams`) hand the lists
    their incumbents; they hold up to ``max_states // kp1_beam.BUDGET_SHARE`` states, which the lists then
    do without.  None where the incumbent already meets the bound (not even a :class:`Beams`: building one,
    with its events and lock, cost a quick run a tenth of an easy instance's solve).

    Returns
    -------
    mask : (n,) bool or None
        Optimal choice in the caller's order of ``setup.order`` positions (None when
        the run gave up within ``max_work`` states generated or ``max_states`` held).
    run : StateRun
        ``run.taken``: the best choice found (efficiency order), optimal or not.
    """
    b = setup.break_item
    upper_bound = setup.floor_bound(setup.upper_bound if upper_bound is None else upper_bound)
    removable, addable = _free_sides(setup.fixed, b)
    beam_share = max_states // BUDGET_SHARE if beams and setup.lower_bound < upper_bound else 0
    helpers = Beams(setup.profits, setup.weights, setup.capacity, setup.efficiency, removable, addable, b,
                    setup.lower_bound, upper_bound, beam_share) if beam_share else NO_BEAMS
    shared = helpers.shared if helpers.running else np.array([setup.lower_bound] * 2 + [0], np.int64)
    with helpers, watching("states", shared, upper_bound, len(removable) + len(addable)):
        run = StateRun(expand_core(  # (Python ints type as int64 too, without np.int64's 0.8 us each)
            setup.profits, setup.weights, setup.capacity, setup.efficiency, removable, addable,
            setup.break_weight, setup.break_profit, float(setup.efficiency[b]) if SKIP_HOPELESS else -1.0,
            setup.lower_bound, upper_bound, max_work, max_held,
            max_states - beam_share if helpers.running else max_states,
            eager, limits.stop_flag(), 0, shared,
        ))
    run.beams = list(helpers.widths)
    if run.status == OUT_OF_TIME:
        out_of_time(setup, len(run.step_items) - 1, run.work, run.held, max(int(run.best), setup.lower_bound),
                    upper_bound)
    run.taken = setup.greedy if run.best_step < 0 else backtrack(run, setup.profits, setup.weights, b)
    run.taken = helpers.better(run.taken)
    if run.status != DONE:
        return None, run
    return in_caller_order(setup.order, run.taken), run


@njit(cache=True, nogil=True)
def _free_sides(fixed, break_item):
    """The free items before the break item, nearest first, and those from it on (expand_core's ``removable``
    and ``addable``), in one pass (four numpy calls cost an easy instance's solve a tenth of its time)."""
    before = 0
    for j in range(break_item):
        before += fixed[j] < 0
    after = 0
    for j in range(break_item, len(fixed)):
        after += fixed[j] < 0
    removable, addable = np.empty(before, np.int64), np.empty(after, np.int64)
    k = 0
    for j in range(break_item - 1, -1, -1):
        if fixed[j] < 0:
            removable[k] = j
            k += 1
    k = 0
    for j in range(break_item, len(fixed)):
        if fixed[j] < 0:
            addable[k] = j
            k += 1
    return removable, addable


def out_of_time(setup: CoreSetup, steps: int, work: int, held: int, best: int, upper_bound: int):
    """Raise TimeLimitError saying how far the lists got (``steps`` core steps, ``work`` states generated,
    ``held`` in the list, ``best`` value found) and how large they could grow."""
    free = np.flatnonzero(setup.fixed < 0)
    bound = limits.kp1_state_bound(setup.profits, setup.weights, free)
    limits.check(f"KP1 by state lists ({len(free):,} free items, at most {limits.count_text(bound)} states)",
                 f"{steps:,} of {len(free):,} core steps, {int(work):,} states generated, "
                 f"{int(held):,} held, best value {int(best):,} (upper bound {int(upper_bound):,})")
    raise RuntimeError("the state lists stopped for a time limit that had not passed")


def solve_by_bounds(setup: CoreSetup, quick_work: int, max_work: int, max_states: int, quick_held: int = 2**62,
                    beams: bool = True):
    """:func:`solve_by_states` with combo's extras for hard instances.

    A quick run first (within ``quick_work`` states generated, and while a step
    leaves at most ``quick_held``); when it gives up, its best solution becomes the incumbent
    (with the reductions it allows), the surrogate relaxation with a
    cardinality constraint is solved exactly for a tight upper bound (often with
    an optimal choice), and the long run stops as soon as it meets that bound;
    with ``beams``, beams on a second core hand it better incumbents meanwhile
    (subset sum goes without: all its states have the same Dantzig bound, so
    a beam keeps an arbitrary few).  Returns
    ``(mask, run)`` as :func:`solve_by_states` (``run`` None when the
    surrogate's choice was optimal).
    """
    held = quick_held if max_work > quick_work else 2**62  # (a quick run alone keeps going)
    mask, run = solve_by_states(setup, min(max_work, quick_work), max_states, max_held=held)
    if mask is not None or run.status != OUT_OF_WORK or max_work <= quick_work:
        return mask, run
    return after_quick_run(setup, run.taken, max_work, max_states, beams)


def after_quick_run(setup: CoreSetup, taken: np.ndarray, max_work: int, max_states: int, beams: bool = True):
    """:func:`solve_by_bounds` after a quick run that gave up with the best choice ``taken`` (efficiency
    order): the incumbent's reductions, the surrogate, the long run."""
    setup = with_incumbent(setup, taken)
    part = _free_part(setup, True)  # (the free items, for both bounds)
    margins = improving_margin_bound(setup, part)
    if margins <= setup.lower_bound:  # (the incumbent is optimal)
        return in_caller_order(setup.order, setup.greedy), None
    report("surrogate", margins - setup.lower_bound, setup.lower_bound)
    bound, taken = _surrogate(setup, part, max_work, max_states)
    if taken is not None:
        return in_caller_order(setup.order, taken), None
    bound = min(improving_cardinality_bound(setup) if bound is None else bound, margins)
    report("states", bound - setup.lower_bound, setup.lower_bound)
    return solve_by_states(setup, max_work, max_states, bound, beams=beams)


def _surrogate(setup: CoreSetup, part, max_work: int, max_states: int):
    """:func:`core.knapsack.surrogate.surrogate_bound` over the free items (``part``: ``_free_part(setup, True)``):
    ``(bound, taken or None)``."""
    free, profits, weights, base, room, in_break = part

    def exactly(p, w, c, z):
        return _solve_exactly(p, w, c, z, max_work, max_states)

    counts = None if setup.counts is None else setup.counts[free]
    bound, choice = surrogate_bound(profits, weights, room, in_break, setup.lower_bound - base, exactly, counts)
    if bound is None:
        return None, None
    if choice is None:
        return min(bound + base, setup.upper_bound), None
    taken = setup.fixed == 1
    taken[free[choice]] = True
    return bound + base, taken


def break_copies(setup: CoreSetup) -> int:
    """How many of the free items the break solution holds; with ``setup.counts``, how many copies, the
    break item's that still fit included, as the break solution over the single copies would."""
    return _free_part(setup, False)[5]


def _free_part(setup: CoreSetup, gather: bool):
    """:func:`core.knapsack.kp1_greedy.free_items` of ``setup`` (without ``gather``: no profits and weights)."""
    return free_items(setup.fixed, setup.profits, setup.weights, copies_per_item(setup.counts), setup.break_item,
                       setup.capacity, setup.break_weight, gather)


def _solve_exactly(p, w, c, z, max_work, max_states):
    """The optimum of a KP1 when it beats ``z``: ``(value, mask)``, ``(z, None)``, or ``(None, None)`` (gave up).

    Up to ``kp1_first.FIRST_PASS_ITEMS`` items by the first pass in one compiled call, its quick run the
    whole run (``max_work`` states generated)."""
    chosen = None
    if len(p) <= FIRST_PASS_ITEMS:
        outcome, numbers, selected, handover = first_pass(
            p, w, c, max_states * STATE_BYTES, False, max_work, 2**62, STATE_BYTES, 0, 1, SKIP_HOPELESS,
            limits.stop_flag(), z, False)
        if outcome in (FITS, SOLVED, REDUCED):
            chosen, value = selected, int(numbers[0])  # (their profit, summed by the pass)
        elif outcome == HANDOVER:
            setup_from_handover(c, numbers, handover)  # (raises TimeLimitError where the time ran out)
            return None, None
        elif outcome == BROKEN:
            raise RuntimeError("state-list backtracking did not reach the break solution or lost the chosen state")
    if chosen is None:
        items = np.flatnonzero(w <= c)
        if int(w[items].sum()) <= c:
            chosen = items
        else:
            setup = prepare(p[items], w[items], c, known=z)
            mask, run = solve_by_states(setup, max_work, max_states)
            if mask is None:
                return None, None
            chosen = items[mask]
        value = int(p[chosen].sum())
    if value <= z:
        return z, None
    mask = np.zeros(len(p), np.bool_)
    mask[chosen] = True
    return value, mask


def setup_from_handover(capacity: int, numbers, handover) -> tuple[CoreSetup, np.ndarray]:
    """The :class:`CoreSetup` of a first pass that handed over (:func:`core.knapsack.kp1_first.first_pass`'s
    numbers and rows) and its quick run's best choice; TimeLimitError where that run ran out of time."""
    (best, b, lower, upper, gcd, break_profit, residual, _, _, status, work, steps, held,
     _) = (int(x) for x in numbers)
    p, w = handover[4], handover[5]
    setup = CoreSetup(handover[0], p, w, p / w, capacity, b, handover[2] == 1, lower, upper,
                      handover[1].astype(np.int8), capacity - residual, break_profit, gcd)
    if status == OUT_OF_TIME:
        out_of_time(setup, steps, work, held, max(best, lower), upper)
    return setup, handover[3] == 1
