"""The edits of finished features that :class:`app.model.tool.ExtractionTool` offers (no Qt).

Each is one undoable step through the tool's ``_commit`` (fields excepted: defining
them is not an edit of the drawing).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from app.model import attributes, editing, line_edits
from app.model.pieces import Feature, PieceOutcome

__all__ = ["FeatureEdits"]


class FeatureEdits:
    """Mixin of :class:`app.model.tool.ExtractionTool`: rename, attributes, delete, reopen, line edits, imports."""

    def rename(self, feature_id: int, name: str) -> None:
        """Give a finished feature a new name (an undoable edit)."""
        new_state = editing.renamed(self.state, feature_id, name, self._lookup)
        if new_state != self.state:
            self._commit(new_state)

    def set_fields(self, fields) -> None:
        """Define the layer's attribute fields (values stay on the features; not an undoable edit)."""
        fields = attributes.check_fields(fields)
        if fields != self.fields:
            self.fields = fields
            self.dirty = True
            self.fields_changed.emit()

    def set_attributes(self, feature_id: int, values: dict) -> None:
        """Set attribute values (field name -> raw value, None clears) of a finished feature: one undoable edit.

        ValueError (nothing changed) for an unknown field or a value that does not fit its field.
        """
        new_state = attributes.with_values(self.state, feature_id, values, self.fields, self._lookup)
        if new_state != self.state:
            self._commit(new_state)

    def delete(self, feature_id: int) -> None:
        """Remove a finished feature (an undoable edit)."""
        self._commit(editing.deleted(self.state, feature_id, self._lookup))

    def reopen(self, feature_id: int, at_start: bool = False) -> None:
        """Make a finished feature the feature in progress again, to chain more pieces (``at_start``: at its start)."""
        original = self.feature(feature_id)
        new_state = editing.reopened(self.state, feature_id, self._lookup)
        if at_start:  # in progress the other way round (reversed in the features before: its lookup finds it there)
            reversed_state, outcomes = line_edits.reversed_line(self.state, self.outcomes, feature_id, self.new_ids,
                                                                lookup=self._lookup)
            place = editing.feature_place(self.state, feature_id, self._lookup)
            new_state = replace(new_state, current=reversed_state.features[place])
            self.outcomes.update(outcomes)
        self._preview.paused = False
        self._commit(replace(new_state, reopened=(new_state.reopened[0], original)))  # Esc: back as it was

    def apply_edit(self, edit, *args) -> None:
        """One undoable edit ``edit(state, outcomes, *args, new_ids, lookup=...)`` of :mod:`app.model.line_edits`.

        Its :class:`app.model.line_edits.LineEditError` leaves everything as it was.
        """
        new_state, outcomes = edit(self.state, self.outcomes, *args, self.new_ids, lookup=self._lookup)
        self.outcomes.update(outcomes)
        self._commit(new_state)

    def add_features(self, items: list[tuple[str, np.ndarray, dict]]) -> list[Feature]:
        """Add imported ``(name, vertices_px (k, 2), properties)`` polylines as finished features.

        Returns the features added, in order.
        """
        features, outcomes = editing.imported_features(self.state, items, self.new_ids(2 * len(items)), self._lookup)
        self.add_built_features(features, outcomes)
        return features

    def new_ids(self, count: int) -> list[int]:
        """``count`` fresh ids for features and pieces built elsewhere (from any thread: the counter is atomic)."""
        return [next(self._ids) for _ in range(count)]

    def add_built_features(self, features, outcomes: dict[int, PieceOutcome], vertices=None) -> None:
        """Append finished ``features`` (ids from :meth:`new_ids`) and their pieces' ``outcomes``: one undoable step.

        ``vertices``: each feature's ``feature_vertices``, when the builder
        computed them already (a worker, for tens of thousands of lines).
        """
        self.outcomes.update(outcomes)
        for feature, array in zip(features, vertices or ()):
            self._cache_vertices(feature, array)
        if features:
            self._commit(editing.with_features(self.state, tuple(features)))
