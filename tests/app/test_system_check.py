"""The start-up check of Qt's xcb libraries names every missing package (issue 13)."""

from __future__ import annotations

import pytest

from app.system_check import XCB_LIBRARIES, SystemLibraryError, check_system_libraries, uses_xcb


def test_every_missing_library_is_named_with_its_package():
    missing = {"libxcb-icccm.so.4", "libxcb-keysyms.so.1"}
    with pytest.raises(SystemLibraryError) as caught:
        check_system_libraries(loads=lambda soname: soname not in missing, platform="linux", environ={})
    message = str(caught.value)
    assert "sudo apt install libxcb-icccm4 libxcb-keysyms1 " in message
    assert "libxcb-cursor0" not in message  # Qt itself blamed this one


def test_nothing_is_reported_when_everything_loads_or_xcb_is_not_used():
    check_system_libraries(loads=lambda soname: True, platform="linux", environ={})
    never = lambda soname: False  # noqa: E731
    check_system_libraries(loads=never, platform="linux", environ={"QT_QPA_PLATFORM": "offscreen"})
    check_system_libraries(loads=never, platform="darwin", environ={})
    assert uses_xcb("linux", {"QT_QPA_PLATFORM": "xcb"}) and not uses_xcb("linux", {"WAYLAND_DISPLAY": "wayland-0"})


def test_the_libraries_this_qt_loads_are_all_present_here():
    # the test machine runs the window under Xvfb: its xcb plugin loads, so no listed library may be missing
    from app.system_check import missing_xcb_libraries

    assert missing_xcb_libraries() == []
    assert len(XCB_LIBRARIES) == len(set(XCB_LIBRARIES.values()))
