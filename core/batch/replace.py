"""Files written beside their target and moved into place: a failed or interrupted write leaves the old file.

:func:`core.batch.layers.write_line_layer` writes into a hidden temporary
folder beside the target, checks what GDAL wrote, and renames it into place;
this module holds those steps (and the check, before long work, that the
folder can be written).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import tempfile
import time
from pathlib import Path

from core.io.atomic import STALE_TEMPORARY_S

#: A Shapefile's side files that say how to read it (CRS, encoding, spatial indices): an earlier file's are
#: removed when a new one without them replaces it (its .prj made a layer without a CRS read as EPSG:4326).
SHAPEFILE_SIDE_FILES = (".prj", ".cpg", ".qix", ".sbn", ".sbx", ".qpj")

__all__ = ["SHAPEFILE_SIDE_FILES", "check_writable", "check_written", "copy_file", "first_line", "is_sqlite",
           "move_into_place", "remove_stale_folders", "temporary_folder", "unwritable"]


def check_writable(path) -> None:
    """Check that ``path`` can be written (a file made and removed in its folder), before long work.

    Raises
    ------
    OSError
        The error :func:`write_line_layer` would raise after the work, naming ``path``.
    """
    path = Path(path)
    try:
        handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as err:
        raise OSError(unwritable(path, err)) from err
    os.close(handle)
    os.unlink(name)


def temporary_folder(path: Path) -> Path:
    try:
        return Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    except OSError as err:  # its message would name the hidden temporary folder
        raise OSError(unwritable(path, err)) from err


def unwritable(path: Path, err: OSError) -> str:
    folder = os.path.abspath(path.parent)
    if not os.path.isdir(folder):
        return f"cannot write {path}: folder {folder} does not exist"
    return f"cannot write {path}: folder {folder} cannot be written ({err.strerror or first_line(err)})"


def is_sqlite(path: Path) -> bool:
    """Whether ``path`` is an SQLite file (a GeoPackage to keep; anything else is replaced whole)."""
    try:
        with open(path, "rb") as file:
            return file.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def copy_file(path: Path, temporary: Path) -> None:
    try:
        shutil.copyfile(path, temporary)
    except OSError as err:  # a full disk: name the user's file, not the temporary copy
        raise OSError(f"cannot write {path}: {err.strerror or first_line(err)}") from err


def move_into_place(folder: Path, written: Path, path: Path) -> None:
    """Rename the files GDAL wrote (a Shapefile is several) beside ``path``.

    The main one becomes ``path`` as given (GDAL writes ``X.SHP`` as ``X.shp``),
    the others ``path``'s stem with their extension, upper-case when ``path``'s is.
    """
    upper = path.suffix.isupper()
    produced_suffixes = {p.suffix.lower() for p in folder.iterdir()}
    if path.suffix.lower() == ".shp":  # an old one's side files the new one lacks would be read with it
        for suffix in set(SHAPEFILE_SIDE_FILES) - produced_suffixes:
            for old in (path.with_suffix(suffix), path.with_suffix(suffix.upper())):
                with contextlib.suppress(FileNotFoundError):
                    old.unlink()
    for produced in sorted(folder.iterdir()):
        name = path.name if produced == written else path.stem + (produced.suffix.upper() if upper else produced.suffix)
        os.replace(produced, path.parent / name)


def remove_stale_folders(path: Path) -> None:
    """Remove the ``.NAME.XXXXXXXX`` folders that an interrupted write of ``path`` (kill -9) left beside it.

    Only the files of that write (``path``'s name with any extension: a
    Shapefile is several) are removed, then the folder if nothing else is in it.
    """
    now = time.time()
    with contextlib.suppress(OSError):
        for folder in path.parent.glob(f".{glob.escape(path.name)}.*"):
            with contextlib.suppress(OSError):
                if folder.is_symlink() or not folder.is_dir():
                    continue
                touched = max([folder.stat().st_mtime] + [left.stat().st_mtime for left in folder.iterdir()])
                if now - touched <= STALE_TEMPORARY_S:  # another writer's, still being written
                    continue
                for left in folder.iterdir():
                    if left.stem == path.stem and left.is_file() and not left.is_symlink():
                        left.unlink()
                folder.rmdir()


def check_written(temporary: Path, count: int, path: Path, layer: str | None = None) -> None:
    """OSError naming ``path`` unless ``temporary`` (its ``layer``) reads back with ``count`` features.

    GDAL drops the write errors that come when it closes a file: a small layer
    is buffered until then, so on a full disk a Shapefile or FlatGeobuf was left
    empty and reported written (and then replaced a good ``path``).
    """
    import pyogrio

    try:
        found = pyogrio.read_info(str(temporary), layer=layer, force_feature_count=True)["features"]
    except Exception:  # as in write_line_layer; GDAL's words would name the hidden temporary file
        found, reason = None, "it does not open again"
    else:
        reason = f"{found} of its {count} features read back"
    if found != count:
        if _free_bytes(path.parent) == 0:
            reason = "no space left on the device"
        raise OSError(f"cannot write {path}: the file GDAL wrote is incomplete ({reason})")


def _free_bytes(folder: Path) -> int | None:
    try:
        stats = os.statvfs(folder)
    except (OSError, AttributeError):  # AttributeError: no statvfs on Windows
        return None
    return stats.f_bavail * stats.f_frsize


def first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__
