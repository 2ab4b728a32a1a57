"""The knapsack tab: choose a problem, load or generate instances, solve, compare, export.

The widgets render plain state (the problem, the instances, the latest
:class:`app.knapsack.jobs.JobResult`) through the Qt-free functions of
:mod:`app.model.knapsack`; solving runs in the worker process of
:class:`app.knapsack.runner.KnapsackRunner`, which Cancel ends at once.
Errors become dialogs through :mod:`app.errors`; none ends the application.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication, QElapsedTimer, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app import errors
from app.errors import reports_errors
from app.knapsack import widgets as widgets
from app.knapsack.jobs import SolveJob
from app.knapsack.runner import KnapsackRunner
from app.knapsack.widgets import RowsModel, make_table, spin
from app.model.knapsack import (
    CORE_KIND,
    GENERATORS,
    PROBLEMS,
    export_csv,
    export_json,
    generate_instance,
    instance_table,
    item_columns,
    item_rows,
    load_instance_files,
    loaded_summary,
    result_summary,
)
from core.knapsack.problems import problem_kind

__all__ = ["KnapsackPanel"]

BACKEND_CHOICES = (("Auto", "auto"), ("CPU", "cpu"), ("GPU", "gpu"))
#: Generator defaults per problem: (type, items).
GENERATOR_DEFAULTS = {"kp1": ("strongly", 1000), "subset-sum": ("half", 1000), "mckp": ("set 5", 0)}


class KnapsackPanel(QWidget):
    """The knapsack solver panel (a tab of the main window).

    Parameters
    ----------
    parent : QWidget, optional
    runner : KnapsackRunner, optional
        Shared runner; by default the panel makes (and owns, and shuts down) its own.

    Signals
    -------
    solve_finished(JobResult)
        A solve or comparison finished and its result is shown.
    """

    solve_finished = Signal(object)

    def __init__(self, parent=None, runner: KnapsackRunner | None = None):
        super().__init__(parent)
        from core.engine import gpu_available

        self.problem = "kp1"
        self.instances: tuple = ()
        self.sources: tuple = ()
        self.result = None
        self.gpu_present = gpu_available()
        self.runner = runner if runner is not None else KnapsackRunner(self)
        self._owns_runner = runner is None
        self._job_id: int | None = None
        self._stage = ""
        self._clock = QElapsedTimer()
        self._tick = QTimer(self, interval=100, timeout=self._show_progress_text)
        self._build()
        for signal, slot in ((self.runner.progress, self._on_progress), (self.runner.finished, self._on_finished),
                             (self.runner.failed, self._on_failed), (self.runner.cancelled, self._on_cancelled)):
            signal.connect(slot)
        QCoreApplication.instance().aboutToQuit.connect(self.shutdown)
        self._show_generator()
        self.set_instances(())

    @property
    def busy(self) -> bool:
        """True while this panel's job runs."""
        return self._job_id is not None

    # ------------------------------------------------------------ building
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        self.problem_combo = QComboBox(toolTip="The knapsack-family problem to solve.")
        for key, label in PROBLEMS.items():
            self.problem_combo.addItem(label, key)
        self.problem_combo.currentIndexChanged.connect(self._problem_chosen)
        row = QHBoxLayout()
        row.addWidget(QLabel("Problem"))
        row.addWidget(self.problem_combo)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addWidget(self._build_instances_box())
        layout.addWidget(self._build_solve_box())
        layout.addWidget(self._build_results(), 1)

    def _build_instances_box(self) -> QGroupBox:
        box = QGroupBox("Instances")
        self.load_button = QPushButton("Load Files...", clicked=lambda: self.load_files(),
                                       toolTip="knapPI_* and Pisinger .csv (KP1), .ins2D and class-A lines (KP2), "
                                               "LineSnap JSON (every problem); several files for a batch.")
        self.family_label = QLabel()
        self.kind_combo = QComboBox(toolTip="The generator's instance type.")
        self.items_spin = spin(0, 1_000_000, 1000, "Number of items (MCKP: items per class).")
        self.range_spin = spin(10, 10_000_000, 1000, "Pisinger's coefficient range R: weights drawn from 1..R.")
        self.v_spin = spin(1, 100, 1, "Pisinger's instance v of 100: capacity v * sum(w) / 101.")
        self.seed_spin = spin(0, 2**31 - 1, 0, "Seed of the random generator.")
        self.generate_button = QPushButton("Generate", clicked=lambda: self.generate())
        self._labels = {name: QLabel(name) for name in ("Items", "R", "v", "Seed")}
        # two rows, so that the window fits a 1280 px screen beside the docks
        top = QHBoxLayout()
        for widget in (self.load_button, QLabel("or generate:"), self.family_label, self.kind_combo):
            top.addWidget(widget)
        top.addStretch(1)
        generator = QHBoxLayout()
        for label, widget in (("Items", self.items_spin), ("R", self.range_spin), ("v", self.v_spin),
                              ("Seed", self.seed_spin)):
            generator.addWidget(self._labels[label])
            generator.addWidget(widget)
        generator.addWidget(self.generate_button)
        generator.addStretch(1)
        self.summary_label = QLabel(wordWrap=True, textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(box)
        layout.addLayout(top)
        layout.addLayout(generator)
        layout.addWidget(self.summary_label)
        return box

    def _build_solve_box(self) -> QGroupBox:
        box = QGroupBox("Solve")
        self.backend_combo = QComboBox(toolTip="auto: the GPU when one is present, else the CPU.")
        for label, key in BACKEND_CHOICES:
            self.backend_combo.addItem(label, key)
        if not self.gpu_present:
            self.backend_combo.model().item(2).setEnabled(False)
            self.backend_combo.model().item(2).setToolTip("No usable CUDA GPU here.")
        self.backend_combo.currentIndexChanged.connect(self._show_backend)
        self.backend_label = QLabel()
        self.budget_spin = spin(0, 16_000_000, 0, "Most memory the solver's tables may take; past it a "
                                 "memory-light method runs or the solve is refused.", special="auto")
        self.budget_spin.setSuffix(" MiB")
        self.solve_button = QPushButton("Solve", clicked=lambda: self.solve())
        self.compare_button = QPushButton("Compare CPU and GPU", clicked=lambda: self.compare_backends())
        self.cancel_button = QPushButton("Cancel", clicked=lambda: self.cancel(), enabled=False)
        self.progress_bar = QProgressBar(visible=False, textVisible=True)
        self.status_label = QLabel(wordWrap=True, textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(box)
        row = QHBoxLayout()
        for widget in (QLabel("Backend"), self.backend_combo, self.backend_label, QLabel("Memory budget"),
                       self.budget_spin):
            row.addWidget(widget)
        row.addStretch(1)
        layout.addLayout(row)
        row = QHBoxLayout()
        for widget in (self.solve_button, self.compare_button, self.cancel_button):
            row.addWidget(widget)
        row.addWidget(self.progress_bar, 1)
        layout.addLayout(row)
        layout.addWidget(self.status_label)
        self._show_backend()
        return box

    def _build_results(self) -> QSplitter:
        self.instances_model, self.items_model = RowsModel(self), RowsModel(self)
        self.instances_view = make_table(self.instances_model)
        self.instances_view.selectionModel().currentRowChanged.connect(lambda *_: self._show_items())
        self.items_view = make_table(self.items_model, stretch_last=False)
        self.items_label = QLabel()
        self.export_json_button = QPushButton("Export JSON...", clicked=lambda: self.export("json"))
        self.export_csv_button = QPushButton("Export CSV...", clicked=lambda: self.export("csv"))
        items = QWidget()
        layout = QVBoxLayout(items)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.items_label)
        layout.addWidget(self.items_view, 1)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.export_json_button)
        row.addWidget(self.export_csv_button)
        layout.addLayout(row)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.instances_view)
        splitter.addWidget(items)
        return splitter

    # ------------------------------------------------------------ state
    def _problem_chosen(self, _index: int) -> None:
        problem = self.problem_combo.currentData()
        if problem == self.problem:
            return
        keep = self.instances and CORE_KIND[problem] == CORE_KIND[self.problem]  # KP2 <-> batched KP2
        self.problem = problem
        self._show_generator()
        self.set_instances(self.instances if keep else (), self.sources if keep else ())

    def set_problem(self, problem: str) -> None:
        """Choose the problem (a key of :data:`app.model.knapsack.PROBLEMS`)."""
        self.problem_combo.setCurrentIndex(self.problem_combo.findData(problem))

    def set_instances(self, instances, sources=None) -> None:
        """Show ``instances`` (KnapsackInstance objects of the current problem); results are cleared."""
        self.instances = tuple(instances)
        self.sources = tuple(sources) if sources is not None else ("",) * len(self.instances)
        self.result = None
        self.summary_label.setText(loaded_summary(self.problem, self.instances))
        self._show_results()

    def _show_generator(self) -> None:
        """The generator fields of the current problem, at that problem's defaults."""
        family, kinds = GENERATORS.get(self.problem, ("", ()))
        default_kind, default_items = GENERATOR_DEFAULTS.get(self.problem, ("", 1000))
        self.kind_combo.clear()
        self.kind_combo.addItems(list(kinds))
        self.kind_combo.setCurrentText(default_kind)
        self.family_label.setText(family or "no generator for KP2: load .ins2D, class-A or JSON files")
        mckp = self.problem == "mckp"
        self.items_spin.setMinimum(0 if mckp else 1)
        self.items_spin.setSpecialValueText("10..1024" if mckp else "")
        self.items_spin.setValue(default_items)
        self._labels["Items"].setText("Items per class" if mckp else "Items")
        for widget in (self.kind_combo, self.items_spin, self.seed_spin, self.generate_button,
                       self._labels["Items"], self._labels["Seed"]):
            widget.setVisible(bool(family))
        for widget in (self.range_spin, self.v_spin, self._labels["R"], self._labels["v"]):
            widget.setVisible(self.problem == "kp1")

    def _show_backend(self) -> None:
        from app.docks.settings import backend_description

        self.backend_label.setText(backend_description(self.backend_combo.currentData()))

    def _show_results(self) -> None:
        headers, rows = instance_table(self.instances, self.result)
        self.instances_model.set_rows(headers, rows)
        self.instances_view.resizeColumnsToContents()
        if rows:
            self.instances_view.selectRow(0)
        self._show_items()
        self._update_enabled()

    def _show_items(self) -> None:
        row = self.instances_view.currentIndex().row()
        if self.result is None or not 0 <= row < len(self.instances):
            self.items_model.set_rows([], [])
            self.items_label.setText("Chosen items: solve to see them.")
            return
        instance, backend = self.instances[row], self.result.backends[0]
        solution = self.result.solutions[backend][row]
        kind = problem_kind(instance.problem)
        self.items_model.set_rows(list(item_columns(kind)), item_rows(instance.problem, solution.selected))
        what = "item chosen in each class" if kind == "mckp" else f"{len(solution.selected)} items chosen"
        self.items_label.setText(f"{instance.name}: optimum {solution.value}, {what} "
                                 f"({backend.upper()} solution, {solution.method}, {solution.time_ms:.1f} ms)")

    def _update_enabled(self) -> None:
        idle, loaded = not self.busy, bool(self.instances)
        for widget in (self.problem_combo, self.load_button, self.generate_button, self.backend_combo,
                       self.budget_spin):
            widget.setEnabled(idle)
        self.solve_button.setEnabled(idle and loaded)
        self.compare_button.setEnabled(idle and loaded and self.gpu_present)
        self.compare_button.setToolTip("Solve on the CPU and on the GPU; compare the optima and times."
                                       if self.gpu_present else "Needs a usable CUDA GPU; none was found here.")
        self.cancel_button.setEnabled(not idle)
        self.export_json_button.setEnabled(idle and self.result is not None)
        self.export_csv_button.setEnabled(idle and self.result is not None)
        self.progress_bar.setVisible(not idle)

    # ------------------------------------------------------------ actions
    @reports_errors("Could not load the instances")
    def load_files(self) -> None:
        """Ask for instance files and load them."""
        folder = str(Path(self.sources[0]).parent) if self.sources and self.sources[0] else ""
        paths = widgets.ask_instance_files(self, folder)
        if paths:
            self.load_paths(paths)

    @reports_errors("Could not load the instances")
    def load_paths(self, paths) -> None:
        """Load every instance of ``paths``; the problem follows the files' kind."""
        loaded = load_instance_files(paths, self.problem)
        if loaded.problem != self.problem:
            self.problem_combo.blockSignals(True)
            self.problem_combo.setCurrentIndex(self.problem_combo.findData(loaded.problem))
            self.problem_combo.blockSignals(False)
            self.problem = loaded.problem
            self._show_generator()
        self.set_instances(loaded.instances, loaded.sources)
        self.status_label.setText(f"Loaded {len(loaded.instances)} instance(s). {loaded.note}".strip())

    @reports_errors("Could not generate the instance")
    def generate(self) -> None:
        """Generate one instance with the generator fields."""
        instance = generate_instance(self.problem, self.kind_combo.currentText(), self.items_spin.value(),
                                     self.seed_spin.value(), self.range_spin.value(), self.v_spin.value())
        self.set_instances([instance], ["generated"])
        self.status_label.setText(f"Generated {instance.name}.")

    @reports_errors("Could not start the solve")
    def solve(self) -> None:
        """Solve the instances on the chosen backend, in the worker process."""
        self._start((self.backend_combo.currentData(),))

    @reports_errors("Could not start the comparison")
    def compare_backends(self) -> None:
        """Solve the instances on the CPU and on the GPU, side by side."""
        self._start(("cpu", "gpu"))

    def _start(self, backends) -> None:
        if not self.instances:
            raise ValueError("load or generate an instance first")
        budget = self.budget_spin.value() * 2**20 or None
        job = SolveJob(self.instances, tuple(backends), self.problem == "kp2-batch", budget)
        self.result = None
        self._job_id = self.runner.submit(job)
        self._stage = "starting the solver process"
        self._clock.start()
        self._tick.start()
        self.progress_bar.setRange(0, 0)
        self._show_results()
        self._show_progress_text()

    def cancel(self) -> None:
        """Stop the running solve now (its worker process is ended)."""
        if self.busy:
            self.runner.cancel()

    @reports_errors("Could not export the solution")
    def export(self, file_format: str) -> None:
        """Ask for a path and write the shown solutions as ``file_format`` ("json" or "csv")."""
        if self.result is None:
            raise ValueError("solve first: there is no solution to export")
        name = self.instances[0].name if len(self.instances) == 1 else "knapsack-solutions"
        path = widgets.ask_export_path(self, file_format, f"{name}.{file_format}")
        if path:
            (export_json if file_format == "json" else export_csv)(path, self.instances, self.result)
            self.status_label.setText(f"Exported to {path}.")

    # ------------------------------------------------------------ runner events
    def _on_progress(self, job_id: int, done: int, total: int, text: str) -> None:
        if job_id != self._job_id:
            return
        if total > 1:
            self.progress_bar.setRange(0, total)
            self.progress_bar.setValue(done)
        self._stage = text
        self._show_progress_text()

    def _show_progress_text(self) -> None:
        if self.busy:
            self.status_label.setText(f"Running: {self._stage} ({self._clock.elapsed() / 1e3:.1f} s)")

    def _finish(self, job_id: int) -> bool:
        if job_id != self._job_id:
            return False
        self._job_id = None
        self._tick.stop()
        return True

    def _on_finished(self, job_id: int, result) -> None:
        if self._finish(job_id):
            self.show_result(result)
            self.solve_finished.emit(result)

    def show_result(self, result) -> None:
        """Show a :class:`app.knapsack.jobs.JobResult` of the loaded instances."""
        self.result = result
        self._show_results()
        self.status_label.setText(result_summary(self.instances, result))

    def _on_failed(self, job_id: int, report) -> None:
        if not self._finish(job_id):
            return
        self._show_results()
        self.status_label.setText(f"Failed: {report.message}")
        errors.log.error("%s: %s\n%s", report.title, report.message, report.details)
        errors.show_error(self, report)

    def _on_cancelled(self, job_id: int) -> None:
        elapsed = self._clock.elapsed() / 1e3
        if self._finish(job_id):
            self._show_results()
            self.status_label.setText(f"Cancelled after {elapsed:.1f} s.")

    # ------------------------------------------------------------ lifetime
    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.runner.start()  # start the worker process early: the first solve then starts at once

    def closeEvent(self, event) -> None:
        self.shutdown()
        super().closeEvent(event)

    def shutdown(self) -> None:
        """Stop this panel's solve and, when the panel owns it, the worker process."""
        if self._owns_runner:
            self.runner.shutdown()
        elif self.busy:
            self.runner.cancel()
        if self.busy:  # a shared runner's cancel arrives as a signal; do not wait for it
            self._finish(self._job_id)
            self._update_enabled()
