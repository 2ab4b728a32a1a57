"""The columns a table of the attribute fields removes, moves, inserts and changes when the fields are defined anew
(no Qt).

The Features dock shows one column per attribute field after its fixed ones.
Resetting the table when the fields changed lost the view's selection, its
current row, its scroll and (at 100,000 features) cost a re-sort of every
row; a field change is followed column by column instead.  A field is its
name (the features keep their values by name): a field of the same name is
the same column, wherever it went.  Where the change says which field was
renamed to which (the Fields dialog knows its rows: ``renamed``), that field
is its column renamed, wherever it went; where it does not (a restore), a
field whose name is new, standing where one whose name went away stood
(between the same fields kept), is taken for that column renamed.
"""

from __future__ import annotations

from typing import NamedTuple

from app.model.feature_rows import runs

__all__ = ["ColumnEdit", "column_edit"]


class ColumnEdit(NamedTuple):
    """The column changes from one tuple of fields to another, to apply in this order.

    Attributes
    ----------
    removed : list of (int, int)
        ``(first, last)`` fields (inclusive) removed, in the fields before;
        last run first, so that each run's fields are still where they were.
    moved : list of (int, int)
        ``(at, to)``: the field at ``at`` goes to ``to`` (its place after the
        move), one field at a time, from the fields left by the removals.
    inserted : list of (int, int)
        ``(first, last)`` fields (inclusive) inserted, in the fields after;
        first run first, so that each run lands where it ends up.
    changed : list of int
        Fields after (ascending) that stand for one before but differ from it:
        renamed, or of another kind or choices.
    """

    removed: list[tuple[int, int]]
    moved: list[tuple[int, int]]
    inserted: list[tuple[int, int]]
    changed: list[int]


def column_edit(old, new, renamed: dict | None = None) -> ColumnEdit:
    """The columns that going from fields ``old`` to fields ``new`` removes, moves, inserts and changes.

    Parameters
    ----------
    old, new : sequence of FieldDef
        The fields before and after (distinct names in each).
    renamed : dict or None
        ``{old name: new name}`` of the fields renamed; None: renames are
        guessed from the places of the names that came and went.
    """
    old, new = tuple(old), tuple(new)
    target = _targets(old, new) if renamed is None else _renamed_targets(old, new, renamed)
    removed = [k for k, place in enumerate(target) if place is None]
    kept = [place for place in target if place is not None]
    moved = _moves(kept)
    inserted = sorted(set(range(len(new))) - set(kept))
    changed = [place for k, place in enumerate(target) if place is not None and old[k] != new[place]]
    return ColumnEdit(runs(removed)[::-1], moved, runs(inserted), sorted(changed))


def _targets(old: tuple, new: tuple) -> list[int | None]:
    """Each old field's place among ``new``: the field of the same name, else (a rename) the new field of a new name
    that has as many such fields before it after the same kept field; None for a field removed."""
    by_name = {field.name: place for place, field in enumerate(new)}
    target = [by_name.get(field.name) for field in old]
    old_names = {field.name for field in old}
    fresh = {}  # the field kept just before -> the new fields of new names after it, in order
    anchor = None
    for field in new:
        if field.name in old_names:
            anchor = field.name
        else:
            fresh.setdefault(anchor, []).append(by_name[field.name])
    anchor = None
    for k, field in enumerate(old):
        if target[k] is not None:
            anchor = field.name
        elif fresh.get(anchor):
            target[k] = fresh[anchor].pop(0)
    return target


def _renamed_targets(old: tuple, new: tuple, renamed: dict) -> list[int | None]:
    """Each old field's place among ``new``: the field it was renamed to, else the field of its name unless that is
    another one renamed to it; None for a field removed."""
    by_name = {field.name: place for place, field in enumerate(new)}
    taken = {after for before, after in renamed.items() if before != after}
    return [by_name.get(renamed[field.name]) if field.name in renamed
            else None if field.name in taken else by_name.get(field.name) for field in old]


def _moves(places: list[int]) -> list[tuple[int, int]]:
    """Moves ``(at, to)``, one item at a time, that put ``places`` in ascending order: those off a longest ascending
    run of them, smallest first, each put after the largest smaller one already in order."""
    shown, settled = list(places), set(_longest_ascending(places))
    moves = []
    for place in sorted(set(places) - settled):
        at = shown.index(place)
        del shown[at]
        before = [k for k, other in enumerate(shown) if other in settled and other < place]
        to = before[-1] + 1 if before else 0
        shown.insert(to, place)
        settled.add(place)
        if to != at:
            moves.append((at, to))
    return moves


def _longest_ascending(values: list[int]) -> list[int]:
    """A longest ascending subsequence of ``values`` (distinct; few: the quadratic way)."""
    best = [[value] for value in values]  # the longest ascending run ending at each value
    for k, value in enumerate(values):
        for j in range(k):
            if values[j] < value and len(best[j]) + 1 > len(best[k]):
                best[k] = best[j] + [value]
    return max(best, key=len, default=[])

