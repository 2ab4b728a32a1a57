"""One undoable step as the difference between two :class:`app.model.pieces.ToolState` (no Qt).

A step used to keep the whole state before it: a tuple of every finished
feature, 8 bytes a feature and an edit (780 KiB an edit at 100,000 lines).  A
:class:`StateChange` keeps only the features that the edit took out and put in,
with their places, and the small rest of the state (the feature in progress,
the reopened one and the attribute fields), so a step costs what it changed.
Applied backward to the state after the step it gives the state before, and
forward the other way.

Finding what changed compared the two tuples object by object from both ends
(about 3 ms an edit at 100,000 features).  The edits of :mod:`app.model.editing`
and the modules beside it make their states with :func:`spliced`, which says
where the features changed (:class:`Splice`): the difference is then looked for
there only.
"""

from __future__ import annotations

import itertools
import operator
from dataclasses import dataclass, replace
from typing import NamedTuple

from app.model.pieces import Feature, ToolState

__all__ = ["StateChange", "Splice", "spliced", "Renames"]


class Splice(NamedTuple):
    """How a features tuple was made: ``result == source[:start] + items + source[stop:]``, the objects outside
    ``items`` being ``source``'s own (see :attr:`app.model.pieces.ToolState.splice`)."""

    source: tuple
    result: tuple
    start: int
    stop: int


class Renames(NamedTuple):
    """Which attribute fields an edit renamed: ``pairs`` ``((old name, new name), ...)`` from the fields ``source``
    (see :attr:`app.model.pieces.ToolState.renames`)."""

    source: tuple
    pairs: tuple


def spliced(state: ToolState, start: int, stop: int, items=(), **rest) -> ToolState:
    """``state`` with ``features[start:stop]`` replaced by ``items`` (and the other fields in ``rest``), the new
    state saying so (its ``splice``) for the undo step's difference."""
    features = state.features[:start] + tuple(items) + state.features[stop:]
    return replace(state, features=features, splice=Splice(state.features, features, start, stop), **rest)


def _places_not_in(features: tuple, others: tuple) -> tuple[int, ...]:
    """The indices of ``features`` whose object is not in ``others`` (C-level loops: tens of thousands)."""
    if not others:
        return tuple(range(len(features)))
    kept = set(map(id, others))
    missing = map(operator.not_, map(kept.__contains__, map(id, features)))
    return tuple(itertools.compress(itertools.count(), missing))


def _without(features: tuple, places: tuple[int, ...]) -> tuple:
    """``features`` without the items at ``places`` (ascending); ``features`` itself where there are none."""
    if not places:
        return features
    parts, last = [], 0
    for place in places:
        parts.append(features[last:place])
        last = place + 1
    parts.append(features[last:])
    return tuple(itertools.chain.from_iterable(parts))


def _with(features: tuple, places: tuple[int, ...], items: tuple) -> tuple:
    """``features`` with ``items`` put in so that they end up at ``places`` (ascending) of the result;
    ``features`` itself where there are none."""
    if not places:
        return features
    parts, last = [], 0
    for inserted, (place, item) in enumerate(zip(places, items)):
        taken = place - inserted  # items of ``features`` that come before this one
        parts.append(features[last:taken])
        parts.append((item,))
        last = taken
    parts.append(features[last:])
    return tuple(itertools.chain.from_iterable(parts))


def _changed_span(old: tuple, new: tuple) -> tuple[int, int, int]:
    """``(first, end_old, end_new)``: outside ``old[first:end_old]``, ``new[first:end_new]`` the objects are the same.

    An edit changes one or two features of tens of thousands: the common
    head and tail are found without building anything per feature.
    """
    shorter = min(len(old), len(new))
    head = next(itertools.compress(itertools.count(), map(operator.is_not, old, new)), shorter)
    tail = next(itertools.compress(itertools.count(), map(operator.is_not, reversed(old), reversed(new))), shorter)
    tail = min(tail, shorter - head)
    return head, len(old) - tail, len(new) - tail


