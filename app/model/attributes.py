"""User-defined attribute fields of a work layer (text, integer, real, choice list) and their values (no Qt).

A layer's fields are a tuple of :class:`FieldDef`, defined once per layer;
each finished :class:`app.model.pieces.Feature` holds its values in
``attributes`` (``(name, value)`` pairs).  Values are checked against their
field when entered (:func:`parse_value`) and converted when its type changes
(:func:`converted_value`, :mod:`app.model.field_edits`); exports take only the
values that fit their field (:func:`export_values`: a session written before
conversions existed may hold others).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from app.model.editing import feature_place
from app.model.pieces import Feature, ToolState
from app.model.state_change import spliced

__all__ = ["FIELD_KINDS", "RESERVED_NAMES", "FieldDef", "parse_value", "accepts", "converted_value", "check_fields",
           "fields_to_list", "fields_from_list", "with_values", "export_values", "import_values",
           "with_imported_values", "export_types", "value_text"]

FIELD_KINDS = ("text", "integer", "real", "choice")
#: Names LineSnap writes itself (the feature's name, its extraction details and measures); compared lower case.
RESERVED_NAMES = frozenset({"name", "linesnap", "fid", "id", "score", "backend", "confidence", "estimate",
                            "settings", "timings_ms", "pieces"})
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,62}$")
_EXPORT_TYPES = {"text": "text", "choice": "text", "integer": "integer", "real": "real"}


@dataclass(frozen=True)
class FieldDef:
    """One attribute field: ``name`` (a letter, then letters, digits, ``_``), ``kind``, a choice list's ``choices``."""

    name: str
    kind: str = "text"
    choices: tuple[str, ...] = ()

    def __post_init__(self):
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ValueError(f"field name must start with a letter and hold only letters, digits and _ "
                             f"(at most 63); got {self.name!r}")
        if self.name.lower() in RESERVED_NAMES:
            raise ValueError(f"field name {self.name!r} is LineSnap's own; "
                             f"reserved: {', '.join(sorted(RESERVED_NAMES))}")
        if self.kind not in FIELD_KINDS:
            raise ValueError(f"field {self.name!r}: kind must be one of {', '.join(FIELD_KINDS)}; got {self.kind!r}")
        choices = tuple(str(c).strip() for c in self.choices)
        if self.kind == "choice" and (not choices or any(not c for c in choices) or len(set(choices)) < len(choices)):
            raise ValueError(f"field {self.name!r}: a choice list needs distinct, non-empty choices; got {choices!r}")
        if self.kind != "choice" and choices:
            raise ValueError(f"field {self.name!r}: only a choice field has choices")
        object.__setattr__(self, "choices", choices)


def parse_value(field: FieldDef, raw):
    """``raw`` (typed, or text from a form) as a value of ``field``; None for None or blank text.

    Raises ValueError naming the field and what it accepts.
    """
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    if isinstance(raw, bool):
        raise ValueError(f"{field.name} must be {accepts(field)}; got {raw!r}")
    if field.kind == "text":
        return str(raw)
    if field.kind == "choice":
        if str(raw).strip() not in field.choices:
            raise ValueError(f"{field.name} must be {accepts(field)}; got {raw!r}")
        return str(raw).strip()
    number = _number(field, raw)
    if field.kind == "integer":
        if not number.is_integer() or abs(number) >= 2**63:
            raise ValueError(f"{field.name} must be {accepts(field)}; got {raw!r}")
        return int(raw) if isinstance(raw, int) else int(number)
    return number


def _number(field: FieldDef, raw) -> float:
    try:
        number = float(raw.strip() if isinstance(raw, str) else raw)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{field.name} must be {accepts(field)}; got {raw!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"{field.name} must be {accepts(field)}; got {raw!r}")
    return number


def accepts(field: FieldDef) -> str:
    """What ``field`` accepts, as a message says it ("a whole number", "one of a, b")."""
    return {"text": "text", "integer": "a whole number", "real": "a finite number",
            "choice": f"one of {', '.join(field.choices)}"}[field.kind]


def converted_value(field: FieldDef, value):
    """A stored ``value`` as a value of ``field`` once its type changed: as :func:`parse_value` reads it, a real
    turned to text as the table shows it (``3``, not ``3.0``) where that reads back the same number.

    Raises ValueError (naming the field and what it accepts) for a value that does not fit.
    """
    if field.kind == "text" and isinstance(value, float):
        shown = value_text(value)
        return shown if float(shown) == value else repr(value)
    return parse_value(field, value)


