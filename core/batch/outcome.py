"""Per feature: its status, refined geometry, confidence and displacement, and the columns written out."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from core.batch.metrics import displacement_px, metres_per_px

__all__ = ["FEATURE_STATUSES", "RESULT_COLUMNS", "FeatureOutcome", "feature_outcomes", "result_columns"]

#: ``refined``: every piece; ``partial``: some; else why none was (the line is then unchanged).
FEATURE_STATUSES = ("refined", "partial", "off_image", "no_data", "infeasible", "failed", "too_short")
#: The columns added to every feature (short enough for shapefiles' 10-character names).
RESULT_COLUMNS = ("status", "confidence", "dmean_px", "dmax_px", "dmean_m", "dmax_m")


@dataclass(eq=False)
class FeatureOutcome:
    """The refinement of one feature.

    Attributes
    ----------
    status : str
        One of FEATURE_STATUSES.
    parts_px : list of (k, 2) ndarray or None
        Refined parts in the reference raster's pixels; None: the feature is written unchanged.
    confidence : float or None
        The lowest confidence of its refined pieces.
    dmean_px, dmax_px : float
        Mean and largest distance between the input and the refined line (px).
    dmean_m, dmax_m : float or None
        The same in metres (None without a georeference).
    """

    status: str
    parts_px: list | None = None
    confidence: float | None = None
    dmean_px: float = 0.0
    dmax_px: float = 0.0
    dmean_m: float | None = 0.0
    dmax_m: float | None = 0.0


def feature_outcomes(layer, indices, plan, pieces: dict, joined: list, reference) -> dict:
    """Per line feature (index into the layer), its :class:`FeatureOutcome`.

    ``pieces`` holds the result of every piece tried (core.batch.work); pieces
    of ``plan`` that are extractable but absent lay on no raster.  ``joined``
    are the refined parts of the plan (core.batch.joints.joined_parts).
    """
    outcomes, part = {}, 0
    for k in indices:
        count = len(layer.parts[k])
        span = range(part, part + count)
        part += count
        outcomes[k] = _outcome(plan, span, pieces, joined, reference)
    return outcomes


def _outcome(plan, span, pieces, joined, reference) -> FeatureOutcome:
    ids = np.concatenate([plan.part_pieces[j] for j in span])
    tried = [int(p) for p in ids if plan.extract[p]]
    if not tried:
        return FeatureOutcome("too_short", dmean_m=None if reference.crs is None else 0.0,
                              dmax_m=None if reference.crs is None else 0.0)
    statuses = [pieces[p]["status"] if p in pieces else "off_image" for p in tried]
    metre_zero = None if reference.crs is None else 0.0
    if "refined" not in statuses:
        return FeatureOutcome(Counter(statuses).most_common(1)[0][0], dmean_m=metre_zero, dmax_m=metre_zero)
    before = [plan.nodes_px[plan.part_nodes[j]] for j in span]
    after = [joined[j] for j in span]
    mean_px, max_px = displacement_px(before, after)
    scale = metres_per_px(reference, np.concatenate(before).mean(axis=0))
    confidences = [pieces[p]["confidence"] for p in tried if p in pieces and pieces[p]["confidence"] is not None]
    return FeatureOutcome("refined" if all(s == "refined" for s in statuses) else "partial", after,
                          min(confidences) if confidences else None, mean_px, max_px,
                          None if scale is None else mean_px * scale, None if scale is None else max_px * scale)


def result_columns(n_features: int, outcomes: dict) -> dict:
    """The added columns for all ``n_features`` (features that are no lines: status ``not_a_line``)."""
    status = np.array(["not_a_line"] * n_features, dtype=object)
    numbers = {name: np.full(n_features, np.nan) for name in RESULT_COLUMNS[1:]}
    for k, outcome in outcomes.items():
        status[k] = outcome.status
        for name in RESULT_COLUMNS[1:]:
            value = getattr(outcome, name)
            numbers[name][k] = np.nan if value is None else value
    return {"status": status, **numbers}
