"""Raster access: one intensity band of a GeoTIFF, PNG, JPEG or numpy array, read by windows.

Reads cost what the window costs, whatever the raster's size, and return
float32 with NaN wherever there is no valid data (nodata, masks, alpha,
non-finite values, outside the raster).  Pixel space as in DESIGN.md.
``rasterio`` is imported inside functions, so ``import core`` stays cheap.
"""

from __future__ import annotations

import numbers
import os
import threading
from pathlib import Path

import numpy as np

from core import validation
from core.cancel import check, flag_of
from core.io.cells import read_cells
from core.io.readers import ArrayReader, DatasetReader, RasterError
from core.memory import HostMemoryError, check_allocation

__all__ = ["LUMINANCE_WEIGHTS", "REDUCED_STRIP_PIXELS", "Raster", "RasterError", "open_raster", "wrap_longitude"]

#: ITU-R BT.601 luma weights of red, green and blue.
LUMINANCE_WEIGHTS = (0.299, 0.587, 0.114)
#: Source pixels a reduced read takes between two looks at its cancel flag: a few tenths of a second on a slow
#: machine where every tile must be decoded (no overviews), so a cancelled far preview stops at once.
REDUCED_STRIP_PIXELS = 2**22


def open_raster(source, band: int | None = None, *, nodata: float | None = None) -> Raster:
    """Open an image for windowed reading of one intensity band.

    Parameters
    ----------
    source : str or os.PathLike or ndarray
        A file GDAL reads, or an (H, W) or (H, W, C) array (kept by reference,
        never modified; no georeference).
    band : int, optional
        1-based band to use.  None: one band as is, two their mean, three or
        more the BT.601 luminance of the first three (alpha never counts).
    nodata : float, optional
        For arrays only: the value that marks invalid pixels.

    Returns
    -------
    Raster

    Raises
    ------
    RasterError
        Missing, unreadable or corrupt files; empty arrays; a band out of range.
    TypeError
        A source that is neither a path nor an array, or a non-integer band.
    """
    if isinstance(source, np.ndarray):
        reader = ArrayReader(source, nodata)
    elif isinstance(source, (str, os.PathLike)):
        if nodata is not None:
            raise TypeError("nodata is for array sources; files carry their own nodata value")
        # GDAL's virtual paths stay strings: Path would fold the "//" of /vsicurl/https://...
        reader = DatasetReader(source if str(source).startswith("/vsi") else Path(source))
    else:
        raise TypeError(f"source must be a file path or a numpy array; got {type(source).__name__}")
    try:
        return Raster(reader, band)
    except Exception:
        reader.close()
        raise


