"""Lint, format and types are part of the test run: README's one test command (and so .ci/run) checks them, with
the configuration in pyproject.toml (docs/testing.md). Any finding fails here, with the tool's own report."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from paths import REPO

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    "command",
    [["ruff", "check", "."], ["ruff", "format", "--check", "."], [sys.executable, "-m", "mypy"]],
    ids=["ruff check", "ruff format", "mypy"],
)
def test_the_tree_is_clean(command):
    if command[0] == "ruff" and shutil.which("ruff") is None:
        command = [sys.executable, "-m", *command]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout[-4000:]}{done.stderr[-2000:]}"
