"""Many bands reduced to principal components: against numpy's SVD, and the extractions it serves."""

from __future__ import annotations

import numpy as np
import pytest

from core.extraction import extract, pipeline, spectral


def reference_components(bands, count):
    """The leading principal components of every valid pixel, from numpy's SVD of the centred pixels."""
    flat = bands.reshape(-1, bands.shape[2]).astype(np.float64)
    valid = np.isfinite(flat).all(axis=1)
    mean = flat[valid].mean(axis=0)
    _, _, rows = np.linalg.svd(flat[valid] - mean, full_matrices=False)
    return ((flat - mean) @ rows[:count].T).reshape(bands.shape[:2] + (count,))


def spectral_window(shape, n_bands, seed):
    """Pixels mixing a few spectra with well separated strengths, plus a little noise in every band."""
    rng = np.random.default_rng(seed)
    spectra = rng.normal(0.0, 1.0, (5, n_bands)) * np.array([40.0, 25.0, 15.0, 8.0, 4.0])[:, None]
    weights = rng.normal(0.0, 1.0, shape + (5,))
    return (500.0 + weights @ spectra + rng.normal(0.0, 0.5, shape + (n_bands,))).astype(np.float32)


@pytest.mark.parametrize("n_bands, count", [(12, 8), (40, 3), (224, 8)])
def test_components_match_numpy_svd(n_bands, count):
    bands = spectral_window((40, 50), n_bands, n_bands)  # 2000 pixels: all of them sampled
    bands[3:6, 10:20, n_bands // 2] = np.nan
    ours = spectral.principal_components(bands, count)
    expected = reference_components(bands, count)
    assert ours.shape == (40, 50, count) and ours.dtype == np.float32
    nan = np.isnan(bands).any(axis=2)
    assert np.isnan(ours[nan]).all() and np.isfinite(ours[~nan]).all()
    tolerance = 1e-3 * np.abs(expected[~nan]).max()
    for k in range(min(count, 5)):  # beyond the five spectra the axes are the noise's, in any order
        sign = np.sign(np.sum(ours[~nan, k] * expected[~nan, k]))
        np.testing.assert_allclose(sign * ours[~nan, k], expected[~nan, k], rtol=0, atol=tolerance)


def test_a_large_window_is_modelled_from_a_sample():
    bands = spectral_window((300, 320), 30, 1)  # 96 000 pixels, above PCA_SAMPLE_PIXELS
    ours = spectral.principal_components(bands, 4)
    expected = reference_components(bands, 4)
    for k in range(4):  # the sample's axes are the window's, to within sampling error
        correlation = np.corrcoef(ours[:, :, k].ravel(), expected[:, :, k].ravel())[0, 1]
        assert abs(correlation) > 0.999


def test_few_bands_pass_untouched_and_many_are_reduced():
    for n_bands in (1, 3, spectral.MAX_MODEL_BANDS):
        bands = np.zeros((4, 5, n_bands), np.float32)
        assert spectral.model_bands(bands) is bands
    reduced = spectral.model_bands(spectral_window((20, 30), spectral.MAX_MODEL_BANDS + 1, 0))
    assert reduced.shape == (20, 30, spectral.MAX_MODEL_BANDS)
    assert np.isnan(spectral.model_bands(np.full((3, 4, 20), np.nan, np.float32))).all()
    with pytest.raises(ValueError, match="most must be an integer >= 1"):
        spectral.model_bands(np.zeros((2, 2, 3)), 0)
    with pytest.raises(ValueError, match=r"bands must be an \(H, W, k\) array; got shape \(2, 2\)"):
        spectral.model_bands(np.zeros((2, 2)))


@pytest.mark.parametrize("n_bands", [1, 3, spectral.MAX_MODEL_BANDS])
@pytest.mark.parametrize("mode", ["auto", "ribbon"])
def test_up_to_the_threshold_results_are_those_without_the_reduction(monkeypatch, n_bands, mode):
    rng = np.random.default_rng(n_bands)
    image = rng.normal(100.0, 20.0, (120, 160, n_bands)).astype(np.float32)
    image[50:58, :, -1] += 50.0
    image[:, 70:74, 0] -= 30.0
    results = [extract(image, (10.0, 55.0), (150.0, 52.0), mode=mode, backend="cpu")]
    monkeypatch.setattr(pipeline, "model_bands", lambda bands: bands)
    results.append(extract(image, (10.0, 55.0), (150.0, 52.0), mode=mode, backend="cpu"))
    np.testing.assert_array_equal(results[0].vertices_px, results[1].vertices_px)
    assert results[0].score == results[1].score
    assert results[0].estimate == results[1].estimate


def _hyperspectral_road(n_bands, seed=0):
    """A 10 px road bowing 30 px off the chord of clicks at (20, 120) and (240, 120); its spectrum differs
    from the verges' in the middle of the spectrum only (the first three bands, the intensity, barely)."""
    rng = np.random.default_rng(seed)
    rows, cols = np.mgrid[0:240, 0:260] + 0.5
    centre = 120.0 + 30.0 * np.sin(np.pi * np.clip(cols - 20.0, 0.0, 220.0) / 220.0)
    road = np.clip(5.5 - np.abs(rows - centre), 0.0, 1.0)[:, :, None]
    wavelength = np.linspace(0.0, 1.0, n_bands)
    verge = 1000.0 + 300.0 * np.sin(6.0 * wavelength)
    surface = verge + 250.0 * np.exp(-(((wavelength - 0.55) / 0.12) ** 2))
    image = (1.0 - road) * verge + road * surface + rng.normal(0.0, 60.0, road.shape[:2] + (n_bands,))
    return image.astype(np.float32), lambda x: 120.0 + 30.0 * np.sin(np.pi * (np.asarray(x) - 20.0) / 220.0)


def test_a_many_band_road_is_followed():
    image, centre_y = _hyperspectral_road(64)
    result = extract(image, (20.0, 120.0), (240.0, 120.0), backend="cpu")
    xs = np.linspace(20.0, 240.0, 441)
    ys = np.interp(xs, result.vertices_px[:, 0], result.vertices_px[:, 1])
    errors = np.abs(ys - centre_y(xs))  # vertical distance: at most 1.4 times the true distance on this road
    assert result.estimate.course == "bent"
    assert errors.mean() < 1.0 and errors.max() < 3.0, (errors.mean(), errors.max())
