"""Where a rescaling baseline comes from."""

from __future__ import annotations

from pathlib import Path

from .baselines import BaselineError


def find_baseline(lang: str, model_type: str) -> tuple[Path, str]:
    raise BaselineError(f"no baseline for {model_type} on lang={lang!r}; pass baseline_path=")
