"""Where bert-score 0.3.13 is wrong under transformers 5, fastbertscore does the right thing."""

from __future__ import annotations

import logging
import random

import bert_score
import pytest
import torch
from tiny_models import MAX_LEN
from tolerances import TINY_WIDTH, assert_close, assert_scores_close, prf_bounds

import fastbertscore as fb
from fastbertscore.pipeline.defaults import fallback_layer


def test_empty_and_blank_texts_score_zero(minilm_path, mt_pairs, caplog):
    cands, refs = list(mt_pairs[0][:6]), list(mt_pairs[1][:6])
    cands[1], refs[3], cands[4], refs[4] = "", "   \t ", "\n", ""
    with pytest.raises(AttributeError):  # bert-score crashes on empty strings under transformers 5
        bert_score.score(cands, refs, model_type=minilm_path, num_layers=4)
    with caplog.at_level(logging.WARNING, logger="fastbertscore"):
        P, R, F = fb.score(cands, refs, model_type=minilm_path, num_layers=4)
    for i in (1, 3, 4):
        assert P[i] == R[i] == F[i] == 0
    keep = [0, 2, 5]
    ref = bert_score.score([cands[i] for i in keep], [refs[i] for i in keep], model_type=minilm_path, num_layers=4)
    assert_scores_close([x[keep] for x in (P, R, F)], ref)
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "candidate(s) empty (first: cands[1])" in messages and "reference(s) empty (first: refs[3])" in messages


def test_model_missing_from_the_table_gets_a_depth_proportional_layer(tiny_model, mt_pairs, caplog):
    path = tiny_model("bert")  # 4 layers, not in model2layers
    with pytest.raises(KeyError):
        bert_score.score(mt_pairs[0][:3], mt_pairs[1][:3], model_type=path)
    with caplog.at_level(logging.WARNING, logger="fastbertscore"):
        (_P, _R, F), hashcode = fb.score(mt_pairs[0][:3], mt_pairs[1][:3], model_type=path, return_hash=True)
    layer = fallback_layer(4)
    assert layer == 3 and f"_L{layer}_" in hashcode
    assert any(f"using layer {layer} of 4" in r.getMessage() for r in caplog.records)
    explicit = fb.score(mt_pairs[0][:3], mt_pairs[1][:3], model_type=path, num_layers=layer)
    assert torch.equal(F, explicit[2])


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


def test_idf_over_a_single_reference_is_finite(minilm_path):
    cands, refs = ["the cat sat on the mat", "a dog"], ["the cat sat on the mat"] * 2
    ref = bert_score.score(cands[:1], refs[:1], model_type=minilm_path, num_layers=4, idf=True)
    assert torch.isnan(ref[0]).all()  # 0/0: every token of the only reference has idf 0
    P, R, F = fb.score(cands[:1], refs[:1], model_type=minilm_path, num_layers=4, idf=True)
    plain = fb.score(cands[:1], refs[:1], model_type=minilm_path, num_layers=4)
    assert torch.isfinite(torch.stack([P, R, F])).all()
    assert_scores_close((P, R, F), plain)


def test_scores_do_not_depend_on_order_batch_or_company(tiny_model, mt_pairs):
    # Random weights give negative similarities, where bert-score's padding acts as a 0 match.
    path = tiny_model("electra")
    cands, refs = mt_pairs[0][:20], mt_pairs[1][:20]
    base = fb.BERTScorer(model_type=path, num_layers=2, batch_size=64).score(cands, refs)
    order = list(range(len(cands)))
    random.Random(0).shuffle(order)
    for batch_size in (1, 3, 64):
        shuffled = fb.BERTScorer(model_type=path, num_layers=2, batch_size=batch_size).score(
            [cands[i] for i in order], [refs[i] for i in order]
        )
        assert_scores_close(shuffled, [x[order] for x in base], width=TINY_WIDTH, tokens=MAX_LEN)
    alone = fb.score(cands[7:8], refs[7:8], model_type=path, num_layers=2)
    assert_scores_close(alone, [x[7:8] for x in base], width=TINY_WIDTH, tokens=MAX_LEN)


def test_roberta_prefix_space_is_applied(tiny_model):
    """bert-score asks for a prefix space per call, which transformers 5 ignores; we set it on the tokenizer."""
    from transformers import AutoTokenizer

    path = tiny_model("roberta-noprefix")
    raw = AutoTokenizer.from_pretrained(path)
    scorer = fb.BERTScorer(model_type=path, num_layers=1)
    text = "Hello world, this is a test."
    assert scorer.tokenizer(text)["input_ids"] == raw(" " + text)["input_ids"] != raw(text)["input_ids"]


def test_multi_reference_all_layers_takes_the_max_per_layer(tiny_model, mt_pairs):
    """bert-score slices the layer axis instead of the references here; each layer must equal its own run."""
    path = tiny_model("bert")
    cands = mt_pairs[0][:5]
    refs = [[mt_pairs[1][i], mt_pairs[0][i + 1]] for i in range(5)]
    every = fb.score(cands, refs, model_type=path, all_layers=True, num_layers=4)
    assert every[0].shape == (5, 5)
    for layer in range(5):
        single = fb.score(cands, refs, model_type=path, num_layers=layer)
        assert_scores_close([x[layer] for x in every], single, width=TINY_WIDTH, tokens=MAX_LEN)


def test_identical_texts_and_duplicates(minilm_path, mt_pairs):
    texts = list(mt_pairs[1][:8])
    _P, _R, F = fb.score(texts + texts[:2], texts + texts[:2], model_type=minilm_path, num_layers=4)
    assert_close(F, torch.ones_like(F), prf_bounds()[2], "F of identical texts")
    assert torch.equal(F[:2], F[-2:])


def test_layer_zero_of_deberta_v2_reads_the_embeddings(tiny_model):
    """transformers' DeBERTa-v2 encoder crashes with zero layers; layer 0 is the embedding output."""
    path = tiny_model("deberta-v2")
    _P, _R, F = fb.score(["a cat sat"], ["a cat sat"], model_type=path, num_layers=0)
    assert_close(F, torch.ones(1), prf_bounds(TINY_WIDTH, tokens=MAX_LEN)[2], "F of identical texts")
    every = fb.score(["a cat sat", "the dog"], ["a dog sat", "the cat"], model_type=path, num_layers=4, all_layers=True)
    zero = fb.score(["a cat sat", "the dog"], ["a dog sat", "the cat"], model_type=path, num_layers=0)
    assert_scores_close([x[0] for x in every], zero, width=TINY_WIDTH, tokens=MAX_LEN)
