"""core.extraction.regions against scipy.ndimage (the reference) on random masks."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.extraction.adaptive import _DISC
from core.extraction.regions import closed, distance_to_outside

masks = arrays(bool, st.tuples(st.integers(1, 30), st.integers(1, 30)))


@settings(max_examples=80, deadline=None)
@given(masks, st.integers(0, 4))
def test_closing_is_scipys_with_border_value_one(mask, radius):
    from scipy import ndimage

    disc = np.hypot(*np.mgrid[-radius:radius + 1, -radius:radius + 1]) <= radius
    np.testing.assert_array_equal(closed(mask, disc), ndimage.binary_closing(mask, disc, border_value=1))


@settings(max_examples=80, deadline=None)
@given(masks)
def test_distance_is_scipys_euclidean_distance_transform(mask):
    from scipy import ndimage

    if mask.all():
        assert np.isinf(distance_to_outside(mask)).all()
    else:
        np.testing.assert_allclose(distance_to_outside(mask), ndimage.distance_transform_edt(mask), rtol=0, atol=1e-9)


def test_the_closing_disc_of_centre_map_closes_a_two_pixel_gap():
    mask = np.ones((20, 20), bool)
    mask[:, 9:11] = False
    assert closed(mask, _DISC).all()
    root2 = np.sqrt(2.0)
    np.testing.assert_allclose(distance_to_outside(~np.eye(3, dtype=bool)), [[0, 1, root2], [1, 0, 1], [root2, 1, 0]])
