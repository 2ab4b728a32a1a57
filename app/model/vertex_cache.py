"""Each finished feature's vertices, computed once and kept while they hold (no Qt).

The drawing, the spatial index, hit tests and the features table ask for the
same features' vertices again and again, and joining a feature's pieces
(:func:`app.model.pieces.feature_vertices`) makes new arrays each time.  A kept
entry holds while its feature has the same line (the same start and the same
tuple of pieces: new values or a new name keep it) and its pieces' outcomes are
those it was computed from: a piece's outcome, once there, never changes (until
a restore clears the cache), so an entry whose outcomes were all there stays
valid, and one with pending pieces compares them (by identity: ``eq=False``).

Features added many at once with every outcome there (an import) are kept by id
in two dicts, feature and vertices, not in a tuple each: an import's 50,000 new
tuples on the GUI thread, with the spatial index's own, made a full pass of the
garbage collector due there (250-300 ms of the first paint after the import).
"""

from __future__ import annotations

import operator

import numpy as np

from app.model.pieces import Feature, PieceOutcome, feature_vertices, unsettled_places

__all__ = ["VertexCache"]


class VertexCache:
    """The vertices of finished features, by feature id."""

    def __init__(self):
        self._entries: dict[int, tuple] = {}  # id -> (feature, its pieces' outcomes or None if all there, vertices)
        self._settled: dict[int, Feature] = {}  # id -> feature kept by put_many, every outcome there
        self._settled_vertices: dict[int, np.ndarray] = {}  # id -> its vertices

    def get(self, feature: Feature, outcomes: dict[int, PieceOutcome]) -> np.ndarray:
        """(k, 2) float64 vertices (x, y) px of ``feature`` with ``outcomes`` (kept: do not modify them)."""
        cached = self._entries.get(feature.id)
        if cached is not None and _holds_for(cached[0], feature):
            if cached[1] is None or cached[1] == _outcomes_of(feature, outcomes):
                return cached[2]
        elif _holds_for(self._settled.get(feature.id), feature):
            return self._settled_vertices[feature.id]
        return self.put(feature, feature_vertices(feature, outcomes), outcomes)

    def put(self, feature: Feature, vertices: np.ndarray, outcomes: dict[int, PieceOutcome]) -> np.ndarray:
        """Keep ``vertices``, computed from ``feature`` and ``outcomes``; returns them."""
        own = _outcomes_of(feature, outcomes)
        self._entries[feature.id] = (feature, None if None not in own else own, vertices)
        if feature.id in self._settled:  # (one entry an id)
            del self._settled[feature.id], self._settled_vertices[feature.id]
        return vertices

    def put_many(self, features, vertices, outcomes: dict[int, PieceOutcome]) -> None:
        """Keep each of ``features``' ``vertices`` (computed elsewhere: an import's worker), where every piece has
        its outcome by id in two dicts (no object made per feature), else one by one as :meth:`put`."""
        if unsettled_places(features, outcomes):
            for feature, array in zip(features, vertices):
                self.put(feature, array, outcomes)
            return
        ids = list(map(operator.attrgetter("id"), features))
        for feature_id in self._entries.keys() & ids:  # (one entry an id)
            del self._entries[feature_id]
        self._settled.update(zip(ids, features))
        self._settled_vertices.update(zip(ids, vertices))

    def forget(self, features, held) -> None:
        """Drop what is kept of ``features`` (let go by the undo history) unless ``held`` holds each of their
        pieces' ids still."""
        for feature in features:
            cached = self._entries.get(feature.id)
            entry = cached is not None and _holds_for(cached[0], feature)
            settled = _holds_for(self._settled.get(feature.id), feature)
            if (entry or settled) and not all(p.id in held for p in feature.pieces):
                if entry:
                    del self._entries[feature.id]
                if settled:
                    del self._settled[feature.id], self._settled_vertices[feature.id]

    def clear(self) -> None:
        """Forget everything (a restore: other outcomes)."""
        self._entries.clear()
        self._settled.clear()
        self._settled_vertices.clear()


def _holds_for(kept: Feature | None, feature: Feature) -> bool:
    """Whether vertices kept for ``kept`` are those of ``feature`` (given the same pieces' outcomes): the line is its
    start and its pieces, so a feature given new values or a new name (a field renamed at 100,000 lines) keeps them."""
    return kept is not None and kept.pieces is feature.pieces and kept.start_xy == feature.start_xy


def _outcomes_of(feature: Feature, outcomes: dict[int, PieceOutcome]) -> tuple:
    return tuple([outcomes.get(p.id) for p in feature.pieces])
