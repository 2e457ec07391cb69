"""Parity with bert-score 0.3.13, computed on the same inputs in the same run (fp32, CPU; bounds from tolerances.py);
once per run for each distinct call (tests/reference.py), whatever encoder batch size of ours a test runs at."""

from __future__ import annotations

import logging
from pathlib import Path

import bert_score
import pytest
import reference
from bert_score.utils import get_idf_dict
from tiny_models import MAX_LEN
from tolerances import TINY_WIDTH, assert_scores_close

import fastbertscore as fb
from fastbertscore.baselines.table import read_baseline
from fastbertscore.pipeline.budget import forced_batch_size
from fastbertscore.signature import digest

BERT_SCORE_BASELINES = Path(bert_score.__file__).parent / "rescale_baseline"


def assert_same_tiny(ours, ref):
    assert_scores_close(ours, ref, width=TINY_WIDTH, tokens=MAX_LEN)


FORCED_BATCH = forced_batch_size()  # the second numeric path's encoder batches (.ci/run)


@pytest.mark.parametrize("num_layers", [1, 4, 6])
@pytest.mark.parametrize("idf", [False, True])
def test_minilm_single_reference(minilm_path, mt_pairs, num_layers, idf):
    cands, refs = mt_pairs
    ours = fb.score(cands, refs, model_type=minilm_path, num_layers=num_layers, idf=idf)
    ref = reference.score(cands, refs, model_type=minilm_path, num_layers=num_layers, idf=idf)
    assert_scores_close(ours, ref)


def test_minilm_idf_dict(minilm_path, mt_pairs):
    cands, refs = mt_pairs
    tokenizer = bert_score.utils.get_tokenizer(minilm_path)
    idf_dict = get_idf_dict(refs[:20], tokenizer, nthreads=0)
    ours = fb.score(cands, refs, model_type=minilm_path, num_layers=3, idf=idf_dict)
    ref = reference.score(cands, refs, model_type=minilm_path, num_layers=3, idf=idf_dict)
    assert_scores_close(ours, ref)


@pytest.mark.parametrize("idf", [False, True])
def test_minilm_multi_reference(minilm_path, mt_pairs, idf):
    cands, refs = mt_pairs
    # 1 to 3 references per candidate, different counts side by side.
    multi = [[refs[i], refs[(i + 5) % len(refs)], cands[(i + 1) % len(cands)]][: 1 + i % 3] for i in range(len(cands))]
    ours = fb.score(cands, multi, model_type=minilm_path, num_layers=5, idf=idf)
    ref = reference.score(cands, multi, model_type=minilm_path, num_layers=5, idf=idf)
    assert_scores_close(ours, ref)


def test_minilm_all_layers(minilm_path, mt_pairs):
    cands, refs = mt_pairs
    ours = fb.score(cands, refs, model_type=minilm_path, all_layers=True, num_layers=6)
    ref = reference.score(cands, refs, model_type=minilm_path, all_layers=True, num_layers=6)
    assert ours[0].shape == (7, len(cands))
    assert_scores_close(ours, ref)


@pytest.mark.parametrize("batch_size", [FORCED_BATCH] if FORCED_BATCH else [1, 7, 64])  # forced: all the same
def test_minilm_batch_sizes(minilm_path, mt_pairs, batch_size):
    cands, refs = mt_pairs
    ref = reference.score(cands, refs, model_type=minilm_path, num_layers=4, batch_size=64)
    ours = fb.BERTScorer(model_type=minilm_path, num_layers=4, batch_size=batch_size).score(cands, refs)
    assert_scores_close(ours, ref)


