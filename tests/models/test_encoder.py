"""Encoders: cut at the chosen layer (its output is that layer's hidden state), limits read right."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import bert_score
import pytest
import torch
from tiny_models import FAMILIES, MAX_LEN
from tolerances import TINY_WIDTH, assert_close, assert_scores_close, encoder, prf_bounds

import fastbertscore as fb
from fastbertscore.models.encoder import load_encoder, max_input_length, model_depth
from fastbertscore.models.loading import load_tokenizer


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


def test_tokenizer_without_a_max_length_reads_relative_positions_whole(tiny_model, caplog):
    path = tiny_model("deberta-v2")  # tokenizer says 1e30, as DeBERTa-v3's does; relative positions only
    with pytest.raises(OverflowError):
        bert_score.score(["a cat"], ["a dog"], model_type=path, num_layers=2)
    scorer = fb.BERTScorer(model_type=path, num_layers=2)
    assert scorer.tokenizer.model_max_length > 1e20 and scorer.max_length is None  # as bert-score on 4.57
    long = "the quick brown fox jumps over the lazy dog " * 20
    with caplog.at_level(logging.WARNING, logger="fastbertscore"):
        _P, _R, F = scorer.score([long, "a cat"], ["a dog", long])
    assert torch.isfinite(F).all()
    assert not [r for r in caplog.records if "were cut" in r.getMessage()]


def test_layer_zero_of_deberta_v2_reads_the_embeddings(tiny_model):
    """transformers' DeBERTa-v2 encoder crashes with zero layers; layer 0 is the embedding output."""
    path = tiny_model("deberta-v2")
    _P, _R, F = fb.score(["a cat sat"], ["a cat sat"], model_type=path, num_layers=0)
    assert_close(F, torch.ones(1), prf_bounds(TINY_WIDTH, tokens=MAX_LEN)[2], "F of identical texts")
    every = fb.score(["a cat sat", "the dog"], ["a dog sat", "the cat"], model_type=path, num_layers=4, all_layers=True)
    zero = fb.score(["a cat sat", "the dog"], ["a dog sat", "the cat"], model_type=path, num_layers=0)
    assert_scores_close([x[0] for x in every], zero, width=TINY_WIDTH, tokens=MAX_LEN)
