"""Settings: one checked value per run; options that would make the hash and the numbers disagree are refused."""

from __future__ import annotations

import pytest
import torch
from paths import MINILM
from tolerances import assert_scores_close

import fastbertscore as fb
from fastbertscore.settings import Settings


def test_an_idf_mapping_with_idf_sents_is_refused_naming_both():
    for build in (
        lambda **o: fb.score(["a cat"], ["a dog"], model_type=MINILM, **o),
        lambda **o: fb.BERTScorer(model_type=MINILM, **o),
    ):
        with pytest.raises(ValueError, match=r"idf=\{token_id: weight\} and idf_sents= .* give one"):
            build(idf={7592: 2.0}, idf_sents=["a cat sat", "it rains"])


def test_counting_idf_over_sentences_replaces_a_mapping_in_the_hash_too(mt_pairs):
    cands, refs = mt_pairs[0][:8], mt_pairs[1][:8]
    mapped = fb.BERTScorer(model_type=MINILM, idf={7592: 2.0})
    before = mapped.hash
    mapped.compute_idf(refs)  # the weights now come from these sentences: so must the hash
    counted = fb.BERTScorer(model_type=MINILM, idf=True, idf_sents=refs)
    assert mapped.hash == counted.hash != before
    assert_scores_close(mapped.score(cands, refs), counted.score(cands, refs))


def test_unknown_options_and_bad_values_are_named():
    with pytest.raises(TypeError, match="score\\(\\) got an unexpected keyword argument 'idf_weights'"):
        Settings.from_options("score()", {"idf_weights": {}})
    with pytest.raises(TypeError, match="idf must be True, False or a"):
        Settings(model_type=MINILM, idf="yes")
    with pytest.raises(ValueError, match="batch_size"):
        Settings(model_type=MINILM, batch_size=0)


@pytest.mark.parametrize("name", ["all_layers", "rescale_with_baseline", "use_fast_tokenizer", "layer_registry"])
@pytest.mark.parametrize("value", [1, "no", None])
def test_a_switch_given_something_else_than_a_bool_is_named(name, value):
    # All_layers=1 crashed inside the encoder, all_layers="no" inside transformers
    with pytest.raises(TypeError, match=f"{name} must be True or False, got {type(value).__name__}"):
        Settings(model_type=MINILM, lang="en", **{name: value})
    with pytest.raises(TypeError, match=f"{name} must be True or False"):
        fb.score(["The cat sat."], ["A cat sat."], model_type=MINILM, **{name: value})


def test_settings_hold_no_texts_and_idf_is_counted_over_the_flattened_references_only_when_idf_is_true():
    refs = ["a cat", ["it rains", "rain falls"]]
    with pytest.raises(TypeError, match="unexpected keyword argument 'idf_sents'"):
        Settings(model_type=MINILM, idf=True, idf_sents=["x"])  # type: ignore[call-arg]
    counted = fb.BERTScorer(model_type=MINILM, idf=True, idf_sents=["a cat", "it rains", "rain falls"]).weights()
    assert torch.equal(fb.cached_scorer(Settings(model_type=MINILM, idf=True), refs).weights().table, counted.table)
    assert torch.equal(fb.cached_scorer(Settings(model_type=MINILM), refs).weights().table, counted.fallback)


def test_numbers_key_ignores_only_what_it_is_told():
    a, b = Settings(model_type=MINILM, batch_size=2), Settings(model_type=MINILM, batch_size=64)
    assert a.numbers_key() != b.numbers_key()
    assert a.numbers_key(ignore=("batch_size",)) == b.numbers_key(ignore=("batch_size",))
    assert (
        Settings(model_type=MINILM, idf={1: 2.0}).numbers_key()
        != Settings(model_type=MINILM, idf={1: 3.0}).numbers_key()
    )
