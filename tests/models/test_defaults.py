"""Published tables and the hash format."""

from __future__ import annotations

import logging

import bert_score
import bert_score.utils
import pytest
import torch

import fastbertscore as fb
from fastbertscore.models.defaults import fallback_layer, layer_source, model_for_lang


def test_model_table_is_the_published_one_plus_the_tuned_default():
    ours = dict(fb.model2layers)
    assert ours.pop(fb.DEFAULT_MODEL) == 3
    assert ours == bert_score.utils.model2layers and len(ours) == 140
    assert layer_source("roberta-large") == "bert-score 0.3.13"
    assert "human_judgments_toen.tsv" in layer_source(fb.DEFAULT_MODEL)


def test_language_defaults():
    for lang in ("en", "zh", "tr", "en-sci", "EN"):
        assert model_for_lang(lang) == bert_score.utils.lang2model[lang.lower()]
    for lang in ("de", "fr", "cs", "fi"):
        assert model_for_lang(lang) == bert_score.utils.lang2model[lang] == "bert-base-multilingual-cased"


def test_fallback_layer_is_three_quarters_of_depth():
    assert [fallback_layer(d) for d in (0, 1, 4, 6, 12, 24)] == [0, 1, 3, 5, 9, 18]


def test_hash_format_follows_the_reference():
    kinds = [(False, False, False, False), (True, True, False, True), (True, True, True, False)]
    for idf, rescale, custom, fast in kinds:
        ours = fb.get_hash("roberta-large", 17, idf, rescale, custom, fast)
        ref = bert_score.utils.get_hash("roberta-large", 17, idf, rescale, custom, fast)
        ref_version = f"version={bert_score.__version__}("
        assert ours == ref.replace(ref_version, f"version=fastbertscore-{fb.__version__}(")


def test_model_missing_from_the_table_gets_a_depth_proportional_layer(tiny_model, mt_pairs, caplog):
    path = tiny_model("bert")  # 4 layers, not in model2layers
    fb.clear_model_cache()  # the layer is chosen (and the warning given) where a scorer is made, not by a kept one
    with pytest.raises(KeyError):
        bert_score.score(mt_pairs[0][:3], mt_pairs[1][:3], model_type=path)
    with caplog.at_level(logging.WARNING, logger="fastbertscore"):
        (_P, _R, F), hashcode = fb.score(mt_pairs[0][:3], mt_pairs[1][:3], model_type=path, return_hash=True)
    layer = fallback_layer(4)
    assert layer == 3 and f"_L{layer}_" in hashcode
    assert any(f"using layer {layer} of 4" in r.getMessage() for r in caplog.records)
    explicit = fb.score(mt_pairs[0][:3], mt_pairs[1][:3], model_type=path, num_layers=layer)
    assert torch.equal(F, explicit[2])


def test_the_embedded_models_folder_is_known_by_its_id(caplog):
    """The embedded default model's folder takes the id's tuned layer, as it takes the id's baselines (it gave the
    fallback layer, 5 of 6, with a warning)."""
    from fastbertscore.models.loading import model_id, resolve_model_source

    folder = resolve_model_source(fb.DEFAULT_MODEL)
    assert model_id(folder) == fb.DEFAULT_MODEL and model_id("roberta-large") == "roberta-large"
    with caplog.at_level(logging.WARNING):
        scorer = fb.BERTScorer(model_type=folder)
    assert scorer.num_layers == fb.BERTScorer(model_type=fb.DEFAULT_MODEL).num_layers == 3
    assert "no tuned layer" not in caplog.text
