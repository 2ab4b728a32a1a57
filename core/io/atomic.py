"""Atomic file writes: a temporary file beside the target, fsync, rename; leftovers of killed writes removed."""

from __future__ import annotations

import contextlib
import errno
import glob
import os
import stat
import tempfile
import time
from pathlib import Path

__all__ = ["STALE_TEMPORARY_S", "atomic_write_text"]

#: Hidden temporary files of an interrupted write (kill -9) older than this are removed by the next write.
STALE_TEMPORARY_S = 60.0


def atomic_write_text(path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file and a rename.

    A failure leaves an existing ``path`` as it was and no temporary file; a
    replaced file keeps its permission bits.  OSError names ``path``.
    """
    path = Path(path)
    if path.is_dir():  # os.replace would fail only after the write, naming the temporary file
        raise IsADirectoryError(errno.EISDIR, "is a folder; give a file name", str(path))
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o644
    _remove_stale_temporaries(path)
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as err:  # name the user's file, not the hidden temporary one
        raise OSError(err.errno, err.strerror, str(path)) from err
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException as err:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        if isinstance(err, OSError) and not isinstance(err, FileNotFoundError):  # disk full: name the file
            raise OSError(err.errno, err.strerror or str(err), str(path)) from err
        raise


def _remove_stale_temporaries(path: Path) -> None:
    """Remove ``.NAME.*.tmp`` files that an interrupted write of ``path`` (kill -9) left beside it."""
    now = time.time()
    with contextlib.suppress(OSError):
        for leftover in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
            with contextlib.suppress(OSError):
                if now - leftover.lstat().st_mtime > STALE_TEMPORARY_S and leftover.is_file():
                    leftover.unlink()
