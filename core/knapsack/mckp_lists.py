"""State lists of the MCKP solver (:mod:`core.knapsack.mckp_core`): one class's extension, compiled.

A list is sorted by weight with strictly increasing profits (every state
undominated).  Shifted by one item of the next class it stays so, and only a
prefix of it fits the capacity; the next list is the undominated merge of
those shifted prefixes, done pairwise (``log2(items)`` passes of a two-pointer
merge, as KP1's lists in :mod:`core.knapsack.states`) instead of sorting every
candidate, the candidates whose bound cannot beat the incumbent dropped first.

A state's bound is the LP of the classes still outside within its room, and,
where profits are an integer ``mu`` times the weight plus a multiple of ``g > 1``
(``p - mu w = 0 mod g`` for every item, as in Pisinger's strongly correlated
classes, ``p = w + 10 j``), the least of that and the divisibility bound
``profit + mu room + g floor(LP_r / g)``, ``LP_r`` the LP of the outside
classes' reduced profits ``p - mu w`` within the room: every completion adds
at most ``mu room`` plus a multiple of ``g`` no larger than ``LP_r`` (the MCKP
form of combo's cardinality bound).
Notes: docs/notes/knapsack.md, "MCKP without a capacity-long row".
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["BOUND_SLACK", "NO_DIVISOR", "can_beat", "extend", "state_bounds"]

#: Relative (and absolute) slack of the divisibility bound's floor: a reduced LP's fraction a rounding below
#: a multiple of ``g`` still counts as that multiple (a bound may come out high, never low).
_FLOOR_SLACK = 1e-12
#: Relative slack of the lists' float bound tests (:func:`can_beat`): rounding may keep a state, never drop
#: one that matters.
BOUND_SLACK = 1e-12
#: ``div`` of :func:`extend` and :func:`state_bounds` when no divisibility bound applies (``g`` 0).
NO_DIVISOR = (0, 0, np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1))


@njit(cache=True, nogil=True)
def _merge_runs(w, p, ids, a, b, c, ow, op, oi, out):
    """Undominated merge of the runs ``a..b-1`` and ``b..c-1`` (each sorted by weight, profits increasing)
    written from ``out``; returns the end.  On equal weights the larger profit comes first (and is kept)."""
    i, j, n = a, b, out
    last = np.iinfo(np.int64).min
    while i < b or j < c:
        if j == c or (i < b and (w[i] < w[j] or (w[i] == w[j] and p[i] >= p[j]))):
            x = i
            i += 1
        else:
            x = j
            j += 1
        if p[x] > last:
            ow[n], op[n], oi[n] = w[x], p[x], ids[x]
            n += 1
            last = p[x]
    return n


@njit(cache=True, nogil=True)
def _lp(room, cum_w, cum_p, slopes, pos):
    """``(whole, frac, pos)``: the LP of the outside increments within ``room``, its whole increments' profit
    (an integer) and the fraction of the next; ``pos`` the last increment fitting, searched down from
    ``pos`` (a heavier state has less room)."""
    while pos > 0 and cum_w[pos] > room:
        pos -= 1
    return cum_p[pos], (room - cum_w[pos]) * slopes[pos], pos


@njit(cache=True, nogil=True)
def _bound(weight, profit, capacity, lp, div, pos, pos_div):
    """``(base, frac, whole, room, pos, pos_div)`` of a state: its bound ``base + frac`` (an integer and a
    fraction of one increment's profit, so that a test against an integer is exact to the fraction's
    rounding whatever the profits' size), the least of its LP bound (``lp``: the outside increments'
    prefix sums ``cum_w``, ``cum_p`` from 0 and ``slopes``, the last 0) and, where ``div``'s divisor
    ``g`` is above 1, its divisibility bound (module docstring); ``whole`` the state completed by the
    whole increments that fit."""
    room = capacity - weight
    whole, frac, pos = _lp(room, lp[0], lp[1], lp[2], pos)
    base = profit + whole
    mu, g = div[0], div[1]
    if g > 1:
        reduced, reduced_frac, pos_div = _lp(room, div[2], div[3], div[4], pos_div)
        steps = reduced // g + np.int64(np.floor(((reduced % g) + reduced_frac) * (1.0 + _FLOOR_SLACK) / g
                                                 + _FLOOR_SLACK))
        divisible = profit + mu * room + g * steps
        if divisible - base < frac:
            base, frac = divisible, 0.0
    return base, frac, profit + whole, room, pos, pos_div


@njit(cache=True, nogil=True)
def can_beat(base, frac, floor, slack):
    """Whether a bound ``base + frac`` (:func:`_bound`) reaches the integer ``floor``, less ``slack`` relative
    to the fraction (its rounding)."""
    return (base - floor) + frac >= -slack * (np.abs(frac) + 1.0)


@njit(cache=True, nogil=True)
def state_bounds(sw, sp, capacity, lp, div, stop):
    """Per state of a list: ``(base, frac, whole, room)`` (:func:`_bound`), or None when ``stop[0]`` is raised
    (polled every 65536 states).  The list is sorted by weight, so the breaks only move down: one pass."""
    n = len(sw)
    base, frac = np.empty(n, np.int64), np.empty(n, np.float64)
    whole, room = np.empty(n, np.int64), np.empty(n, np.int64)
    pos, pos_div = len(lp[0]) - 1, len(div[2]) - 1
    for i in range(n):
        if i & 65535 == 0 and stop[0]:
            return None
        base[i], frac[i], whole[i], room[i], pos, pos_div = _bound(sw[i], sp[i], capacity, lp, div, pos, pos_div)
    return base, frac, whole, room


@njit(cache=True, nogil=True)
def extend(sw, sp, cw, cp, capacity, lp, div, floor, slack, stop):
    """States after one more class that can still reach ``floor``: undominated ``(w, p, parent, item)``
    sorted by weight, or None when ``stop[0]`` is raised (polled every 65536 candidates and merged
    states: the time limit of :mod:`core.knapsack.limits`).

    A candidate is dropped first when its bound (:func:`_bound`, with the classes outside after this
    one) cannot reach the integer ``floor`` (:func:`can_beat`); a state it dominates has no larger
    bound, so dropping before the merge loses nothing the merge would keep.
    """
    m = len(cw)
    fit = np.zeros(m + 1, np.int64)
    for j in range(m):
        fit[j + 1] = fit[j] + np.searchsorted(sw, capacity - cw[j], side="right")
    total = fit[m]
    w, p, ids = np.empty(total, np.int64), np.empty(total, np.int64), np.empty(total, np.int64)
    ow, op, oi = np.empty(total, np.int64), np.empty(total, np.int64), np.empty(total, np.int64)
    starts = np.zeros(m + 1, np.int64)
    n = 0
    for j in range(m):
        pos, pos_div = len(lp[0]) - 1, len(div[2]) - 1
        for k in range(fit[j + 1] - fit[j]):
            if k & 65535 == 0 and stop[0]:
                return None
            base, frac, _, _, pos, pos_div = _bound(sw[k] + cw[j], sp[k] + cp[j], capacity, lp, div, pos, pos_div)
            if can_beat(base, frac, floor, slack):
                w[n], p[n], ids[n] = sw[k] + cw[j], sp[k] + cp[j], k * m + j
                n += 1
        starts[j + 1] = n
    runs = m
    while runs > 1:
        out = 0
        new_starts = np.zeros(runs // 2 + runs % 2 + 1, np.int64)
        for r in range(0, runs - 1, 2):
            if stop[0]:
                return None
            out = _merge_runs(w, p, ids, starts[r], starts[r + 1], starts[r + 2], ow, op, oi, out)
            new_starts[r // 2 + 1] = out
        if runs % 2:
            for x in range(starts[runs - 1], starts[runs]):
                ow[out], op[out], oi[out] = w[x], p[x], ids[x]
                out += 1
            new_starts[runs // 2 + 1] = out
        w, p, ids, ow, op, oi = ow, op, oi, w, p, ids
        starts = new_starts
        runs = len(starts) - 1
    if runs == 1 and m > 0:
        n = starts[1]
        return w[:n].copy(), p[:n].copy(), ids[:n] // m, ids[:n] % m
    return w[:0].copy(), p[:0].copy(), ids[:0].copy(), ids[:0].copy()
