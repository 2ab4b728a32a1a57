"""A change of the work layer's attribute fields together with the values it moves (no Qt).

The features keep their values by field name (:attr:`app.model.pieces.Feature.attributes`),
so defining the fields anew by name alone left a renamed field's values under
its old name: out of the table and out of the exports, back only once the field
was renamed back.  The Fields dialog knows which of its rows was which field,
and :func:`fields_changed` takes that as ``renamed`` (old name -> new name):

- a field renamed takes its values along to its new name, on every feature;
- a field whose type changed (kind or choices) has its values converted
  (:func:`app.model.attributes.converted_value`: ``"3"`` becomes 3 for an
  integer field, 2.5 becomes ``"2.5"`` for a text field);
- a field removed leaves its values on the lines, out of sight and not
  exported; a field given its name later (added, or renamed to it) shows them
  again, converted to its type;
- a value the change would drop (one that does not fit its field's new type, or
  a removed field's value where a field renamed to that name brings its own) is
  never dropped silently: :class:`FieldChangeError` names each field and how
  many values, and only ``clear_misfits=True`` clears them.

The tool makes the fields and the values one undoable step
(:meth:`app.model.tool_edits.FeatureEdits.set_fields`): undo gives back the old
fields and the old values.  Only the features that hold a value the change
moves or converts are rewritten, once each, and lines sharing their values
share the work: linear in the features.  At 100,000 lines with a value each
in the renamed field the whole edit, the Features dock and the map's index
following it, took 0.9-1.8 s on a busy 2-core machine, the new lines about
half of it (0.1-0.2 s at 10,000; ``python -m tests.benchmarks.bench_field_rename``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

from app.model.attributes import accepts, check_fields, converted_value, value_text
from app.model.pieces import Feature, ToolState
from app.model.state_change import Renames, spliced

__all__ = ["fields_changed", "FieldChangeError", "FieldLoss", "FieldsEdit"]

#: Values quoted by a loss's message, at most.
_EXAMPLES = 3


class FieldLoss(NamedTuple):
    """Values of field ``field`` a change would drop: ``count`` of them, a few distinct ``examples`` as stored.

    ``why`` is ``"misfit"`` (they do not fit the field's new type) or
    ``"replaced"`` (a removed field's values under this name, where the field
    renamed to it brings a value of its own).
    """

    field: str
    why: str
    count: int
    examples: tuple
    accepted: str = ""

    def describe(self) -> str:
        """One clause of a message: ``lanes: 2 values are not a whole number ('two', 'many')``."""
        more = ", ..." if self.count > len(self.examples) else ""
        quoted = ", ".join(repr(value_text(v)) for v in self.examples) + more
        plural = "values" if self.count > 1 else "value"
        if self.why == "misfit":
            return f"{self.field}: {self.count} {plural} {'are' if self.count > 1 else 'is'} not {self.accepted} " \
                   f"({quoted})"
        return (f"{self.field}: {self.count} {plural} of a removed field {self.field} ({quoted}) where the field "
                f"renamed {self.field} brings its own")


class FieldChangeError(ValueError):
    """A change of the fields would drop values (nothing was changed): ``losses``, one :class:`FieldLoss` per field
    and reason, and their ``count`` in all."""

    def __init__(self, losses):
        self.losses = tuple(losses)
        self.count = sum(loss.count for loss in self.losses)
        super().__init__(f"the change would clear {self.count} value{'s' if self.count > 1 else ''}: "
                         + "; ".join(loss.describe() for loss in self.losses))


class FieldsEdit(NamedTuple):
    """A change of the fields as the tables follow it (the tool's ``fields_edit``).

    ``old`` and ``new`` fields; ``renamed`` ``{old name: new name}`` of the
    fields renamed (undone: the other way), or None where the change did not
    say which field became which (a restore, fields defined by name only).
    """

    old: tuple
    new: tuple
    renamed: dict | None

    @classmethod
    def of(cls, old: tuple, new: tuple, change, backward: bool = False) -> FieldsEdit:
        """The edit of the fields by ``change`` (a :class:`app.model.state_change.StateChange` or None), forward
        (an edit, redo) or ``backward`` (undo)."""
        pairs = None if change is None else change.renamed
        if pairs is None:
            return cls(old, new, None)
        return cls(old, new, {after: before for before, after in pairs} if backward else dict(pairs))


def fields_changed(state: ToolState, fields, renamed: dict | None = None, clear_misfits: bool = False) -> ToolState:
    """``state`` with the attribute fields ``fields``, the values moved and converted as the module says.

    Parameters
    ----------
    state : ToolState
        Its ``fields`` are the fields before the change.
    fields : sequence of FieldDef
        The fields after it (checked: :func:`app.model.attributes.check_fields`).
    renamed : dict or None
        ``{old name: new name}`` of the fields renamed (an old name of
        ``state.fields``, a new one of ``fields``); None: the fields are told
        apart by name only (the values stay under their names, and the
        tables guess renames from the places of the columns).
    clear_misfits : bool
        Clear the values the change would drop instead of refusing it.

    Raises FieldChangeError (a ValueError) for values the change would drop,
    ValueError for a bad field or ``renamed``; the state is left as it was.
    """
    fields = check_fields(fields)
    pairs = () if renamed is None else _checked_renames(state.fields, fields, renamed)
    plan = _plan(state.fields, fields, pairs)
    rewrite = _Rewrite(plan, frozenset(before for before, _ in pairs))
    changed = {}
    if plan or pairs:
        for place, feature in enumerate(state.features):
            if feature.attributes:
                new = rewrite(feature)
                if new is not feature:
                    changed[place] = new
    current = rewrite(state.current) if state.current is not None else None
    reopened = (state.reopened[0], rewrite(state.reopened[1])) if state.reopened is not None else None
    if rewrite.losses and not clear_misfits:
        raise FieldChangeError(FieldLoss(name, why, len(found), _examples(found), accepts(field))
                               for (name, why), (field, found) in rewrite.losses.items())
    rest = {"fields": fields, "renames": None if renamed is None else Renames(state.fields, pairs)}
    if current is not state.current or reopened != state.reopened:
        rest.update(current=current, reopened=reopened)
    if not changed:
        return replace(state, splice=None, **rest)
    first, last, features = min(changed), max(changed), state.features
    items = [changed.get(place, features[place]) for place in range(first, last + 1)]
    return spliced(state, first, last + 1, items, **rest)


class _Rewrite:
    """A feature with its values moved and converted by ``plan`` (see :func:`_plan`), the fields renamed from the
    names ``moved`` left; the values it would drop go to ``losses`` (``(field name, why)`` -> ``(field, values)``).

    Lines share a few combinations of values (a road class, a number of
    lanes): each combination is worked out once, and the features that hold
    it share its new pairs.
    """

    def __init__(self, plan: list, moved: frozenset):
        self.plan, self.moved, self.losses = plan, moved, {}
        self._done: dict = {}  # attributes -> (new attributes or None, the losses of one feature holding them)
        self._lost: list = []  # (reused: most lines lose nothing)

    def __call__(self, feature: Feature) -> Feature:
        attributes = feature.attributes
        try:
            values, lost = self._done[attributes]
        except KeyError:
            values, lost = self._worked_out(attributes)
            self._done[attributes] = values, lost
        except TypeError:  # (a value that cannot be hashed: from a hand-edited session)
            values, lost = self._worked_out(attributes)
        for key, field, value in lost:
            self.losses.setdefault(key, (field, []))[1].append(value)
        return feature if values is None else Feature(feature.id, feature.name, feature.start_xy, feature.pieces,
                                                      values)

    def _worked_out(self, attributes: tuple) -> tuple:
        lost = self._lost
        values = _moved(attributes, self.plan, self.moved, lost)
        if not lost:
            return values, ()
        found = tuple(lost)
        lost.clear()
        return values, found


def _examples(values: list) -> tuple:
    """The first few distinct ``values``."""
    examples = []
    for value in values:
        if value not in examples:
            examples.append(value)
            if len(examples) == _EXAMPLES:
                break
    return tuple(examples)


def _checked_renames(old: tuple, new: tuple, renamed: dict) -> tuple:
    """``renamed`` as sorted ``(old name, new name)`` pairs, names kept as they were left out; ValueError naming
    the pair that is not an old field going to a new one, or a name two fields go to."""
    old_names, new_names = {f.name for f in old}, {f.name for f in new}
    pairs = []
    for before, after in dict(renamed).items():
        if before not in old_names or after not in new_names:
            raise ValueError(f"renamed: {before!r} -> {after!r} must go from a field before ({', '.join(old_names)})"
                             f" to one after ({', '.join(new_names)})")
        if before != after:
            pairs.append((before, after))
    targets = [after for _, after in pairs]
    if len(set(targets)) < len(targets) or set(targets) & (set(dict(renamed)) - {b for b, _ in pairs}):
        raise ValueError(f"renamed: two fields cannot become one; got {dict(renamed)!r}")
    return tuple(sorted(pairs))


def _plan(old: tuple, new: tuple, pairs: tuple) -> list[tuple]:
    """``(field, source name, convert)`` for each field of ``new`` whose values move or change type: renamed (from
    ``source``), retyped, or new (its name's values, if any, were a removed field's: converted)."""
    by_name = {field.name: field for field in old}
    origin = {after: before for before, after in pairs}
    moved = set(origin.values())
    plan = []
    for field in new:
        source = origin.get(field.name, field.name)
        before = by_name.get(source)
        if field.name not in origin and (field.name in moved or before == field):
            continue  # a field taking the name a renamed one left starts empty; one unchanged keeps its values
        plan.append((field, source, before is None or (before.kind, before.choices) != (field.kind, field.choices)))
    return plan


def _moved(attributes: tuple, plan: list, moved: frozenset, lost: list) -> tuple | None:
    """One feature's ``attributes`` after the change (sorted pairs), or None where they stay as they are; the values
    it would drop are added to ``lost`` as ``((field name, why), field, value)``."""
    values = dict(attributes)
    kept = {name: value for name, value in attributes if name not in moved} if not moved.isdisjoint(values) else None
    changed = kept is not None
    kept = values.copy() if kept is None else kept
    for field, source, convert in plan:
        own = values.get(field.name) if field.name != source and field.name not in moved else None
        value = values.get(source)
        if value is None:  # a removed field's value under this name: shown again, in this field's type
            value, convert = own, True
        elif own is not None and not _same_value(own, value):
            lost.append(((field.name, "replaced"), field, own))
        if value is not None and convert:
            try:
                value = converted_value(field, value)
            except ValueError:
                lost.append(((field.name, "misfit"), field, value))
                value = None
        before = kept.pop(field.name, None)
        if value is not None:
            kept[field.name] = value
        changed = changed or not (before is value or _same_value(before, value))
    return tuple(sorted(kept.items())) if changed else None  # (names are unique: values are never compared)


def _same_value(a, b) -> bool:
    """Equal and of one type (3 and 3.0 are not the same stored value)."""
    return type(a) is type(b) and a == b
