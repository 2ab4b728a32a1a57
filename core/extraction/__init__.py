"""One line extraction: guides between the clicks, the image's gradient, link scores, the exact DP.

:func:`extract` (``pipeline``) runs ``guides``, ``gradient``, ``scores`` and
``solving`` end to end with :class:`ExtractionSettings` (``settings``).
"""

from core.extraction.pipeline import ExtractionResult, extract, gradient_step_px, window_margin_px
from core.extraction.settings import ExtractionSettings

__all__ = ["ExtractionResult", "ExtractionSettings", "extract", "gradient_step_px", "window_margin_px"]
