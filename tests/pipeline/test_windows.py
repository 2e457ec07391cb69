"""long_inputs: "truncate" (bert-score), "window" (scored in full), "error"."""

from __future__ import annotations

import math

import pytest
import reference
import torch
from paths import MINILM
from tolerances import TINY_WIDTH, assert_close, assert_scores_close, prf_bounds, stored_fp32, unit_norm

import fastbertscore as fb
from fastbertscore.pipeline.windows import (
    WindowSpec,
    special_layout,
    stitch,
    window_ids,
    window_spans,
)

TEXT = (
    "The committee postponed its decision until next week because several members were travelling abroad. "
    "Researchers found that the new drug reduced symptoms in most patients, although side effects were common. "
    "Prices rose sharply after the announcement on Monday, and analysts expect further increases this year. "
)


@pytest.fixture(scope="module")
def window_scorer():
    return fb.BERTScorer(model_type=MINILM, num_layers=4, long_inputs="window")


def test_plan_covers_every_token_with_the_most_context():
    spec = WindowSpec(max_length=10, prefix=1, suffix=1, stride=2)  # 8 content tokens per window, step 6
    spans, owner = window_spans(2 + 20, spec)
    assert spans == [(0, 8), (6, 14), (12, 20)]
    assert len(owner) == 20 and owner[:7] == [0] * 7 and owner[7:13] == [1] * 6 and owner[13:] == [2] * 7
    ids = list(range(100, 122))
    windows = window_ids(ids, spec, spans)
    assert all(len(w) <= 10 and w[0] == 100 and w[-1] == 121 for w in windows)
    outputs = [torch.tensor(w, dtype=torch.float32).unsqueeze(-1) for w in windows]
    assert stitch(outputs, spec, spans, owner).squeeze(-1).tolist() == [float(i) for i in ids]


def test_special_layouts(tiny_model):
    from transformers import AutoTokenizer

    assert special_layout(AutoTokenizer.from_pretrained(tiny_model("bert"))) == (1, 1)
    assert special_layout(AutoTokenizer.from_pretrained(tiny_model("xlnet"))) == (0, 2)
    assert special_layout(AutoTokenizer.from_pretrained(tiny_model("t5"))) == (0, 1)


@pytest.mark.parametrize("mode", ["window", "error"])
def test_short_inputs_are_identical_in_every_mode(minilm_path, mt_pairs, mode):
    cands, refs = mt_pairs[0][:15], mt_pairs[1][:15]
    ours = fb.score(cands, refs, model_type=minilm_path, num_layers=3, long_inputs=mode, idf=True)
    plain = fb.score(cands, refs, model_type=minilm_path, num_layers=3, idf=True)
    theirs = reference.score(cands, refs, model_type=minilm_path, num_layers=3, idf=True)
    assert all(torch.equal(a, b) for a, b in zip(ours, plain, strict=True))
    assert_scores_close(ours, theirs)


def test_stitching_gives_one_embedding_per_token(window_scorer):
    ids = window_scorer.tokenizer(TEXT * 40)["input_ids"]
    assert len(ids) > 3 * window_scorer.max_length
    (emb,) = window_scorer.token_embeddings([ids])
    assert emb.shape == (len(ids), 384)
    assert_close(emb.norm(dim=-1), torch.ones(len(ids)), unit_norm(), "norms")


def test_two_copies_of_a_text_score_like_the_text_itself(window_scorer):
    doc = TEXT * 6  # ~ 300 tokens: two copies exceed 512
    assert len(window_scorer.tokenizer(doc + " " + doc)["input_ids"]) > window_scorer.max_length
    _P, R, F = window_scorer.score([doc + " " + doc], [doc])
    assert R.item() > 0.97 and F.item() > 0.95
    _P2, _R2, F2 = window_scorer.score([doc + " " + doc], [doc + " " + doc])
    tokens = len(window_scorer.tokenizer(doc + " " + doc)["input_ids"])
    assert_close(F2, torch.ones(1), prf_bounds(tokens=tokens)[2], "F of identical long texts")


