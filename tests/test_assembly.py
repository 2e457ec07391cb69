"""fastbertscore.assembly: the one model kept loaded between calls."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from paths import MINILM
from tolerances import assert_scores_close

import fastbertscore as fb
from fastbertscore import assembly

CANDS, REFS = ["The cat sat on the mat."], ["A cat was sitting on the mat."]


@pytest.fixture
def broken_model(tiny_model, tmp_path) -> str:
    """A model folder whose config and tokenizer load and whose weights file is damaged."""
    folder = Path(shutil.copytree(tiny_model("bert"), tmp_path / "broken"))
    for weights in folder.glob("*.safetensors"):
        weights.write_bytes(b"not a safetensors file")
    return str(folder)


@pytest.mark.parametrize("failing", ["an unknown id", "damaged weights"])
def test_a_failed_load_leaves_the_loaded_model_serving(failing, broken_model):
    # The kept model was released before the next one loaded: a load that failed left none.
    fb.clear_model_cache()
    good = fb.Settings(model_type=MINILM)
    kept = assembly.build_embedder(good).encoder.module
    expected = fb.score(CANDS, REFS, model_type=MINILM)
    bad = fb.Settings(model_type="no-such-org/no-such-model" if failing == "an unknown id" else broken_model)
    with pytest.raises(Exception):  # noqa: B017 - the load's own error; what matters is what it leaves behind
        assembly.build_embedder(bad)
    assert assembly.build_embedder(good).encoder.module is kept  # still loaded: not loaded again
    assert_scores_close(fb.score(CANDS, REFS, model_type=MINILM), expected)


def test_a_new_model_replaces_the_kept_one_once_loaded(tiny_model):
    fb.clear_model_cache()
    first = assembly.build_embedder(fb.Settings(model_type=MINILM)).encoder.module
    tiny = assembly.build_embedder(fb.Settings(model_type=tiny_model("bert"), num_layers=2)).encoder.module
    assert tiny is not first
    assert assembly.build_embedder(fb.Settings(model_type=MINILM)).encoder.module is not first  # one kept at a time
