"""Edits of the drawing, as pure functions of :class:`app.model.pieces.ToolState`.

The tool commits what they return as one undoable step.  Those that find a
feature by id or name a new line take the tool's
:class:`app.model.feature_lookup.FeatureLookup` as ``lookup`` (optional: without
it, or for other features than its, the features are walked); those that
change the finished features say where (:func:`app.model.state_change.spliced`).
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from app.model.feature_lookup import place_by_walk
from app.model.pieces import Feature, PieceSpec, ToolState, imported_feature
from app.model.state_change import spliced

__all__ = ["find_feature", "feature_place", "next_name", "free_names", "with_piece", "without_last_piece",
           "without_current", "finished", "renamed", "deleted", "reopened", "with_features", "imported_features"]


def find_feature(state: ToolState, feature_id: int, lookup=None) -> Feature:
    """The finished feature with this id (KeyError when there is none)."""
    return state.features[feature_place(state, feature_id, lookup)]


def feature_place(state: ToolState, feature_id: int, lookup=None) -> int:
    """The index of the finished feature with this id in ``state.features`` (KeyError when there is none)."""
    if lookup is not None and lookup.describes(state.features):
        return lookup.place(feature_id)
    return place_by_walk(state.features, feature_id)


def next_name(state: ToolState, pending: tuple[Feature, ...] = (), lookup=None) -> str:
    """The first free "Line n", n counted from the number of finished features plus one."""
    return next(free_names(state, {f.name for f in pending}, lookup))


def free_names(state: ToolState, taken_too=(), lookup=None):
    """The free names "Line n" as :func:`next_name` gives them, for naming many features at once.

    Skips the finished features' names and ``taken_too`` (say the names of the
    other features being added); never yields a name twice.  With ``lookup``,
    take the names before the lookup moves to other features.
    """
    if lookup is not None and lookup.describes(state.features):
        taken_by_features = lookup.line_number_taken
    else:
        names = {f.name for f in state.features}
        taken_by_features = lambda n: f"Line {n}" in names  # noqa: E731
    taken_too = set(taken_too)
    for n in itertools.count(len(state.features) + 1):
        if not taken_by_features(n) and f"Line {n}" not in taken_too:
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
        return ToolState(state.features, None, None, state.fields)
    index, original = state.reopened
    return spliced(state, index, index, (original,), current=None, reopened=None)


def finished(state: ToolState, lookup=None) -> ToolState:
    """The feature in progress (which has pieces) moved to the finished features, named if it had no name.

    A reopened feature goes back to its place in the list, others at the end.
    """
    current = state.current
    done = replace(current, name=current.name or next_name(state, lookup=lookup))
    index = state.reopened[0] if state.reopened is not None else len(state.features)
    return spliced(state, index, index, (done,), current=None, reopened=None)


def renamed(state: ToolState, feature_id: int, name: str, lookup=None) -> ToolState:
    """Finished feature ``feature_id`` named ``name`` (stripped; ValueError when empty)."""
    name = str(name).strip()
    if not name:
        raise ValueError("name must not be empty")
    index = feature_place(state, feature_id, lookup)
    return spliced(state, index, index + 1, (replace(state.features[index], name=name),))


def deleted(state: ToolState, feature_id: int, lookup=None) -> ToolState:
    """Without finished feature ``feature_id`` (KeyError when there is none)."""
    index = feature_place(state, feature_id, lookup)
    reopened = state.reopened
    if reopened is not None and index < reopened[0]:
        reopened = (reopened[0] - 1, reopened[1])  # the reopened feature's place moves up with the list
    return spliced(state, index, index + 1, reopened=reopened)


def reopened(state: ToolState, feature_id: int, lookup=None) -> ToolState:
    """Finished feature ``feature_id`` in progress again; a feature in progress with pieces is finished."""
    if state.current is not None:
        find_feature(state, feature_id, lookup)  # (KeyError before the feature in progress is touched)
        state = finished(state, lookup) if state.current.pieces else without_current(state)
    index = feature_place(state, feature_id, lookup)
    feature = state.features[index]
    return spliced(state, index, index + 1, current=feature, reopened=(index, feature))


def with_features(state: ToolState, added: tuple[Feature, ...]) -> ToolState:
    """``added`` appended to the finished features."""
    return spliced(state, len(state.features), len(state.features), added)


def imported_features(state: ToolState, items, ids, lookup=None) -> tuple[list[Feature], dict]:
    """Finished features of imported ``(name, vertices_px (k, 2), properties)`` lines, and their outcomes.

    ``ids``: two fresh ids per line; unnamed lines get the free "Line n"
    names after ``state``'s.  ValueError for a line that is not (k >= 2, 2) finite.
    """
    names = free_names(state, {item[0] for item in items if item[0]}, lookup)
    features, outcomes = [], {}
    for k, (name, vertices, properties) in enumerate(items):
        piece_id, feature_id = ids[2 * k], ids[2 * k + 1]
        feature, outcomes[piece_id] = imported_feature(feature_id, piece_id, name or next(names), vertices,
                                                       properties)
        features.append(feature)
    return features, outcomes
