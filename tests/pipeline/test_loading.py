"""Models are found offline: a local folder, the embedded copy, or the id for the Hub."""

from __future__ import annotations

from paths import MINILM

from fastbertscore.pipeline.loading import resolve_model_source


def test_the_embedded_model_is_found_in_site_packages(minilm_path):
    assert resolve_model_source(MINILM) == minilm_path
    assert resolve_model_source("all-MiniLM-L6-v2") == minilm_path
