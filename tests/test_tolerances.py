"""The tolerance policy still catches real breaks: for each kind of bound, scores off by 1e-4, a wrong pairing
or a swapped pick fail it, while the honest comparison passes (tolerances.py derives the bounds)."""

from __future__ import annotations

import pytest
import reference
import torch
from paths import SHIPPED_BASELINE
from scipy import stats
from tolerances import (
    REDUCED_PAIR,
    assert_reduced_precision_close,
    assert_scores_close,
    encoder,
    fp32,
    fp64,
    prf_bounds,
    two_devices,
)

import fastbertscore as fb
from fastbertscore.baselines.table import read_baseline

BREAK = 1e-4  # a real error: ten times the largest fp32 bound, far below what a user would notice


@pytest.fixture(scope="module")
def pairs(mt_pairs):
    return mt_pairs[0][:12], mt_pairs[1][:12]


def _shifted(scores, by):
    return [x + by for x in scores]


def test_the_bounds_are_derived_not_tuned():
    assert 1e-6 < fp32() < BREAK / 10  # MiniLM: 384 dims, texts up to 512 tokens: 8.7e-6
    assert prf_bounds()[2] == 2 * prf_bounds()[0]
    b = read_baseline(SHIPPED_BASELINE)[5]  # rescaling divides the bound by 1 - b, per column
    assert [x.item() for x in prf_bounds(baseline=b)] == pytest.approx(
        [prf_bounds()[k] / (1 - b[k].item()) for k in range(3)]
    )


def test_fp32_parity_fails_on_an_offset_and_on_a_wrong_pair(minilm_path, pairs):
    cands, refs = pairs
    ours = fb.score(cands, refs, model_type=minilm_path, num_layers=4)
    theirs = reference.score(cands, refs, model_type=minilm_path, num_layers=4)
    assert_scores_close(ours, theirs)
    with pytest.raises(AssertionError, match="exceeds the fp32 bound"):
        assert_scores_close(_shifted(ours, BREAK), theirs)
    wrong = fb.score(
        cands, refs[1:] + refs[:1], model_type=minilm_path, num_layers=4
    )  # each candidate, another reference
    with pytest.raises(AssertionError, match="exceeds the fp32 bound"):
        assert_scores_close(wrong, theirs)


def test_two_device_bound_is_derived_and_fails_on_an_offset(minilm_path, pairs):
    bound = two_devices(layers=4)  # MiniLM scored at layer 4: 5.5e-5
    assert fp32() < bound < BREAK
    assert bound == pytest.approx(2**0.5 * encoder(layers=4) + fp32())
    cands, refs = pairs
    ours = fb.score(cands, refs, model_type=minilm_path, num_layers=4)
    theirs = reference.score(cands, refs, model_type=minilm_path, num_layers=4)
    assert_scores_close(ours, theirs, bound=bound)
    with pytest.raises(AssertionError, match="exceeds the fp32 bound"):
        assert_scores_close(_shifted(ours, BREAK), theirs, bound=bound)


def test_rescaled_bound_fails_on_an_offset(minilm_path, pairs):
    cands, refs = pairs
    options = {
        "model_type": minilm_path,
        "num_layers": 5,
        "lang": "en",
        "rescale_with_baseline": True,
        "baseline_path": str(SHIPPED_BASELINE),
    }
    b = read_baseline(SHIPPED_BASELINE)[5]
    ours, theirs = fb.score(cands, refs, **options), reference.score(cands, refs, **options)
    assert_scores_close(ours, theirs, baseline=b)
    with pytest.raises(AssertionError, match="exceeds the fp32 bound"):
        assert_scores_close(_shifted(ours, BREAK), theirs, baseline=b)


def test_reduced_precision_bound_fails_on_a_wrong_pair_and_a_large_offset(pairs):
    cands, refs = pairs
    exact = fb.score(cands, refs, model_type=fb.DEFAULT_MODEL, num_layers=6)
    fast = fb.score(cands, refs, model_type=fb.DEFAULT_MODEL, num_layers=6, dtype="bfloat16")
    assert_reduced_precision_close(fast, exact)
    with pytest.raises(AssertionError, match="max"):
        assert_reduced_precision_close(_shifted(fast, 2 * REDUCED_PAIR), exact)
    wrong = fb.score(cands, refs[1:] + refs[:1], model_type=fb.DEFAULT_MODEL, num_layers=6, dtype="bfloat16")
    with pytest.raises(AssertionError, match="max"):
        assert_reduced_precision_close(wrong, exact)


def test_picks_and_correlations_fail_on_a_swap(pairs):
    cands, refs = pairs
    samples = [list(cands[:5])]
    result = fb.mbr(samples, model_type=fb.DEFAULT_MODEL, num_layers=4)
    F = fb.pairwise(samples[0], model_type=fb.DEFAULT_MODEL, num_layers=4)[2]
    utilities = (F.sum(dim=1) - F.diagonal()) / 4
    assert result.index[0] == int(utilities.argmax())  # picks are compared exactly ...
    top_two = utilities.topk(2).values
    assert top_two[0] - top_two[1] > 2 * prf_bounds()[2]  # ... which is safe only where no near-tie can flip them
    reversed_pick = fb.mbr([samples[0][::-1]], model_type=fb.DEFAULT_MODEL, num_layers=4).index[0]
    assert reversed_pick == 4 - result.index[0]
    # A correlation over the same scores agrees to float64 rounding; one swapped pair moves it by far more.
    scores = fb.score(cands, refs, model_type=fb.DEFAULT_MODEL)[2].double()
    human = torch.arange(len(cands), dtype=torch.float64)
    tau = stats.kendalltau(scores, human).statistic
    order = scores.argsort()
    broken = scores.clone()
    broken[order[0]], broken[order[-1]] = scores[order[-1]], scores[order[0]]
    assert abs(stats.kendalltau(broken, human).statistic - tau) > fp64(len(cands))


def test_f_where_p_plus_r_is_near_zero_is_still_checked():
    """Random-weight models give P + R ≈ 0, where F's bound against a reference is infinite: F is then held to
    its own formula, so a wrong F still fails."""
    P = torch.tensor([0.4, 3e-6, 0.0], dtype=torch.float32)
    R = torch.tensor([0.5, -2e-6, 0.0], dtype=torch.float32)
    F = (2 * P * R / (P + R)).nan_to_num(0.0)
    assert_scores_close((P, R, F), (P, R, F), width=32)
    for k, wrong in ((1, 0.0), (1, F[1].item() * (1 + 1e-4)), (2, 1.0)):
        broken = F.clone()
        broken[k] = wrong
        with pytest.raises(AssertionError, match="P \\+ R ≈ 0"):
            assert_scores_close((P, R, broken), (P, R, F), width=32)
