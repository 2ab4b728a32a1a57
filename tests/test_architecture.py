"""The architecture of DESIGN.md, enforced: import contracts, cheap imports, short modules.

The import rules themselves (layers app > gpu > core, no Qt below the window
or in its Qt-free model, no cycles) are import-linter contracts in
pyproject.toml; this test runs them, so a plain ``pytest`` checks them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "core", "gpu")
MAX_MODULE_LINES = 400


def test_the_import_contracts_of_pyproject_hold():
    pytest.importorskip("importlinter")
    command = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
               "sys.exit(lint_imports(config_filename='pyproject.toml', no_logo=True, cache_dir=None))"]
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]


def test_importing_core_loads_no_qt_cuda_or_rasterio():
    code = (
        "import sys, core, core.polyline, core.engine, core.knapsack, core.extraction\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('PySide6', 'shiboken6', 'rasterio', 'gpu', 'numba_cuda') or m.startswith('numba.cuda')]\n"
        "print(','.join(sorted(bad)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_importing_gpu_never_fails():
    out = subprocess.run([sys.executable, "-c", "import gpu, gpu.polyline, gpu.knapsack"], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_is_longer_than_400_lines(package):
    long = {str(path.relative_to(ROOT)): n for path in sorted((ROOT / package).rglob("*.py"))
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"