def test_a_fact_beyond_the_window_counts_only_in_window_mode(window_scorer):
    filler = TEXT * 12  # ~ 600 tokens
    fact = " The secret launch code is purple elephant seventeen."
    truncating = fb.BERTScorer(model_type=MINILM, num_layers=4)
    assert len(truncating.tokenizer(filler)["input_ids"]) > truncating.max_length
    cut_without, cut_with = (truncating.score([filler], [ref])[1] for ref in (filler, filler + fact))
    assert torch.equal(cut_without, cut_with)  # the fact is cut away
    full_without, full_with = (window_scorer.score([filler], [ref])[1] for ref in (filler, filler + fact))
    assert full_with.item() < full_without.item() - 0.005


def test_error_mode_names_the_first_long_input():
    with pytest.raises(
        ValueError, match=r"cands\[1\] has \d+ tokens, more than the model's 512; pass long_inputs='window'"
    ):
        fb.score(["short", TEXT * 12, TEXT * 13], ["a", "b", "c"], model_type=MINILM, long_inputs="error")
    with pytest.raises(ValueError, match="long_inputs='chunk' is not one of truncate, window, error"):
        fb.score(["a"], ["b"], model_type=MINILM, long_inputs="chunk")


def test_idf_is_counted_on_full_sequences_in_window_mode():
    sents = [TEXT * 12 + " zanzibar", "zanzibar", "nothing here"]
    windowed = fb.BERTScorer(model_type=MINILM, num_layers=2, idf=True, idf_sents=sents, long_inputs="window")
    cut = fb.BERTScorer(model_type=MINILM, num_layers=2, idf=True, idf_sents=sents)
    token = windowed.tokenizer("zanzibar", add_special_tokens=False)["input_ids"][0]
    in_two = math.log(4 / 3)
    assert windowed.token_weights([token]).item() == pytest.approx(in_two, abs=stored_fp32(in_two))  # in 2 of 3
    in_one = math.log(4 / 2)
    assert cut.token_weights([token]).item() == pytest.approx(in_one, abs=stored_fp32(in_one))  # the cut hides one


@pytest.mark.slow
def test_twenty_thousand_token_document(window_scorer):
    doc = (TEXT * 400).strip()
    n = len(window_scorer.tokenizer(doc)["input_ids"])
    assert n > 20_000
    P, R, F = window_scorer.score([doc], [TEXT * 20])
    assert all(math.isfinite(x.item()) for x in (P, R, F)) and R.item() > 0.97


def test_tokenizer_without_max_length_reads_relative_positions_whole_in_both_modes(tiny_model):
    """DeBERTa-v3-style: no limit reported and relative positions only, so nothing is cut (bert-score on
    transformers 4.57 read such texts whole); the window mode has nothing to add and must agree."""
    path, long_text = tiny_model("deberta-v2"), "the quick brown fox jumps over the lazy dog " * 10
    windowed = fb.BERTScorer(model_type=path, num_layers=2, long_inputs="window")
    assert windowed.max_length is None and len(windowed.tokenizer(long_text)["input_ids"]) > 40
    whole = windowed.score([long_text], ["the quick brown fox"])
    assert_scores_close(
        whole,
        fb.score([long_text], ["the quick brown fox"], model_type=path, num_layers=2),
        width=TINY_WIDTH,
        tokens=200,
    )


def test_explain_in_window_mode_covers_the_whole_text():
    long_ref = TEXT * 12 + "The secret launch code is purple elephant seventeen."
    e = fb.explain(TEXT * 12, long_ref, model_type=MINILM, num_layers=4, level="word", long_inputs="window")
    assert long_ref[e.reference_units[-1].start :] == "."  # units reach the end of the 600-token text
    assert "elephant" in [u.text for u in e.missing_spans]
