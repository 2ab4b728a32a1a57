"""``linesnap [IMAGE] [--screenshot OUT.png]``: the desktop application.

Without IMAGE the window opens on the bundled sample scene.  With
``--screenshot`` it opens the window, runs one extraction (the sample's demo
clicks from its truth file, or a horizontal span across the middle of another
image), draws it with its guides, saves a picture of the window and exits.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QApplication

from app.errors import report_exception
from app.main_window import COMPILING_TEXT, MainWindow
from app.model.document import sample_demo
from app.qt_compat import QtBindingError, check_qt_binding
from app.system_check import SystemLibraryError, check_system_libraries
from core import warmup

__all__ = ["run_gui", "parse_args", "ScreenshotDriver", "demo_clicks", "install_excepthook"]

SCREENSHOT_TIMEOUT_S = 120.0
log = logging.getLogger("linesnap")


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The window's command line (``linesnap [IMAGE] [--screenshot OUT.png]``)."""
    parser = argparse.ArgumentParser(prog="linesnap", description="Digitize lines on imagery (desktop window).")
    parser.add_argument("image", nargs="?", help="image to open (default: the bundled sample scene)")
    parser.add_argument("--screenshot", metavar="OUT.png",
                        help="run one extraction, save a picture of the window to OUT.png and exit")
    return parser.parse_args(argv)


def demo_clicks(document, sample: bool) -> tuple[tuple, tuple, dict]:
    """(start, end, settings overrides) for the screenshot's extraction."""
    demo = sample_demo() if sample else None
    if demo:
        return tuple(demo["start"]), tuple(demo["end"]), dict(demo.get("settings", {}))
    w, h = document.width, document.height
    span = min(0.3 * w, 300.0)
    return (w / 2 - span / 2, h / 2), (w / 2 + span / 2, h / 2), {}


class ScreenshotDriver(QObject):
    """Drives a shown window through one extraction, then saves a screenshot and quits.

    Each step waits (polling the event loop) for the previous one's work: the
    tiles and stretch, the extraction, the tiles at the final zoom.
    """

    def __init__(self, window, out_path: str, sample: bool):
        super().__init__(window)
        self.window, self.out_path, self.sample = window, out_path, sample
        self.exit_code = 1
        self._deadline = time.monotonic() + SCREENSHOT_TIMEOUT_S
        self._step = self._wait_tiles_then_extract
        self._timer = QTimer(self, interval=50, timeout=self._tick)

    def start(self) -> None:
        self._timer.start()

    def _tick(self) -> None:
        if time.monotonic() > self._deadline:
            print(f"linesnap: error: screenshot timed out after {SCREENSHOT_TIMEOUT_S:.0f} s", file=sys.stderr)
            self._finish(1)
            return
        self._step()

    def _idle(self) -> bool:
        w = self.window
        return w.loader is not None and w.loader.pending() == 0 and w.viewer._stretch is not None

    def _wait_tiles_then_extract(self) -> None:
        if not self._idle():
            return
        w = self.window
        start, end, overrides = demo_clicks(w.document, self.sample)
        if overrides:
            w.settings_panel.show_settings(w.settings_panel.settings.replace(**overrides), announce=True)
        w.display_panel.guides.setChecked(True)
        w.tool.click(start)
        w.tool.click(end)
        self._step = self._wait_extraction

    def _wait_extraction(self) -> None:
        w = self.window
        if w.runner.busy or any(w.tool.is_pending(p) for p in w.tool.current.pieces):
            return
        w.tool.finish()
        vertices = w.tool.feature_vertices(w.tool.features[-1])
        (x0, y0), (x1, y1) = vertices.min(axis=0), vertices.max(axis=0)
        pad = 0.6 * max(x1 - x0, y1 - y0)
        w.viewer.zoom_to_rect((x0 - pad, y0 - pad, x1 + pad, y1 + pad))
        self._middle = vertices[len(vertices) // 2]
        self._step = self._wait_final_tiles

    def _wait_final_tiles(self) -> None:
        self.window.viewer.repaint()
        if not self._idle():
            return
        x, y = (float(v) for v in self._middle)
        self.window.viewer.hovered.emit(x, y, False)  # the position read-outs of a point on the line
        self._step = self._grab  # on the next tick, once the status bar has laid its labels out

    def _grab(self) -> None:
        self.window.repaint()
        ok = self.window.grab().save(self.out_path)
        if not ok:
            print(f"linesnap: error: cannot write the screenshot to {self.out_path}", file=sys.stderr)
        self._finish(0 if ok else 1)

    def _finish(self, code: int) -> None:
        self._timer.stop()
        self.exit_code = code
        self.window.tool.mark_saved()
        self.window.close()
        QApplication.instance().exit(code)


def install_excepthook(window) -> None:
    """Unexpected errors in any slot or event handler become dialogs instead of tracebacks on a console.

    (PySide6 hands exceptions raised in Python code called from Qt to
    ``sys.excepthook``; the application goes on either way.)
    """

    def hook(kind, value, traceback):
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, value, traceback)
            return
        report_exception(window, "Unexpected error", value.with_traceback(traceback))

    sys.excepthook = hook


def run_gui(argv: list[str] | None = None) -> int:
    """Run the window; returns the exit status."""
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    logging.basicConfig(level=logging.INFO, format="linesnap: %(message)s")
    try:
        check_system_libraries()
        check_qt_binding()
    except (SystemLibraryError, QtBindingError) as exc:
        print(f"linesnap: error: {exc}", file=sys.stderr)
        return 1
    compiler = warmup.start_in_background()  # first start after an install: a second core compiles too
    app = QApplication.instance() or QApplication(["linesnap"])
    app.setApplicationName("LineSnap")
    app.setOrganizationName("LineSnap")
    if args.screenshot:
        config = tempfile.TemporaryDirectory(prefix="linesnap-screenshot-")
        window = MainWindow(config_dir=config.name)
        window.resize(1600, 1000)
    else:
        window = MainWindow()
    window.show()
    install_excepthook(window)
    restored = not args.screenshot and window.restore_session_if_any()
    if not restored and not window.open_image(args.image) and args.screenshot:
        return 1
    if compiler is not None and window.runner.busy:
        window.status.run_label.setText(COMPILING_TEXT)  # until the warm-up extraction is done
    if args.screenshot:
        driver = ScreenshotDriver(window, args.screenshot, sample=args.image is None)
        driver.start()
        app.exec()
        return driver.exit_code
    return app.exec()
