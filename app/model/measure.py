"""Lengths of features: geodesic metres on the WGS84 ellipsoid for georeferenced rasters.

Vertices go pixel -> map -> lon/lat through the raster (rasterio), then each
link's length is the ellipsoidal distance of Vincenty's inverse formula
(sub-millimetre on links of a digitized line).  Plain images have no scale:
their lengths are in pixels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Length", "feature_length", "feature_lengths", "geodesic_distances_m", "WGS84_A_M", "WGS84_F"]

WGS84_A_M = 6378137.0
WGS84_F = 1.0 / 298.257223563
_B_M = WGS84_A_M * (1.0 - WGS84_F)


@dataclass(frozen=True)
class Length:
    """A length with its unit ("m" or "px") and how it was measured."""

    value: float
    unit: str
    method: str

    def text(self) -> str:
        """Human-readable, e.g. ``"1.23 km"``, ``"85.4 m"`` or ``"311 px"``."""
        if self.unit == "m":
            return f"{self.value / 1000:.3f} km" if self.value >= 10_000 else f"{self.value:.1f} m"
        return f"{self.value:.0f} px"


def feature_length(vertices_px: np.ndarray, raster=None) -> Length:
    """Length of a (k, 2) px polyline: geodesic metres on WGS84 with a georeferenced ``raster``, else pixels."""
    vertices = np.asarray(vertices_px, dtype=np.float64)
    if vertices.ndim != 2 or vertices.shape[1] != 2:
        raise ValueError(f"vertices_px must have shape (k, 2); got {vertices.shape}")
    if len(vertices) < 2:
        return Length(0.0, "m" if raster is not None and raster.georeferenced else "px", "")
    if raster is None or not raster.georeferenced:
        return Length(float(np.hypot(*np.diff(vertices, axis=0).T).sum()), "px", "pixels (no georeference)")
    lon, lat = raster.pixel_to_lonlat(vertices[:, 0], vertices[:, 1])
    metres = geodesic_distances_m(lon[:-1], lat[:-1], lon[1:], lat[1:]).sum()
    return Length(float(metres), "m", "geodesic on the WGS84 ellipsoid")


def feature_lengths(lines: list, raster=None) -> list[Length]:
    """:func:`feature_length` of many (k, 2) px polylines at once: one projection and one Vincenty pass over all
    their links (a first sort of 100,000 lines by length took 2.7 s one line at a time)."""
    arrays = [np.asarray(line, dtype=np.float64) for line in lines]
    if any(a.ndim != 2 or a.shape[1] != 2 for a in arrays):
        bad = next(a for a in arrays if a.ndim != 2 or a.shape[1] != 2)
        raise ValueError(f"vertices_px must have shape (k, 2); got {bad.shape}")
    georeferenced = raster is not None and raster.georeferenced
    unit, method = ("m", "geodesic on the WGS84 ellipsoid") if georeferenced else ("px", "pixels (no georeference)")
    out = [Length(0.0, unit, "") for _ in arrays]  # (lines of fewer than 2 vertices, as feature_length says)
    measured = [k for k, a in enumerate(arrays) if len(a) >= 2]
    if not measured:
        return out
    counts = np.array([len(arrays[k]) for k in measured], dtype=np.int64)
    vertices = np.concatenate([arrays[k] for k in measured])
    if georeferenced:
        lon, lat = raster.pixel_to_lonlat(vertices[:, 0], vertices[:, 1])
        links = geodesic_distances_m(lon[:-1], lat[:-1], lon[1:], lat[1:])
    else:
        links = np.hypot(*np.diff(vertices, axis=0).T)
    ends = np.cumsum(counts)
    links[ends[:-1] - 1] = 0.0  # (the link from one line's last vertex to the next line's first)
    totals = np.add.reduceat(links, np.concatenate(([0], ends[:-1])))  # (each line has a link: no empty range)
    for k, total in zip(measured, totals.tolist()):
        out[k] = Length(float(total), unit, method)
    return out


def geodesic_distances_m(lon1, lat1, lon2, lat2) -> np.ndarray:
    """(n,) WGS84 ellipsoidal distances (m) between point pairs in degrees (Vincenty's inverse).

    Nearly antipodal pairs fall back to the great circle on the mean radius.
    """
    lon1, lat1, lon2, lat2 = (np.atleast_1d(np.asarray(v, dtype=np.float64)) for v in (lon1, lat1, lon2, lat2))
    big_l = np.radians(lon2 - lon1)
    u1, u2 = (np.arctan((1.0 - WGS84_F) * np.tan(np.radians(lat))) for lat in (lat1, lat2))
    sin_u1, cos_u1, sin_u2, cos_u2 = np.sin(u1), np.cos(u1), np.sin(u2), np.cos(u2)
    lam = big_l.copy()
    converged = np.zeros(lam.shape, dtype=bool)
    for _ in range(200):
        sin_lam, cos_lam = np.sin(lam), np.cos(lam)
        sin_sigma = np.hypot(cos_u2 * sin_lam, cos_u1 * sin_u2 - sin_u1 * cos_u2 * cos_lam)
        cos_sigma = sin_u1 * sin_u2 + cos_u1 * cos_u2 * cos_lam
        sigma = np.arctan2(sin_sigma, cos_sigma)
        sin_alpha = cos_u1 * cos_u2 * sin_lam / np.where(sin_sigma == 0, 1.0, sin_sigma)
        cos2_alpha = 1.0 - sin_alpha**2
        cos_2sm = np.where(cos2_alpha != 0,
                           cos_sigma - 2 * sin_u1 * sin_u2 / np.where(cos2_alpha == 0, 1, cos2_alpha), 0)
        c = WGS84_F / 16 * cos2_alpha * (4 + WGS84_F * (4 - 3 * cos2_alpha))
        lam_next = big_l + (1 - c) * WGS84_F * sin_alpha * (
            sigma + c * sin_sigma * (cos_2sm + c * cos_sigma * (-1 + 2 * cos_2sm**2)))
        converged = np.abs(lam_next - lam) < 1e-12
        lam = lam_next
        if converged.all():
            break
    u_sq = cos2_alpha * (WGS84_A_M**2 - _B_M**2) / _B_M**2
    big_a = 1 + u_sq / 16384 * (4096 + u_sq * (-768 + u_sq * (320 - 175 * u_sq)))
    big_b = u_sq / 1024 * (256 + u_sq * (-128 + u_sq * (74 - 47 * u_sq)))
    delta_sigma = big_b * sin_sigma * (cos_2sm + big_b / 4 * (
        cos_sigma * (-1 + 2 * cos_2sm**2) - big_b / 6 * cos_2sm * (-3 + 4 * sin_sigma**2) * (-3 + 4 * cos_2sm**2)))
    distances = _B_M * big_a * (sigma - delta_sigma)
    distances = np.where(sin_sigma == 0, 0.0, distances)
    return np.where(converged, distances, _great_circle_m(lon1, lat1, lon2, lat2))


def _great_circle_m(lon1, lat1, lon2, lat2):
    radius = (2 * WGS84_A_M + _B_M) / 3
    phi1, phi2 = np.radians(lat1), np.radians(lat2)
    h = np.sin((phi2 - phi1) / 2) ** 2 + np.cos(phi1) * np.cos(phi2) * np.sin(np.radians(lon2 - lon1) / 2) ** 2
    return 2 * radius * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))

