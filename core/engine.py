"""Backend selection: the GPU through numba.cuda when there is one, else the CPU.

The one module of ``core`` that reaches into ``gpu``, lazily, so importing
``core`` never needs CUDA.
"""

from __future__ import annotations

import functools
import os
import sys
import warnings
from collections.abc import Callable
from typing import TypeVar

from core import validation

__all__ = ["BACKENDS", "BackendUnavailableError", "gpu_available", "gpu_package", "resolve_backend",
           "run_with_cpu_fallback"]

T = TypeVar("T")

BACKENDS = ("auto", "cpu", "gpu")


class BackendUnavailableError(RuntimeError):
    """The GPU backend was asked for explicitly but no usable CUDA GPU is present."""


@functools.cache
def gpu_available() -> bool:
    """Return True when numba.cuda can run kernels here (a real GPU or the simulator)."""
    if not _driver_may_exist():  # skips importing numba.cuda (0.2 s of every CLI start) where no GPU can be
        return False
    try:
        from numba import cuda
    except ImportError:  # numba-cuda not installed
        return False
    try:
        return bool(cuda.is_available())
    except Exception:  # a broken driver must not break the CPU path
        return False


def _driver_may_exist() -> bool:
    """False only on Linux without NVIDIA's kernel driver (nor WSL's GPU device) and without the CUDA simulator."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" or not sys.platform.startswith("linux"):
        return True
    return os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/dxg")


def resolve_backend(backend: str) -> str:
    """Turn ``"auto" | "cpu" | "gpu"`` into the backend that will run.

    Raises ValueError for an unknown name, BackendUnavailableError for ``"gpu"``
    when numba.cuda finds no GPU.
    """
    if validation.choice(backend, "backend", BACKENDS) == "cpu":
        return "cpu"
    if gpu_available():
        return "gpu"
    if backend == "gpu":
        raise BackendUnavailableError(
            "backend 'gpu' needs an NVIDIA GPU with a working CUDA driver and the "
            "numba-cuda package (pip install 'linesnap[gpu]'); none was found. "
            "Use backend 'cpu' or 'auto'."
        )
    return "cpu"


def run_with_cpu_fallback(backend: str, on_gpu: Callable[[], T], on_cpu: Callable[[], T]) -> T:
    """Run ``on_gpu()`` when ``backend`` is "gpu", else ``on_cpu()``; the CPU too when the GPU lacks memory.

    ``backend`` is resolved (:func:`resolve_backend`); the two callables are the
    same computation on either backend, and the result says which one ran.  A
    MemoryError on the GPU (``gpu.polyline.GpuMemoryError``) is no reason to
    fail: it warns (RuntimeWarning) and runs the CPU twin.
    """
    if backend == "gpu":
        try:
            return on_gpu()
        except MemoryError as exc:
            warnings.warn(f"{exc}; solving on the CPU instead", RuntimeWarning, stacklevel=3)
    return on_cpu()


def gpu_package(name: str):
    """The GPU twin package ``gpu.polyline`` or ``gpu.knapsack``, imported on first use.

    Importing it needs no GPU; its solvers raise BackendUnavailableError without one.
    """
    if name == "polyline":
        import gpu.polyline as package
    elif name == "knapsack":
        import gpu.knapsack as package
    else:
        raise ValueError(f"no GPU package {name!r}; use 'polyline' or 'knapsack'")
    return package