def check_fields(fields) -> tuple[FieldDef, ...]:
    """``fields`` as a tuple of FieldDef; ValueError for a name used twice (names compare case-insensitively)."""
    fields = tuple(fields)
    seen = set()
    for field in fields:
        if not isinstance(field, FieldDef):
            raise TypeError(f"fields must be FieldDef; got {type(field).__name__}")
        if field.name.lower() in seen:
            raise ValueError(f"field name {field.name!r} is used twice (names ignore case in GIS formats)")
        seen.add(field.name.lower())
    return fields


def fields_to_list(fields) -> list[dict]:
    """JSON-able list of the fields (project and session files)."""
    return [{"name": f.name, "kind": f.kind, **({"choices": list(f.choices)} if f.choices else {})}
            for f in fields]


def fields_from_list(data, where: str = "fields") -> tuple[FieldDef, ...]:
    """The fields of :func:`fields_to_list`'s list; ValueError naming ``where`` and the entry when malformed."""
    if data is None:
        return ()
    if not isinstance(data, list):
        raise ValueError(f"{where} must be a list; got {type(data).__name__}")
    fields = []
    for k, item in enumerate(data):
        if not isinstance(item, dict) or not isinstance(item.get("choices", []), list):
            raise ValueError(f"{where}[{k}] must be an object with name, kind and a list of choices")
        try:
            fields.append(FieldDef(item.get("name"), item.get("kind", "text"), tuple(item.get("choices", []))))
        except ValueError as err:
            raise ValueError(f"{where}[{k}]: {err}") from None
    try:
        return check_fields(fields)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None


def with_values(state: ToolState, feature_id: int, values: dict, fields, lookup=None) -> ToolState:
    """Finished feature ``feature_id`` with ``values`` (field name -> raw value; None clears) set.

    Every value is checked (:func:`parse_value`) before anything changes;
    ValueError for a name that is not one of ``fields``.  ``lookup``: as
    :func:`app.model.editing.find_feature`'s.
    """
    by_name = {f.name: f for f in fields}
    unknown = [name for name in values if name not in by_name]
    if unknown:
        raise ValueError(f"no field named {unknown[0]!r}; fields: {', '.join(by_name) or '(none)'}")
    parsed = {name: parse_value(by_name[name], raw) for name, raw in values.items()}
    index = feature_place(state, feature_id, lookup)
    feature = state.features[index]
    merged = {**dict(feature.attributes), **parsed}
    return spliced(state, index, index + 1, (replace(feature, attributes=_pairs(merged)),))


def _pairs(values: dict) -> tuple:
    return tuple(sorted((k, v) for k, v in values.items() if v is not None))


def export_values(fields, feature: Feature) -> dict:
    """Field name -> the feature's value for every field (None where unset or no longer fitting the field)."""
    stored = dict(feature.attributes)
    values = {}
    for field in fields:
        try:
            values[field.name] = parse_value(field, stored.get(field.name))
        except ValueError:
            values[field.name] = None
    return values


def export_types(fields) -> dict:
    """Field name -> ``"text"``, ``"integer"`` or ``"real"``: the column type of each field in a vector file."""
    return {f.name: _EXPORT_TYPES[f.kind] for f in fields}


def import_values(fields, properties: dict) -> tuple[tuple, dict]:
    """Split a file's ``properties``: the values of ``fields`` (as ``Feature.attributes``), and the rest.

    A property matches a field by name (ignoring case, as GeoPackage and
    Shapefile do); one whose value does not fit its field stays in the rest.
    """
    lower = {str(k).lower(): k for k in properties}
    values, rest = {}, dict(properties)
    for field in fields:
        key = field.name if field.name in properties else lower.get(field.name.lower())
        if key is None:
            continue
        try:
            values[field.name] = parse_value(field, properties[key])
        except ValueError:
            continue
        del rest[key]
    return _pairs(values), rest


def with_imported_values(fields, features, outcomes: dict) -> tuple[list, dict]:
    """Imported features with the values of ``fields`` taken from their file's properties (:func:`import_values`).

    ``outcomes`` (piece id -> PieceOutcome) holds the properties, under
    ``details["properties"]``; what the fields took leaves them (it is exported
    from the feature's values).  Returns new features and outcomes.
    """
    if not fields:
        return list(features), outcomes
    outcomes, taken = dict(outcomes), []
    for feature in features:
        values = {}
        for piece in feature.pieces:
            outcome = outcomes.get(piece.id)
            if outcome is None or "properties" not in outcome.details:
                continue
            found, rest = import_values(fields, outcome.details["properties"])
            values.update(found)
            outcomes[piece.id] = replace(outcome, details={**outcome.details, "properties": rest})
        taken.append(replace(feature, attributes=_pairs({**dict(feature.attributes), **values})) if values
                     else feature)
    return taken, outcomes


def value_text(value) -> str:
    """A stored value as the table shows it (blank for none; reals without a trailing ``.0`` noise)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.10g}"
    return str(value)
