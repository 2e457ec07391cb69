"""The torchmetrics drop-in: several updates, forward, reset and two gloo ranks all equal one score() over
everything (idf included); torchmetrics' arguments behave as there or are refused with what to use instead."""

from __future__ import annotations

import pytest
import torch
from gloo import on_gloo_ranks
from paths import MINILM
from tiny_models import MAX_LEN
from tolerances import TINY_WIDTH, assert_scores_close

import fastbertscore as fb
from fastbertscore.integrations.torchmetrics import BERTScore


@pytest.mark.parametrize("idf", [False, True])
def test_several_updates_equal_one_score(mt_pairs, idf):
    cands, refs = mt_pairs[0][:20], mt_pairs[1][:20]
    metric = BERTScore(model_name_or_path=MINILM, num_layers=4, idf=idf)
    metric.update(cands[:7], refs[:7])
    metric.update(cands[7], refs[7])  # a single string, as torchmetrics takes it
    metric.update(tuple(cands[8:]), tuple(refs[8:]))
    out = metric.compute()
    assert set(out) == {"precision", "recall", "f1"}
    assert_scores_close(
        (out["precision"], out["recall"], out["f1"]), fb.score(cands, refs, model_type=MINILM, num_layers=4, idf=idf)
    )


def test_several_references_rescaling_hash_and_all_layers(mt_pairs):
    cands = mt_pairs[0][:6]
    multi = [[r, mt_pairs[0][i + 1]][: 1 + i % 2] for i, r in enumerate(mt_pairs[1][:6])]
    metric = BERTScore(model_name_or_path=MINILM, lang="en", rescale_with_baseline=True, return_hash=True)
    metric.update(cands[:3], multi[:3])
    metric.update(cands[3:], multi[3:])
    out = metric.compute()
    scorer = fb.BERTScorer(model_type=MINILM, lang="en", rescale_with_baseline=True)
    assert out["hash"] == scorer.hash
    assert_scores_close(
        (out["precision"], out["recall"], out["f1"]), scorer.score(cands, multi), baseline=scorer.baseline_vals
    )
    every = BERTScore(model_name_or_path=MINILM, all_layers=True, num_layers=6)
    every.update(cands, [m[0] for m in multi])
    assert every.compute()["f1"].shape == (7, 6)


def test_forward_scores_the_batch_and_keeps_it_and_reset_forgets(mt_pairs):
    cands, refs = mt_pairs[0][:8], mt_pairs[1][:8]
    metric = BERTScore(model_name_or_path=MINILM)
    batch = metric(cands[:4], refs[:4])
    assert_scores_close(
        (batch["precision"], batch["recall"], batch["f1"]), fb.score(cands[:4], refs[:4], model_type=MINILM)
    )
    metric(cands[4:], refs[4:])
    assert_scores_close(
        tuple(metric.compute()[k] for k in ("precision", "recall", "f1")), fb.score(cands, refs, model_type=MINILM)
    )
    metric.reset()
    with pytest.raises(ValueError, match="compute\\(\\) before any update"):
        metric.compute()
    assert metric.state_dict() == {}  # torchmetrics keeps states out of the state_dict unless persistent(True)
    metric.persistent(True)
    metric.update("a", "b")
    assert set(metric.state_dict()) == {"pred_bytes", "pred_lengths", "ref_bytes", "ref_lengths", "ref_counts"}


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"model": torch.nn.Linear(2, 2)},
            TypeError,
            r"BERTScore\(\.\.\., model=\.\.\.\) has no meaning.*model_name_or_path",
        ),
        ({"user_tokenizer": object()}, TypeError, "user_tokenizer=.*has no meaning"),
        ({"user_forward_fn": len}, TypeError, "user_forward_fn=.*num_layers"),
        ({"baseline_url": "https://x"}, TypeError, "baseline_url=.*baseline_path"),
        ({"max_length": 128}, ValueError, "max_length=128"),
        ({"dtype": "int4"}, ValueError, "dtype='int4' is not one of"),
        ({"colour": "red"}, ValueError, "Unexpected keyword arguments: `colour`"),  # torchmetrics' own check
    ],
)
def test_arguments_without_a_meaning_here_are_refused(kwargs, error, message):
    with pytest.raises(error, match=message):
        BERTScore(model_name_or_path=MINILM, **kwargs)


def test_bad_updates_name_the_item():
    metric = BERTScore(model_name_or_path=MINILM)
    with pytest.raises(ValueError, match="2 predictions but 1 targets"):
        metric.update(["a", "b"], ["c"])
    with pytest.raises(TypeError, match=r"preds\[1\] is None; expected a string"):
        metric.update(["a", None], ["c", "d"])
    with pytest.raises(TypeError, match="preds must be a list of strings, got dict"):  # not its keys
        metric.update({"a cat": 1}, {"a cat": 2})
    with pytest.raises(TypeError, match="return_hash must be True or False, got str 'no'"):
        BERTScore(model_name_or_path=MINILM, return_hash="no")
    with pytest.raises(TypeError, match=r"target\[0\] must be a string or a non-empty list"):
        metric.update(["a"], [[]])


def _rank(rank, model, cands, refs):
    torch.set_num_threads(1)
    half = slice(0, 5) if rank == 0 else slice(5, None)  # uneven halves
    result = {}
    for idf in (False, True):
        metric = BERTScore(model_name_or_path=model, num_layers=2, idf=idf)
        metric.update(cands[half][:2], refs[half][:2])
        metric.update(cands[half][2:], refs[half][2:])
        out = metric.compute()
        result[str(idf)] = [out[k].tolist() for k in ("precision", "recall", "f1")]
    return result


@pytest.mark.distributed
@pytest.mark.slow
def test_two_gloo_ranks_each_compute_the_score_of_everything(tiny_model, mt_pairs, tmp_path):
    model = tiny_model("bert")
    cands, refs = mt_pairs[0][:11], [[r, mt_pairs[0][-1]] for r in mt_pairs[1][:11]]
    ranks = on_gloo_ranks(_rank, tmp_path, model, cands, refs)
    for idf in (False, True):
        single = fb.score(cands, refs, model_type=model, num_layers=2, idf=idf)  # idf over every reference
        for rank, result in enumerate(ranks):
            assert_scores_close(
                result[str(idf)], single, width=TINY_WIDTH, tokens=MAX_LEN, what=f"rank {rank}, idf={idf}: "
            )
