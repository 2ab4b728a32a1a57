"""Field names and values as each vector format holds them, and what a write changed (:class:`FieldChanges`).

GDAL renames a field a format refuses, and cuts a Shapefile's long text,
each time with a raw warning; here the names and values are chosen first, so
that GDAL changes nothing, and what changed is said in one line.
"""

from __future__ import annotations

import json

import numpy as np

from core.batch.datetimes import TZ_UTC, has_offsets, iso_texts

__all__ = ["FieldChanges", "fit_shapefile_text", "geopackage_utc", "layer_field_names", "shapefile_field_names"]

#: Bytes of a field name in a Shapefile (its dBASE table).
_DBF_NAME_BYTES = 10
#: Bytes of a text value in a Shapefile (GDAL cuts longer ones, with a raw warning).
_DBF_TEXT_BYTES = 254
#: A GeoPackage layer's own columns (feature id, geometry): GDAL refuses a field of either name, in any case.
_GPKG_COLUMNS = ("fid", "geom")
#: Why a format renames fields (see :meth:`FieldChanges.describe`).
_WHY_RENAMED = {
    "ESRI Shapefile": "a Shapefile's field names hold 10 characters at most and differ ignoring case; "
                      ".gpkg or .fgb keep the names",
    "GPKG": "a GeoPackage's field names differ ignoring case, and 'fid' and 'geom' name its own columns",
}


class FieldChanges(dict):
    """What a write changed in the fields: ``{name: name written}`` for the renamed ones, and what did not fit.

    Attributes
    ----------
    driver : str
        The GDAL driver written.
    cut : dict of str to int
        Text fields some of whose values were cut to fit (a Shapefile holds
        254 bytes), with how many values.
    left_out : list of str
        Fields not written: JSON text too long for a Shapefile (cut, it would no longer be JSON).
    as_text : list of str
        Date-and-time fields written as ISO text (a Shapefile holds dates only).
    in_utc : list of str
        Date-and-time fields whose times with UTC offsets were written in UTC (a GeoPackage holds UTC only).
    """

    def __init__(self, renamed=(), driver: str = "", cut=None, left_out=(), as_text=(), in_utc=()):
        super().__init__(renamed)
        self.driver = driver
        self.cut = dict(cut or {})
        self.left_out = list(left_out)
        self.as_text = list(as_text)
        self.in_utc = list(in_utc)

    def describe(self) -> str:
        """What changed in one line ("" when nothing did), for a warning that names the output."""
        said = []
        if self:
            pairs = ", ".join(f"{old!r} to {new!r}" for old, new in self.items())
            why = _WHY_RENAMED.get(self.driver, "names the format refuses")
            said.append(f"renamed {'field' if len(self) == 1 else 'fields'} {pairs} ({why})")
        if self.cut:
            counts = ", ".join(f"{count} {'value' if count == 1 else 'values'} of {name!r}"
                               for name, count in self.cut.items())
            said.append(f"cut {counts} to {_DBF_TEXT_BYTES} bytes (a Shapefile's text holds no more; "
                        ".gpkg or .fgb keep it whole)")
        if self.left_out:
            names = ", ".join(repr(name) for name in self.left_out)
            said.append(f"left out {'field' if len(self.left_out) == 1 else 'fields'} {names} (JSON text longer "
                        f"than a Shapefile's {_DBF_TEXT_BYTES} bytes, invalid once cut; .gpkg or .fgb keep it)")
        if self.as_text:
            names = ", ".join(repr(name) for name in self.as_text)
            said.append(f"wrote date-and-time {'field' if len(self.as_text) == 1 else 'fields'} {names} as ISO "
                        "text (a Shapefile holds dates without times or time zones; .gpkg or .fgb keep the type)")
        if self.in_utc:
            names = ", ".join(repr(name) for name in self.in_utc)
            said.append(f"wrote the times of {'field' if len(self.in_utc) == 1 else 'fields'} {names} in UTC, "
                        "the same instants (a GeoPackage holds UTC times only; .fgb or .geojson keep their offsets)")
        return "; ".join(said)


def fit_shapefile_text(fields: dict, changes: FieldChanges, tz_flags=None) -> dict:
    """``fields`` as a Shapefile holds them, what changed in ``changes``, so that GDAL cuts nothing.

    Date-and-time fields go as dates or ISO text (:func:`_shapefile_dates`), with the UTC offsets that
    ``tz_flags`` (name to GDAL's time zone flag per value) give.

    Text values over 254 bytes are cut at a character's end (``changes.cut``);
    a field whose values too long are JSON text is left out whole (``changes.left_out``):
    cut, it would read back as broken JSON (LineSnap's ``linesnap`` details).
    """
    fitted = {}
    for name, values in fields.items():
        if getattr(values, "dtype", None) is not None and values.dtype.kind == "M":
            fitted[name] = _shapefile_dates(name, values, changes, (tz_flags or {}).get(name))
            continue
        if getattr(values, "dtype", None) is None or values.dtype.kind != "O":
            fitted[name] = values
            continue
        long = [k for k, value in enumerate(values)
                if isinstance(value, str) and len(value.encode()) > _DBF_TEXT_BYTES]
        if any(_is_json(values[k]) for k in long):
            changes.left_out.append(name)
            continue
        if long:
            values = np.array(values, dtype=object)
            for k in long:
                values[k] = _cut_utf8(values[k], _DBF_TEXT_BYTES)
            changes.cut[name] = len(long)
        fitted[name] = values
    return fitted


