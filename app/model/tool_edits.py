"""The edits of finished features and attribute fields that :class:`app.model.tool.ExtractionTool` offers (no Qt).

Each is one undoable step through the tool's ``_commit``; a change of the
fields is one with the values it moves (:mod:`app.model.field_edits`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from app.model import attributes, editing, field_edits, line_edits
from app.model.field_edits import FieldsEdit
from app.model.pieces import Feature, PieceOutcome
from app.model.state_change import StateChange

__all__ = ["FeatureEdits"]


class FeatureEdits:
    """Mixin of :class:`app.model.tool.ExtractionTool`: rename, fields, attributes, delete, reopen, line edits,
    imports."""

    #: The last change of the fields (:class:`app.model.field_edits.FieldsEdit`: which field became which), for the
    #: tables that follow them column by column; None before any.
    fields_edit: FieldsEdit | None = None

    @property
    def fields(self) -> tuple:
        """The layer's attribute fields (:class:`app.model.attributes.FieldDef`), part of the undoable state."""
        return self.state.fields

    def rename(self, feature_id: int, name: str) -> None:
        """Give a finished feature a new name (an undoable edit)."""
        new_state = editing.renamed(self.state, feature_id, name, self._lookup)
        if new_state != self.state:
            self._commit(new_state)

    def set_fields(self, fields, renamed: dict | None = None, clear_misfits: bool = False) -> None:
        """Define the layer's attribute fields anew, with the values that go along: one undoable edit.

        ``renamed`` ``{old name: new name}``: the fields renamed, whose values
        go to the new name on every feature (None: fields told apart by name
        only).  Values of a field whose type changed are converted; a removed
        field's stay on the lines, for a field given its name later
        (:func:`app.model.field_edits.fields_changed`).  Raises
        :class:`app.model.field_edits.FieldChangeError` (nothing changed) where
        values would be dropped, unless ``clear_misfits``.
        """
        new_state = field_edits.fields_changed(self.state, fields, renamed, clear_misfits)
        if new_state != self.state:
            self._commit(new_state)

    def restore_fields(self, fields) -> None:
        """The fields of a restored session or project, with its values as they are: a part of the restore, not an
        edit (no undo step; an undo history left from before is dropped, as a restore drops it)."""
        fields = attributes.check_fields(fields)
        if fields != self.fields:
            self._let_go(self._history.clear())
            new_state = replace(self.state, fields=fields, renames=None)
            self._set_state(new_state, StateChange.between(self.state, new_state))

    def _follow_fields(self, old: tuple, change: StateChange | None, backward: bool) -> None:
        """The state's fields changed from ``old`` (by ``change``, undone where ``backward``; None: a restore)."""
        self.fields_edit = FieldsEdit.of(old, self.state.fields, change, backward)
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
        if vertices is not None:
            self._vertices.put_many(features, vertices, self.outcomes)
        if features:
            self._commit(editing.with_features(self.state, tuple(features)))
