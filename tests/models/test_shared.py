"""fastbertscore.models.shared: one loaded model per id, encoders of every layer over its one copy of the weights,
a precision converted from it, and one embedding cache per model, precision, layer and window."""

from __future__ import annotations

import logging
import os
import shutil
from collections import defaultdict

import pytest
import torch
from paths import MINILM
from tiny_models import save_tiny

import fastbertscore as fb
from fastbertscore import assembly
from fastbertscore.models.encoder import load_encoder
from fastbertscore.models.shared import MAX_EMBEDDING_CACHES, MAX_MODELS, MODELS, SharedModels

CANDS, REFS = ["The cat sat on the mat.", "It rained."], ["A cat was sitting on the mat.", "Rain fell all day."]


def _load(models: SharedModels, model: str, layer: int | None, precision: str = "float32"):
    return models.load(
        model,
        device="cpu",
        precision=precision,
        use_fast=False,
        num_layers=layer,
        all_layers=False,
        layer_registry=False,
    )


def _storage(module: torch.nn.Module) -> set[int]:
    return {t.data_ptr() for t in (*module.parameters(), *module.buffers())}


def test_a_layer_alternation_loads_the_weights_once():
    # Layers 1, 2, 1, 2 loaded the default model four times: the model cache was keyed by the layer.
    fb.clear_model_cache()
    before = MODELS.stats().loads
    scores = [fb.score(CANDS, REFS, model_type=MINILM, num_layers=layer) for layer in (1, 2, 1, 2)]
    assert MODELS.stats().loads - before == 1
    for first, again in zip(scores[:2], scores[2:], strict=True):  # a later cut leaves an earlier one as it was
        assert all(torch.equal(a, b) for a, b in zip(first, again, strict=True))
    assert not torch.equal(scores[0][2], scores[1][2])


def test_encoders_at_different_layers_share_the_weights_storage():
    fb.clear_model_cache()
    one = assembly.build_embedder(fb.Settings(model_type=MINILM, num_layers=1)).encoder
    three = assembly.build_embedder(fb.Settings(model_type=MINILM, num_layers=3)).encoder
    assert len(one.module.encoder.layer) == 1 and len(three.module.encoder.layer) == 3
    assert _storage(one.module) < _storage(three.module)  # each of layer 1's tensors is layer 3's own, not a copy
    stats = MODELS.stats()
    assert stats.models == 1 and stats.copies == 1


@pytest.mark.parametrize("family", ["albert", "xlm", "deberta-v2", "t5"])
def test_a_view_at_each_layer_computes_what_a_model_loaded_and_cut_for_it_does(tiny_model, family):
    # ALBERT and XLM are cut through their config and a counter, DeBERTa-v2's layer 0 through a one-layer encoder,
    # T5 is an encoder taken out of a seq2seq model: views of one loaded model must not see each other's cuts.
    models, path = SharedModels(), tiny_model(family)
    ids = torch.tensor([[3, 7, 9, 11, 4]])
    mask = torch.ones_like(ids)
    with torch.inference_mode():
        for layer in (2, 0, 1, 2):
            view = _load(models, path, layer).encoder
            assert torch.equal(view(ids, mask), load_encoder(path, layer)(ids, mask)), f"layer {layer}"
    assert models.stats().loads == 1


def test_a_precision_is_converted_from_the_float32_copy_to_the_values_a_load_gives(tiny_model):
    for family in ("bert", "t5"):  # LayerNorm kept in float32; T5's own norm cast with the rest
        path = tiny_model(family)
        models = SharedModels()
        whole = _load(models, path, 2).encoder.module
        half = _load(models, path, 2, "bfloat16").encoder.module
        stats = models.stats()
        assert (stats.loads, stats.conversions, stats.copies) == (1, 1, 2)
        loaded = _load(SharedModels(), path, 2, "bfloat16").encoder.module  # loaded, then cast in place
        expected = loaded.state_dict()
        assert half.state_dict().keys() == expected.keys()
        for name, tensor in half.state_dict().items():
            assert tensor.dtype == expected[name].dtype and torch.equal(tensor, expected[name]), name
        assert all(p.dtype == torch.float32 for p in whole.parameters())  # the float32 copy is left as it was
        _load(models, path, 1, "bfloat16")
        _load(models, path, 3)
        assert models.stats().conversions == 1 and models.stats().copies == 2  # one copy per precision


