"""Errors at the GUI edge: one decorator for slots and one way to show a dialog.

Core raises; the window shows a dialog with the message and, under "Show
Details...", the traceback.  Tests replace :func:`show_error` (looked up at
call time).  Qt is imported inside it only, for the Qt-free knapsack worker.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import traceback
from dataclasses import dataclass

__all__ = ["ErrorReport", "report_from_exception", "show_error", "reports_errors", "report_exception"]

log = logging.getLogger("linesnap")


@dataclass(frozen=True)
class ErrorReport:
    """What the user sees of an error.

    ``title`` says what was being done; ``message`` is the error's own,
    ``details`` its traceback and ``kind`` its class name.
    """

    title: str
    message: str
    details: str = ""
    kind: str = ""


def report_from_exception(title: str, err: BaseException, details: str | None = None) -> ErrorReport:
    """An :class:`ErrorReport` of ``err`` (``details`` defaults to its traceback)."""
    if details is None:
        details = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    message = str(err) or type(err).__name__
    return ErrorReport(title, message, details, type(err).__name__)


def show_error(parent, report: ErrorReport) -> None:
    """Show ``report`` in a window-modal message box that does not block the event loop."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QMessageBox

    # The title bar is not shown everywhere (macOS sheets, bare X servers): the title leads the text too.
    box = QMessageBox(QMessageBox.Icon.Critical, report.title, f"{report.title}.", QMessageBox.StandardButton.Ok,
                      parent)
    box.setInformativeText(report.message)  # (the error's class, a programmer's word, is in the details' last line)
    details = report.details if report.kind in report.details else f"{report.kind}\n\n{report.details}".strip()
    if details:
        box.setDetailedText(details)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()


def report_exception(parent, title: str, err: BaseException, details: str | None = None,
                     note: str = "") -> ErrorReport:
    """Log ``err`` and show it as a dialog (``note``: a line for the user after its message); returns the report."""
    report = report_from_exception(title, err, details)
    if note:
        report = dataclasses.replace(report, message=f"{report.message}\n\n{note}")
    if isinstance(err, (ValueError, OSError)):  # bad input, a missing file: the message says it (the details,
        log.error("%s: %s", title, report.message)  # a traceback, stay in the dialog and the debug log)
        log.debug("%s", report.details)
    else:
        log.error("%s: %s\n%s", title, report.message, report.details)
    show_error(parent, report)
    return report


def reports_errors(title: str):
    """Decorate a slot so that any exception becomes a dialog titled ``title``.

    The dialog's parent is ``self.parent_widget`` where there is one, else ``self``.
    """

    def decorate(method):
        @functools.wraps(method)
        def slot(self, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except Exception as err:  # the GUI edge: every error becomes a dialog
                report_exception(getattr(self, "parent_widget", self), title, err)
                return None

        return slot

    return decorate
