"""The two sources of a :class:`core.io.raster.Raster`: a rasterio dataset or a numpy array.

Both offer the same small interface (size, dtype, nodata, crs, transform,
``data_bands()``, ``read(bands, rows_cols, out_shape)``, ``close()``).
"""

from __future__ import annotations

import numbers
import warnings
from pathlib import Path

import numpy as np

from core.io.checks import FLOAT32_MAX, RasterError, check_transform, check_vrt, float64_scale, sample_shape
from core.io.gdal_messages import gdal_messages, quoted
from core.io.overviews import overview_damage
from core.io.sampling import GRID, spread_windows

__all__ = ["REDUCED_READ_CACHE_BYTES", "ArrayReader", "DatasetReader", "RasterError"]

#: GDAL's block cache during reduced reads: without overviews every block of the window passes through it,
#: and at GDAL's default (5 % of the machine's memory) a 20000 x 20000 read held 870 MiB.
REDUCED_READ_CACHE_BYTES = 64 * 2**20
#: Pixel types whose every value float32 holds exactly.
_FLOAT32_EXACT = {np.dtype(name) for name in ("uint8", "int8", "uint16", "int16", "float16", "float32")}


class DatasetReader:
    """A rasterio dataset; every read is windowed (out_shape reads use overviews)."""

    def __init__(self, path: Path):
        import rasterio
        from rasterio.errors import NotGeoreferencedWarning

        _check_file(path)
        check_vrt(path)
        self.path = str(path)
        #: Why the .ovr beside the file is set aside (None: sound or absent), checked here once per opening.
        self.ovr_damage = damage = overview_damage(path)
        #: Things the user should know about the file that do not stop its use (a damaged .ovr set aside).
        self.notices = [damage] if damage else []
        with gdal_messages() as said:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", NotGeoreferencedWarning)
                    # (NONE: GDAL would read the damaged levels as zeros or fail on them)
                    self._ds = rasterio.open(path, **({"OVERVIEW_LEVEL": "NONE"} if damage else {}))
            except Exception as err:  # rasterio raises several unrelated classes
                raise RasterError(f"cannot open {path}: not a readable image ({_reason(err)}){quoted(said)}") from err
        self._opening_messages = list(said)  # quoted again when a later read fails
        ds = self._ds
        self.width, self.height, self.band_count = ds.width, ds.height, ds.count
        self.dtype = np.dtype(ds.dtypes[0]) if ds.count else None
        self.crs, self.transform = ds.crs, ds.transform
        self.nodata = ds.nodata
        self.value_scale, self._nodata_exact = 1.0, False
        try:
            self._check_usable()
            if self.dtype.kind == "f":
                self.value_scale = float64_scale(self._float_sample(), self.nodata)
        except Exception:
            self.close()
            raise
        #: Whether float32 reads keep the nodata value apart from every other value of the file's type
        self._nodata_exact = (self.value_scale == 1.0 and self.dtype in _FLOAT32_EXACT and self.nodata is not None
                              and bool(np.isfinite(self.nodata)) and float(np.float32(self.nodata)) == self.nodata)

    def _check_usable(self):
        if self.width < 1 or self.height < 1 or self.band_count < 1:
            raise RasterError(f"{self.path} is empty ({self.width} x {self.height} pixels, {self.band_count} bands)")
        if self.dtype.kind not in "uif":
            raise RasterError(f"{self.path} has pixels of type {self.dtype}; only integer and float images work")
        check_transform(self.transform, self.path)
        # A truncated file usually opens but lacks its last blocks: find out now.
        self.read([self.band_count], (self.height - 1, self.height, self.width - 1, self.width), (1, 1))

    def _spread_windows(self, side):
        """:func:`core.io.sampling.spread_windows` for this file (its blocks and first band's overviews)."""
        with gdal_messages():
            return spread_windows(self.height, self.width, self._ds.block_shapes[0], side, self._ds.overviews(1))

    def _float_sample(self):
        """Every band's values, in their own type, at about ``sample_shape``'s pixels (for float64_scale)."""
        from rasterio.windows import Window

        shape = sample_shape(self.height, self.width, self.band_count)
        windows = self._spread_windows(max(shape[1:]))
        with gdal_messages():
            if windows is None:
                return self._ds.read(out_shape=shape)
            return np.concatenate([self._ds.read(window=Window(c, r, w, h)).reshape(self.band_count, -1)
                                   for r, c, h, w in windows], axis=1)

    def read_sample(self, bands, out_shape):
        """(k, rows, cols) float32 values of the whole raster for statistics, NaN where masked: resampled
        (nearest) to ``out_shape``, or where that would decode every block of a large file
        (:func:`core.io.sampling.spread_windows`) a mosaic of windows spread over it, as many pixels."""
        windows = self._spread_windows(max(out_shape))
        if windows is None:
            return self.read(bands, (0, self.height, 0, self.width), out_shape)
        size = max(out_shape) // GRID
        out = np.full((len(bands), GRID * size, GRID * size), np.nan, np.float32)
        for k, (r, c, h, w) in enumerate(windows):
            i, j = divmod(k, GRID)
            out[:, i * size : i * size + h, j * size : j * size + w] = self.read(bands, (r, r + h, c, c + w), (h, w))
        return out

    def data_bands(self):
        from rasterio.enums import ColorInterp

        if self._ds.closed:  # (rasterio's own error is an OSError)
            raise RasterError(f"{self.path} is closed")
        with gdal_messages():
            interpretations = self._ds.colorinterp
        return [b for b in range(1, self.band_count + 1) if interpretations[b - 1] != ColorInterp.alpha]

    @property
    def closed(self):
        return self._ds.closed

    def close(self):
        self._ds.close()

    def read(self, bands, rows_cols, out_shape, average=False):
        """(k, *out_shape) float32 of window ``rows_cols`` = (r0, r1, c0, c1), NaN where masked.

        ``average``: reduce by the mean of the valid pixels under each output cell, NaN where none is (else
        nearest).
        """
        from rasterio.enums import Resampling
        from rasterio.windows import Window

        if self._ds.closed:
            raise RasterError(f"{self.path} is closed")
        r0, r1, c0, c1 = rows_cols
        window = Window(c0, r0, c1 - c0, r1 - r0)
        shape = (len(bands),) + tuple(out_shape)
        with gdal_messages() as said, _small_cache(average):
            try:
                data = self._read_values(bands, window, shape,
                                         Resampling.average if average else Resampling.nearest)
                no_data = self._no_data(bands, window, shape, average, data)
            except Exception as err:  # GDAL read errors come as several classes
                raise RasterError(f"cannot read {self.path} (corrupt or truncated file?): {_reason(err)}"
                                  f"{quoted(said)}{quoted(self._opening_messages, 'GDAL on opening', said)}") from err
            if no_data is not None:
                data[no_data] = np.nan
            if average and self.dtype.kind == "f":
                self._mean_finite_pixels(bands, rows_cols, data, no_data)
        if self.dtype.kind == "f":
            data[~np.isfinite(data)] = np.nan
        return data

    def _mean_finite_pixels(self, bands, rows_cols, data, no_data):
        """Replace, in ``data`` (an averaged read of ``rows_cols``), GDAL's NaN or infinite means of cells with
        valid pixels by the mean of their finite valid pixels, read at full resolution by runs of such columns.

        A float file's non-finite pixels are no data, but GDAL leaves out only masked pixels (not NaN, unless
        nodata is NaN): one NaN made its cell NaN.  The cells of one read are equal (core.io.cells).
        """
        mixed = ~np.isfinite(data) if no_data is None else ~np.isfinite(data) & ~no_data
        if not mixed.any():
            return
        (r0, r1, c0, c1), (k, rows, cols) = rows_cols, data.shape
        cell_h, cell_w = (r1 - r0) // rows, (c1 - c0) // cols
        edges = np.flatnonzero(np.diff(np.concatenate([[False], mixed.any(axis=(0, 1)), [False]])))
        for j0, j1 in zip(edges[::2], edges[1::2]):
            i = np.flatnonzero(mixed[:, :, j0:j1].any(axis=(0, 2)))
            i0, i1 = i[0], i[-1] + 1
            pixels = self.read(bands, (r0 + i0 * cell_h, r0 + i1 * cell_h, c0 + j0 * cell_w, c0 + j1 * cell_w),
                               ((i1 - i0) * cell_h, (j1 - j0) * cell_w))
            where = mixed[:, i0:i1, j0:j1]
            cells = pixels.reshape(k, i1 - i0, cell_h, j1 - j0, cell_w).transpose(0, 1, 3, 2, 4)[where]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # (a cell of no finite pixel: NaN)
                data[:, i0:i1, j0:j1][where] = np.nanmean(cells, axis=(1, 2), dtype=np.float64)

    def _no_data(self, bands, window, shape, average, data):
        """Where ``data`` (``bands`` read from ``window`` into ``shape``) has no data: bool, None where all is valid.

        A reduced (``average``) cell has data where any of its pixels has: GDAL leaves masked pixels out of its
        means, and the masks are reduced to match.  A nodata mask is GDAL's: the reduced band compared with
        nodata (for types float32 holds exactly, ``data`` itself, not read and averaged again).  A mask or alpha
        band reduces by RMS, 255 sqrt(valid fraction), which rounds to 0 only below one valid pixel in 260,100
        (a factor over 510); by its mean one valid pixel of a 23 x 23 cell would round to 0.  (Nearest took a
        cell's mask from one of its pixels.)
        """
        from rasterio.enums import MaskFlags, Resampling

        flags = [self._ds.mask_flag_enums[b - 1] for b in bands]
        if all(MaskFlags.all_valid in f for f in flags):
            return None
        by_nodata = all(MaskFlags.nodata in f for f in flags)
        if average and by_nodata and self._nodata_exact:
            return data == np.float32(self.nodata)
        resampling = Resampling.rms if average and not by_nodata else \
            Resampling.average if average else Resampling.nearest
        if all(MaskFlags.per_dataset in f for f in flags):  # one mask for every band (internal mask, alpha): once
            mask = self._ds.read_masks(bands[0], window=window, out_shape=shape[1:], resampling=resampling)
            return np.broadcast_to(mask == 0, shape)
        return self._ds.read_masks(bands, window=window, out_shape=shape, resampling=resampling) == 0

    def _read_values(self, bands, window, shape, resampling):
        """float32 values; float data of huge magnitude is read as float64 and scaled first (checks.float64_scale)."""
        if self.value_scale == 1.0:
            return self._ds.read(bands, window=window, out_shape=shape, out_dtype=np.float32, resampling=resampling)
        wide = self._ds.read(bands, window=window, out_shape=shape, out_dtype=np.float64, resampling=resampling)
        wide *= self.value_scale
        np.clip(wide, -FLOAT32_MAX, FLOAT32_MAX, out=wide)  # a value beyond the sample's largest stays finite
        return wide.astype(np.float32)


