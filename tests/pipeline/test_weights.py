"""Token weights: idf equal to bert-score's get_idf_dict, plain weights, user mappings, and the 0/0 fallback."""

from __future__ import annotations

from collections import defaultdict

import pytest
import reference
import torch
from bert_score.utils import get_idf_dict
from paths import MINILM
from tolerances import assert_scores_close, stored_fp32

import fastbertscore as fb
from fastbertscore.models.loading import load_tokenizer
from fastbertscore.pipeline.tokens import tokenize
from fastbertscore.pipeline.weights import (
    document_frequencies,
    idf_table,
    plain_table,
    sentence_weights,
    table_from_mapping,
)


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer(MINILM)


def test_idf_equals_bert_scores_idf_dict(tokenizer, mt_pairs):
    refs = mt_pairs[1][:30]
    ids = tokenize(tokenizer, refs, 512).ids
    table = idf_table(document_frequencies(ids, tokenizer.vocab_size), len(refs))
    reference = get_idf_dict(refs, tokenizer, nthreads=1)
    seen = sorted({t for seq in ids for t in seq})
    assert torch.allclose(table[seen], torch.tensor([reference[t] for t in seen], dtype=torch.float32), atol=0, rtol=0)
    unseen = next(t for t in range(tokenizer.vocab_size) if t not in set(seen))
    # log(M + 1), the defaultdict's default, stored in float32
    assert float(table[unseen]) == pytest.approx(reference[unseen], abs=stored_fp32(reference[unseen]))


def test_plain_weights_zero_the_special_tokens(tokenizer):
    table = plain_table(tokenizer.vocab_size, [tokenizer.cls_token_id, tokenizer.sep_token_id, None])
    ids = tokenize(tokenizer, ["a cat"], 512).ids[0]
    assert sentence_weights(ids, table, table).tolist() == [0.0] + [1.0] * (len(ids) - 2) + [0.0]


def test_mappings_need_a_weight_for_every_token_or_a_default():
    partial = table_from_mapping({5: 2.0}, 10)
    with pytest.raises(ValueError, match="idf has no weight for token id 7"):
        sentence_weights([5, 7], partial, partial)
    with_default = table_from_mapping(defaultdict(lambda: 0.5, {5: 2.0}), 10)
    assert sentence_weights([5, 7], with_default, with_default).tolist() == [2.0, 0.5]
    with pytest.raises(TypeError, match="got key 'x'"):
        table_from_mapping({"x": 1.0}, 10)


def test_all_zero_idf_falls_back_to_plain_weights():
    # One reference: every token has df = M, idf 0 everywhere, and bert-score divides 0 by 0.
    idf = idf_table(document_frequencies([[1, 4, 2]], 8), 1)
    plain = plain_table(8, [1, 2])
    assert sentence_weights([1, 4, 2], idf, plain).tolist() == [0.0, 1.0, 0.0]


@pytest.mark.parametrize(
    "mapping, named",
    [
        ({5: 2.0, 7: float("inf")}, r"token id 7 is inf"),
        ({5: float("nan")}, r"token id 5 is nan"),
        ({5: -0.5}, r"token id 5 is -0.5"),
        ({5: 1e39}, r"token id 5 is 1e\+39"),  # finite in float64, infinite in float32
        (defaultdict(lambda: -1.0, {5: 2.0}), r"the default weight \(of tokens the mapping lacks\) is -1.0"),
        (defaultdict(lambda: float("nan")), r"the default weight \(of tokens the mapping lacks\) is nan"),
    ],
)
def test_weights_that_are_not_finite_or_negative_are_refused_by_token_id(mapping, named):
    with pytest.raises(ValueError, match=named + ": weights must be finite and not negative"):
        table_from_mapping(mapping, 10)


@pytest.mark.parametrize("weight", ["0.5", True, None, [1.0]])
def test_weights_that_are_not_numbers_are_refused_by_token_id(weight):
    with pytest.raises(TypeError, match="idf weight of token id 5 must be a number"):
        table_from_mapping({5: weight}, 10)


@pytest.mark.parametrize("weight", [float("inf"), -1.0])
def test_every_entry_point_refuses_such_a_mapping(tiny_model, weight):
    import fastbertscore as fb

    model = tiny_model("bert")
    scorer = fb.BERTScorer(model_type=model, num_layers=2)
    idf = defaultdict(lambda: 1.0, {scorer.tokenizer("cat")["input_ids"][1]: weight})
    for call in (
        lambda: fb.score(["a cat"], ["the cat"], model_type=model, num_layers=2, idf=idf),
        lambda: fb.BERTScorer(model_type=model, num_layers=2, idf=idf),
        lambda: fb.pairwise(["a cat"], ["the cat"], model_type=model, num_layers=2, idf=idf),
        lambda: fb.compute(predictions=["a cat"], references=["the cat"], model_type=model, num_layers=2, idf=idf),
    ):
        with pytest.raises(ValueError, match="weights must be finite and not negative"):
            call()


@pytest.mark.parametrize("weight", [float("nan"), float("inf"), -0.5])
def test_settings_refuse_such_a_mapping_before_any_model_loads(weight):
    """The check runs where every option is checked: a model that does not exist is never asked for."""
    from fastbertscore import Settings

    with pytest.raises(ValueError, match="idf weight of token id 7 is .*: weights must be finite and not negative"):
        Settings(model_type="no-such-org/no-such-model", idf={7: weight})


def test_idf_over_a_single_reference_is_finite(minilm_path):
    cands, refs = ["the cat sat on the mat", "a dog"], ["the cat sat on the mat"] * 2
    ref = reference.score(cands[:1], refs[:1], model_type=minilm_path, num_layers=4, idf=True)
    assert torch.isnan(ref[0]).all()  # 0/0: every token of the only reference has idf 0
    P, R, F = fb.score(cands[:1], refs[:1], model_type=minilm_path, num_layers=4, idf=True)
    plain = fb.score(cands[:1], refs[:1], model_type=minilm_path, num_layers=4)
    assert torch.isfinite(torch.stack([P, R, F])).all()
    assert_scores_close((P, R, F), plain)
