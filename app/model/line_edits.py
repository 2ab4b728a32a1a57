"""Geometry edits of finished lines, as pure functions of a :class:`ToolState` and the outcomes (no Qt).

Each returns the new state and the outcomes of the new pieces it made; the
tool commits them as one undoable step (:meth:`app.model.tool.ExtractionTool.apply_edit`).
Pieces are immutable and their outcomes are kept by id, so an edit never
changes a piece: it replaces the line's pieces by new ones of kind
``"edited"``, whose outcomes hold the new geometry.

- Reverse and merge keep the pieces (each one's score, estimate and
  confidence stay with its stretch of line).
- A vertex edit (move, insert, delete) and a split make each resulting line
  one edited piece: the user drew that geometry, so no extraction's score or
  estimate describes it any more.  The attributes of an imported line stay.

The vertex and segment indices are those of :meth:`ExtractionTool.feature_vertices`.
``lookup`` (keyword): the tool's :class:`app.model.feature_lookup.FeatureLookup`,
which finds the lines without walking the features (as in :mod:`app.model.editing`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np

from app.model.editing import feature_place, free_names
from app.model.pieces import Feature, PieceOutcome, PieceSpec, ToolState, as_xy, feature_vertices, piece_vertices
from app.model.state_change import spliced

__all__ = ["LineEditError", "moved_vertex", "inserted_vertex", "deleted_vertex", "reversed_line", "split_line",
           "merged_lines", "shared_end", "ENDS_MEET_PX"]

#: Two line ends closer than this (px) are one junction: merge joins them.
ENDS_MEET_PX = 1e-6

NewIds = Callable[[int], list]


class LineEditError(ValueError):
    """An edit that cannot be made (a line still being extracted, a vertex that does not exist, ...)."""


def _editable(state: ToolState, outcomes: dict, feature_id: int, lookup) -> tuple[int, Feature]:
    """The place and the feature of line ``feature_id``, whose every piece has its outcome."""
    position = feature_place(state, feature_id, lookup)
    feature = state.features[position]
    if any(p.id not in outcomes for p in feature.pieces):
        raise LineEditError(f"{feature.name} is still being extracted: edit it once it is done")
    return position, feature


def _parts(feature: Feature, outcomes: dict) -> list[tuple[np.ndarray, PieceOutcome]]:
    """Each piece's vertices (k, 2) px and outcome."""
    return [(piece_vertices(feature, i, outcomes), outcomes[p.id]) for i, p in enumerate(feature.pieces)]


def _carried_properties(feature: Feature, outcomes: dict) -> dict:
    """The attributes of the line's imported (or edited imported) pieces, for its edited self."""
    carried: dict = {}
    for piece in feature.pieces:
        carried.update(outcomes[piece.id].details.get("properties", {}))
    return carried


def _built(feature: Feature, parts, new_ids: NewIds, name: str | None = None, feature_id: int | None = None):
    """``feature`` (same id unless ``feature_id``) made of ``parts``, each an edited piece; and their outcomes."""
    ids = new_ids(len(parts))
    pieces, outcomes = [], {}
    for piece_id, (vertices, template) in zip(ids, parts):
        vertices = np.array(vertices, dtype=np.float64)
        pieces.append(PieceSpec(piece_id, as_xy(vertices[0]), as_xy(vertices[-1]), "edited"))
        outcomes[piece_id] = replace(template, vertices_px=vertices)
    start = pieces[0].click_start
    built = Feature(feature.id if feature_id is None else feature_id, feature.name if name is None else name,
                    start, tuple(pieces), attributes=feature.attributes)  # both halves of a split keep the values
    return built, outcomes


def _one_piece(feature: Feature, outcomes: dict, vertices: np.ndarray) -> list:
    """One part of hand-made geometry: no score or estimate, the line's attributes kept."""
    properties = _carried_properties(feature, outcomes)
    template = PieceOutcome(vertices, method="edited", details={"properties": properties} if properties else {})
    return [(vertices, template)]




def _vertices(feature: Feature, outcomes: dict) -> np.ndarray:
    return feature_vertices(feature, outcomes).copy()


def _vertex_index(vertices: np.ndarray, index: int, what: str = "vertex") -> int:
    if not 0 <= index < len(vertices):
        raise LineEditError(f"{what} must be in 0..{len(vertices) - 1}; got {index}")
    return int(index)


def _reshaped(state, outcomes, feature_id, new_ids, reshape, lookup):
    position, feature = _editable(state, outcomes, feature_id, lookup)
    vertices = reshape(_vertices(feature, outcomes))
    built, new_outcomes = _built(feature, _one_piece(feature, outcomes, vertices), new_ids)
    return spliced(state, position, position + 1, (built,)), new_outcomes


def moved_vertex(state: ToolState, outcomes: dict, feature_id: int, index: int, xy, new_ids: NewIds, *,
                 lookup=None):
    """Vertex ``index`` of line ``feature_id`` moved to ``xy`` (x, y) px: ``(state, new outcomes)``."""
    x, y = as_xy(xy)

    def reshape(vertices):
        vertices[_vertex_index(vertices, index)] = (x, y)
        return vertices

    return _reshaped(state, outcomes, feature_id, new_ids, reshape, lookup)


