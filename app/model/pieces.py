"""The data of the extraction tool: pieces, features, outcomes (immutable, Qt-free).

A *feature* is one digitized polyline: a start click and a chain of *pieces*,
one per further click.  A piece's geometry comes from an extraction
(``kind == "extract"``), is a plain segment (``"straight"``, Shift held), was
imported from a file (``"imported"``) or drawn by a geometry edit (``"edited"``,
:mod:`app.model.line_edits`).  Its *outcome* is what became of it: the
polyline's vertices and score (``"done"``) or the error that stopped it
(``"failed"``, drawn as a straight segment), and what the extraction estimated
of the road (:mod:`app.model.estimates`).

Pieces, features and outcomes have slots: their fields are read from the
object itself.  Without slots an instance keeps its values in an allocation of
their own, one more place in memory that every pass an edit makes over tens
of thousands of features (an import) reached for each feature and piece.
"""

from __future__ import annotations

import itertools
import operator
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

import numpy as np

from app.model.estimates import confidence_value, estimate_from_dict, is_low, ribbon_edges

__all__ = ["PIECE_KINDS", "PieceSpec", "Feature", "PieceOutcome", "PreviewRequest", "ToolState",
           "straight_outcome", "as_xy", "piece_start", "start_is_final", "piece_vertices", "feature_vertices",
           "feature_ribbon_edges", "feature_score", "feature_confidence", "confidence_runs", "imported_feature",
           "piece_ids", "unsettled_places"]

PIECE_KINDS = ("extract", "straight", "imported", "edited")
#: Vertices closer than this (px, along x and y) are the same vertex of a feature.
SAME_VERTEX_PX = 1e-9


@dataclass(frozen=True, slots=True)
class PieceSpec:
    """One piece of a feature: from the previous click to ``click_end``.

    Attributes
    ----------
    id : int
        Unique for the life of the tool; names the extraction request.
    click_start, click_end : tuple of float
        The clicked points (x, y) in pixels that bound the piece.
    kind : {"extract", "straight", "imported", "edited"}
    settings : object or None
        The extraction settings the piece was requested with (``"extract"``).
    """

    id: int
    click_start: tuple[float, float]
    click_end: tuple[float, float]
    kind: str = "extract"
    settings: Any = None

    @property
    def ends_at_click(self) -> bool:
        """False for an extraction with endpoint snapping, whose end is known only from its outcome."""
        return not (self.kind == "extract" and bool(getattr(self.settings, "snap_endpoints", False)))


@dataclass(frozen=True, slots=True)
class Feature:
    """A digitized polyline: ``start_xy`` then its pieces in order.

    ``attributes`` holds the values of the layer's user-defined fields as
    sorted ``(name, value)`` pairs, unset fields left out (:mod:`app.model.attributes`).
    """

    id: int
    name: str
    start_xy: tuple[float, float]
    pieces: tuple[PieceSpec, ...] = ()
    attributes: tuple[tuple[str, Any], ...] = ()

    @property
    def anchor_xy(self) -> tuple[float, float]:
        """The last click of the feature: where the next piece starts."""
        return self.pieces[-1].click_end if self.pieces else self.start_xy


@dataclass(frozen=True, eq=False, slots=True)
class PieceOutcome:
    """The geometry of a piece once its extraction finished (or failed).

    Attributes
    ----------
    vertices_px : (k, 2) float64 ndarray
        Polyline vertices (x, y) in pixels, both ends included.
    status : {"done", "failed"}
    score : float or None
        The extraction's score (None for straight, imported or failed pieces).
    backend, method : str
    timings_ms : dict
    error : str
        The failure's message (``status == "failed"``).
    details : dict
        Anything else worth keeping (imported properties, guides for overlays).
    estimate : core.extraction.estimate.RoadEstimate or None
        The road as the extraction saw it (width, polarity, contrast, course).
    confidence : float or None
        In ``[0, 1]``: how clearly the image shows the road under the piece
        (None for straight and failed pieces, and lines imported without one).
    """

    vertices_px: np.ndarray
    status: str = "done"
    score: float | None = None
    backend: str = ""
    method: str = ""
    timings_ms: dict = field(default_factory=dict)
    error: str = ""
    details: dict = field(default_factory=dict)
    estimate: Any = None
    confidence: float | None = None


@dataclass(frozen=True)
class PreviewRequest:
    """Ask for the optimal polyline from ``start_xy`` to the cursor ``end_xy``."""

    seq: int
    start_xy: tuple[float, float]
    end_xy: tuple[float, float]
    settings: Any


