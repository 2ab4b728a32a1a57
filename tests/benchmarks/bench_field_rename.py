"""Renaming and retyping an attribute field with its values at many lines (offscreen Qt, no BENCHMARKS.md section).

    python -m tests.benchmarks.bench_field_rename [--counts 10000 100000] [--repeat 5]

A tool with ``n`` short imported lines, each with a value in the field
renamed (``kind``: a few distinct values, or one of its own per line) and in a
text field ``lanes``, the Features dock shown over it sorted by ``kind`` and
the map's spatial index (:class:`app.model.feature_index.FeatureIndex`)
following it.  Per change (median of ``repeat``):

- values: :func:`app.model.field_edits.fields_changed` alone (the new lines);
- edit: the whole ``set_fields`` call (the undo step, the tool's walks, the
  dock following the columns) or ``undo`` / ``redo``;
- index: the spatial index catching up (the map's share);
- view: the events processed after it (the table's layout and repaint).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import replace

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from tests.benchmarks.bench_features_dock import settle, short_lines  # noqa: E402
from tests.benchmarks.report import machine_description, markdown_table  # noqa: E402

CHANGES = ("rename kind -> road_class", "undo the rename", "redo the rename", "retype lanes text -> integer",
           "undo the retype")


def build(app, n: int, distinct: bool):
    from app.docks.features import FeaturesPanel
    from app.docks.features_model import HEADERS
    from app.model.attributes import FieldDef
    from app.model.feature_index import FeatureIndex
    from app.model.tool import ExtractionTool

    tool = ExtractionTool(settings=None)
    tool.add_features(short_lines(n))
    state = tool.state
    features = tuple(replace(f, attributes=(("kind", f"k{k if distinct else k % 7}"), ("lanes", str(k % 4))))
                     for k, f in enumerate(state.features))
    tool.restore(replace(state, features=features), dict(tool.outcomes))
    tool.restore_fields((FieldDef("kind"), FieldDef("lanes")))
    panel = FeaturesPanel(tool)
    panel.resize(420, 700)
    panel.show()
    panel.table.sortByColumn(len(HEADERS), panel.proxy.sortOrder().AscendingOrder)
    panel.table.selectRow(5)
    index = FeatureIndex(tool)
    index.sync()
    settle(app)
    return tool, panel, index


def changes(tool) -> list[tuple]:
    from app.model.attributes import FieldDef

    renamed = (FieldDef("road_class"), FieldDef("lanes"))
    retyped = (FieldDef("road_class"), FieldDef("lanes", "integer"))
    both = {"road_class": "road_class", "lanes": "lanes"}
    return [(CHANGES[0], (tool.fields, renamed, {"kind": "road_class", "lanes": "lanes"})), (CHANGES[1], None),
            (CHANGES[2], None), (CHANGES[3], (renamed, retyped, both)), (CHANGES[4], None), ("(back)", None)]


def timings(app, n: int, repeat: int, distinct: bool) -> list[list]:
    from app.model.field_edits import fields_changed

    tool, panel, index = build(app, n, distinct)
    times = {label: ([], [], [], []) for label in CHANGES}
    for _ in range(repeat):
        for label, change in changes(tool):
            values_s = float("nan")
            if change is not None:
                start = time.perf_counter()
                fields_changed(tool.state, change[1], change[2])
                values_s = time.perf_counter() - start
                call = (lambda c=change: tool.set_fields(c[1], c[2]))
            else:
                call = tool.undo if "undo" in label or label == "(back)" else tool.redo
            start = time.perf_counter()
            call()
            edit_s = time.perf_counter() - start
            start = time.perf_counter()
            index.sync()
            index_s = time.perf_counter() - start
            view_s = settle(app)
            if label in times:
                for column, seconds in zip(times[label], (values_s, edit_s, index_s, view_s)):
                    column.append(seconds * 1e3)
    panel.close()
    values = "one per line" if distinct else "7 distinct"
    return [[f"{n:,}", values, label] + [f"{statistics.median(c):.0f}" for c in columns]
            for label, columns in times.items()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    rows = []
    for n in args.counts:
        for distinct in (False, True):
            rows += timings(app, n, args.repeat, distinct)
            print("\n".join(" | ".join(r) for r in rows[-len(CHANGES):]), file=sys.stderr, flush=True)
    print(machine_description())
    print(markdown_table(["lines", "kind values", "change", "values (ms)", "edit (ms)", "index (ms)", "view (ms)"],
                         rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
