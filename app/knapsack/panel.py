"""The knapsack tab: choose a problem, load or generate instances, solve, compare, export.

The widgets render plain state (the problem, the instances, the latest
:class:`app.knapsack.jobs.JobResult`) through the Qt-free functions of
:mod:`app.model.knapsack`; solving runs in the worker process of
:class:`app.knapsack.runner.KnapsackRunner`, which Cancel ends at once.
Errors become dialogs through :mod:`app.errors`; none ends the application.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication, QElapsedTimer, QTimer, Signal
from PySide6.QtWidgets import QWidget

from app import errors
from app.docks.settings import backend_description
from app.errors import reports_errors
from app.knapsack import widgets as widgets
from app.knapsack.jobs import SolveJob
from app.knapsack.layout import build_panel
from app.knapsack.runner import KnapsackRunner
from app.model.knapsack import (
    CORE_KIND,
    GENERATORS,
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
from core.engine import gpu_available
from core.knapsack.problems import chosen_text, problem_kind

__all__ = ["KnapsackPanel"]

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
        self.problem = "kp1"
        self.instances: tuple = ()
        self.sources: tuple = ()
        self.result = None
        self.gpu_present = gpu_available()
        self.runner = runner if runner is not None else KnapsackRunner(self)
        self._owns_runner = runner is None
        self._job_id: int | None = None
        self._closing = False
        self._stage = ""
        self._clock = QElapsedTimer()
        self._tick = QTimer(self, interval=100, timeout=self._show_progress_text)
        build_panel(self)
        self.problem_combo.currentIndexChanged.connect(self._problem_chosen)
        self.backend_combo.currentIndexChanged.connect(self._show_backend)
        self.instances_view.selectionModel().currentRowChanged.connect(lambda *_: self._show_items())
        self._show_backend()
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
        """Show ``instances`` (KnapsackInstance objects of the current problem); results, and the line that
        spoke of them, are cleared."""
        self.instances = tuple(instances)
        self.sources = tuple(sources) if sources is not None else ("",) * len(self.instances)
        self.result = None
        self.summary_label.setText(loaded_summary(self.problem, self.instances))
        self.status_label.setText("")
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
        self.generator_labels["Items"].setText("Items per class" if mckp else "Items")
        for widget in (self.kind_combo, self.items_spin, self.seed_spin, self.generate_button,
                       self.generator_labels["Items"], self.generator_labels["Seed"]):
            widget.setVisible(bool(family))
        for widget in (self.range_spin, self.v_spin, self.generator_labels["R"], self.generator_labels["v"]):
            widget.setVisible(self.problem == "kp1")

    def _show_backend(self) -> None:
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
        self.items_label.setText(f"{instance.name}: optimum {solution.value}, "
                                 f"{chosen_text(instance.problem, solution.selected)} "
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
        self._replace_worker()  # (where it died)
        errors.show_error(self, report)

    def _on_cancelled(self, job_id: int) -> None:
        elapsed = self._clock.elapsed() / 1e3
        if self._finish(job_id):
            self._show_results()
            self.status_label.setText(f"Cancelled after {elapsed:.1f} s.")
            self._replace_worker()

    def _replace_worker(self) -> None:
        """After a cancel (or a worker that died), start the next worker at once, loading the solvers of the
        instances shown, so that the next solve does not wait for both (about 1-3 s); not while closing."""
        if self._closing or not self.isVisible() or self.runner.process is not None:
            return
        self.runner.start(warm_kinds=tuple(dict.fromkeys(problem_kind(i.problem) for i in self.instances)))

    # ------------------------------------------------------------ lifetime
    def showEvent(self, event) -> None:
        super().showEvent(event)
        self._closing = False
        self.runner.start()  # start the worker process early: the first solve then starts at once

    def closeEvent(self, event) -> None:
        self.shutdown()
        super().closeEvent(event)

    def shutdown(self) -> None:
        """Stop this panel's solve and, when the panel owns it, the worker process."""
        self._closing = True
        if self._owns_runner:
            self.runner.shutdown()
        elif self.busy:
            self.runner.cancel()
        if self.busy:  # a shared runner's cancel arrives as a signal; do not wait for it
            self._finish(self._job_id)
            self._update_enabled()
