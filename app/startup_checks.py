"""What the window reads from disk at start-up, checked so that nothing there can stop it from opening.

Damaged values of the settings file (the extraction settings, the list of
recent images) are set aside: the whole file is copied beside itself as
``linesnap.ini.damaged-<time>``, the value is removed, and a one-line notice
says so.  Damaged autosaves are handled by :class:`app.session.SessionStore`.
"""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path

__all__ = ["MAX_PATH_CHARS", "clean_recent_paths", "set_aside_value"]

#: Longer entries of the recent-files list are damaged (no file system allows them).
MAX_PATH_CHARS = 4096
log = logging.getLogger("linesnap")


def set_aside_value(qsettings, key: str, reason: str) -> str:
    """Copy the settings file aside, remove ``key`` from it, and return the notice for the user."""
    source = Path(qsettings.fileName())
    target = source.with_name(f"{source.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        shutil.copyfile(source, target)
        kept = f"the file was copied to {target}"
    except OSError as err:
        kept = f"the file could not be copied ({err.strerror or err})"
    qsettings.remove(key)
    qsettings.sync()
    notice = f"The stored '{key}' in {source} could not be used ({reason[:200]}); it was reset and {kept}."
    log.warning("%s", notice)
    return notice


def clean_recent_paths(value, limit: int) -> tuple[list[str], bool]:
    """The usable entries of a stored recent-files value (at most ``limit``), and whether any were dropped.

    QSettings gives a str for one entry, a list for several, and anything at
    all for a damaged file.
    """
    entries = [value] if isinstance(value, str) else value if isinstance(value, (list, tuple)) else None
    if entries is None:
        return [], value is not None
    paths = [p for p in entries if isinstance(p, str) and p.strip() and len(p) <= MAX_PATH_CHARS and "\0" not in p]
    paths = list(dict.fromkeys(paths))[:limit]
    return paths, len(paths) != len(entries)