@dataclass(frozen=True)
class ToolState:
    """The undoable state: finished features, the feature in progress and the layer's attribute fields.

    ``reopened`` is ``(index, feature)`` while ``current`` is a finished feature
    taken back for more pieces (Continue): where it goes back when finished, and
    what it was, for Esc to put it back unchanged.

    ``fields`` are the layer's attribute fields (:class:`app.model.attributes.FieldDef`):
    the features' values are read by their names, so a change of the fields and
    of the values it moves is one undoable step (:mod:`app.model.field_edits`).

    ``splice`` and ``renames`` are not part of the state (neither compared nor
    shown): where an edit says how it made ``features`` from the features before
    it (:class:`app.model.state_change.Splice`), the undo step's difference is
    looked for there only instead of along every feature; where it renamed
    fields (:class:`app.model.state_change.Renames`), the step keeps which
    field became which, for the tables that show them.
    """

    features: tuple[Feature, ...] = ()
    current: Feature | None = None
    reopened: tuple[int, Feature] | None = None
    fields: tuple = ()
    splice: Any = field(default=None, compare=False, repr=False)
    renames: Any = field(default=None, compare=False, repr=False)


def straight_outcome(start_xy, end_xy, status="done", error="") -> PieceOutcome:
    """A two-vertex outcome from ``start_xy`` to ``end_xy`` (pixels)."""
    vertices = np.array([start_xy, end_xy], dtype=np.float64)
    return PieceOutcome(vertices, status=status, error=error)


def as_xy(point) -> tuple[float, float]:
    """``point`` as a tuple of two finite floats (x, y); ValueError otherwise."""
    x, y = (float(v) for v in point)
    if not (np.isfinite(x) and np.isfinite(y)):
        raise ValueError(f"point must be two finite numbers (x, y) in pixels; got {point!r}")
    return (x, y)


def piece_start(feature: Feature, index: int, outcomes: dict[int, PieceOutcome]) -> tuple[float, float]:
    """Where piece ``index`` of ``feature`` starts: (x, y) px.

    The previous click, except after a piece with endpoint snapping whose
    outcome is known: then that outcome's last vertex.
    """
    if index == 0:
        return feature.start_xy
    previous = feature.pieces[index - 1]
    outcome = outcomes.get(previous.id)
    if previous.ends_at_click or outcome is None:
        return previous.click_end
    return (float(outcome.vertices_px[-1, 0]), float(outcome.vertices_px[-1, 1]))


def start_is_final(feature: Feature, index: int, outcomes: dict[int, PieceOutcome]) -> bool:
    """True when :func:`piece_start` of piece ``index`` can no longer change."""
    if index == 0:
        return True
    previous = feature.pieces[index - 1]
    return previous.ends_at_click or previous.id in outcomes


def piece_vertices(feature: Feature, index: int, outcomes: dict[int, PieceOutcome]) -> np.ndarray:
    """(k, 2) float64 vertices of one piece: its outcome, or a placeholder segment while pending.

    A piece after the first starts exactly where the previous one ends (:func:`piece_start`): endpoint
    snapping may move its own extraction's start by a few pixels across its direction, and linking the two
    would put a jog out and back into the line at every click, so that first vertex is replaced.
    """
    piece = feature.pieces[index]
    outcome = outcomes.get(piece.id)
    start = piece_start(feature, index, outcomes) if index or outcome is None else None
    if outcome is None:
        return np.array([start, piece.click_end], dtype=np.float64)
    vertices = outcome.vertices_px
    if start is None or (vertices[0, 0] == start[0] and vertices[0, 1] == start[1]):
        return vertices
    pinned = np.array(vertices, dtype=np.float64)
    pinned[0] = start
    return pinned


def feature_vertices(feature: Feature, outcomes: dict[int, PieceOutcome]) -> np.ndarray:
    """(k, 2) float64 vertices (x, y) px of a whole feature, consecutive duplicates removed.

    Each piece after the first starts at the previous one's end (:func:`piece_vertices`);
    vertices closer than :data:`SAME_VERTEX_PX` are one.
    """
    if not feature.pieces:
        return np.array([feature.start_xy], dtype=np.float64)
    return _joined([piece_vertices(feature, i, outcomes) for i in range(len(feature.pieces))])


def feature_ribbon_edges(feature: Feature, outcomes: dict[int, PieceOutcome]):
    """The estimated ribbon's edges ((k >= 2, 2) px arrays) along each piece of ``feature`` whose outcome's
    estimate has a width, on the piece's vertices as the line has them (:func:`piece_vertices`)."""
    for index, piece in enumerate(feature.pieces):
        outcome = outcomes.get(piece.id)
        estimate = outcome.estimate if outcome is not None else None
        if estimate is None or not estimate.width_px:
            continue
        edges = ribbon_edges(piece_vertices(feature, index, outcomes), estimate.width_px)
        yield from (edge for edge in edges if len(edge) >= 2)


