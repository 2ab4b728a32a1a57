"""Overviews (GDAL's "pyramids") of a large raster: whether it needs them, and building them beside it.

A large tiled file without overviews is slow to view whole: every display tile
at the fit zoom decodes every source tile under it (12 s to fill the window
with a 20000 x 20000 RGB GeoTIFF on the benchmark VM), and a far preview's
reduced read does the same.  Overviews, the raster reduced 2, 4, 8... times,
let GDAL read a small level instead.  They are written as GDAL's external
``IMAGE.ovr`` beside the image (``TIFF_USE_OVR``), the image itself is left as
it is, and GDAL finds them when the image is opened again
(:meth:`core.io.raster.Raster.reopen`).

The build takes two GDAL calls in a child process that a cancel ends at once, and is moved beside the image
only when complete (:mod:`core.io.overview_build`): level 1:2 from the image (the bulk of the work), then the
coarser levels as the internal overviews of that level's ``.ovr`` (GDAL reads them as the image's further
levels), from a quarter of the pixels.  The levels come out the same as GDAL's one-call build.  An ``.ovr``
left half written by a build killed elsewhere (gdaladdo, or LineSnap before the staging folder) is told by
:func:`overview_damage`: the image is then read without it (:class:`core.io.readers.DatasetReader`).
``rasterio`` and ``tifffile`` are imported inside functions, so ``import core`` stays cheap.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import re
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.cancel import check, flag_of
from core.io.gdal_messages import gdal_messages
from core.io.overview_build import OverviewError, remove_abandoned_staging, run_in_child, staging
from core.io.overview_sparse import check_unwritten_blocks

__all__ = ["LARGE_SIDE_PX", "LARGE_PIXELS", "MAX_OVR_IMAGES", "SAMPLED_BLOCKS", "SMALLEST_LEVEL_PX", "OverviewError",
           "build_overviews", "needs_overviews", "overview_damage", "overview_factors", "overview_path",
           "remove_abandoned_staging"]

#: A raster with a longer side than this (px) ...
LARGE_SIDE_PX = 4096
#: ... or more pixels than this is large: without overviews its fit view decodes it whole.
LARGE_PIXELS = 2**24
#: The coarsest level is the first whose longest side is at most this (px), as gdaladdo's default.
SMALLEST_LEVEL_PX = 256


def overview_path(path) -> Path:
    """Where GDAL keeps the external overviews of ``path``: ``path`` + ``.ovr``."""
    return Path(f"{os.fspath(path)}.ovr")


def overview_damage(path) -> str | None:
    """Why the external overviews beside ``path`` (``path.ovr``) cannot be used; None when sound or absent.

    A build killed midway leaves an ``.ovr`` whose levels are declared but whose blocks were never written
    (GDAL reads them as zeros: the image black at coarse zoom), or one cut short (reads through it fail);
    an ``.ovr`` that is not a TIFF at all GDAL ignores.  Every block of every level written must lie inside
    the file (each level's tables of block offsets and byte counts, read by ``tifffile``), and
    :data:`SAMPLED_BLOCKS` of them spread over each compressed level must start as compressed data does (zeros
    or garbage over a range of the file).  A block never written is sound only where the image is empty under
    it (GDAL's sparse overviews omit such blocks: :mod:`core.io.overview_sparse`), which pixels are read to
    tell where the finer level has blocks there; otherwise no pixels are decoded: a few blocks overwritten
    between those looked at, or any in an uncompressed level, are not seen.
    """
    import rasterio
    from rasterio.errors import NotGeoreferencedWarning

    ovr = overview_path(path)
    if str(path).startswith("/vsi") or not ovr.is_file():
        return None
    size = ovr.stat().st_size
    with gdal_messages(), warnings.catch_warnings():  # (GDAL's complaints are said in the reason instead)
        warnings.simplefilter("ignore", NotGeoreferencedWarning)  # (an .ovr has no georeference of its own)
        try:
            with rasterio.open(ovr):  # (GDAL's own word on a file it cannot read at all)
                pass
            levels = _levels(ovr)
            for level in levels:
                _check_level_blocks(level, size)
            with open(ovr, "rb") as stream:
                for level in levels:
                    _check_block_starts(stream, level)
            if any(level.unwritten.any() for level in levels):
                check_unwritten_blocks(path, ovr, levels, _base_table(path))
        except Exception as err:  # rasterio, tifffile raise unrelated classes (struct.error...); the checks ValueError
            reason = _short_reason(str(err).splitlines()[0] if str(err) else type(err).__name__, ovr)
            return (f"{ovr.name} beside the image is damaged ({reason}) and not used; File > Build Overviews... "
                    "replaces it")
    return None


def _base_table(path) -> _Level | None:
    """The blocks of the image at ``path`` where it is a TIFF that tifffile reads (None otherwise)."""
    import tifffile

    with contextlib.suppress(Exception), _tifffile_complaints(), tifffile.TiffFile(path) as tiff:
        return _level(tiff.pages[0])
    return None


def _short_reason(text: str, ovr) -> str:
    """GDAL's complaint about ``ovr`` short enough for the status bar: without the path it quotes (the notice
    names the file), at most :data:`_REASON_CHARS` characters (the status bar cut the notice, and its offer to
    rebuild, off)."""
    for quoted in (f"'{ovr}' ", f"{ovr}: ", f"{ovr} "):
        text = text.replace(quoted, "")
    text = text.replace(str(ovr), ovr.name).strip().rstrip(".")
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 3].rstrip() + "..."


#: The most characters of GDAL's reason in a damaged .ovr's notice.
_REASON_CHARS = 60
#: More images than this in one .ovr is taken for a damaged chain of directories (an .ovr has a dozen or so).
MAX_OVR_IMAGES = 256


@dataclass(frozen=True, eq=False)
class _Level:
    """One image of an .ovr (a level, or its mask): its size and where each of its blocks lies.

    ``offsets`` and ``byte_counts`` are (n,) uint64 arrays: each block's first byte in the file and its length
    as the directory lists them (0 and 0: never written, ``unwritten``); ``n`` is ``block_count`` in a sound
    file.  Blocks are ``block_px`` (width, height) px, by plane (``planes``: the bands where each has blocks of
    its own, else 1), by row, by column.
    """

    width: int
    height: int
    block_count: int
    compression: int
    offsets: np.ndarray
    byte_counts: np.ndarray
    block_px: tuple[int, int]
    planes: int
    is_mask: bool

    @functools.cached_property
    def unwritten(self) -> np.ndarray:
        """(n,) bool: the blocks never written (GDAL reads them as nodata)."""
        return (self.offsets == 0) | (self.byte_counts == 0)


def _levels(ovr) -> list[_Level]:
    """Every image of the TIFF file ``ovr``, in the order of its chain of directories, as tifffile reads them.

    Raises what tifffile raises on a file it cannot read (``TiffFileError``, ``struct.error``...), and
    ValueError where it read on past damage that it only logs (a directory past the end of the file or
    looping back, a table of blocks that cannot be read), where the chain does not end within
    :data:`MAX_OVR_IMAGES`, or where a directory places its blocks in no way that can be read.
    """
    import tifffile

    levels, seen = [], set()
    with _tifffile_complaints() as complaints, tifffile.TiffFile(ovr) as tiff:
        for page in tiff.pages:  # (one directory at a time: tifffile ends a loop only when asked for them all)
            if page.offset in seen or len(levels) == MAX_OVR_IMAGES:
                raise ValueError(f"its chain of directories {'loops' if page.offset in seen else 'does not end'}")
            seen.add(page.offset)
            levels.append(_level(page))
    if complaints:
        raise ValueError(complaints[0])
    if not levels:
        raise ValueError("it holds no image")
    return levels


def _level(page) -> _Level:
    """The :class:`_Level` of a ``tifffile.TiffPage``."""
    width, height = page.imagewidth, page.imagelength
    block_px = (page.tilewidth, page.tilelength) if page.is_tiled else (width, page.rowsperstrip)
    if min(block_px) < 1:  # (tifffile's count of blocks would divide by zero)
        raise ValueError(f"its {width} x {height} image has blocks of {block_px[0]} x {block_px[1]} px")
    tables = []
    for values in (page.dataoffsets, page.databytecounts):
        table = np.asarray(values).reshape(-1)
        if table.size and table.dtype.kind not in "ui":
            raise ValueError(f"its {width} x {height} image has a table of blocks of {table.dtype.name}, not integers")
        tables.append(table.astype(np.uint64))
    planes = page.samplesperpixel if page.planarconfig == 2 else 1  # (2: TIFF's PLANARCONFIG_SEPARATE)
    return _Level(width, height, math.prod(page.chunked), int(page.compression), *tables, block_px=block_px,
                  planes=planes, is_mask=bool(page.subfiletype & 4))  # (4: TIFF's FILETYPE_MASK)


_tifffile_local = threading.local()


class _TifffileComplaints(logging.Filter):
    """What tifffile logs in a thread inside :func:`_tifffile_complaints`: kept for it, not logged.

    tifffile reads on past much damage and only logs it (``logging.getLogger("tifffile")``): a directory past
    the end of the file or looping back ends the chain there, a tag that cannot be read is left out.  Older
    versions log these as warnings, newer ones as errors; both are kept.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        complaints = getattr(_tifffile_local, "complaints", None)
        if complaints is None:
            return True
        if record.levelno >= logging.WARNING:
            complaints.append(_complaint_text(record.getMessage()))
        return False


_COMPLAINTS = _TifffileComplaints()


@contextlib.contextmanager
def _tifffile_complaints():
    """Collect what tifffile logs in this thread (yields the list of its messages) instead of logging it."""
    logging.getLogger("tifffile").addFilter(_COMPLAINTS)  # (once: a filter already there is not added again)
    _tifffile_local.complaints = complaints = []
    try:
        yield complaints
    finally:
        _tifffile_local.complaints = None


def _complaint_text(message: str) -> str:
    """tifffile's ``<tifffile.TiffPages @8> invalid page offset 1000000`` without the objects it names, and
    ``raised TiffFileError('...')`` without the wrapping."""
    text = re.sub(r"<[^<>]*>\s*", "", message)
    return re.sub(r"raised \w+\((['\"])(.*)\1\)", r"\2", text).strip()


def _check_level_blocks(table, file_size: int) -> None:
    """ValueError unless ``table`` (a :class:`_Level`: one level of an .ovr, or its mask) lists each of its
    blocks once and every block written lies inside the file's ``file_size`` bytes (the unwritten ones are
    :func:`core.io.overview_sparse.check_unwritten_blocks`'s)."""
    level, offsets, byte_counts = f"its {table.width} x {table.height} level", table.offsets, table.byte_counts
    if len(offsets) != table.block_count or len(byte_counts) != table.block_count:
        raise ValueError(f"{level} has a table of {len(offsets)} blocks, not {table.block_count}")
    # (the ends in uint64 without wrapping around: garbage offsets may be close to 2**64)
    if np.any((byte_counts > file_size) | (offsets > file_size - np.minimum(byte_counts, file_size))):
        raise ValueError(f"cut short: blocks of {level} lie past the end")


#: Blocks of each compressed level of an .ovr whose first bytes are looked at, spread over the level's place in
#: the file: a range of zeros or garbage over more than about 1/7 of a level's blocks is always seen.  For the
#: 7 levels of a 20000^2 RGB image's .ovr they add 0.2 ms to the check's 1.4 ms, 3-5 ms to its 5 ms when the
#: .ovr is not in the page cache (benchmark VM, medians).
SAMPLED_BLOCKS = 8
#: Compressions whose blocks never start with 16 zero bytes: LZW, JPEG, DEFLATE, LERC, LZMA, ZSTD, WEBP, JPEG-XL.
_NEVER_ZEROS = {5, 7, 8, 32946, 34887, 34925, 50000, 50001, 50002}


def _check_block_starts(stream, table) -> None:
    """ValueError where one of :data:`SAMPLED_BLOCKS` blocks of ``table``'s level, spread over its place in the
    file ``stream``, starts as no compressed block does: with zeros (a range zeroed, or never filled in by a
    crash or a download), or, in DEFLATE, without zlib's header (garbage)."""
    written = np.flatnonzero(~table.unwritten)
    if table.compression not in _NEVER_ZEROS or not written.size:  # (zeros may be pixels or a valid code there)
        return
    by_place = written[np.argsort(table.offsets[written], kind="stable")]
    for block in by_place[np.linspace(0, len(by_place) - 1, min(SAMPLED_BLOCKS, len(by_place))).astype(np.intp)]:
        stream.seek(int(table.offsets[block]))
        if not _sound_start(stream.read(min(16, int(table.byte_counts[block]))), table.compression):
            raise ValueError(f"blocks of its {table.width} x {table.height} level are zeroed or garbled")


def _sound_start(start: bytes, compression: int) -> bool:
    """Whether ``start``, a block's first bytes, can begin a block compressed with TIFF code ``compression``."""
    if compression in (8, 32946):  # zlib's header: DEFLATE, a window of at most 32 KiB, a multiple of 31
        return len(start) >= 2 and start[0] & 0x0F == 8 and start[0] >> 4 <= 7 and (start[0] * 256 + start[1]) % 31 == 0
    return any(start)


def overview_factors(width: int, height: int, smallest_px: int = SMALLEST_LEVEL_PX) -> list[int]:
    """The reductions ``[2, 4, 8, ...]`` of a ``width`` x ``height`` raster, down to ``smallest_px`` a side.

    The last factor is the first whose level's longest side is at most ``smallest_px``; empty when the
    raster is that small already.
    """
    for value, name in ((width, "width"), (height, "height"), (smallest_px, "smallest_px")):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive number of pixels; got {value!r}")
    factors, side = [], max(width, height)
    while -(-side // (factors[-1] if factors else 1)) > smallest_px:
        factors.append(2 * factors[-1] if factors else 2)
    return factors


def needs_overviews(raster) -> bool:
    """Whether ``raster`` (a :class:`core.io.raster.Raster`) is a large local GeoTIFF without overviews, or
    with damaged ones (the images :func:`build_overviews` can give them).

    Large: :data:`LARGE_SIDE_PX` on its longer side or :data:`LARGE_PIXELS`.  Arrays and GDAL's virtual
    paths (URLs) never need them here.  Damage is the raster's ``ovr_damage``, found when it was opened (the
    .ovr is not checked again: a few ms of header reads per level).
    """
    import rasterio

    large = max(raster.width, raster.height) > LARGE_SIDE_PX or raster.width * raster.height > LARGE_PIXELS
    if not large or raster.path is None or raster.path.startswith("/vsi"):
        return False
    with rasterio.open(raster.path) as ds:
        return ds.driver == "GTiff" and (not ds.overviews(1) or raster.ovr_damage is not None)


def build_overviews(path, cancel=None, report=None, smallest_px: int = SMALLEST_LEVEL_PX) -> list[int]:
    """Build the overviews of the image at ``path`` into ``path.ovr`` (none for a small image).

    Parameters
    ----------
    path : str or os.PathLike
        A local image that has no overviews yet, or a damaged ``.ovr`` (:func:`overview_damage`), which is
        replaced once the new one is complete.
    cancel : core.cancel.CancelToken, optional
        Looked at every :data:`core.io.overview_build.POLL_S` while GDAL builds: a cancel ends the build
        at once, leaves no ``.ovr`` and raises :class:`core.cancel.Cancelled`.
    report : callable, optional
        ``report(done, total, phase)`` with the levels built so far (0, 1, then all of them).
    smallest_px : int
        See :func:`overview_factors`.

    Returns
    -------
    list of int
        The factors built (average resampling; nearest for paletted images).

    Raises
    ------
    OverviewError
        The folder is not writable, the image has overviews already, or GDAL failed or died (nothing is left
        behind).
    """
    import rasterio
    from rasterio.enums import ColorInterp, Resampling

    path, ovr = Path(path), overview_path(path)
    flag_of(cancel)
    damaged = overview_damage(path) is not None
    _check_can_write(path, ovr, replacing=damaged)
    with rasterio.open(path, **({"OVERVIEW_LEVEL": "NONE"} if damaged else {})) as ds:
        factors = overview_factors(ds.width, ds.height, smallest_px)
        paletted = ds.colorinterp[0] == ColorInterp.palette
        if ds.overviews(1):
            raise OverviewError(f"{path.name} has overviews already ({ds.overviews(1)})")
        if ds.driver != "GTiff":  # other formats opened for update (ERDAS .img, VRT) would get them inside
            raise OverviewError(f"cannot build overviews of {path.name} here: only GeoTIFF images get them beside "
                                f"the image untouched ({ds.driver}: GDAL's 'gdaladdo -ro' builds an .ovr for it)")
    resampling = Resampling.nearest if paletted else Resampling.average
    report = report or (lambda done, total, phase: None)
    if factors:
        check(cancel)
        report(0, len(factors), f"building level 1:{factors[0]} from the image")
        _build_into_place(path, ovr, factors, resampling.name, cancel, report)
    report(len(factors), len(factors), "built")
    return factors


def _build_into_place(path: Path, ovr: Path, factors: list[int], resampling: str, cancel, report) -> None:
    """Build in the staging folder, then rename its ``.ovr`` to ``ovr`` (beside the image where it cannot)."""
    with staging(path) as link:
        built = overview_path(link) if link is not None else ovr
        if built == ovr:  # (GDAL would add to a damaged one)
            ovr.unlink(missing_ok=True)
        try:
            run_in_child(link or path, factors, resampling, cancel, report)
            if built != ovr:
                with open(built, "rb+") as stream:  # (on disk before the rename, so that a power cut leaves none)
                    os.fsync(stream.fileno())
                os.replace(built, ovr)
        except BaseException:
            if built == ovr:
                ovr.unlink(missing_ok=True)
            raise


def _check_can_write(path: Path, ovr: Path, replacing: bool) -> None:
    """OverviewError unless ``ovr`` can be created beside ``path`` (and does not exist yet, unless ``replacing``)."""
    folder = path.resolve().parent
    if not path.is_file():
        raise OverviewError(f"cannot build overviews of {path}: not a local file")
    if ovr.exists() and not replacing:
        raise OverviewError(f"{ovr.name} exists already beside {path.name}: remove it to build the overviews again")
    if not os.access(path, os.W_OK):  # (rasterio reaches GDAL's builder only through a dataset open for update)
        raise OverviewError(f"cannot build overviews of {path.name}: the image file is read-only")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OverviewError(f"cannot build overviews of {path.name}: its folder {folder} is not writable "
                            f"(they are written beside the image, as {ovr.name})")
