"""The knapsack panel's widgets and their layout, apart from what the panel does with them.

:func:`build_panel` makes the widgets as attributes of the panel (as Qt
Designer's ``setupUi`` does); :class:`app.knapsack.panel.KnapsackPanel` drives them.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.knapsack.widgets import RowsModel, make_table, spin
from app.model.knapsack import PROBLEMS

__all__ = ["BACKEND_CHOICES", "build_panel"]

BACKEND_CHOICES = (("Auto", "auto"), ("CPU", "cpu"), ("GPU", "gpu"))


def build_panel(panel) -> None:
    """Make the widgets of ``panel`` as its attributes and lay them out.

    Parameters
    ----------
    panel : app.knapsack.panel.KnapsackPanel
        With ``gpu_present`` set; its buttons call the panel's public methods,
        and the panel connects the choices it reacts to itself.
    """
    outer = QVBoxLayout(panel)  # the panel's rows scroll: their width must not be the whole window's least
    outer.setContentsMargins(0, 0, 0, 0)  # (a tab's minimum is every tab's: the map could not be narrower)
    scroll = QScrollArea(widgetResizable=True, frameShape=QFrame.Shape.NoFrame)
    content = QWidget()
    scroll.setWidget(content)
    outer.addWidget(scroll)
    layout = QVBoxLayout(content)
    panel.problem_combo = QComboBox(toolTip="The knapsack-family problem to solve.")
    for key, label in PROBLEMS.items():
        panel.problem_combo.addItem(label, key)
    row = QHBoxLayout()
    row.addWidget(QLabel("Problem"))
    row.addWidget(panel.problem_combo)
    row.addStretch(1)
    layout.addLayout(row)
    layout.addWidget(_instances_box(panel))
    layout.addWidget(_solve_box(panel))
    layout.addWidget(_results(panel), 1)


def _instances_box(panel) -> QGroupBox:
    box = QGroupBox("Instances")
    panel.load_button = QPushButton("Load Files...", clicked=lambda: panel.load_files(),
                                    toolTip="knapPI_* and Pisinger .csv (KP1), Jooken's test.in (KP1), .ins2D "
                                            "and class-A lines (KP2), LineSnap JSON (every problem); several "
                                            "files for a batch.")
    panel.family_label = QLabel()
    panel.kind_combo = QComboBox(toolTip="The generator's instance type.")
    panel.items_spin = spin(0, 1_000_000, 1000, "Number of items (MCKP: items per class).")
    panel.range_spin = spin(10, 10_000_000, 1000, "Pisinger's coefficient range R: weights drawn from 1..R.")
    panel.v_spin = spin(1, 100, 1, "Pisinger's instance v of 100: capacity v * sum(w) / 101.")
    panel.seed_spin = spin(0, 2**31 - 1, 0, "Seed of the random generator.")
    panel.generate_button = QPushButton("Generate", clicked=lambda: panel.generate())
    panel.generator_labels = {name: QLabel(name) for name in ("Items", "R", "v", "Seed")}
    # two rows, so that the window fits a 1280 px screen beside the docks
    top = QHBoxLayout()
    for widget in (panel.load_button, QLabel("or generate:"), panel.family_label, panel.kind_combo):
        top.addWidget(widget)
    top.addStretch(1)
    generator = QHBoxLayout()
    for label, widget in (("Items", panel.items_spin), ("R", panel.range_spin), ("v", panel.v_spin),
                          ("Seed", panel.seed_spin)):
        generator.addWidget(panel.generator_labels[label])
        generator.addWidget(widget)
    generator.addWidget(panel.generate_button)
    generator.addStretch(1)
    panel.summary_label = QLabel(wordWrap=True, textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse)
    layout = QVBoxLayout(box)
    layout.addLayout(top)
    layout.addLayout(generator)
    layout.addWidget(panel.summary_label)
    return box


def _solve_box(panel) -> QGroupBox:
    box = QGroupBox("Solve")
    panel.backend_combo = QComboBox(toolTip="auto: the GPU when one is present, else the CPU.")
    for label, key in BACKEND_CHOICES:
        panel.backend_combo.addItem(label, key)
    if not panel.gpu_present:
        panel.backend_combo.model().item(2).setEnabled(False)
        panel.backend_combo.model().item(2).setToolTip("No usable CUDA GPU here.")
    panel.backend_label = QLabel()
    panel.budget_spin = spin(0, 16_000_000, 0, "Most memory the solver's tables may take; past it a "
                              "memory-light method runs or the solve is refused.", special="auto")
    panel.budget_spin.setSuffix(" MiB")
    panel.solve_button = QPushButton("Solve", clicked=lambda: panel.solve())
    panel.compare_button = QPushButton("Compare CPU and GPU", clicked=lambda: panel.compare_backends())
    panel.cancel_button = QPushButton("Cancel", clicked=lambda: panel.cancel(), enabled=False)
    panel.progress_bar = QProgressBar(visible=False, textVisible=True)
    panel.status_label = QLabel(wordWrap=True, textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse)
    layout = QVBoxLayout(box)
    row = QHBoxLayout()
    for widget in (QLabel("Backend"), panel.backend_combo, panel.backend_label, QLabel("Memory budget"),
                   panel.budget_spin):
        row.addWidget(widget)
    row.addStretch(1)
    layout.addLayout(row)
    row = QHBoxLayout()
    for widget in (panel.solve_button, panel.compare_button, panel.cancel_button):
        row.addWidget(widget)
    row.addWidget(panel.progress_bar, 1)
    layout.addLayout(row)
    layout.addWidget(panel.status_label)
    return box


def _results(panel) -> QSplitter:
    panel.instances_model, panel.items_model = RowsModel(panel), RowsModel(panel)
    panel.instances_view = make_table(panel.instances_model)
    panel.items_view = make_table(panel.items_model, stretch_last=False)
    panel.items_label = QLabel()
    panel.export_json_button = QPushButton("Export JSON...", clicked=lambda: panel.export("json"))
    panel.export_csv_button = QPushButton("Export CSV...", clicked=lambda: panel.export("csv"))
    items = QWidget()
    layout = QVBoxLayout(items)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(panel.items_label)
    layout.addWidget(panel.items_view, 1)
    row = QHBoxLayout()
    row.addStretch(1)
    row.addWidget(panel.export_json_button)
    row.addWidget(panel.export_csv_button)
    layout.addLayout(row)
    splitter = QSplitter(Qt.Orientation.Vertical)
    splitter.addWidget(panel.instances_view)
    splitter.addWidget(items)
    return splitter
