"""What one default ``linesnap extract`` loads: not scikit-image (only the ribbon and edge modes use it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_a_default_extract_command_does_not_load_skimage(tmp_path):
    code = (
        "import sys\n"
        "from core.cli.extract import extract_main\n"
        f"status = extract_main(['--demo', '--backend', 'cpu', '-o', {str(tmp_path / 'out.geojson')!r}])\n"
        "bad = [m for m in sys.modules if m.split('.')[0] == 'skimage']\n"
        "print(status, ','.join(sorted(bad)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"
