"""Lines that cross the antimeridian, cut for RFC 7946 (section 3.1.9) and joined again on import."""

from __future__ import annotations

import numpy as np

__all__ = ["cut_at_antimeridian", "is_cut_at_antimeridian", "join_cut_parts"]


def cut_at_antimeridian(positions: np.ndarray) -> list[np.ndarray]:
    """The parts of a (k, 2) ``[lon, lat]`` line (longitudes in [-180, 180]) cut where it crosses longitude 180.

    A step of more than 180 degrees of longitude between two vertices is taken
    as the short way across the antimeridian: both parts end on it, at the
    latitude interpolated there.  A line that never crosses is one part.
    """
    jumps = np.flatnonzero(np.abs(np.diff(positions[:, 0])) > 180.0)
    parts, begin, entry = [], 0, None
    for j in jumps:
        (lon0, lat0), (lon1, lat1) = positions[j], positions[j + 1]
        side = 180.0 if lon0 > 0 else -180.0
        to_cut = abs(side - lon0)  # degrees from the vertex before the cut to the cut...
        across = to_cut + abs(-side - lon1)  # ...and over the whole step, the short way
        lat = lat0 + (lat1 - lat0) * (to_cut / across if across > 0 else 0.5)
        body = positions[begin:j + 1]
        parts.append(np.vstack(([entry] if entry is not None else []) + [body, [[side, lat]]]))
        begin, entry = j + 1, np.array([-side, lat])
    tail = positions[begin:]
    parts.append(np.vstack(([entry] if entry is not None else []) + [tail]))
    return parts


def join_cut_parts(parts: list[np.ndarray]) -> np.ndarray:
    """The line that :func:`cut_at_antimeridian` cut into ``parts``: the added points on +-180 dropped."""
    joined = [parts[0]]
    for part in parts[1:]:
        previous = joined[-1]
        if abs(abs(previous[-1, 0]) - 180.0) < 1e-9 and abs(abs(part[0, 0]) - 180.0) < 1e-9:
            joined[-1], part = previous[:-1], part[1:]
        joined.append(part)
    return np.vstack(joined)


def is_cut_at_antimeridian(parts) -> bool:
    """Whether every part after the first begins on the antimeridian where the one before it ended (RFC 7946's
    cut of one line crossing it, which the export makes)."""
    return len(parts) > 1 and all(abs(abs(a[-1, 0]) - 180.0) < 1e-9 and abs(abs(b[0, 0]) - 180.0) < 1e-9
                                  and a[-1, 0] == -b[0, 0] and abs(a[-1, 1] - b[0, 1]) < 1e-7
                                  for a, b in zip(parts[:-1], parts[1:]))
