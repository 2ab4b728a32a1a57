"""Edits of the drawing, as pure functions of :class:`app.model.pieces.ToolState`.

The tool commits what they return as one undoable step.  Those that change the
finished features say where (:func:`app.model.state_change.spliced`).
"""

from __future__ import annotations

import itertools
import operator
from dataclasses import replace

from app.model.pieces import Feature, PieceSpec, ToolState, imported_feature
from app.model.state_change import spliced

__all__ = ["find_feature", "feature_place", "next_name", "free_names", "with_piece", "without_last_piece",
           "without_current", "finished", "renamed", "deleted", "reopened", "with_features", "imported_features"]


def find_feature(state: ToolState, feature_id: int) -> Feature:
    """The finished feature with this id (KeyError when there is none)."""
    return state.features[feature_place(state, feature_id)]


def feature_place(state: ToolState, feature_id: int) -> int:
    """The index of the finished feature with this id in ``state.features`` (KeyError when there is none).

    The ids are compared in C (1-2 ms for 100,000 features); ``tuple.index`` of
    the feature compared every feature before it field by field (15-30 ms).
    """
    try:
        return operator.indexOf(map(operator.attrgetter("id"), state.features), feature_id)
    except ValueError:
        raise KeyError(f"no feature with id {feature_id}") from None


def next_name(state: ToolState, pending: tuple[Feature, ...] = ()) -> str:
    """The first free "Line n", n counted from the number of finished features plus one."""
    taken = {f.name for f in state.features} | {f.name for f in pending}
    return next(f"Line {n}" for n in itertools.count(len(state.features) + 1) if f"Line {n}" not in taken)


def free_names(state: ToolState, taken_too=()):
    """The free names "Line n" as :func:`next_name` gives them, for naming many features at once.

    Skips the finished features' names and ``taken_too`` (say the names of the
    other features being added); never yields a name twice.
    """
    taken = {f.name for f in state.features} | set(taken_too)
    for n in itertools.count(len(state.features) + 1):
        if f"Line {n}" not in taken:
            yield f"Line {n}"


def with_piece(state: ToolState, piece: PieceSpec, replace_last: bool = False) -> ToolState:
    """``piece`` chained onto the feature in progress (in place of its last piece with ``replace_last``)."""
    current = state.current
    kept = current.pieces[:-1] if replace_last else current.pieces
    return replace(state, current=replace(current, pieces=kept + (piece,)))


def without_last_piece(state: ToolState) -> ToolState:
    """The feature in progress without its last piece, or without its lone start click."""
    current = state.current
    if not current.pieces:
        return replace(state, current=None, reopened=None)
    return replace(state, current=replace(current, pieces=current.pieces[:-1]))


def without_current(state: ToolState) -> ToolState:
    """The unfinished line dropped whole; a reopened feature goes back to its place as it was."""
    if state.reopened is None:
        return ToolState(state.features, None)
    index, original = state.reopened
    return spliced(state, index, index, (original,), current=None, reopened=None)


def finished(state: ToolState) -> ToolState:
    """The feature in progress (which has pieces) moved to the finished features, named if it had no name.

    A reopened feature goes back to its place in the list, others at the end.
    """
    current = state.current
    done = replace(current, name=current.name or next_name(state))
    index = state.reopened[0] if state.reopened is not None else len(state.features)
    return spliced(state, index, index, (done,), current=None, reopened=None)


def renamed(state: ToolState, feature_id: int, name: str) -> ToolState:
    """Finished feature ``feature_id`` named ``name`` (stripped; ValueError when empty)."""
    name = str(name).strip()
    if not name:
        raise ValueError("name must not be empty")
    index = feature_place(state, feature_id)
    return spliced(state, index, index + 1, (replace(state.features[index], name=name),))


def deleted(state: ToolState, feature_id: int) -> ToolState:
    """Without finished feature ``feature_id`` (KeyError when there is none)."""
    index = feature_place(state, feature_id)
    reopened = state.reopened
    if reopened is not None and index < reopened[0]:
        reopened = (reopened[0] - 1, reopened[1])  # the reopened feature's place moves up with the list
    return spliced(state, index, index + 1, reopened=reopened)


def reopened(state: ToolState, feature_id: int) -> ToolState:
    """Finished feature ``feature_id`` in progress again; a feature in progress with pieces is finished."""
    if state.current is not None:
        find_feature(state, feature_id)  # (KeyError before the feature in progress is touched)
        state = finished(state) if state.current.pieces else without_current(state)
    index = feature_place(state, feature_id)
    feature = state.features[index]
    return spliced(state, index, index + 1, current=feature, reopened=(index, feature))


def with_features(state: ToolState, added: tuple[Feature, ...]) -> ToolState:
    """``added`` appended to the finished features."""
    return spliced(state, len(state.features), len(state.features), added)


def imported_features(state: ToolState, items, ids) -> tuple[list[Feature], dict]:
    """Finished features of imported ``(name, vertices_px (k, 2), properties)`` lines, and their outcomes.

    ``ids``: two fresh ids per line; unnamed lines get the free "Line n"
    names after ``state``'s.  ValueError for a line that is not (k >= 2, 2) finite.
    """
    names = free_names(state, {item[0] for item in items if item[0]})
    features, outcomes = [], {}
    for k, (name, vertices, properties) in enumerate(items):
        piece_id, feature_id = ids[2 * k], ids[2 * k + 1]
        feature, outcomes[piece_id] = imported_feature(feature_id, piece_id, name or next(names), vertices,
                                                       properties)
        features.append(feature)
    return features, outcomes
