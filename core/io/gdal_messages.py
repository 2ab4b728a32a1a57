"""GDAL's warnings and errors through LineSnap's own reporting, never raw on stderr.

GDAL prints ``Warning 1: TIFFReadDirectory: ...`` on stderr from any call made
outside a rasterio environment, and rasterio logs what it catches inside one.
Every GDAL call of core.io runs in :func:`gdal_messages`: an environment whose
messages are collected for the caller (RasterError quotes them) and otherwise
go to the ``linesnap.gdal`` logger at debug level.
"""

from __future__ import annotations

import contextlib
import logging
import threading

__all__ = ["gdal_messages", "quoted"]

#: rasterio's loggers that carry GDAL's messages (CPLE_* warnings, "GDAL signalled an error").
_GDAL_LOGGERS = ("rasterio._env", "rasterio._err", "rasterio._io", "rasterio._base")
#: At most this many characters of GDAL's messages are quoted in one error.
_QUOTE_CHARS = 300

_local = threading.local()
_installed = threading.Lock()
_state = {"installed": False}
log = logging.getLogger("linesnap.gdal")


class _Collector(logging.Handler):
    """Hands each GDAL message to the innermost :func:`gdal_messages` of this thread, else logs it (debug)."""

    def emit(self, record: logging.LogRecord) -> None:
        message = _gdal_text(record)
        stack = getattr(_local, "stack", None)
        if stack and message and record.levelno >= logging.INFO:
            stack[-1].append(message)
        log.debug("%s", record.getMessage())


def _gdal_text(record: logging.LogRecord) -> str | None:
    """The GDAL message of a rasterio log record, or None for rasterio's own chatter."""
    text = record.getMessage()
    if record.name == "rasterio._env" and record.levelno >= logging.WARNING:
        return text.split(": ", 1)[1] if text.startswith("CPLE_") and ": " in text else text
    if "GDAL signalled an error" in text and "msg=" in text:
        return text.split("msg=", 1)[1].strip("'\"")
    return None


def _install() -> None:
    with _installed:
        if _state["installed"]:
            return
        handler = _Collector(level=logging.DEBUG)
        for name in _GDAL_LOGGERS:
            logger = logging.getLogger(name)
            logger.addHandler(handler)
            logger.propagate = False  # never to the root logger's stderr
        _state["installed"] = True


@contextlib.contextmanager
def gdal_messages():
    """Run GDAL calls inside rasterio's error handler; yields the list of GDAL's messages (strings).

    Nested uses are fine; each collects what happens inside it.
    """
    import rasterio

    _install()
    stack = _local.__dict__.setdefault("stack", [])
    messages: list[str] = []
    stack.append(messages)
    try:
        with rasterio.Env():
            yield messages
    finally:
        stack.pop()
        if stack:
            stack[-1].extend(messages)


def quoted(messages, label: str = "GDAL", already=()) -> str:
    """``"; GDAL: first; second"`` (deduplicated, shortened to one line), or ``""`` when there are none.

    ``label`` names when GDAL said them; messages also in ``already`` (quoted before) are left out.
    """
    seen = {" ".join(m.split()) for m in already if m}
    unique = [m for m in dict.fromkeys(" ".join(m.split()) for m in messages if m) if m not in seen]
    if not unique:
        return ""
    text = "; ".join(unique)
    return f"; {label}: {text if len(text) <= _QUOTE_CHARS else text[:_QUOTE_CHARS - 3] + '...'}"
