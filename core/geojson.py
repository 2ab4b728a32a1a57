"""The import path ``core.geojson`` of :mod:`core.io.geojson`, kept for code written before core.io existed."""

from core.io.geojson import *  # noqa: F403
from core.io.geojson import __all__  # noqa: F401