def _small_cache(small: bool):
    """A rasterio.Env with GDAL's block cache at REDUCED_READ_CACHE_BYTES when ``small``, else nothing."""
    import contextlib

    import rasterio

    return rasterio.Env(GDAL_CACHEMAX=REDUCED_READ_CACHE_BYTES) if small else contextlib.nullcontext()


def _check_file(path: Path):
    if str(path).startswith("/vsi"):  # GDAL's virtual file systems (/vsicurl/ for URLs): GDAL checks them
        return
    try:
        if not path.exists():
            raise RasterError(f"image file {_short(path)} does not exist")
        if path.is_dir():
            raise RasterError(f"{path} is a folder, not an image file")
        if path.stat().st_size == 0:
            raise RasterError(f"image file {path} is empty (0 bytes)")
    except OSError as err:  # a name too long for the file system, a folder we may not enter
        raise RasterError(f"cannot open image file {_short(path)}: {err.strerror or err}") from None


def _short(path, keep: int = 120) -> str:
    text = str(path)
    return text if len(text) <= keep else f"{text[:keep // 2]}...{text[-keep // 2:]} ({len(text)} characters)"


def _reason(err):
    """The most telling message of a rasterio error: its cause often says more."""
    chain = [err, err.__cause__ or err.__context__]
    messages = [str(e) for e in chain if e is not None and str(e)]
    detailed = [m for m in messages if "previous exception" not in m]
    return (detailed or messages or [type(err).__name__])[0]


