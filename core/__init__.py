"""LineSnap's computation and I/O: pure functions, no Qt, no numba.cuda at import.

``core.extract`` runs one line extraction, ``core.polyline.solve`` one polyline
problem, and ``core.knapsack`` holds the knapsack solvers.
"""

__all__ = ["extract", "ExtractionSettings", "ExtractionResult"]


def __getattr__(name):
    # Imported on first use so that ``import core`` stays cheap and needs neither
    # rasterio nor a compiled kernel.
    if name in __all__:
        from core import extraction

        return getattr(extraction, name)
    raise AttributeError(f"module 'core' has no attribute {name!r}")
