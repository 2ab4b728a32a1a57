"""What reading a layer of lines left out or changed, for the import's message.

LineSnap's features are single polylines: a MultiLineString becomes one line
per part, heights (Z) are not kept, and features that are not lines (points,
polygons, features without a geometry, empty lines) are left out.  A user
importing a layer is told so instead of finding fewer or more lines than the
file has.  The parts of a multi-part feature do not share its id (an export
would repeat it): they hold it as :data:`SOURCE_FID`, or as ``source_fid_2`` ... where the layer has a
property of that name (:func:`source_fid_name`, :func:`part_properties`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["FID", "SOURCE_FID", "LinesRead", "part_properties", "source_fid_name"]

#: The property of an imported line holding its feature's id (core.batch.feature_ids.FID_FIELD; core.io
#: comes before core.batch, which reads through it).
FID = "fid"
#: The property of a multi-part feature's parts holding the feature's id, which links them back to it
#: (unless the layer has a property of that name: :func:`source_fid_name`).
SOURCE_FID = "source_fid"

#: How a geometry kind is named in the message, singular and plural.
_KIND_NAMES = {"Point": ("point", "points"), "MultiPoint": ("multipoint", "multipoints"),
               "Polygon": ("polygon", "polygons"), "MultiPolygon": ("multipolygon", "multipolygons"),
               "GeometryCollection": ("geometry collection", "geometry collections"),
               None: ("feature without a geometry", "features without a geometry"),
               "empty": ("empty line", "empty lines"), "invalid geometry": ("invalid geometry", "invalid geometries")}
#: Kinds of a line that gave no line: an empty line (the readers' names for one).
_EMPTY = ("LineString", "MultiLineString", "empty LineString", "empty MultiLineString")


@dataclass
class LinesRead:
    """Counts of a layer read into lines (filled by the readers, one :meth:`feature` call per feature).

    Attributes
    ----------
    features : int
        Features in the file.
    left_out : dict
        Per geometry kind (None: no geometry; ``"empty"``: a line without parts), the features that gave no line.
    split : int
        Multi-part lines read as one line per part ...
    parts : int
        ... and the lines they gave.
    heights : bool
        Some positions had heights (Z), which are not kept.
    source_ids : bool
        Some multi-part lines had ids, which their parts hold as ``source_fid_name``.
    source_fid_name : str
        The property holding them: :data:`SOURCE_FID`, or another name where the layer has one of that name.
    """

    features: int = 0
    left_out: dict = field(default_factory=dict)
    split: int = 0
    parts: int = 0
    heights: bool = False
    source_ids: bool = False
    source_fid_name: str = SOURCE_FID

    def feature(self, kind: str | None, lines: int, heights: bool = False) -> list:
        """Count one feature of geometry ``kind`` that gave ``lines`` lines; returns ``[]`` (a reader's
        "no lines" for one it leaves out)."""
        self.features += 1
        self.heights = self.heights or heights
        if lines == 0:
            key = "empty" if kind in _EMPTY else kind
            self.left_out[key] = self.left_out.get(key, 0) + 1
        elif lines > 1:
            self.split += 1
            self.parts += lines
        return []

    def text(self) -> str:
        """What was left out or changed, as clauses for a status message ("" when nothing was)."""
        clauses = []
        if self.left_out:
            named = [f"{count} {_name(kind, count)}" for kind, count in sorted(self.left_out.items(), key=_order)]
            clauses.append(f"{_listed(named)} left out (not lines)")
        if self.split:
            clauses.append(f"{self.split} multi-part line{'' if self.split == 1 else 's'} read as "
                           f"{self.parts} lines, one per part" + self._source_ids_text())
        if self.heights:
            clauses.append("heights (Z) not kept")
        return "; ".join(clauses)

    def _source_ids_text(self) -> str:
        if not self.source_ids:
            return ""
        if self.source_fid_name == SOURCE_FID:
            return f" (their feature's id as {SOURCE_FID})"
        return f" (their feature's id as {self.source_fid_name}: the layer has a property {SOURCE_FID} of its own)"


def part_properties(properties: dict, parts: int, report: LinesRead | None = None,
                    source_fid: str = SOURCE_FID) -> dict:
    """The properties of each line of a feature read as ``parts`` lines (one per part).

    A single part keeps the feature's.  The parts of a multi-part feature with
    an id (property :data:`FID`) do not share it: an export repeated it (GeoJSON)
    or renumbered every feature (a GeoPackage, whose fids must differ); they
    hold it as ``source_fid``, the layer's :func:`source_fid_name` (a feature's
    own property of that name would otherwise hide the id), and are given ids
    of their own on export.  ``report`` is told (``source_ids``, ``source_fid_name``).
    """
    if parts < 2 or properties.get(FID) is None:
        return properties
    if report is not None:
        report.source_ids = True
        report.source_fid_name = source_fid
    shared = {key: value for key, value in properties.items() if key != FID}
    shared[source_fid] = properties[FID]
    return shared


def source_fid_name(names) -> str:
    """The property that holds a split feature's id in a layer of properties ``names``: :data:`SOURCE_FID`,
    else ``source_fid_2``, ``source_fid_3``, ... whichever the layer lacks.

    Names are compared ignoring case, as GeoPackage and Shapefile compare field names (an export would
    otherwise merge the two).  One name per layer, so that every part's id is in the same column.
    """
    taken = {name.lower() for name in names if isinstance(name, str)}
    name, number = SOURCE_FID, 2
    while name in taken:
        name, number = f"{SOURCE_FID}_{number}", number + 1
    return name


def _name(kind, count: int) -> str:
    singular, plural = _KIND_NAMES.get(kind, (f"{kind} feature", f"{kind} features"))
    return singular if count == 1 else plural


def _order(item) -> tuple:
    """The most first, then by name."""
    return (-item[1], _name(item[0], 1))


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
