"""ScoreResult: raw and rescaled scores from one pass, and which reference counted for P, R and F."""

from __future__ import annotations

import torch
from paths import MINILM
from tiny_models import MAX_LEN
from tolerances import TINY_WIDTH, assert_close, assert_scores_close, prf_bounds

import fastbertscore as fb
from fastbertscore.result import best_of_groups


def test_best_reference_is_where_each_maximum_came_from(mt_pairs):
    cands, refs = mt_pairs[0][:6], mt_pairs[1][:6]
    groups = [[refs[i], refs[(i + 1) % 6], cands[i].upper()][: 1 + i % 3] for i in range(6)]  # 1 to 3 refs each
    scorer = fb.BERTScorer(model_type=MINILM, lang="en", rescale_with_baseline=True)
    result = scorer.score_result(cands, groups)
    for i, group in enumerate(groups):
        per_ref = scorer.score_result([cands[i]] * len(group), group).raw  # each reference on its own
        for k in range(3):
            best = int(result.best_reference[k][i])
            assert 0 <= best < len(group)
            assert_close(result.raw[k][i], per_ref[k][best], prf_bounds()[k], f"{'PRF'[k]} of the best reference")
            assert_close(result.raw[k][i], per_ref[k].max(), prf_bounds()[k], f"{'PRF'[k]} of the best reference")
    baseline = scorer.baseline_vals
    expected = [(result.raw[k] - baseline[k]) / (1 - baseline[k]) for k in range(3)]
    assert_scores_close(result.rescaled, expected, baseline=baseline)
    assert all(torch.equal(a, b) for a, b in zip(scorer.score(cands, groups), result.rescaled, strict=True))
    as_dict = result.to_dict()
    assert as_dict["f1"] == result.f1.tolist() and as_dict["raw_f1"] == result.raw[2].tolist()
    assert as_dict["best_reference_f"] == result.best_reference[2].tolist()


def test_single_references_have_no_best_index_and_no_rescaled_values_unless_asked(mt_pairs):
    cands, refs = mt_pairs[0][:3], mt_pairs[1][:3]
    result = fb.BERTScorer(model_type=MINILM).score_result(cands, refs)
    assert result.best_reference is None and result.rescaled is None
    assert_scores_close((result.precision, result.recall, result.f1), fb.score(cands, refs, model_type=MINILM))
    assert result.to_dict().keys() == {"precision", "recall", "f1", "hashcode"}


def test_best_of_groups_over_layers_and_ties():
    raw = torch.tensor([[0.1, 0.5, 0.3], [0.4, 0.5, 0.3], [0.9, 0.9, 0.9]])
    values, index = best_of_groups(raw, [(0, 2), (2, 3)])
    assert index.tolist() == [[1, 0, 0], [0, 0, 0]]  # ties go to the first reference
    assert torch.equal(values, raw[[1, 2]])
    _layered_values, layered_index = best_of_groups(torch.stack([raw, raw.flip(-1)]), [(0, 2), (2, 3)])
    assert layered_index.shape == (2, 2, 3) and torch.equal(layered_index[0], index)


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