def _same_objects(first: tuple, second: tuple) -> bool:
    return len(first) == len(second) and all(map(operator.is_, first, second))


@dataclass(frozen=True, eq=False)
class StateChange:
    """What one step changed: features removed and added (with their places), and the rest of the state.

    Attributes
    ----------
    removed_at, added_at : tuple of int
        Ascending places of the removed features in the features before the
        step, and of the added ones in the features after it.
    removed, added : tuple of Feature
        Those features, in the same order.
    before, after : tuple
        ``(current, reopened, fields)`` of the state before and after the step.
    renamed : tuple of (str, str), or None
        ``(old name, new name)`` of the attribute fields the step renamed
        (the values went along: :mod:`app.model.field_edits`); None where
        the step did not say (the fields were not changed, or by name only).
    """

    removed_at: tuple[int, ...]
    removed: tuple[Feature, ...]
    added_at: tuple[int, ...]
    added: tuple[Feature, ...]
    before: tuple
    after: tuple
    renamed: tuple | None = None

    @classmethod
    def between(cls, old: ToolState, new: ToolState) -> StateChange:
        """The step from ``old`` to ``new``; features are told apart by identity (they are immutable).  A click
        keeps the finished features' tuple: then nothing is compared, and undoing or redoing it keeps that tuple
        (the tool's request walk skips an unchanged tuple it found settled).  Where ``new.splice`` says how its
        features were made from ``old``'s, only the features it replaced are compared; where ``new.renames`` says
        which of ``old``'s fields it renamed, the step keeps it."""
        sides = (old.current, old.reopened, old.fields), (new.current, new.reopened, new.fields)
        renames = new.renames  # (copied along by later edits: only the step that renamed them has it)
        renamed = renames.pairs if renames is not None and renames.source is old.fields \
            and new.fields is not old.fields else None
        if old.features is new.features:
            return cls((), (), (), (), *sides, renamed)
        splice = new.splice
        if splice is not None and splice.source is old.features and splice.result is new.features:
            first, last_old, last_new = splice.start, splice.stop, len(new.features) - (len(old.features) - splice.stop)
        else:
            first, last_old, last_new = _changed_span(old.features, new.features)
        before, after = old.features[first:last_old], new.features[first:last_new]
        removed_at, added_at = _places_not_in(before, after), _places_not_in(after, before)
        kept = len(removed_at) < len(before) or len(added_at) < len(after)  # (none: an append, a delete, an import)
        if kept and not _same_objects(_without(before, removed_at), _without(after, added_at)):
            # the features kept changed order (no edit does that today): the step keeps both spans whole
            removed_at, added_at = tuple(range(len(before))), tuple(range(len(after)))
        return cls(tuple(map(first.__add__, removed_at)), tuple(map(before.__getitem__, removed_at)),
                   tuple(map(first.__add__, added_at)), tuple(map(after.__getitem__, added_at)), *sides, renamed)

    def undone(self, state: ToolState) -> ToolState:
        """The state before the step, from ``state``, the state after it."""
        features = _with(_without(state.features, self.added_at), self.removed_at, self.removed)
        return ToolState(features, *self.before)

    def redone(self, state: ToolState) -> ToolState:
        """The state after the step, from ``state``, the state before it."""
        features = _with(_without(state.features, self.removed_at), self.added_at, self.added)
        return ToolState(features, *self.after)

    def features_before(self) -> list[Feature]:
        """The features the state held before the step and not after it (the in-progress and reopened ones too)."""
        return list(self.removed) + _side_features(self.before)

    def features_after(self) -> list[Feature]:
        """The features the state holds after the step and did not before it (the in-progress and reopened ones too)."""
        return list(self.added) + _side_features(self.after)


def _side_features(side: tuple) -> list[Feature]:
    current, reopened = side[:2]
    return [f for f in (current, reopened[1] if reopened is not None else None) if f is not None]
