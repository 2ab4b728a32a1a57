"""The export dialog, driven as a user would: type a name, answer the question about replacing a file."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit, QMessageBox

from app import dialogs


def export_typing(qtbot, tmp_path, name: str, replace: bool):
    """Run ``ask_export_path``, type ``name`` and accept; answer a replace question with ``replace``.

    Returns (the path it gave, the questions asked).
    """
    questions = []

    def drive():
        widget = QApplication.activeModalWidget()
        if isinstance(widget, QMessageBox):
            questions.append(widget.text())
            widget.button(QMessageBox.StandardButton.Yes if replace else QMessageBox.StandardButton.No).click()
        elif isinstance(widget, QFileDialog):
            if questions and not replace:
                widget.reject()  # the user changed their mind
            else:
                widget.findChild(QLineEdit, "fileNameEdit").setText(name)  # typed in the suggestion's folder
                QTimer.singleShot(0, widget.accept)  # later: a question it asks must not block this timer

    timer = QTimer(interval=50, timeout=drive)
    timer.start()
    try:
        path = dialogs.ask_export_path(None, str(tmp_path / "suggested.geojson"))
    finally:
        timer.stop()
    return path, questions


def test_a_name_without_suffix_gets_geojson(qtbot, tmp_path):
    path, questions = export_typing(qtbot, tmp_path, "roads", replace=False)
    assert path == str(tmp_path / "roads.geojson") and questions == []


def test_the_dialog_asks_before_replacing_the_geojson_that_a_bare_name_stands_for(qtbot, tmp_path):
    (tmp_path / "roads.geojson").write_text("{}")
    path, questions = export_typing(qtbot, tmp_path, "roads", replace=False)
    assert len(questions) == 1 and "roads.geojson" in questions[0]
    assert path is None
    path, questions = export_typing(qtbot, tmp_path, "roads", replace=True)
    assert len(questions) == 1 and path == str(tmp_path / "roads.geojson")


def test_an_error_of_bad_input_is_logged_in_one_line_and_a_bug_with_its_traceback(shown_errors, caplog):
    import logging

    from app.errors import report_exception
    from core.io.raster import RasterError

    def raised(err):
        try:
            raise err
        except Exception as caught:
            return caught

    with caplog.at_level(logging.ERROR, logger="linesnap"):
        report_exception(None, "Could not open the image", raised(RasterError("image file x.tif does not exist")))
        report_exception(None, "Unexpected error", raised(RuntimeError("a bug")))
    user, bug = [record.getMessage() for record in caplog.records]
    assert user == "Could not open the image: image file x.tif does not exist"  # (a traceback followed it)
    assert bug.startswith("Unexpected error: a bug\n") and "Traceback" in bug
    assert len(shown_errors) == 2 and "Traceback" in shown_errors[0].details  # the dialog keeps the details


def test_the_keys_card_names_every_shortcut_of_the_menus(make_window):
    from app.dialogs import help_html

    window = make_window()
    card = help_html().replace("&amp;", "&")
    missing = set()
    for menu_action in window.menuBar().actions():
        stack = list(menu_action.menu().actions())
        while stack:
            action = stack.pop()
            if action.menu() is not None:
                stack += action.menu().actions()
            for key in action.shortcuts():
                text = key.toString()
                if text and text not in card and text not in ("Return", "Enter", "Del", "Backspace", "Esc", "F1"):
                    missing.add((action.text(), text))
    assert not missing  # (the card left out the arrows, Ctrl+Y, Ctrl+E, Ctrl+I, Ctrl+Shift+R/O, Ctrl+0/1)