class Raster:
    """An open image, read by windows as one float32 intensity band (NaN = no data).

    Made by :func:`open_raster`; reads are serialised by a lock, so threads may
    share one Raster.

    Attributes
    ----------
    width, height, band_count : int
    dtype : numpy.dtype
        Data type of the source's pixels.
    crs : rasterio.crs.CRS or None
        None for plain images and arrays.
    transform : affine.Affine
        Pixel ``(x, y)`` to map coordinates; identity for plain images.
    nodata : float or None
    georeferenced : bool
        True when PROJ converts the CRS to WGS84 lon/lat (tested at the centre);
        a local engineering CRS leaves it False (pixel coordinates).
    path : str or None
    band : int or None
        The chosen band, or None for the derived intensity.
    notices : list of str
        What the user should be told about the file that does not stop its use (``ovr_damage``, said).
    ovr_damage : str or None
        Why the ``.ovr`` beside it is not used, found on opening (core.io.overviews.overview_damage; None: sound).
    """

    def __init__(self, reader, band):
        self._reader = reader
        self._lock = threading.Lock()
        self.width, self.height = reader.width, reader.height
        self.band_count, self.dtype = reader.band_count, reader.dtype
        self.crs, self.transform, self.nodata = reader.crs, reader.transform, reader.nodata
        self.georeferenced = self.crs is not None and _converts_to_lonlat(self)
        self.path, self.notices, self.ovr_damage = reader.path, reader.notices, reader.ovr_damage
        self.band = _check_band(band, self.band_count, "band")
        self._data_bands = reader.data_bands()  # (kept: reopen swaps the reader while other threads read)
        self._bands, self._weights = _intensity_recipe(self.band, self._data_bands)

    def __repr__(self):
        source = self.path or "array"
        return f"<Raster {source} {self.width}x{self.height} bands={self.band_count} {self.dtype}>"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        """Release the file; later reads raise RasterError."""
        with self._lock:
            self._reader.close()

    def reopen(self) -> None:
        """Open the file again, so that reads see what was added to it since (overviews built beside it).

        Threads may go on reading meanwhile: a read in progress finishes on the old handle.  Nothing
        for an array.
        """
        if self.path is None or self.closed:
            return
        reader = DatasetReader(self.path if self.path.startswith("/vsi") else Path(self.path))
        with self._lock:
            old, self._reader, self.notices, self.ovr_damage = self._reader, reader, reader.notices, reader.ovr_damage
            old.close()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has run."""
        return self._reader.closed

    def read_window(self, col_off: int, row_off: int, width: int, height: int) -> np.ndarray:
        """The (height, width) float32 intensity of a pixel window (it may overhang the raster; NaN there)."""
        box = _check_box(col_off, row_off, width, height)
        self._check_memory(width, height, len(self._bands) + 1)
        bands = self._read_clipped(self._bands, box, (height, width))
        return _weighted_sum(bands, self._weights)

    def read_bands(self, col_off: int, row_off: int, width: int, height: int) -> np.ndarray:
        """The (height, width, k) float32 values of a window in every band the extraction uses.

        The chosen band alone when the raster was opened with one, else every
        data band (colour and multispectral bands count; alpha does not).  NaN
        where there is no data, as :meth:`read_window`.
        """
        box = _check_box(col_off, row_off, width, height)
        bands = [self.band] if self.band is not None else self._data_bands
        self._check_memory(width, height, len(bands) + 1)
        return np.ascontiguousarray(np.moveaxis(self._read_clipped(bands, box, (height, width)), 0, -1))

    def intensity_of(self, bands: np.ndarray) -> np.ndarray:
        """The (height, width) float32 intensity of :meth:`read_bands` output, as :meth:`read_window` gives it."""
        order = [self.band] if self.band is not None else self._data_bands
        planes = [np.array(bands[:, :, order.index(band)], dtype=np.float32) for band in self._bands]
        return _weighted_sum(planes, self._weights)

    def read_decimated(self, col_off, row_off, width, height, out_width, out_height, bands=None) -> np.ndarray:
        """A pixel window resampled (nearest) to ``(out_height, out_width)`` for display, through overviews.

        ``bands`` lists 1-based bands to return (e.g. ``[1, 2, 3]``, then the shape
        is ``(out_height, out_width, k)``); None gives the intensity band.  float32,
        NaN where there is no data.
        """
        box = _check_box(col_off, row_off, width, height)
        out_shape = _check_size(out_width, "out_width"), _check_size(out_height, "out_height")
        out_shape = out_shape[::-1]
        if bands is None:
            self._check_memory(out_shape[1], out_shape[0], len(self._bands) + 1)
            return _weighted_sum(self._read_clipped(self._bands, box, out_shape), self._weights)
        bands = self._band_list(bands)
        self._check_memory(out_shape[1], out_shape[0], len(bands) + 1)
        return np.ascontiguousarray(np.moveaxis(self._read_clipped(bands, box, out_shape), 0, -1))

    def read_sample(self, side: int, bands=None) -> np.ndarray:
        """A sample of the whole raster for statistics (the display's stretch), about ``side`` pixels a side.

        The raster resampled (nearest) to fit ``side``, as :meth:`read_decimated` gives it, or where that
        would decode every block of a large tiled file without overviews, a mosaic of windows spread over it
        (:mod:`core.io.sampling`).  ``bands`` as :meth:`read_decimated`'s; float32, NaN where there is no data.
        """
        side = _check_size(side, "side")
        factor = max(1.0, max(self.width, self.height) / side)
        out_shape = tuple(max(1, round(n / factor)) for n in (self.height, self.width))
        wanted = self._bands if bands is None else self._band_list(bands)
        self._check_memory(side, side, len(wanted) + 1)
        with self._lock:
            planes = self._reader.read_sample(wanted, out_shape)
        if bands is None:
            return _weighted_sum(planes, self._weights)
        return np.ascontiguousarray(np.moveaxis(planes, 0, -1))

    def read_reduced(self, col_off, row_off, width, height, factor, cancel=None) -> np.ndarray:
        """A window reduced ``factor`` times, as :meth:`read_bands` gives it: ``(ceil(height / factor),
        ceil(width / factor), k)`` float32, each cell the mean of the valid pixels under it (the file's
        overviews serve where they exist), NaN where none is.  Coarse cell ``(i, j)`` covers the pixels
        ``[col_off + j * factor, col_off + (j + 1) * factor)`` x the same in rows.

        Read in strips of whole cells of about :data:`REDUCED_STRIP_PIXELS`; ``cancel`` (a
        :class:`core.cancel.CancelToken`) is looked at before each: :class:`core.cancel.Cancelled`.
        """
        box = _check_box(col_off, row_off, width, height)
        factor = _check_size(factor, "factor")
        flag_of(cancel)  # a wrong type fails here, before any read
        out_shape = (-(-box[3] // factor), -(-box[2] // factor))
        bands = [self.band] if self.band is not None else self._data_bands
        self._check_memory(out_shape[1], out_shape[0], len(bands) + 1)
        reduced = np.empty((len(bands),) + out_shape, np.float32)
        strip_rows = max(1, REDUCED_STRIP_PIXELS // (out_shape[1] * factor * factor))  # (in cells)
        for i0 in range(0, out_shape[0], strip_rows):
            check(cancel)
            i1 = min(i0 + strip_rows, out_shape[0])
            strip = (box[0], box[1] + i0 * factor, out_shape[1] * factor, (i1 - i0) * factor)
            reduced[:, i0:i1] = read_cells(lambda rows_cols, shape: self._read_average(bands, rows_cols, shape),
                                           len(bands), strip, factor, (self.width, self.height))
        return np.ascontiguousarray(np.moveaxis(reduced, 0, -1))

    def pixel_to_map(self, xs, ys) -> tuple[np.ndarray, np.ndarray]:
        """Map coordinates ``transform * (x, y)`` of pixel positions (float64 arrays, CRS units)."""
        xs, ys = _as_coordinates(xs, ys)
        t = self.transform
        return t.a * xs + t.b * ys + t.c, t.d * xs + t.e * ys + t.f

    def map_to_pixel(self, mxs, mys) -> tuple[np.ndarray, np.ndarray]:
        """Pixel positions ``(x, y)`` of map coordinates (the inverse of :meth:`pixel_to_map`)."""
        mxs, mys = _as_coordinates(mxs, mys)
        t = ~self.transform
        return t.a * mxs + t.b * mys + t.c, t.d * mxs + t.e * mys + t.f

    def pixel_to_lonlat(self, xs, ys) -> tuple[np.ndarray, np.ndarray]:
        """WGS84 longitude and latitude (degrees) of pixel positions; RasterError without a CRS."""
        mxs, mys = self.pixel_to_map(xs, ys)
        lons, lats = self._warp(self.crs, "EPSG:4326", mxs, mys)
        return wrap_longitude(lons), lats

    def lonlat_to_pixel(self, lons, lats) -> tuple[np.ndarray, np.ndarray]:
        """Pixel positions ``(x, y)`` of WGS84 longitudes and latitudes (degrees)."""
        return self.map_to_pixel(*self.lonlat_to_map(lons, lats))

    def lonlat_to_map(self, lons, lats) -> tuple[np.ndarray, np.ndarray]:
        """Map coordinates (the raster's CRS) of WGS84 longitudes and latitudes (degrees); RasterError without a CRS."""
        lons, lats = _as_coordinates(lons, lats)
        if self.georeferenced and self.crs.is_geographic:  # the longitudes' turn nearest the raster's columns
            centre, _ = self.pixel_to_map(self.width / 2, self.height / 2)
            lons = centre + wrap_longitude(lons - centre)
        return self._warp("EPSG:4326", self.crs, lons, lats)

    def _warp(self, src_crs, dst_crs, xs, ys):
        if not self.georeferenced:
            reason = "no coordinate reference system" if self.crs is None else \
                f"a coordinate reference system ({_crs_name(self.crs)}) with no known relation to WGS84"
            raise RasterError(f"{self.path or 'the array'} has {reason} (not georeferenced)")
        return _warp_points(src_crs, dst_crs, xs, ys)

    def _band_list(self, bands) -> list[int]:
        """``bands`` (1-based numbers) checked: TypeError, ValueError or RasterError for a bad one."""
        if isinstance(bands, (str, bytes)) or not hasattr(bands, "__iter__"):
            raise TypeError(f"bands must be a list of 1-based band numbers; got {bands!r}")
        bands = [_check_band(b, self.band_count, "bands") for b in bands]
        if not bands:
            raise ValueError("bands must name at least one band")
        return bands

    def _check_memory(self, width, height, n_planes):
        """Refuse (RasterError), before allocating, a read of ``n_planes`` float32 planes beyond the memory budget."""
        try:
            check_allocation(width * height * n_planes * 4, f"reading a window of {width} x {height} pixels")
        except HostMemoryError as exc:
            raise RasterError(str(exc)) from None

    def _read_average(self, bands, rows_cols, out_shape):
        with self._lock:
            return self._reader.read(bands, rows_cols, tuple(out_shape), average=True)

    def _read_clipped(self, bands, box, out_shape):
        """(k, *out_shape) float32 of ``bands`` over ``box``, NaN outside the raster and where masked."""
        col_off, row_off, width, height = box
        c0, c1 = max(col_off, 0), min(col_off + width, self.width)
        r0, r1 = max(row_off, 0), min(row_off + height, self.height)
        if (c0, c1, r0, r1) == (col_off, col_off + width, row_off, row_off + height):
            with self._lock:  # the usual case, inside the raster: no padding to allocate
                return self._reader.read(bands, (r0, r1, c0, c1), tuple(out_shape))
        out = np.full((len(bands),) + tuple(out_shape), np.nan, np.float32)
        # Output cells that the part inside the raster covers (exact for unit scale).
        j0, j1 = (round((c - col_off) * out_shape[1] / width) for c in (c0, c1))
        i0, i1 = (round((r - row_off) * out_shape[0] / height) for r in (r0, r1))
        if c0 < c1 and r0 < r1 and j0 < j1 and i0 < i1:
            with self._lock:
                out[:, i0:i1, j0:j1] = self._reader.read(bands, (r0, r1, c0, c1), (i1 - i0, j1 - j0))
        return out


def wrap_longitude(lons):
    """Longitudes (degrees) moved by whole turns into ``[-180, 180)`` (RFC 7946, section 3.1.9); 180 stays 180."""
    lons = np.asarray(lons, np.float64)
    wrapped = (lons + 180.0) % 360.0 - 180.0
    return np.where((wrapped == -180.0) & (lons > 0), 180.0, wrapped)


def _warp_points(src_crs, dst_crs, xs, ys):
    """``(xs, ys)`` from ``src_crs`` to ``dst_crs`` through rasterio.warp; RasterError where PROJ fails."""
    if xs.size == 0:
        return xs.copy(), ys.copy()
    from rasterio.warp import transform

    try:
        out_x, out_y = transform(src_crs, dst_crs, xs.ravel(), ys.ravel())
    except Exception as err:  # rasterio's CPLE_* errors (no public base class) for failed PROJ operations
        if not type(err).__module__.startswith("rasterio"):
            raise
        raise RasterError(f"cannot convert positions from {_crs_name(src_crs)} to {_crs_name(dst_crs)}: "
                          f"{str(err).splitlines()[0][:200]}") from err
    return np.asarray(out_x, np.float64).reshape(xs.shape), np.asarray(out_y, np.float64).reshape(ys.shape)


def _crs_name(crs) -> str:
    """EPSG code, else the CRS's name, for messages."""
    from rasterio.crs import CRS

    crs = CRS.from_user_input(crs)
    return crs.to_string() if crs.to_epsg() is not None else repr(crs.to_dict().get("name") or crs.to_wkt()[:60])


def _converts_to_lonlat(raster) -> bool:
    """Whether PROJ relates the raster's CRS to WGS84: its centre gets a finite lon/lat."""
    mx, my = raster.pixel_to_map(raster.width / 2, raster.height / 2)
    try:
        lon, lat = _warp_points(raster.crs, "EPSG:4326", np.atleast_1d(mx), np.atleast_1d(my))
    except RasterError:
        return False
    return bool(np.isfinite(lon).all() and np.isfinite(lat).all() and abs(lat[0]) <= 90)


def _intensity_recipe(band, data_bands):
    """The bands and weights whose weighted sum is the intensity."""
    if band is not None:
        return [band], [1.0]
    if len(data_bands) == 0:
        raise RasterError("the image has no data bands (only alpha); choose a band")
    if len(data_bands) == 1:
        return data_bands, [1.0]
    if len(data_bands) == 2:
        return data_bands, [0.5, 0.5]
    return data_bands[:3], list(LUMINANCE_WEIGHTS)


def _weighted_sum(bands, weights):
    """float32 weighted sum over the first axis, in place in ``bands[0]``; NaN in any band gives NaN."""
    out = bands[0]
    if weights[0] != 1.0:
        out *= np.float32(weights[0])
    for plane, weight in zip(bands[1:], weights[1:]):
        plane *= np.float32(weight)
        out += plane
    return out


def _check_band(band, band_count, name):
    if band is None and name == "band":
        return None
    if isinstance(band, bool) or not isinstance(band, numbers.Integral):
        raise TypeError(f"{name} must be a 1-based band number (int); got {band!r}")
    if not 1 <= band <= band_count:
        raise RasterError(f"{name} {band} is out of range: the image has bands 1..{band_count}")
    return int(band)


def _check_size(value, name):
    return validation.integer(value, name, 1, unit="pixels", whole_floats=True)


def _check_box(col_off, row_off, width, height):
    return (
        validation.integer(col_off, "col_off", unit="pixels", whole_floats=True),
        validation.integer(row_off, "row_off", unit="pixels", whole_floats=True),
        _check_size(width, "width"),
        _check_size(height, "height"),
    )


def _as_coordinates(xs, ys):
    xs, ys = np.asarray(xs, np.float64), np.asarray(ys, np.float64)
    if xs.shape != ys.shape:
        raise ValueError(f"coordinate arrays must have the same shape; got {xs.shape} and {ys.shape}")
    return xs, ys

