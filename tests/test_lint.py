"""The source keeps to ruff's E, F and W rules at 120 columns (``pyproject.toml``, ``[tool.ruff]``).

Checked where ``ruff`` is installed (the ``test`` extra), as ``tests/test_layers.py`` runs ``lint-imports``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("ruff", path=str(Path(sys.executable).parent)) is None,
                    reason="ruff is not installed (the test extra installs it)")
def test_ruff_finds_nothing():
    command = str(Path(sys.executable).parent / "ruff")
    done = subprocess.run([command, "check", "--no-cache", "--output-format", "concise", "."],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
