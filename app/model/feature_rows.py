"""The rows a table of the finished features inserts, removes and changes for one edit of them (no Qt).

The Features dock shows one row per finished feature, in the tool's order.
At 100,000 features, comparing the feature tuples (or rebuilding the rows)
after each edit cost tens of milliseconds, and a reset lost the view's
selection and scroll.  An edit says which features it took out and put in
(:class:`app.model.tool_requests.FeatureEdit`, the tool's ``features_edit``),
so the rows follow it: runs of rows removed, runs inserted, and rows whose
feature was replaced in place by one with the same id (a rename, new
attribute values, a vertex moved), which only change.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["RowEdit", "row_edit", "runs"]


class RowEdit(NamedTuple):
    """The row changes of one edit, to apply in this order.

    Attributes
    ----------
    removed : list of (int, int)
        ``(first, last)`` rows (inclusive) removed, in the rows before the
        edit; last run first, so that each run's rows are still where they
        were when it is removed.
    inserted : list of (int, int)
        ``(first, last)`` rows (inclusive) inserted, in the rows after the
        edit; first run first, so that each run lands where it ends up.
    changed : list of int
        Rows after the edit (ascending) whose feature has the same id and the
        same neighbours as before, its content changed.
    """

    removed: list[tuple[int, int]]
    inserted: list[tuple[int, int]]
    changed: list[int]


def row_edit(edit) -> RowEdit:
    """The rows that ``edit`` removes, inserts and changes.

    Parameters
    ----------
    edit : FeatureEdit
        ``taken_at``, ``taken``, ``put_at``, ``put``: ascending places of the
        features taken out (in the features before) and put in (in the
        features after), and those features.
    """
    taken_at, put_at = list(edit.taken_at), list(edit.put_at)
    changed = _replaced_in_place(edit) if edit.taken and edit.put else {}
    if changed:
        changed_after = set(changed.values())
        taken_at = [place for place in taken_at if place not in changed]
        put_at = [place for place in put_at if place not in changed_after]
    return RowEdit(runs(taken_at)[::-1], runs(put_at), sorted(changed.values()))


def _replaced_in_place(edit) -> dict[int, int]:
    """``{place before: place after}`` of the features put in where one with the same id was taken out, between the
    same kept features (as many kept before each) and in the same order as the others so paired."""
    kept_before = {feature.id: (place, place - k) for k, (place, feature) in enumerate(zip(edit.taken_at, edit.taken))}
    pairs, last_before = {}, -1
    for k, (place, feature) in enumerate(zip(edit.put_at, edit.put)):
        before = kept_before.get(feature.id)
        if before is not None and before[1] == place - k and before[0] > last_before:
            pairs[before[0]] = place
            last_before = before[0]
    return pairs


def runs(places: list[int]) -> list[tuple[int, int]]:
    """Ascending ``places`` as ``(first, last)`` runs of consecutive places."""
    if not places:
        return []
    if places[-1] - places[0] + 1 == len(places):  # one run (an import, its undo): no walk
        return [(places[0], places[-1])]
    array = np.asarray(places, dtype=np.int64)
    breaks = np.flatnonzero(np.diff(array) != 1)
    firsts = np.concatenate([array[:1], array[breaks + 1]]).tolist()
    lasts = np.concatenate([array[breaks], array[-1:]]).tolist()
    return list(zip(firsts, lasts))