def test_minilm_long_inputs_are_truncated_like_the_reference(minilm_path, mt_pairs, caplog):
    cands, refs = mt_pairs
    long_cands = [" ".join([cands[0]] * 150), cands[1], cands[2]]  # about 600 tokens > 512
    long_refs = [refs[0], " ".join([refs[1]] * 150), refs[2]]
    with caplog.at_level(logging.WARNING, logger="fastbertscore"):
        ours = fb.score(long_cands, long_refs, model_type=minilm_path, num_layers=4)
    ref = reference.score(long_cands, long_refs, model_type=minilm_path, num_layers=4)
    assert_scores_close(ours, ref)
    cut = [r for r in caplog.records if "were cut" in r.getMessage()]
    assert len(cut) == 1 and cut[0].getMessage().startswith(
        f"2 of {len(set(long_cands + long_refs))} distinct input texts"
    )


def test_minilm_rescale_with_custom_baseline(minilm_path, mt_pairs):
    cands, refs = mt_pairs
    baseline = str(BERT_SCORE_BASELINES / "en" / "bert-base-uncased.tsv")  # any LAYER,P,R,F table with ≥ 7 rows
    (ours, our_hash) = fb.score(
        cands,
        refs,
        model_type=minilm_path,
        num_layers=3,
        rescale_with_baseline=True,
        lang="en",
        baseline_path=baseline,
        return_hash=True,
    )
    ref, ref_hash = reference.score(
        cands,
        refs,
        model_type=minilm_path,
        num_layers=3,
        rescale_with_baseline=True,
        lang="en",
        baseline_path=baseline,
        return_hash=True,
    )
    assert_scores_close(ours, ref, baseline=read_baseline(baseline)[3])
    assert ref_hash.endswith("-custom-rescaled")
    # bert-score's part, then the table's digest: a different custom table is a different hash.
    assert our_hash.split("-custom-rescaled")[0].split("_version=")[0] == ref_hash.split("_version=")[0]
    assert our_hash.endswith(f"-custom-rescaled_baseline={digest(Path(baseline).read_bytes())}")


def test_minilm_rescale_all_layers(minilm_path, mt_pairs):
    cands, refs = mt_pairs
    baseline = str(BERT_SCORE_BASELINES / "en" / "distilbert-base-uncased.tsv")  # 7 rows, like MiniLM-L6
    kwargs = {
        "model_type": minilm_path,
        "all_layers": True,
        "num_layers": 6,
        "lang": "en",
        "rescale_with_baseline": True,
        "baseline_path": baseline,
    }
    assert_scores_close(
        fb.score(cands[:20], refs[:20], **kwargs),
        reference.score(cands[:20], refs[:20], **kwargs),
        baseline=read_baseline(baseline),
    )


def test_scorer_matches_reference_scorer(minilm_path, mt_pairs):
    cands, refs = mt_pairs
    ours = fb.BERTScorer(model_type=minilm_path, num_layers=2, idf=True, idf_sents=refs)
    ref = bert_score.BERTScorer(
        model_type=minilm_path, num_layers=2, idf=True, idf_sents=refs, nthreads=reference.NTHREADS
    )
    assert_scores_close(ours.score(cands, refs), ref.score(cands, refs))
    assert ours.hash.split("_version=")[0] == ref.hash.split("_version=")[0]


# Every family, layer 1 / last / all layers, idf and both tokenizer kinds: tests/test_families.py (the family
# matrix, against bert-score as published and live). Here: several references with truncation.


@pytest.mark.parametrize("family", ["bert", "t5", "xlnet", "roberta"])
def test_families_multi_reference_and_truncation(tiny_model, mt_pairs, family):
    path = tiny_model(family)
    cands = mt_pairs[0][:6] + [" ".join(mt_pairs[0][:8])]  # the last one exceeds the tiny models' 40 tokens
    refs = [[r, mt_pairs[1][-1]] for r in mt_pairs[1][:7]]
    ours = fb.score(cands, refs, model_type=path, num_layers=2, idf=True)
    ref = reference.score(cands, refs, model_type=path, num_layers=2, idf=True, batch_size=1)
    assert_same_tiny(ours, ref)
