"""Encoders: cut at the chosen layer (its output is that layer's hidden state), limits read right."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from tiny_models import FAMILIES
from tolerances import TINY_WIDTH, assert_close, encoder

from fastbertscore.pipeline.encoder import load_encoder, max_input_length, model_depth
from fastbertscore.pipeline.loading import load_tokenizer


# Not T5-style encoders: a cut one applies the final layer norm to its last kept layer (as bert-score's cut
# does), while their hidden_states[k] are un-normed for k < depth; tests/test_parity.py covers them.
@pytest.mark.parametrize("family", ["bert", "roberta", "deberta-v2"])
def test_a_cut_encoder_returns_the_hidden_state_of_its_layer(tiny_model, family):
    path = tiny_model(family)
    tokenizer = load_tokenizer(path)
    whole = load_encoder(path, None, all_layers=True)
    ids = torch.tensor([tokenizer("a cat sat on the mat")["input_ids"]])
    mask = torch.ones_like(ids)
    with torch.inference_mode():
        every = whole(ids, mask)  # (1, T, L + 1, D)
        for layer in (0, 1, whole.depth):
            cut = load_encoder(path, layer)
            assert cut.num_layers == layer and model_depth(cut.module) in (layer, max(layer, 1))
            expected = every[:, :, layer]
            bound = encoder(TINY_WIDTH, max(layer, 1)) * expected.norm(dim=-1).max().item()
            assert_close(cut(ids, mask), expected, bound, f"layer {layer}")


def test_a_tokenizer_without_a_limit_gets_the_models_positions(tiny_model):
    path = tiny_model("bert")
    tokenizer, encoder = load_tokenizer(path), load_encoder(path, 1)
    tokenizer.model_max_length = int(1e30)  # what many tokenizers report
    assert max_input_length(tokenizer, encoder) == encoder.module.config.max_position_embeddings


@pytest.mark.parametrize("family", FAMILIES)
def test_a_layer_out_of_range_is_refused_from_the_config_before_any_weights_load(tiny_model, tmp_path, family):
    # layer=999 was refused only after the weights had loaded (gigabytes for a large model). A folder whose
    # weights file is damaged shows which came first: the layer's message, not the weights' error.
    folder = Path(shutil.copytree(tiny_model(family), tmp_path / family))
    for weights in folder.glob("*.safetensors"):
        weights.write_bytes(b"damaged")
    depth = load_encoder(tiny_model(family), None, all_layers=True).depth
    with pytest.raises(ValueError, match=rf"num_layers=999 is out of range for .*\(0\.\.{depth};"):
        load_encoder(str(folder), 999)
    load_encoder(tiny_model(family), depth)  # the config's depth is the model's: its last layer is in range
