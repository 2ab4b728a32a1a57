"""core.extraction.gradient: scale, sign and masking of the smoothed gradient."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.ndimage import binary_dilation

from core.extraction.gradient import GAUSSIAN_TRUNCATE, gradient_window


def _ramp(height=40, width=50, gx=3.0, gy=5.0):
    rows, cols = np.mgrid[0:height, 0:width].astype(np.float32)
    return (gx * cols + gy * rows).astype(np.float32)


def _interior(sigma, shape, extra=1):
    border = int(GAUSSIAN_TRUNCATE * sigma + 0.5) + extra
    return slice(border, shape[0] - border), slice(border, shape[1] - border)


@pytest.mark.parametrize("sigma", [0.7, 1.5, 3.0])
def test_ramp_gives_its_slope_exactly(sigma):
    image = _ramp()
    gradient = gradient_window(image, sigma, col_off=7, row_off=-3)
    inner = _interior(sigma, image.shape)
    np.testing.assert_allclose(gradient.gx[inner], 3.0, atol=2e-3)
    np.testing.assert_allclose(gradient.gy[inner], 5.0, atol=2e-3)
    assert gradient.gx.dtype == gradient.gy.dtype == np.float32
    assert (gradient.col_off, gradient.row_off) == (7, -3)
    assert gradient.shape == image.shape


def test_sign_follows_increasing_intensity():
    image = np.zeros((30, 30), np.float32)
    image[:, 15:] = 10.0  # brighter to the right (larger x)
    gradient = gradient_window(image, 1.0)
    assert gradient.gx[15, 14] > 1.0 and gradient.gx[15, 15] > 1.0
    assert np.abs(gradient.gy).max() < 1e-5
    flipped = gradient_window(image.T.copy(), 1.0)  # brighter further down (larger y)
    assert flipped.gy[14, 15] > 1.0


def test_step_edge_peak_matches_the_gaussian_derivative():
    sigma, step = 2.0, 10.0
    image = np.zeros((20, 60), np.float32)
    image[:, 30:] = step
    gradient = gradient_window(image, sigma)
    # The edge lies at x = 30 (between columns 29 and 30); the smoothed step's
    # slope there is step / (sqrt(2 pi) sigma); the central difference at the two
    # neighbouring centres averages it over +-1 px around +-0.5 px.
    x = np.arange(60) + 0.5
    from scipy.special import erf

    smooth = step * 0.5 * (1 + erf((x - 30.0) / (np.sqrt(2) * sigma)))
    expected = (np.roll(smooth, -1) - np.roll(smooth, 1)) / 2
    np.testing.assert_allclose(gradient.gx[10, 20:40], expected[20:40], atol=0.02 * step)


def test_masked_hole_creates_no_edge():
    image = np.full((40, 40), 100.0, np.float32)
    image[15:25, 10:20] = np.nan
    gradient = gradient_window(image, 1.5)
    assert np.abs(gradient.gx).max() < 1e-3 and np.abs(gradient.gy).max() < 1e-3
    assert np.all(gradient.gx[15:25, 10:20] == 0) and np.all(gradient.gy[15:25, 10:20] == 0)
    # the same hole filled with zeros is a strong edge: the masking matters
    filled = gradient_window(np.nan_to_num(image), 1.5)
    assert np.abs(filled.gx).max() > 10.0


def test_masked_ramp_keeps_its_slope_beside_the_hole():
    image = _ramp(50, 50)
    image[20:30, :25] = np.nan  # a nodata strip entering from the left
    valid = np.isfinite(image)
    inner = np.zeros_like(valid)
    inner[4:-4, 4:-4] = True
    keep = inner & ~binary_dilation(~valid, np.ones((3, 3), bool))

    def worst_error(gradient):
        return max(np.abs(gradient.gx[keep] - 3.0).max(), np.abs(gradient.gy[keep] - 5.0).max())

    gradient = gradient_window(image, 1.0)
    ring = binary_dilation(~valid, np.ones((3, 3), bool))
    assert np.all(gradient.gx[ring] == 0) and np.all(gradient.gy[ring] == 0)
    # a normalized convolution of a linear ramp is the ramp at the weighted
    # centroid of the valid pixels, so the slope stays of the right size next to
    # the hole; a zero-filled hole would add an edge as strong as the data
    assert worst_error(gradient) < 1.5
    assert worst_error(gradient_window(np.nan_to_num(image), 1.0)) > 30.0
    np.testing.assert_allclose(gradient.gx[:15][inner[:15]], 3.0, atol=2e-3)


def test_far_from_the_mask_nothing_changes():
    rng = np.random.default_rng(3)
    image = rng.normal(100, 20, (60, 60)).astype(np.float32)
    masked = image.copy()
    masked[:8, :] = np.nan
    sigma = 1.2
    plain, with_hole = gradient_window(image, sigma), gradient_window(masked, sigma)
    reach = int(GAUSSIAN_TRUNCATE * sigma + 0.5) + 1
    far = slice(8 + reach, 60 - reach), slice(reach, 60 - reach)
    np.testing.assert_allclose(with_hole.gx[far], plain.gx[far], atol=1e-3)
    np.testing.assert_allclose(with_hole.gy[far], plain.gy[far], atol=1e-3)


def test_tiny_sigma_with_hole_has_no_spurious_edge():
    image = np.full((20, 20), 50.0, np.float32)
    image[5:15, 5:15] = np.nan
    gradient = gradient_window(image, 0.2)
    assert np.abs(gradient.gx).max() < 1e-3 and np.abs(gradient.gy).max() < 1e-3


def test_input_is_not_modified_and_integer_input_works():
    image = np.arange(100, dtype=np.uint16).reshape(10, 10)
    before = image.copy()
    gradient = gradient_window(image, 1.0)
    np.testing.assert_array_equal(image, before)
    np.testing.assert_allclose(gradient.gx[4:6, 4:6], 1.0, atol=1e-4)
    nan_image = np.full((5, 5), 1.0, np.float32)
    nan_image[2, 2] = np.nan
    gradient_window(nan_image, 1.0)
    assert np.isnan(nan_image[2, 2])


@pytest.mark.parametrize("sigma", [0.5, 1.5])
def test_half_pixel_grid_keeps_the_slope_of_a_ramp(sigma):
    image = _ramp(30, 40)
    gradient = gradient_window(image, sigma, col_off=2, row_off=5, step_px=0.5)
    assert gradient.shape == (59, 79) and gradient.step_px == 0.5
    rows, cols = _interior(sigma, image.shape)
    inner = slice(2 * rows.start, 2 * rows.stop - 1), slice(2 * cols.start, 2 * cols.stop - 1)
    np.testing.assert_allclose(gradient.gx[inner], 3.0, atol=2e-3)
    np.testing.assert_allclose(gradient.gy[inner], 5.0, atol=2e-3)
    assert gradient.gx.dtype == np.float32 and (gradient.col_off, gradient.row_off) == (2, 5)


def test_half_pixel_grid_by_hand():
    # Column 3 is a 1 px line (value 8) on a zero background, no real smoothing.
    image = np.zeros((7, 7), np.float32)
    image[:, 3] = 8.0
    fine = gradient_window(image, 0.05, step_px=0.5)
    coarse = gradient_window(image, 0.05)
    # fine column 2j is the pixel centre j, 2j + 1 the boundary x = j + 1.
    # On the boundaries beside the line the difference is one-sided: +-8 per px;
    # at the line's own centre it is 0, at the neighbouring centres +-4 (central).
    np.testing.assert_allclose(fine.gx[6, 4:9], [4.0, 8.0, 0.0, -8.0, -4.0], atol=1e-4)
    # so |gx| peaks 0.5 px from the line's centre (x = 3.5) instead of 1 px
    np.testing.assert_allclose(coarse.gx[3, 1:6], [0.0, 4.0, 0.0, -4.0, 0.0], atol=1e-4)
    assert np.abs(fine.gy).max() < 1e-4


def test_half_pixel_grid_masks_what_touches_a_hole():
    image = np.full((20, 20), 10.0, np.float32)
    image[:, 10:] = 30.0
    image[4:7, 4:7] = np.nan
    coarse = gradient_window(image, 0.8)
    fine = gradient_window(image, 0.8, step_px=0.5)
    unusable = binary_dilation(~np.isfinite(image), np.ones((3, 3), bool))
    # fine node a interpolates the centres a // 2 and (a + 1) // 2 (one centre when a is even)
    expected = np.array([[unusable[np.ix_([a // 2, (a + 1) // 2], [b // 2, (b + 1) // 2])].any()
                          for b in range(39)] for a in range(39)])
    assert np.all(fine.gx[expected] == 0) and np.all(fine.gy[expected] == 0)
    # far from the hole, the pixel centres of the fine grid carry the coarse central differences
    np.testing.assert_allclose(fine.gx[20, ::2], coarse.gx[10], atol=1e-4)
    assert fine.gx[20, 19] > 1.3 * coarse.gx[10].max()  # the boundary x = 10 takes the one-sided difference


@pytest.mark.parametrize("step", [0.25, 2.0, 0.0, True, "0.5"])
def test_bad_grid_step(step):
    with pytest.raises(ValueError, match="step_px"):
        gradient_window(np.zeros((5, 5), np.float32), 1.0, step_px=step)


@pytest.mark.parametrize(
    "image, sigma, error, match",
    [
        (np.full((5, 5), np.nan, np.float32), 1.0, ValueError, "no valid pixel"),
        (np.zeros((0, 5), np.float32), 1.0, ValueError, "empty"),
        (np.zeros((5,), np.float32), 1.0, ValueError, "2-D"),
        (np.zeros((5, 5), np.float32), 0.0, ValueError, "sigma_px"),
        (np.zeros((5, 5), np.float32), -1.0, ValueError, "sigma_px"),
        (np.zeros((5, 5), np.float32), "1", TypeError, "sigma_px"),
        (np.zeros((5, 5), bool), 1.0, TypeError, "dtype"),
    ],
)
def test_bad_inputs(image, sigma, error, match):
    with pytest.raises(error, match=match):
        gradient_window(image, sigma)
