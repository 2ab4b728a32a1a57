"""Spin boxes and combo boxes of a scrolled panel take the mouse wheel only once clicked.

Qt lets the wheel change a spin box or a combo box under the pointer even
without the focus.  In the Settings dock, which scrolls on a 1280 x 800
screen, scrolling down to the Display panel then turned Max turn from 10° to
0.1° on the way (and re-ran the current piece with it).  A guarded widget that
has no focus passes the wheel on to the scroll area around it.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QAbstractSpinBox, QComboBox, QWidget

__all__ = ["guard_wheel"]


class _WheelNeedsFocus(QObject):
    def eventFilter(self, watched, event) -> bool:
        if event.type() != QEvent.Type.Wheel or watched.hasFocus():
            return False
        area = watched.parentWidget()
        while area is not None and not isinstance(area, QAbstractScrollArea):
            area = area.parentWidget()
        if area is not None:
            # explicitly: Qt passes an ignored wheel event on to the parents only when it came from the device
            QCoreApplication.sendEvent(area.viewport(), event)
        else:
            event.ignore()
        return True


def guard_wheel(panel: QWidget) -> None:
    """Guard every spin box and combo box inside ``panel`` (call once its widgets exist)."""
    guard = _WheelNeedsFocus(panel)
    for widget in panel.findChildren(QAbstractSpinBox) + panel.findChildren(QComboBox):
        widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # not WheelFocus: the wheel does not give focus
        widget.installEventFilter(guard)