def geopackage_utc(fields: dict, tz_flags: dict, changes: FieldChanges) -> tuple[dict, dict]:
    """``fields`` and their time zone flags as a GeoPackage holds them: times with UTC offsets moved to UTC
    (``changes.in_utc``).

    The GeoPackage standard stores date-times in UTC; GDAL wrote the offsets
    (``10:20:30+02:00``) and warned of "non-conformant content" on every read of the file.
    """
    fields, tz_flags = dict(fields), dict(tz_flags)
    for name, zones in tz_flags.items():
        zones = np.asarray(zones)
        offset = (zones > 1) & (zones != TZ_UTC)
        if not offset.any():
            continue
        minutes = np.where(offset, (zones.astype(np.int64) - TZ_UTC) * 15, 0).astype("timedelta64[m]")
        values = fields[name]
        data = np.ma.getdata(values) - minutes
        fields[name] = np.ma.masked_array(data, np.ma.getmask(values)) if np.ma.isMaskedArray(values) else data
        tz_flags[name] = np.where(offset, TZ_UTC, zones).astype(np.int16)
        changes.in_utc.append(name)
    return fields, tz_flags


def _shapefile_dates(name: str, values, changes: FieldChanges, zones=None):
    """A datetime64 column as a Shapefile holds it: dates where every value is one (midnight) and none gives a
    UTC offset (``zones``, GDAL's time zone flags), else ISO text with the offsets (``changes.as_text``; GDAL
    wrote "2024/05/01 10:20:30+02" with a warning of its own); NaT as null."""
    values = np.asarray(values)
    missing = np.isnat(values)
    if not has_offsets(zones) and (values[~missing] == values[~missing].astype("datetime64[D]")).all():
        return values.astype("datetime64[D]")
    changes.as_text.append(name)
    return np.ma.masked_array(np.array(iso_texts(values, zones), dtype=object), mask=missing)


def _is_json(text: str) -> bool:
    """Whether ``text`` is a JSON object or array."""
    if text.lstrip()[:1] not in ("{", "["):
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def layer_field_names(names: list, driver: str, path) -> list[str]:
    """The names ``names`` are written under, so that GDAL renames and refuses none."""
    if driver == "ESRI Shapefile":
        return shapefile_field_names(names, path)
    if driver == "GPKG":  # SQLite compares names ignoring ASCII case
        return _distinct_names(names, str, lambda name, number: f"{name}_{number}", _GPKG_COLUMNS)
    return [str(name) for name in names]


def shapefile_field_names(names, path="") -> list[str]:
    """The names that ``names`` get in a Shapefile, chosen so that GDAL's driver renames none (nor warns).

    A dBASE field name holds 10 bytes, and names differ ignoring ASCII case. A
    name that fits keeps it (unless an earlier field has it); a longer one is
    cut (at a character's end: GDAL cut ``é`` in two, and the file could not be
    read again), trailing spaces dropped and ``:`` made ``_``; when that is any
    other field's name, it becomes its first 8 bytes and ``_1`` .. ``_9``, then
    ``10`` .. ``99`` (``lane_number`` beside ``lane_numbe`` is ``lane_num_1``,
    in either order).  OSError naming ``path`` when 99 are taken.
    """
    def radix(name: str) -> str:
        return _cut_utf8(name, _DBF_NAME_BYTES).rstrip().replace(":", "_")

    def numbered(name: str, number: int) -> str:
        if number == 100:
            raise OSError(f"cannot write {path}: too many fields named like {name!r} once cut to "
                          f"{_DBF_NAME_BYTES} characters for a Shapefile")
        return _cut_utf8(radix(name), _DBF_NAME_BYTES - 2) + (f"_{number}" if number < 10 else f"{number}")

    return _distinct_names(names, radix, numbered)


def _distinct_names(names, radix, numbered, reserved=()) -> list[str]:
    """Names that differ ignoring ASCII case (as GDAL compares them) and from ``reserved``.

    A name equal to its ``radix`` (one the format holds) keeps it, whatever the
    fields after it; any other gets its radix, or ``numbered(name, 1)``, ``(name, 2)``, ...
    until it is no other field's name.
    """
    names = [str(name) for name in names]

    def key(name: str) -> bytes:
        return name.encode().upper()

    taken = {key(name) for name in reserved}
    kept = set()
    for k, name in enumerate(names):
        if radix(name) == name and key(name) not in taken:
            kept.add(k)
            taken.add(key(name))
    written = []
    for k, name in enumerate(names):
        candidate, number = radix(name), 1
        while k not in kept and key(candidate) in taken:
            candidate, number = numbered(name, number), number + 1
        taken.add(key(candidate))
        written.append(candidate)
    return written


def _cut_utf8(text: str, size: int) -> str:
    """The longest start of ``text`` whose UTF-8 encoding holds at most ``size`` bytes."""
    return text.encode()[:size].decode(errors="ignore")
