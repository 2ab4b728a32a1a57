"""What one default ``linesnap extract`` loads: the appearance's smoothing equals scipy's, without importing it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.extraction.appearance import gaussian_reflect

ROOT = Path(__file__).resolve().parents[3]


@settings(max_examples=60, deadline=None)
@given(arrays(np.float32, st.tuples(st.integers(1, 40), st.integers(1, 40)), elements=st.floats(-1e4, 1e4, width=32)),
       st.floats(0.3, 6.0), st.sampled_from([2.0, 3.0, 4.0]))
def test_gaussian_reflect_is_scipys_gaussian_filter(image, sigma_px, truncate):
    from scipy import ndimage

    expected = ndimage.gaussian_filter(image, sigma_px, truncate=truncate)
    got = gaussian_reflect(image, sigma_px, truncate)
    assert got.dtype == np.float32 and got.shape == image.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * (1 + float(np.abs(image).max())))


def test_a_default_extract_command_loads_neither_scipy_ndimage_nor_skimage(tmp_path):
    code = (
        "import sys\n"
        "from core.cli.extract import extract_main\n"
        f"status = extract_main(['--demo', '--backend', 'cpu', '-o', {str(tmp_path / 'out.geojson')!r}])\n"
        "bad = [m for m in sys.modules if m.split('.')[0] == 'skimage' or m.startswith('scipy.ndimage')]\n"
        "print(status, ','.join(sorted(bad)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"
