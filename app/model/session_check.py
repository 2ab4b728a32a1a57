"""The shape of an autosaved session, checked before anything is built from it.

A session file may be damaged in any way (a crash mid-write on an old
version, a disk error, an edit by hand): :func:`check_session` raises
:class:`SessionError` naming the first wrong place (``features[3].pieces[0]
.outcome.vertices_px``), so that the window can set the file aside instead
of failing at start-up or after the user accepted the restore.
"""

from __future__ import annotations

import math

from app.model.pieces import PIECE_KINDS
from core.io.jsonfile import place

__all__ = ["MAX_COORDINATE_PX", "MAX_ID", "SessionError", "check_session"]

#: Pixel positions beyond this (in absolute value) cannot come from any raster.
MAX_COORDINATE_PX = 1e9
#: Feature and piece ids are counters; beyond this a file is damaged.
MAX_ID = 2**31 - 1
_STATUSES = ("done", "failed")


class SessionError(ValueError):
    """A session file that cannot be restored: malformed, or values out of range."""


def check_session(data, where: str) -> None:
    """Raise SessionError unless ``data`` is a well-formed session dict (``where`` names the file)."""
    if not isinstance(data, dict):
        raise SessionError(f"{where}: a session must be a JSON object; got {type(data).__name__}")
    _check_type(data.get("image"), (str, type(None)), where, "image")
    _check_type(data.get("dirty", False), bool, where, "dirty")
    _check_type(data.get("fields", []), list, where, "fields")
    features = data.get("features")
    _check_type(features, list, where, "features")
    for k, feature in enumerate(features):
        _check_feature(feature, where, place("features", k))
    if data.get("current") is not None:
        _check_feature(data["current"], where, "current")


def _fail(where: str, path: str, message: str):
    raise SessionError(f"{where}: {path}: {message}")


def _check_type(value, kinds, where: str, path: str):
    if isinstance(value, bool) and bool not in (kinds if isinstance(kinds, tuple) else (kinds,)):
        _fail(where, path, "must not be true or false")
    if not isinstance(value, kinds):
        names = " or ".join(k.__name__ for k in (kinds if isinstance(kinds, tuple) else (kinds,)))
        _fail(where, path, f"must be {names.replace('NoneType', 'null')}; got {type(value).__name__}")
    return value


def _check_feature(feature, where: str, path: str) -> None:
    _check_type(feature, dict, where, path)
    _check_id(feature.get("id"), where, place(path, "id"))
    _check_type(feature.get("name"), str, where, place(path, "name"))
    _check_point(feature.get("start_xy"), where, place(path, "start_xy"))
    values = _check_type(feature.get("attributes", {}), dict, where, place(path, "attributes"))
    for key, value in values.items():
        _check_type(value, (str, int, float, type(None)), where, place(place(path, "attributes"), key))
    pieces = _check_type(feature.get("pieces"), list, where, place(path, "pieces"))
    for k, piece in enumerate(pieces):
        _check_piece(piece, where, place(place(path, "pieces"), k))


def _check_piece(piece, where: str, path: str) -> None:
    _check_type(piece, dict, where, path)
    _check_id(piece.get("id"), where, place(path, "id"))
    if piece.get("kind") not in PIECE_KINDS:
        _fail(where, place(path, "kind"), f"must be one of {', '.join(PIECE_KINDS)}; got {piece.get('kind')!r}")
    _check_point(piece.get("click_start"), where, place(path, "click_start"))
    _check_point(piece.get("click_end"), where, place(path, "click_end"))
    _check_type(piece.get("settings"), (dict, type(None)), where, place(path, "settings"))
    if piece.get("outcome") is not None:
        _check_outcome(piece["outcome"], where, place(path, "outcome"))


def _check_outcome(outcome, where: str, path: str) -> None:
    _check_type(outcome, dict, where, path)
    if outcome.get("status") not in _STATUSES:
        _fail(where, place(path, "status"), f"must be one of {', '.join(_STATUSES)}; got {outcome.get('status')!r}")
    vertices = _check_type(outcome.get("vertices_px"), list, where, place(path, "vertices_px"))
    if len(vertices) < 2:
        _fail(where, place(path, "vertices_px"), f"a line needs at least 2 vertices; got {len(vertices)}")
    for k, vertex in enumerate(vertices):
        _check_point(vertex, where, place(place(path, "vertices_px"), k))
    for name in ("score", "confidence"):
        if outcome.get(name) is not None:
            _check_number(outcome[name], where, place(path, name))
    for name in ("backend", "method", "error"):
        _check_type(outcome.get(name, ""), (str, type(None)), where, place(path, name))
    timings = _check_type(outcome.get("timings_ms", {}), dict, where, place(path, "timings_ms"))
    for key, value in timings.items():
        _check_number(value, where, place(place(path, "timings_ms"), key))
    _check_type(outcome.get("properties", {}) or {}, dict, where, place(path, "properties"))
    _check_type(outcome.get("estimate", {}) or {}, dict, where, place(path, "estimate"))


def _check_id(value, where: str, path: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_ID:
        _fail(where, path, f"must be an integer id in [0, {MAX_ID}]; got {str(value)[:40]}")


def _check_number(value, where: str, path: str, limit: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _fail(where, path, f"must be a number; got {type(value).__name__}")
    if not abs(value) <= limit:  # also refuses NaN
        _fail(where, path, f"{value:g} is out of range [-{limit:g}, {limit:g}]")
    return float(value)


def _check_point(value, where: str, path: str) -> None:
    if not isinstance(value, list) or len(value) != 2:
        _fail(where, path, "must be a pair [x, y] of pixel coordinates")
    for axis, number in zip("xy", value):
        _check_number(number, where, f"{path}.{axis}", MAX_COORDINATE_PX)
