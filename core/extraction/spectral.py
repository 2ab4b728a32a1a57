"""The window's bands as the appearance model reads them: many bands reduced to a few principal components.

The road's appearance model (core.extraction.appearance) and the structure
tensor at the clicks (core.extraction.estimate.turn_at_clicks_deg) read every
band; the model's Mahalanobis distance costs ``(2 k)^2`` per pixel for ``k``
bands, so a 224-band hyperspectral window took seconds per click.  Neighbouring
bands of such an image are strongly correlated, and the road stands apart from
its verges in a few spectral directions, so a window of more than
:data:`MAX_MODEL_BANDS` bands is replaced by its :data:`MAX_MODEL_BANDS`
leading principal components (of the window's own pixels: no training, and the
road shapes them where it is much of the window).  Windows of at most that
many bands are passed on untouched, so their extractions are exactly what they
were.  Measurements: docs/notes/extraction-and-polyline.md, "Adaptive
extraction".
"""

from __future__ import annotations

import numpy as np

__all__ = ["MAX_MODEL_BANDS", "PCA_SAMPLE_PIXELS", "model_bands", "principal_components"]

#: Windows of at most this many bands are modelled band by band; more are reduced to this many components.
MAX_MODEL_BANDS = 8
#: The components' covariance is taken on about this many pixels of the window, evenly spread.
PCA_SAMPLE_PIXELS = 4096


def model_bands(bands: np.ndarray, most: int = MAX_MODEL_BANDS) -> np.ndarray:
    """The bands as they are when there are at most ``most``, else their ``most`` leading principal components.

    Parameters
    ----------
    bands : (H, W, k) float ndarray
        The window's bands (core.io.raster.Raster.read_bands), NaN where there is no data.
    most : int
        The most bands passed on (>= 1).

    Returns
    -------
    (H, W, min(k, most)) ndarray
        ``bands`` itself (the same object) when ``k <= most``; else float32
        components (:func:`principal_components`), NaN wherever any band is.
    """
    if isinstance(most, bool) or not isinstance(most, (int, np.integer)) or most < 1:
        raise ValueError(f"most must be an integer >= 1 (bands); got {most!r}")
    if np.ndim(bands) != 3:
        raise ValueError(f"bands must be an (H, W, k) array; got shape {np.shape(bands)}")
    if bands.shape[2] <= most:
        return bands
    return principal_components(bands, most)


def principal_components(bands: np.ndarray, count: int) -> np.ndarray:
    """The window's pixels projected on the ``count`` leading principal axes of its bands.

    The axes are the eigenvectors of the bands' covariance over the valid
    pixels (every band finite) of an even sample of about
    :data:`PCA_SAMPLE_PIXELS`, in decreasing order of variance; each
    component is centred on the sample's mean.  An eigenvector's sign is
    arbitrary: it is fixed so that its largest entry is positive.

    Parameters
    ----------
    bands : (H, W, k) float ndarray
        NaN where there is no data.
    count : int
        Components kept, ``1 <= count <= k``.

    Returns
    -------
    (H, W, count) float32 ndarray
        A view of a ``(count, H, W)`` array (each component contiguous); NaN at
        the pixels where any band is NaN (everywhere when no pixel is valid).
    """
    height, width, n_bands = bands.shape
    flat = np.asarray(bands, dtype=np.float32).reshape(-1, n_bands)
    sample = flat[:: max(1, flat.shape[0] // PCA_SAMPLE_PIXELS)].astype(np.float64)
    sample = sample[np.isfinite(sample).all(axis=1)]
    if sample.shape[0] == 0:  # no valid pixel: nothing to model (the caller reports the window)
        return np.full((height, width, count), np.nan, np.float32)
    mean = sample.mean(axis=0)
    centred = sample - mean
    variances, vectors = np.linalg.eigh(centred.T @ centred)  # ascending
    axes = vectors[:, ::-1][:, :count]
    axes *= np.where(axes[np.argmax(np.abs(axes), axis=0), np.arange(count)] < 0, -1.0, 1.0)
    # (x - mean) @ axes = x @ axes - mean @ axes: no centred copy of the whole window; a NaN band gives NaN.
    # Computed as axes^T x^T, twice as fast as x axes for few components, and each component comes out whole.
    components = np.ascontiguousarray(axes.T, dtype=np.float32) @ flat.T
    components -= (mean @ axes).astype(np.float32)[:, None]
    return np.moveaxis(components.reshape(count, height, width), 0, -1)
