"""A start-up check for the system libraries of Qt's X11 (xcb) platform plugin on Linux.

Without them Qt aborts with "Could not load the Qt platform plugin xcb" and
names one library (often ``libxcb-cursor0``) even when others are missing.
:func:`missing_xcb_libraries` tries to load each one, so the message can name
every package to install (README, "System packages").
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Callable

__all__ = ["XCB_LIBRARIES", "SystemLibraryError", "check_system_libraries", "missing_xcb_libraries",
           "uses_xcb"]

#: The shared libraries that Qt 6's xcb plugin loads (ldd of libqxcb.so and libQt6XcbQpa.so, less
#: what every desktop has), with the Debian/Ubuntu package of each.
XCB_LIBRARIES = {
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libEGL.so.1": "libegl1",
    "libfontconfig.so.1": "libfontconfig1",
    "libdbus-1.so.3": "libdbus-1-3",
}


class SystemLibraryError(RuntimeError):
    """A system library that the window needs is missing."""


def _loads(soname: str) -> bool:
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def uses_xcb(platform: str = sys.platform, environ=os.environ) -> bool:
    """Whether Qt will use its xcb plugin: Linux, and QT_QPA_PLATFORM unset (outside Wayland) or ``xcb``."""
    if not platform.startswith("linux"):
        return False
    chosen = environ.get("QT_QPA_PLATFORM", "").split(":")[0].strip().lower()
    if chosen:
        return chosen == "xcb" or chosen.startswith("xcb;")
    return not environ.get("WAYLAND_DISPLAY")


def missing_xcb_libraries(loads: Callable[[str], bool] = _loads) -> list[str]:
    """The sonames of :data:`XCB_LIBRARIES` that cannot be loaded, in table order."""
    return [soname for soname in XCB_LIBRARIES if not loads(soname)]


def check_system_libraries(loads: Callable[[str], bool] = _loads, platform: str = sys.platform,
                           environ=os.environ) -> None:
    """Raise :class:`SystemLibraryError` naming every missing package, before Qt would abort."""
    if not uses_xcb(platform, environ):
        return
    missing = missing_xcb_libraries(loads)
    if missing:
        packages = " ".join(XCB_LIBRARIES[soname] for soname in missing)
        raise SystemLibraryError(
            f"the window needs system libraries that are missing ({', '.join(missing)}); "
            f"on Debian or Ubuntu: sudo apt install {packages} (README, 'System packages', lists other systems)")