def inserted_vertex(state: ToolState, outcomes: dict, feature_id: int, segment: int, xy, new_ids: NewIds, *,
                    lookup=None):
    """A vertex at ``xy`` px inserted in segment ``segment`` (between vertices ``segment`` and ``segment + 1``)."""
    point = as_xy(xy)

    def reshape(vertices):
        if not 0 <= segment < len(vertices) - 1:
            raise LineEditError(f"segment must be in 0..{len(vertices) - 2}; got {segment}")
        return np.insert(vertices, segment + 1, point, axis=0)

    return _reshaped(state, outcomes, feature_id, new_ids, reshape, lookup)


def deleted_vertex(state: ToolState, outcomes: dict, feature_id: int, index: int, new_ids: NewIds, *, lookup=None):
    """Line ``feature_id`` without vertex ``index`` (LineEditError for a line of two vertices)."""

    def reshape(vertices):
        if len(vertices) <= 2:
            raise LineEditError("a line keeps at least two vertices: delete the line instead")
        return np.delete(vertices, _vertex_index(vertices, index), axis=0)

    return _reshaped(state, outcomes, feature_id, new_ids, reshape, lookup)


def _reversed_parts(parts) -> list:
    return [(vertices[::-1], outcome) for vertices, outcome in reversed(parts)]


def reversed_line(state: ToolState, outcomes: dict, feature_id: int, new_ids: NewIds, *, lookup=None):
    """Line ``feature_id`` drawn the other way round (its pieces kept, in reverse)."""
    position, feature = _editable(state, outcomes, feature_id, lookup)
    built, new_outcomes = _built(feature, _reversed_parts(_parts(feature, outcomes)), new_ids)
    return spliced(state, position, position + 1, (built,)), new_outcomes


def _no_line_in_progress(state: ToolState, what: str) -> None:
    if state.current is not None:
        raise LineEditError(f"finish or cancel the line in progress before you {what}")


def split_line(state: ToolState, outcomes: dict, feature_id: int, index: int, new_ids: NewIds, *, lookup=None):
    """Line ``feature_id`` cut in two at inner vertex ``index``; the second part follows the first in the list.

    The first part keeps the line's id and name, the second gets a new id and the next free name.
    """
    _no_line_in_progress(state, "split a line")
    position, feature = _editable(state, outcomes, feature_id, lookup)
    vertices = _vertices(feature, outcomes)
    if not 0 < index < len(vertices) - 1:
        raise LineEditError(f"split at an inner vertex: index must be in 1..{len(vertices) - 2}; got {index}")
    first, first_outcomes = _built(feature, _one_piece(feature, outcomes, vertices[:index + 1]), new_ids)
    name = next(free_names(state, lookup=lookup))
    second, second_outcomes = _built(feature, _one_piece(feature, outcomes, vertices[index:]), new_ids, name,
                                     new_ids(1)[0])
    return spliced(state, position, position + 1, (first, second)), {**first_outcomes, **second_outcomes}


def shared_end(first: np.ndarray, second: np.ndarray) -> tuple[bool, bool] | None:
    """How two polylines meet: ``(reverse_first, reverse_second)`` so that first's end is second's start; or None."""
    for reverse_first, a in ((False, first[-1]), (True, first[0])):
        for reverse_second, b in ((False, second[0]), (True, second[-1])):
            if np.all(np.abs(a - b) <= ENDS_MEET_PX):
                return reverse_first, reverse_second
    return None


def _parts_toward_start(parts, ends_there: bool) -> list:
    """Parts of a line that must end where the next line starts: reversed when its start is that junction."""
    return parts if ends_there else _reversed_parts(parts)


def merged_lines(state: ToolState, outcomes: dict, first_id: int, second_id: int, new_ids: NewIds, *,
                 lookup=None):
    """Lines ``first_id`` and ``second_id`` that share an end, joined there into one.

    The merged line keeps the first line's id, name and place and both lines'
    pieces; it runs the first line's way where that is possible.
    """
    _no_line_in_progress(state, "merge lines")
    if first_id == second_id:
        raise LineEditError("merge needs two different lines")
    (first_place, first), (second_place, second) = (_editable(state, outcomes, first_id, lookup),
                                                    _editable(state, outcomes, second_id, lookup))
    meeting = shared_end(feature_vertices(first, outcomes), feature_vertices(second, outcomes))
    if meeting is None:
        raise LineEditError(f"{first.name} and {second.name} share no end: snap one's end onto the other's first")
    reverse_first, reverse_second = meeting
    head, tail = _parts(first, outcomes), _parts(second, outcomes)
    if reverse_first:  # the first line's start is the junction: the second line comes before it
        parts = (_parts_toward_start(tail, reverse_second)) + head
    else:
        parts = head + (_reversed_parts(tail) if reverse_second else tail)
    built, new_outcomes = _built(first, parts, new_ids)
    low, high = sorted((first_place, second_place))  # the merged line in the first's place, the second's gone
    between = state.features[low + 1:high]
    merged = (built,) + between if first_place < second_place else between + (built,)
    return spliced(state, low, high + 1, merged), new_outcomes
