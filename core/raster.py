"""The import path ``core.raster`` of :mod:`core.io.raster`, kept for code written before core.io existed."""

from core.io.raster import *  # noqa: F403
from core.io.raster import __all__  # noqa: F401