class ArrayReader:
    """A numpy array as a raster: ``(H, W)`` or ``(H, W, C)``, no georeference; a masked array's masked
    pixels (``rasterio``'s ``read(masked=True)``) are no data, as ``nodata`` and NaN are."""

    def __init__(self, array: np.ndarray, nodata):
        self.notices: list[str] = []
        self.ovr_damage = None
        mask = np.ma.getmaskarray(array) if np.ma.isMaskedArray(array) else None
        array = np.asarray(array.data) if mask is not None else array
        if array.ndim not in (2, 3):
            raise RasterError(f"image array must have shape (H, W) or (H, W, C); got shape {array.shape}")
        if array.dtype.kind not in "uif":
            raise TypeError(f"image array must hold integers or floats; got dtype {array.dtype}")
        if array.size == 0:
            raise RasterError(f"image array is empty (shape {array.shape})")
        if nodata is not None and not isinstance(nodata, numbers.Real):
            raise TypeError(f"nodata must be a number; got {nodata!r}")
        self._array = array if array.ndim == 3 else array[:, :, np.newaxis]
        self._mask = None if mask is None or not mask.any() else mask.reshape(self._array.shape)
        self.height, self.width, self.band_count = self._array.shape
        self.dtype, self.nodata, self.path = array.dtype, nodata, None
        _, rows, cols = sample_shape(self.height, self.width, 1)
        every = (slice(None, None, max(1, self.height // rows)), slice(None, None, max(1, self.width // cols)))
        sample = self._array[every]
        if self._mask is not None and sample.dtype.kind == "f":  # (a masked fill value must not set the scale)
            sample = np.where(self._mask[every], np.nan, sample)
        self.value_scale = float64_scale(sample, nodata)
        self.crs, self.transform = None, _identity_transform()
        self.closed = False

    def data_bands(self):
        return list(range(1, self.band_count + 1))

    def close(self):
        self.closed = True

    def read_sample(self, bands, out_shape):
        """(k, rows, cols) float32 of the whole array resampled (nearest) to ``out_shape`` (in memory: cheap)."""
        return self.read(bands, (0, self.height, 0, self.width), out_shape)

    def read(self, bands, rows_cols, out_shape, average=False):
        if self.closed:
            raise RasterError("the image array has been closed")
        if average:
            return self._read_average(bands, rows_cols, out_shape)
        r0, r1, c0, c1 = rows_cols
        # Nearest-neighbour resampling: the source pixel under each output cell's centre.
        rows = r0 + ((np.arange(out_shape[0]) + 0.5) * (r1 - r0) / out_shape[0]).astype(np.intp)
        cols = c0 + ((np.arange(out_shape[1]) + 0.5) * (c1 - c0) / out_shape[1]).astype(np.intp)
        picked = [b - 1 for b in bands]
        raw = np.moveaxis(self._array[rows[:, None], cols[None, :]][:, :, picked], -1, 0)
        data = _to_float32(raw, self.value_scale)
        invalid = ~np.isfinite(raw) if raw.dtype.kind == "f" else np.zeros(raw.shape, bool)
        if self._mask is not None:
            invalid |= np.moveaxis(self._mask[rows[:, None], cols[None, :]][:, :, picked], -1, 0)
        if self.nodata is not None and np.isnan(self.nodata):
            invalid |= np.isnan(raw)
        elif self.nodata is not None:
            invalid |= raw == self.nodata  # compared in the array's own type, not float32
        data[invalid] = np.nan
        return data

    def _read_average(self, bands, rows_cols, out_shape):
        """The mean of the valid pixels under each output cell (NaN where none is), one band at a time."""
        r0, r1, c0, c1 = rows_cols
        row_edges = r0 + (np.arange(out_shape[0]) * (r1 - r0)) // out_shape[0]
        col_edges = c0 + (np.arange(out_shape[1]) * (c1 - c0)) // out_shape[1]
        out = np.empty((len(bands),) + tuple(out_shape), np.float32)
        for k, band in enumerate(bands):
            plane = self.read([band], (r0, r1, c0, c1), (r1 - r0, c1 - c0))[0]
            valid = np.isfinite(plane)
            sums = _cell_sums(np.where(valid, plane, np.float32(0)), row_edges - r0, col_edges - c0)
            counts = _cell_sums(valid.astype(np.float32), row_edges - r0, col_edges - c0)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[k] = np.where(counts > 0, sums / counts, np.nan)
        return out


def _cell_sums(plane, row_starts, col_starts):
    """Sums of ``plane`` over the cells that start at ``row_starts`` x ``col_starts`` (float64)."""
    return np.add.reduceat(np.add.reduceat(plane.astype(np.float64), row_starts, axis=0), col_starts, axis=1)


def _to_float32(raw: np.ndarray, scale: float) -> np.ndarray:
    """float32 of ``raw``: scaled first (and clipped into range) when ``scale`` is not 1."""
    if raw.dtype.kind != "f" or raw.dtype == np.float16:  # (float16 fits float32: nothing to clip)
        return raw.astype(np.float32)
    return np.clip(raw * scale if scale != 1.0 else raw, -FLOAT32_MAX, FLOAT32_MAX).astype(np.float32)


def _identity_transform():
    """affine.Affine.identity(), or a stand-in where rasterio (and affine) is absent."""
    try:
        from affine import Affine
    except ImportError:  # the GPU machine has no rasterio; arrays still work there
        return _PlainTransform()
    return Affine.identity()


class _PlainTransform:
    """The identity transform with the attributes of affine.Affine that Raster uses."""

    a, b, c, d, e, f = 1.0, 0.0, 0.0, 0.0, 1.0, 0.0

    def __invert__(self):
        return self

    def __mul__(self, xy):
        return tuple(xy)

    def __repr__(self):
        return "Affine.identity()"
