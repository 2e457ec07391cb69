"""bertscore.py as an evaluate metric: loading offline, parity with the official module's use of bert-score,
both feature shapes, the scorer cache, and Dataset.map."""

from __future__ import annotations

import shutil

import bert_score
import datasets
import evaluate
import pytest
import torch
from paths import (
    MINILM,
    REPO,
)
from reference import NTHREADS
from tolerances import assert_close, assert_scores_close, fp32, prf_bounds

from fastbertscore import Settings, cached_scorer, clear_model_cache


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(REPO / "bertscore.py"))


def official(cands, refs, minilm_path, **kwargs):
    """What evaluate-metric/bertscore computes: references as lists, idf over all of them, a BERTScorer."""
    refs = [[r] if isinstance(r, str) else list(r) for r in refs]
    idf_sents = [r for group in refs for r in group] if kwargs.get("idf") else None
    scorer = bert_score.BERTScorer(model_type=minilm_path, idf_sents=idf_sents, nthreads=NTHREADS, **kwargs)
    P, R, F = scorer.score(cands, refs)
    return {"precision": P.tolist(), "recall": R.tolist(), "f1": F.tolist()}


def assert_lists_close(ours: dict, theirs: dict):
    keys = ("precision", "recall", "f1")
    assert_scores_close([ours[k] for k in keys], [theirs[k] for k in keys])


@pytest.mark.parametrize("idf", [False, True])
def test_single_references_match_the_official_module(metric, mt_pairs, minilm_path, idf):
    cands, refs = mt_pairs[0][:30], mt_pairs[1][:30]
    out = metric.compute(predictions=cands, references=refs, model_type=MINILM, num_layers=4, idf=idf)
    assert_lists_close(out, official(cands, refs, minilm_path, num_layers=4, idf=idf))
    assert out["hashcode"].startswith(f"{MINILM}_L4_{'idf' if idf else 'no-idf'}_version=fastbertscore-")


def test_multi_references_match_the_official_module(metric, mt_pairs, minilm_path):
    cands = mt_pairs[0][:20]
    refs = [[mt_pairs[1][i], mt_pairs[0][(i + 3) % 20]] for i in range(20)]
    out = metric.compute(predictions=cands, references=refs, model_type=MINILM, num_layers=3, idf=True)
    assert_lists_close(out, official(cands, refs, minilm_path, num_layers=3, idf=True))


def test_loads_by_name_from_the_parent_of_a_bertscore_folder(tmp_path, monkeypatch):
    (tmp_path / "bertscore").mkdir()
    shutil.copy(REPO / "bertscore.py", tmp_path / "bertscore" / "bertscore.py")
    monkeypatch.chdir(tmp_path)
    loaded = evaluate.load("bertscore")
    assert type(loaded).__name__ == "BERTScore" and isinstance(loaded, evaluate.Metric)
    assert "BERTScore" in loaded.description and "@inproceedings{bert-score" in loaded.citation
    out = loaded.compute(predictions=["hello there"], references=["hello there"], model_type=MINILM)
    assert_close(out["f1"], [1.0], prf_bounds()[2], "F1 of identical texts")


def test_bad_inputs_are_rejected_clearly(metric):
    with pytest.raises(ValueError, match="Mismatch in the number of predictions"):
        metric.compute(predictions=["a", "b"], references=["a"], model_type=MINILM)
    with pytest.raises(TypeError, match=r"predictions\[1\] is None"):
        metric.compute(predictions=["a", None], references=["a", "b"], model_type=MINILM)
    with pytest.raises(ValueError, match="give model_type= or lang="):
        metric.compute(predictions=["a"], references=["a"])


def test_scorer_is_cached_and_rebuilt_when_results_would_change():
    settings = Settings(model_type=MINILM, num_layers=2, idf=True)
    first = cached_scorer(settings)
    assert cached_scorer(settings.replace(batch_size=8)) is first  # batch size never changes a number
    counted, other_idf = (cached_scorer(settings, refs) for refs in (["a cat", "a dog"], ["a cat", "the dog"]))
    assert not torch.equal(counted.weights().table, other_idf.weights().table)  # idf weights: a value per call
    assert counted.embedder is other_idf.embedder is first.embedder  # on the one kept scorer's loaded model
    assert cached_scorer(settings.replace(device="cpu")) is not first
    assert cached_scorer(Settings(model_type=MINILM, num_layers=3)) is not first
    tokenizer = cached_scorer(settings).tokenizer
    clear_model_cache()
    assert cached_scorer(settings).tokenizer is not tokenizer  # cleared: loaded again


def test_idf_follows_the_references_of_each_call(metric):
    a = metric.compute(predictions=["the cat sat"], references=["the cat sat down"], model_type=MINILM, idf=True)
    b = metric.compute(
        predictions=["the cat sat", "x"], references=["the cat sat down", "the cat"], model_type=MINILM, idf=True
    )
    # The official module would reuse the first idf; here the numbers move by more than rounding.
    assert abs(a["f1"][0] - b["f1"][0]) > prf_bounds()[2]


def test_dataset_map_batched_equals_one_compute(metric, mt_pairs):
    rows = {
        "candidate": mt_pairs[0][:40],
        "reference": [[r, c] for r, c in zip(mt_pairs[1][:40], mt_pairs[0][1:41], strict=True)],
    }
    dataset = datasets.Dataset.from_dict(rows)
    whole = metric.compute(predictions=rows["candidate"], references=rows["reference"], model_type=MINILM, num_layers=4)
    tokenizer = cached_scorer(Settings(model_type=MINILM, num_layers=4)).tokenizer

    def score_batch(batch):
        out = metric.compute(
            predictions=batch["candidate"], references=batch["reference"], model_type=MINILM, num_layers=4
        )
        return {"bertscore_f1": out["f1"], "bertscore_precision": out["precision"]}

    scored = dataset.map(score_batch, batched=True, batch_size=16, load_from_cache_file=False)
    # Equal up to fp32 rounding: encoder batches are padded differently in 16-row calls.
    assert_close(scored["bertscore_f1"], whole["f1"], prf_bounds()[2], "F1")
    assert_close(scored["bertscore_precision"], whole["precision"], fp32(), "P")
    assert cached_scorer(Settings(model_type=MINILM, num_layers=4)).tokenizer is tokenizer  # not loaded again
