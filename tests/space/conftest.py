"""Fixtures of the Space's tests."""

from __future__ import annotations

import pytest

import fastbertscore as fb
from fastbertscore import assembly


@pytest.fixture
def model_builds(monkeypatch):
    """Every model build from here on (no scorer or model is kept from before), as the settings of each: a test
    that a request is refused before any model work asserts that this stays empty."""
    builds = []
    build = assembly.build_embedder
    monkeypatch.setattr(assembly, "build_embedder", lambda settings: builds.append(settings) or build(settings))
    fb.clear_model_cache()
    return builds