def test_a_model_used_in_a_half_precision_alone_is_not_kept_in_float32(tiny_model):
    half, whole = SharedModels(), SharedModels()
    _load(half, tiny_model("bert"), 2, "bfloat16")
    _load(whole, tiny_model("bert"), 2)
    assert (half.stats().loads, half.stats().copies) == (1, 1)
    assert half.stats().weight_bytes < 0.6 * whole.stats().weight_bytes  # cast in place: no float32 copy beside it


def test_at_most_max_models_are_kept_and_the_oldest_goes(tiny_model):
    assert MODELS.max_models == MAX_MODELS
    models = SharedModels(max_models=1)
    first = _load(models, tiny_model("bert"), 2).encoder.module
    models.embedding_cache((_load(models, tiny_model("bert"), 2).key, "layer 2"), 1 << 20)
    _load(models, tiny_model("roberta"), 2)
    stats = models.stats()
    assert (stats.models, stats.loads, stats.embedding_caches) == (1, 2, 0)  # its caches went with it
    assert _load(models, tiny_model("bert"), 2).encoder.module is not first
    assert models.stats().loads == 3


def test_two_names_of_one_folder_are_one_model(tiny_model, tmp_path):
    models = SharedModels()
    link = tmp_path / "same"
    link.symlink_to(tiny_model("bert"))
    for name in (tiny_model("bert"), str(link), str(link) + os.sep):
        _load(models, name, 1)
    _load(models, MINILM, 1)
    _load(models, MINILM.split("/")[1], 2)  # the default's short name is the embedded copy too
    assert models.stats().loads == 2


def test_a_model_saved_again_into_its_folder_is_loaded_again(tmp_path):
    folder = save_tiny("bert", tmp_path / "model", seed=0)
    models = SharedModels()
    before = _load(models, str(folder), 2).encoder
    weights = next(folder.glob("*.safetensors"))
    shutil.rmtree(folder)
    save_tiny("bert", folder, seed=1)  # another run saves into the same folder
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # whatever the clock's resolution
    after = _load(models, str(folder), 2).encoder
    assert models.stats().loads == 2
    assert not torch.equal(
        before.module.embeddings.word_embeddings.weight, after.module.embeddings.word_embeddings.weight
    )


def test_embedding_caches_are_one_per_key_and_bounded():
    models = SharedModels()
    first = models.embedding_cache(("model", 1), 1 << 20)
    assert models.embedding_cache(("model", 1), 2 << 20) is first and first.max_bytes == 2 << 20  # the last size
    for layer in range(2, MAX_EMBEDDING_CACHES + 2):
        models.embedding_cache(("model", layer), 1 << 20)
    assert models.stats().embedding_caches == MAX_EMBEDDING_CACHES
    assert models.embedding_cache(("model", 1), 1 << 20) is not first  # the least recently used went


def test_a_new_scorer_with_other_idf_weights_finds_the_embedding_cache_warm():
    # Each Embedder owned its cache: a scorer with other idf weights (or the Space's raw twin) started cold.
    fb.clear_model_cache()
    counted = fb.BERTScorer(model_type=MINILM, num_layers=2, idf=True, idf_sents=REFS, cache_mb=4)
    counted.score(CANDS, REFS)
    cache = counted.embedder.cache
    misses = cache.misses
    mapped = fb.BERTScorer(model_type=MINILM, num_layers=2, idf=defaultdict(lambda: 1.0, {7: 2.0}), cache_mb=4)
    mapped.score(CANDS, REFS)
    assert mapped.embedder.cache is cache and cache.misses == misses and cache.hits >= len(CANDS) + len(REFS)
    other_layer = fb.BERTScorer(model_type=MINILM, num_layers=3, cache_mb=4)
    assert other_layer.embedder.cache is not cache  # another layer embeds otherwise


def test_a_models_default_layer_is_chosen_and_warned_about_once(tiny_model, caplog):
    models = SharedModels()
    with caplog.at_level(logging.WARNING, logger="fastbertscore"):
        layers = {_load(models, tiny_model("bert"), None).encoder.num_layers for _ in range(3)}
    assert layers == {3}  # three quarters of the tiny model's 4 layers
    assert len([r for r in caplog.records if "has no tuned layer" in r.getMessage()]) == 1
