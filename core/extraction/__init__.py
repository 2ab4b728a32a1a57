"""One line extraction: guides between the clicks, the image's gradient, link scores, the exact DP.

``settings`` holds :class:`ExtractionSettings`, ``options`` the link-scoring
:class:`~core.extraction.options.ScoringOptions`, ``guides`` the candidate
geometry, ``gradient`` the smoothed gradient of the window, ``scores`` the
link scores (CPU; the GPU twin is ``gpu.polyline.scores``), ``solving`` scores
and solves on either backend, and ``pipeline`` :func:`extract` runs them end to end.
"""

from core.extraction.pipeline import ExtractionResult, extract, gradient_step_px, window_margin_px
from core.extraction.settings import ExtractionSettings

__all__ = ["ExtractionResult", "ExtractionSettings", "extract", "gradient_step_px", "window_margin_px"]
