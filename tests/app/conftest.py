"""GUI test helpers: a main window in a temporary config folder, recorded dialogs, clicks by raster position."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPointF, Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app import dialogs, errors  # noqa: E402

WAIT_MS = 60_000  # the first extraction of a fresh checkout compiles numba kernels


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels():
    """The extraction's CPU kernels and the knapsack solvers in numba's cache before the first window and the
    knapsack panel's worker: on a fresh checkout the warm-up extraction of the first window, or the worker's
    first solve, would otherwise compile them within one test's wait (each over a minute on a busy 2-core
    machine); warm, this takes about three seconds."""
    from core import warmup

    warmup.compile_kernels()
    warmup.compile_knapsack_kernels()


@pytest.fixture(autouse=True)
def no_modifiers_left_held(qapp):
    """After each test, no keyboard modifier counts as held: Qt keeps the modifiers of the last input event
    (``QGuiApplication.keyboardModifiers``), so a test ending on a Shift-click left the next test's
    ``selectRow`` extending a selection instead of making one (in another order of files, as under -n 2)."""
    yield
    if QApplication.keyboardModifiers() != Qt.KeyboardModifier.NoModifier:
        from PySide6.QtTest import QTest
        from PySide6.QtWidgets import QWidget

        widget = QWidget()
        QTest.keyRelease(widget, Qt.Key.Key_Shift, Qt.KeyboardModifier.NoModifier)
        widget.deleteLater()
        assert QApplication.keyboardModifiers() == Qt.KeyboardModifier.NoModifier


@pytest.fixture
def shown_errors(monkeypatch):
    """Error dialogs are recorded here instead of being opened."""
    shown = []
    monkeypatch.setattr(errors, "show_error", lambda parent, report: shown.append(report))
    return shown


@pytest.fixture
def no_questions(monkeypatch):
    """Questions fail the test unless a test replaces them."""

    def unexpected(*args, **kwargs):
        raise AssertionError(f"unexpected dialog: {args[1:]}")

    for name in ("ask_open_image", "ask_import_path", "ask_export_path", "ask_unsaved", "ask_restore_session",
                 "ask_skip_duplicates", "ask_snap_tolerance", "ask_undo_limit"):
        monkeypatch.setattr(dialogs, name, unexpected)


@pytest.fixture
def make_window(qtbot, tmp_path, shown_errors, no_questions):
    """Factory of shown main windows (config in tmp_path); every worker is stopped at teardown."""
    from app.main_window import MainWindow

    windows = []

    def make(config_dir=None, **kwargs):
        window = MainWindow(config_dir=config_dir or tmp_path / "config", **kwargs)
        window.resize(1200, 800)
        window.show()
        windows.append(window)
        return window

    yield make
    for window in windows:
        window.tool.mark_saved()
        window.close()  # closeEvent stops the workers
        assert window.runner.wait(0), "an extraction worker outlived the window"
        assert window.loader is None or window.loader.wait(0), "a tile worker outlived the window"
        window.deleteLater()


def wait_idle(qtbot, window, timeout=WAIT_MS):
    """Until the tiles, the stretch and every extraction (the warm-up too) are done."""
    qtbot.waitUntil(lambda: window.loader is not None and window.loader.pending() == 0
                    and window.viewer._stretch is not None and not window.runner.busy, timeout=timeout)


def wait_pieces(qtbot, window, timeout=WAIT_MS):
    """Until no piece of the feature in progress or of the features is still being computed."""
    def done():
        features = list(window.tool.features) + ([window.tool.current] if window.tool.current else [])
        return not any(window.tool.is_pending(p) for f in features for p in f.pieces)

    qtbot.waitUntil(done, timeout=timeout)


def click_image(qtbot, window, x, y, modifier=Qt.KeyboardModifier.NoModifier):
    """Left-click the viewer where raster point (x, y) is shown; returns the raster point clicked."""
    viewer = window.viewer
    position = viewer.image_to_view(x, y).toPoint()
    assert viewer.rect().contains(position), f"({x}, {y}) is not in view"
    qtbot.mouseClick(viewer, Qt.MouseButton.LeftButton, modifier, position)
    return viewer.view_to_image(QPointF(position))


def move_to_image(qtbot, window, x, y):
    """Move the cursor over raster point (x, y); returns the raster point under it."""
    viewer = window.viewer
    position = viewer.image_to_view(x, y).toPoint()
    qtbot.mouseMove(viewer, position)
    return viewer.view_to_image(QPointF(position))


def process_events_for(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        QApplication.processEvents()
        time.sleep(0.005)


def config_with(tmp_path, key: str, value):
    """A config folder under ``tmp_path`` whose linesnap.ini holds ``key = value`` (``make_window(config_dir=)``)."""
    from PySide6.QtCore import QSettings

    config = tmp_path / "config"
    config.mkdir()
    ini = QSettings(str(config / "linesnap.ini"), QSettings.Format.IniFormat)
    ini.setValue(key, value)
    ini.sync()
    return config
