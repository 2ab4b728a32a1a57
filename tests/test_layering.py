"""The package layering of DESIGN.md: app -> core, app -> gpu, gpu -> core; no Qt below app."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
QT_MODULES = ("PySide6", "PyQt5", "PyQt6", "shiboken6", "superqt", "pytestqt")


def _imports(path: Path):
    """Yield (module name, at module level?) for every import statement of a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    top_level = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, id(node) in top_level
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for name in names:
                yield name, id(node) in top_level


def _sources(package: str):
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", ["core", "gpu"])
def test_no_qt_below_app(package):
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in _sources(package)
        for name, _ in _imports(path)
        if name.split(".")[0] in QT_MODULES
    ]
    assert not offenders, offenders


@pytest.mark.parametrize("package", ["core", "gpu"])
def test_no_app_import_below_app(package):
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in _sources(package)
        for name, _ in _imports(path)
        if name.split(".")[0] == "app"
    ]
    assert not offenders, offenders


def test_core_never_imports_gpu_or_cuda_at_module_level():
    offenders = [
        f"{path.relative_to(ROOT)} imports {name} at module level"
        for path in _sources("core")
        for name, top in _imports(path)
        if top and (name.split(".")[0] in ("gpu", "numba_cuda") or name.startswith("numba.cuda"))
    ]
    assert not offenders, offenders


def test_importing_core_loads_no_qt_cuda_or_rasterio():
    code = (
        "import sys, core, core.polyline, core.engine, core.knapsack\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('PySide6', 'shiboken6', 'rasterio', 'gpu', 'numba_cuda') or m.startswith('numba.cuda')]\n"
        "print(','.join(sorted(bad)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_importing_gpu_never_fails():
    out = subprocess.run([sys.executable, "-c", "import gpu"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
