"""The Features dock following the usual edits with many features (offscreen Qt, no BENCHMARKS.md section).

    python -m tests.benchmarks.bench_features_dock [--counts 10000 100000] [--repeat 9] [--check] [--only field]

A tool with ``n`` short imported lines (one attribute field) and the Features
dock (:class:`app.docks.features.FeaturesPanel`) shown over it, a row near
the top selected; in the drawing order and sorted by name.  Each edit is a
tool call: finishing a new line, deleting one in the middle, undoing that,
redoing it, renaming one in the middle; adding a field, renaming it and
removing it (``set_fields``).  Per edit (median of ``repeat``):

- dock: from the tool's ``changed`` event reaching the dock to the dock's
  model, sort proxy and selection in step with the tool (the callbacks are
  timed around the dock's own);
- edit: the whole tool call, the dock's share included;
- view: the events processed after it (the table's layout and repaint).

Also checks after each edit that the rows shown are the tool's features and
that the selected row is still selected.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402

from tests.benchmarks.report import machine_description, markdown_table  # noqa: E402

EDITS = ("finish a new line", "delete one in the middle", "undo the delete", "redo the delete",
         "rename one in the middle", "add a field", "rename the field", "remove the field")
#: The tool's events the dock follows (timed from the first callback to the last).
EVENTS = ("changed", "selection_changed", "outcomes_changed", "fields_changed")


def short_lines(n: int, extent: float = 1500.0, seed: int = 0) -> list[tuple]:
    """``n`` imported ``(name, vertices, properties)`` lines of 5 links of ~5 px."""
    rng = np.random.default_rng(seed)
    return [("", np.cumsum(rng.normal(0, 5, (6, 2)), axis=0) + rng.uniform(0, extent, 2), {}) for _ in range(n)]


class DockClock:
    """Times the dock's callbacks on the tool's events: stamps connected before and after the dock's own."""

    def __init__(self, tool):
        self.tool, self.spent_s, self._start = tool, 0.0, None
        for event in EVENTS:
            getattr(tool, event).connect(self._before)

    def after_dock(self) -> None:
        """Connect the closing stamps (call once the dock is built: its callbacks lie between)."""
        for event in EVENTS:
            getattr(self.tool, event).connect(self._after)

    def _before(self, *_args) -> None:
        self._start = time.perf_counter()

    def _after(self, *_args) -> None:
        self.spent_s += time.perf_counter() - self._start


def build(app, n: int, sorted_by_name: bool):
    from PySide6.QtCore import Qt

    from app.docks.features import FeaturesPanel
    from app.model.attributes import FieldDef
    from app.model.tool import ExtractionTool

    tool = ExtractionTool(settings=None)
    tool.set_fields((FieldDef("kind"),))
    clock = DockClock(tool)
    panel = FeaturesPanel(tool)
    clock.after_dock()
    panel.resize(420, 700)
    panel.show()
    tool.add_features(short_lines(n))
    if sorted_by_name:
        panel.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
    panel.table.selectRow(5)
    settle(app)
    return tool, panel, clock


def settle(app) -> float:
    """Seconds spent processing the events posted so far (twice: what the first posts)."""
    start = time.perf_counter()
    app.processEvents()
    app.processEvents()
    return time.perf_counter() - start


def shown_ids(panel) -> list:
    from app.docks.features_model import ID_ROLE

    proxy = panel.proxy
    return [proxy.index(row, 0).data(ID_ROLE) for row in range(proxy.rowCount())]


def edits(tool, k: int) -> list[tuple]:
    """The edits of round ``k`` as (label, untimed preparation, timed call); a round keeps the feature count."""
    def draw():
        tool.click((100.0 + k, 100.0))
        tool.click((160.0 + k, 130.0), straight=True)

    def middle(offset: int = 0) -> int:
        return tool.features[len(tool.features) // 2 + offset].id

    def fields(*names: str) -> tuple:
        from app.model.attributes import FieldDef

        return tuple(FieldDef(name) for name in names)

    return [(EDITS[0], draw, tool.finish), (EDITS[1], None, lambda: tool.delete(middle())),
            (EDITS[2], None, tool.undo), (EDITS[3], None, tool.redo),
            (EDITS[4], None, lambda: tool.rename(middle(1), f"renamed {k}")),
            (EDITS[5], None, lambda: tool.set_fields(fields("kind", "lanes"))),
            (EDITS[6], None, lambda: tool.set_fields(fields("kind", "width"))),
            (EDITS[7], None, lambda: tool.set_fields(fields("kind")))]


def timings(app, n: int, repeat: int, sorted_by_name: bool, check: bool, only: str = "") -> list[list]:
    tool, panel, clock = build(app, n, sorted_by_name)
    selected = tool.selected_id
    times = {label: ([], [], []) for label in EDITS if only in label}
    for k in range(repeat):
        for label, prepare, call in edits(tool, k):
            if label not in times:
                continue
            if prepare is not None:
                prepare()
                settle(app)
            clock.spent_s = 0.0
            start = time.perf_counter()
            call()
            edit_s = time.perf_counter() - start
            view_s = settle(app)
            for column, seconds in zip(times[label], (clock.spent_s, edit_s, view_s)):
                column.append(seconds * 1e3)
            if check:
                shown = shown_ids(panel)
                assert sorted(shown) == sorted(f.id for f in tool.features), label
                assert sorted_by_name or shown == [f.id for f in tool.features], label
                assert panel.selected_id() == selected == tool.selected_id, label
    order = "sorted by name" if sorted_by_name else "drawing order"
    panel.close()
    return [[f"{n:,}", order, label] + [f"{statistics.median(c):.2f}" for c in columns]
            + [f"{max(columns[0]):.2f}"] for label, columns in times.items()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--check", action="store_true", help="check the rows and the selection after each edit")
    parser.add_argument("--only", default="", help="only the edits whose label holds this text (field: the fields')")
    args = parser.parse_args(argv)
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    rows = []
    for n in args.counts:
        for sorted_by_name in (False, True):
            rows.append(timings(app, n, args.repeat, sorted_by_name, args.check, args.only))
            print("\n".join(" | ".join(r) for r in rows[-1]), file=sys.stderr, flush=True)
    print(machine_description())
    print(markdown_table(["features", "order", "edit", "dock median (ms)", "edit median (ms)", "view median (ms)",
                          "dock worst (ms)"], [r for block in rows for r in block]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
