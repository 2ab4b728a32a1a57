"""A spatial index of the finished features, kept in step with the tool incrementally (no Qt).

The overlay asks it which features meet a tile and what changed since it last
looked; a click asks it which feature lies under the cursor.  Features sit in
a grid of square cells by their bounding boxes, so a query costs what lies
near it, not what the whole drawing holds: with tens of thousands of features
a hit test or a tile touches a few cells.

``sync`` compares the tool's feature tuple with the one it saw last.  Features
are immutable, so the usual edits are cheap to recognise: appended features
(finish, import, redo) and features dropped from the end (undo) are told apart
by one C-speed tuple comparison, and any other edit (a rename, a geometry edit,
a delete, a reopen, a split, a merge) by the tool's last change
(``features_edit``) where the index is one change behind, else by the undo
step's difference (:class:`app.model.state_change.StateChange`: C-speed
identity scans from both ends, some 2-3 ms at 100,000).  Hits are returned in
drawing order by a key per feature that only needs to grow along the features
(a feature put in between two gets a key between theirs), so a delete or an
insert in the middle does not renumber the features after it: that walk over
every feature took some 25 ms at 100,000.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

import numpy as np

from app.model.cell_grid import CellGrid, meets
from app.model.pieces import ToolState, unsettled_places
from app.model.state_change import StateChange

__all__ = ["FeatureIndex", "IndexChange", "CELL_PX"]

#: Side of the grid's cells in raster pixels.
CELL_PX = 256.0
#: More features than this added or taken out at once are filed in the grid together (numpy), not one by one.
_MANY = 64


@dataclass
class IndexChange:
    """What :meth:`FeatureIndex.sync` found: ``added`` ids (in drawing order) and ``removed`` ``(id, bbox)``.

    ``bbox`` is ``(x0, y0, x1, y1)`` px.  A feature whose geometry changed is
    both removed (old box) and added.  ``everything`` is True when so much
    changed that redrawing all is cheaper than following the list.
    """

    added: list[int] = field(default_factory=list)
    removed: list[tuple[int, tuple]] = field(default_factory=list)
    everything: bool = False

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.everything)


class FeatureIndex:
    """Bounding boxes of a tool's finished features in a grid of ``cell_px`` cells.

    Parameters
    ----------
    tool : app.model.tool.ExtractionTool
        Read through ``features``, ``outcomes``, ``feature_vertices`` and ``is_pending``.
    cell_px : float
        Side of a grid cell (raster pixels).
    """

    def __init__(self, tool, cell_px: float = CELL_PX):
        self.tool = tool
        self.cell_px = float(cell_px)
        self._features: tuple = ()
        self._entries: dict[int, tuple] = {}  # id -> (feature, vertices, bbox)
        self._order: dict[int, float] = {}  # id -> a key that grows along the features tuple (drawing order)
        self._grid = CellGrid(cell_px)
        self._pending: set[int] = set()  # ids of features with pieces still being computed
        self._held = IndexChange()  # changes found by catch_up, not yet told by sync

    def __len__(self) -> int:
        return len(self._entries)

    # ------------------------------------------------------------- updates
    def sync(self) -> IndexChange:
        """Catch up with the tool's features and returns what changed since the last ``sync`` (for the tiles)."""
        change, self._held = _merged(self._held, self._sync(), self._entries), IndexChange()
        return change

    def catch_up(self) -> None:
        """Catch up with the tool's features for a query (a hit test, a snap); the next :meth:`sync` reports it."""
        self._held = _merged(self._held, self._sync(), self._entries)

    def _sync(self) -> IndexChange:
        features, old = self.tool.features, self._features
        change = IndexChange()
        if features is not old:
            if len(features) >= len(old) and features[:len(old)] == old:
                self._add(features[len(old):], self._order[old[-1].id] if old else -1.0, None, change)
            elif len(features) < len(old) and old[:len(features)] == features:
                self._remove_all(old[len(features):], change)
            else:
                edit = self._edit_from(old, features)
                if not self._replaced_in_place(edit, change):
                    self._follow(features, edit[1:], change)
            self._features = features
        self._refresh_pending(change)
        change.everything = len(change.added) + len(change.removed) > max(1000, len(self._entries) // 4)
        return change

    def _edit_from(self, old: tuple, features: tuple) -> tuple:
        """``(taken_at, taken, put_at, put)``: the features taken out of ``old`` (at ``taken_at``) and put in
        ``features`` (at ``put_at``): the tool's last change where it started from ``old``, else the difference
        found between them."""
        edit = getattr(self.tool, "features_edit", None)
        if edit is not None and edit.old is old:
            return edit.taken_at, edit.taken, edit.put_at, edit.put
        step = StateChange.between(ToolState(old), ToolState(features))
        return step.removed_at, step.removed, step.added_at, step.added

    def _replaced_in_place(self, edit: tuple, change: IndexChange) -> bool:
        """Follow ``edit`` where it replaced features in place, each by one with its id (new values, a new name, a
        vertex moved): each keeps its key, and one whose vertices stayed the same object (its line unchanged: the
        values of a field renamed, at 100,000 lines) is neither indexed again nor reported.  False, with nothing
        done, for any other edit."""
        taken_at, taken, put_at, put = edit
        if taken_at != put_at or any(a.id != b.id for a, b in zip(taken, put)):
            return False
        for feature in put:
            entry = self._entries[feature.id]
            if self.tool.feature_vertices(feature) is entry[1]:
                self._entries[feature.id] = (feature,) + entry[1:]
            else:
                key = self._order[feature.id]
                self._remove(feature.id, change)
                self._insert(feature, key)
                change.added.append(feature.id)
        return True

    def _follow(self, features, edit: tuple, change: IndexChange) -> None:
        """Follow ``edit`` (``(taken, put_at, put)``) from the features last seen to ``features``: the features
        taken out, then those put in, run by run."""
        taken, places, put = edit
        self._remove_all(taken, change)
        start, fits = 0, True
        while start < len(places):  # each run of features put in next to each other, between two kept ones
            end = start + 1
            while end < len(places) and places[end] == places[end - 1] + 1:
                end += 1
            first, last = places[start], places[end - 1]
            low = self._order[features[first - 1].id] if first > 0 else None
            high = self._order[features[last + 1].id] if last + 1 < len(features) else None
            fits = self._add(put[start:end], low, high, change) and fits
            start = end
        if not fits:
            self._renumber(features)

    def _renumber(self, features) -> None:
        """Number the keys 0, 1, ... again: no room was left between two (a float's precision, after dozens of
        splits in one place)."""
        self._order = {f.id: float(k) for k, f in enumerate(features)}

    def _add(self, features, low: float | None, high: float | None, change: IndexChange) -> bool:
        """Index ``features`` with keys between ``low`` and ``high`` (None: no feature before, after them); False
        where they do not fit between (the caller renumbers)."""
        count = len(features)
        if high is None:
            keys = [(-1.0 if low is None else low) + 1.0 + k for k in range(count)]
        elif low is None:
            keys = [high - count + k for k in range(count)]
        else:
            keys = [low + (high - low) * (k + 1) / (count + 1) for k in range(count)]
        if count > _MANY:
            self._insert_many(features, keys)
        else:
            for k, feature in enumerate(features):
                self._insert(feature, keys[k])
        change.added.extend(map(operator.attrgetter("id"), features))
        bounds = [-np.inf if low is None else low] + keys + [np.inf if high is None else high]
        return all(map(operator.lt, bounds, bounds[1:]))

    def _insert_many(self, features, keys: list[float]) -> None:
        """Index many features with ``keys`` (an import's tens of thousands): their boxes and grid cells found with
        numpy (filed one by one, 50,000 imported lines took the index's sync 450-650 ms in the first paint after
        the import, a full garbage collection of some 250-400 ms included)."""
        ids = [f.id for f in features]
        vertices = [self.tool.feature_vertices(f) for f in features]
        starts = np.cumsum([0] + [len(v) for v in vertices[:-1]])
        every = np.concatenate(vertices)
        boxes = np.column_stack([np.minimum.reduceat(every, starts), np.maximum.reduceat(every, starts)])
        self._grid.add_many(boxes, ids)
        # the boxes as tuples of the columns' floats: a list a box (tolist of the rows), 50,000 of them alive through
        # the update, made a full pass of the garbage collector due (some 250 ms of the first paint after an import)
        self._entries.update(zip(ids, zip(features, vertices, zip(*boxes.T.tolist()))))
        self._order.update(zip(ids, keys))
        self._pending.difference_update(ids)
        self._pending.update(ids[k] for k in unsettled_places(features, self.tool.outcomes))

    def _refresh_pending(self, change: IndexChange) -> None:
        """Features whose late results arrived have new geometry."""
        for feature_id in list(self._pending):
            feature = self._entries[feature_id][0]
            if self.tool.feature_vertices(feature) is not self._entries[feature_id][1]:
                key = self._order[feature_id]
                self._remove(feature_id, change)
                self._insert(feature, key)
                change.added.append(feature_id)

    def _insert(self, feature, key: float, bbox: tuple | None = None) -> None:
        vertices = self.tool.feature_vertices(feature)
        if bbox is None:
            (x0, y0), (x1, y1) = vertices.min(axis=0), vertices.max(axis=0)
            bbox = (float(x0), float(y0), float(x1), float(y1))
        self._grid.add(feature.id, bbox)
        self._entries[feature.id] = (feature, vertices, bbox)
        self._order[feature.id] = key
        if any([self.tool.is_pending(p) for p in feature.pieces]):
            self._pending.add(feature.id)
        else:
            self._pending.discard(feature.id)

    def _remove_all(self, features, change: IndexChange) -> None:
        """Take ``features`` out (many at once, an import undone: their grid cells found with numpy)."""
        if len(features) <= _MANY:
            for feature in features:
                self._remove(feature.id, change)
            return
        ids = [f.id for f in features]
        boxes = [self._entries.pop(feature_id)[2] for feature_id in ids]
        self._grid.remove_many(boxes, ids)
        for feature_id in ids:
            self._order.pop(feature_id, None)
        self._pending.difference_update(ids)
        change.removed.extend(zip(ids, boxes))

    def _remove(self, feature_id: int, change: IndexChange) -> None:
        _, _, bbox = self._entries.pop(feature_id)
        self._grid.remove(feature_id, bbox)
        self._order.pop(feature_id, None)
        self._pending.discard(feature_id)
        change.removed.append((feature_id, bbox))

    # ------------------------------------------------------------- queries
    def bbox(self, feature_id: int) -> tuple[float, float, float, float]:
        """``(x0, y0, x1, y1)`` px of an indexed feature (KeyError when it is not indexed)."""
        return self._entries[feature_id][2]

    def entry(self, feature_id: int):
        """``(feature, vertices (k, 2) px)`` of an indexed feature."""
        feature, vertices, _ = self._entries[feature_id]
        return feature, vertices

    def query(self, rect) -> list[int]:
        """Ids of the features whose bounding box meets ``rect`` = (x0, y0, x1, y1) px, in drawing order."""
        x0, y0, x1, y1 = rect
        hits = [i for i in self._grid.candidates(rect) if meets(self._entries[i][2], x0, y0, x1, y1)]
        return sorted(hits, key=self._order.__getitem__)

    def count(self, rect) -> int:
        """How many features meet ``rect`` (an upper bound that counts every feature in the cells it touches)."""
        return len(self._grid.candidates(rect))

    def nearest(self, xy, radius_px: float) -> int | None:
        """Id of the feature nearest to ``xy`` within ``radius_px`` (the topmost of equals), or None.

        Parameters
        ----------
        xy : (float, float)
            Point (x, y) in raster pixels.
        radius_px : float
            Largest distance from the polyline, in raster pixels.
        """
        x, y = float(xy[0]), float(xy[1])
        best, best_d = None, float(radius_px)
        for feature_id in reversed(self.query((x - radius_px, y - radius_px, x + radius_px, y + radius_px))):
            d = distance_to_polyline(self._entries[feature_id][1], x, y)
            if d < best_d:
                best, best_d = feature_id, d
        return best


def _merged(first: IndexChange, then: IndexChange, entries: dict) -> IndexChange:
    """Two changes in a row as one: ids added and not removed since (once each), every removed box."""
    if not first:
        return then
    added = list(dict.fromkeys(i for i in first.added + then.added if i in entries))
    change = IndexChange(added, first.removed + then.removed)
    change.everything = first.everything or then.everything
    return change


def distance_to_polyline(vertices: np.ndarray, x: float, y: float) -> float:
    """Distance (px) from point (x, y) to a (k, 2) polyline, k >= 1."""
    if len(vertices) == 1:
        return float(np.hypot(vertices[0, 0] - x, vertices[0, 1] - y))
    a, b = vertices[:-1], vertices[1:]
    d = b - a
    length2 = np.einsum("ij,ij->i", d, d)
    t = np.clip(np.einsum("ij,ij->i", np.array([x, y]) - a, d) / np.where(length2 > 0, length2, 1.0), 0.0, 1.0)
    closest = a + t[:, None] * d
    return float(np.min(np.hypot(closest[:, 0] - x, closest[:, 1] - y)))