def feature_score(feature: Feature, outcomes: dict[int, PieceOutcome]) -> float | None:
    """Sum of the scores of the feature's scored pieces; None when none has a score."""
    scores = [outcomes[p.id].score for p in feature.pieces
              if p.id in outcomes and outcomes[p.id].score is not None]
    return float(sum(scores)) if scores else None


def feature_confidence(feature: Feature, outcomes: dict[int, PieceOutcome]) -> float | None:
    """The lowest confidence of the feature's pieces; None when no piece has one."""
    values = [outcomes[p.id].confidence for p in feature.pieces
              if p.id in outcomes and outcomes[p.id].confidence is not None]
    return min(values) if values else None


def confidence_runs(feature: Feature, outcomes: dict[int, PieceOutcome]) -> list[tuple[np.ndarray, bool]]:
    """The feature as runs of consecutive pieces, each ``(vertices (k, 2) px, low)``: low-confidence or not.

    One run for a feature without low-confidence pieces, so it is drawn as one
    line; each later run starts where the previous one ended.
    """
    runs: list[tuple[list, bool]] = []
    for index, piece in enumerate(feature.pieces):
        outcome = outcomes.get(piece.id)
        low = outcome is not None and is_low(outcome.confidence)
        vertices = piece_vertices(feature, index, outcomes)
        if runs and runs[-1][1] == low:
            runs[-1][0].append(vertices)
        else:
            runs.append((([runs[-1][0][-1][-1:]] if runs else []) + [vertices], low))
    return [(_joined(parts), low) for parts, low in runs]


def _joined(parts) -> np.ndarray:
    """The vertex arrays one after the other, consecutive duplicates (:data:`SAME_VERTEX_PX`) removed."""
    vertices = np.concatenate(parts)
    keep = np.ones(len(vertices), dtype=bool)
    keep[1:] = np.any(np.abs(vertices[1:] - vertices[:-1]) > SAME_VERTEX_PX, axis=1)
    return vertices[keep]


def piece_ids(features: Iterable[Feature]) -> Iterator[int]:
    """The ids of the pieces of ``features``, feature after feature (iterated in C: no Python call per piece)."""
    return map(operator.attrgetter("id"), itertools.chain.from_iterable(map(operator.attrgetter("pieces"), features)))


def unsettled_places(features, outcomes: dict[int, PieceOutcome]) -> list[int]:
    """The ascending places in ``features`` (a sequence) of those with a piece whose outcome is not in ``outcomes``.

    The pieces are looked up in C and their features found with numpy: the
    finish of an import of 50,000 lines walked them with a Python call per
    feature and per piece, 35-60 ms of the GUI thread each in the request walk
    and in the features table.
    """
    counts = np.fromiter(map(len, map(operator.attrgetter("pieces"), features)), dtype=np.intp, count=len(features))
    settled = np.fromiter(map(outcomes.__contains__, piece_ids(features)), dtype=bool, count=int(counts.sum()))
    if settled.all():
        return []
    owners = np.repeat(np.arange(len(features)), counts)
    return np.unique(owners[~settled]).tolist()


def imported_feature(feature_id: int, piece_id: int, name: str, vertices, properties: dict
                     ) -> tuple[Feature, PieceOutcome]:
    """A finished feature of one imported piece (``vertices`` (k, 2) px, the file's ``properties``), and its outcome.

    LineSnap's ``confidence`` and ``estimate`` properties come back into the outcome.
    """
    vertices = np.array(vertices, dtype=np.float64)
    if vertices.ndim != 2 or vertices.shape[1] != 2 or len(vertices) < 2:
        raise ValueError(f"vertices_px must be (k, 2) with k >= 2; got shape {vertices.shape}")
    if not np.all(np.isfinite(vertices)):
        raise ValueError("vertices_px must be finite")
    start, end = as_xy(vertices[0]), as_xy(vertices[-1])
    score = properties.get("score")
    # A LineSnap feature of several pieces has one estimate per piece: none of them is the whole line's.
    pieces = properties.get("pieces")
    whole = not isinstance(pieces, list) or len(pieces) <= 1
    outcome = PieceOutcome(vertices, score=float(score) if isinstance(score, (int, float)) else None,
                           backend=str(properties.get("backend", "")), details={"properties": dict(properties)},
                           estimate=estimate_from_dict(properties.get("estimate")) if whole else None,
                           confidence=confidence_value(properties.get("confidence")))
    return Feature(feature_id, name, start, (PieceSpec(piece_id, start, end, "imported"),)), outcome
