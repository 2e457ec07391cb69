"""BERTScorer and the scorer cache: one loaded model shared, idf weights as bert-score counts them, and each step
(token embeddings and weights, raw scores, finish) giving score()'s numbers."""

from __future__ import annotations

import bert_score
import pytest
import torch
from paths import MINILM
from tolerances import assert_close, assert_scores_close, fp32, stored_fp32

import fastbertscore as fb
from fastbertscore.settings import Settings


def test_the_cache_reuses_a_scorer_across_batch_sizes_and_rebuilds_it_when_a_number_would_change():
    first = fb.cached_scorer(Settings(model_type=MINILM, num_layers=3, batch_size=2))
    assert fb.cached_scorer(Settings(model_type=MINILM, num_layers=3, batch_size=64)) is first
    other = fb.cached_scorer(Settings(model_type=MINILM, num_layers=4))
    assert other is not first and other.num_layers == 4


def test_scorers_of_one_model_share_it_and_clearing_the_cache_reloads_it(mt_pairs):
    cands, refs = mt_pairs[0][:6], mt_pairs[1][:6]
    a = fb.BERTScorer(model_type=MINILM, num_layers=3)
    b = fb.BERTScorer.from_settings(Settings(model_type=MINILM, num_layers=3, batch_size=5))
    assert a.embedder.encoder.module is b.embedder.encoder.module and a.hash == b.hash
    fb.clear_model_cache()
    c = fb.BERTScorer(model_type=MINILM, num_layers=3)
    assert c.embedder.encoder.module is not a.embedder.encoder.module
    assert_scores_close(c.score(cands, refs), a.score(cands, refs))


def test_idf_weights_are_bert_scores(mt_pairs):
    refs = mt_pairs[1][:20]
    scorer = fb.BERTScorer(model_type=MINILM, idf=True, idf_sents=refs)
    theirs = bert_score.utils.get_idf_dict(refs, scorer.tokenizer, nthreads=1)
    table = scorer.weights().table
    for token in {t for ids in scorer.tokenizer(refs)["input_ids"] for t in ids} | {0, 2000}:
        expected = 0.0 if token in (scorer.tokenizer.sep_token_id, scorer.tokenizer.cls_token_id) else theirs[token]
        assert_close(table[token], expected, stored_fp32(expected), f"idf of token {token}")
    with pytest.raises(ValueError, match="idf=True but no idf weights: pass idf_sents="):
        fb.BERTScorer(model_type=MINILM, idf=True).weights()
    assert torch.equal(fb.BERTScorer(model_type=MINILM).weights().table, scorer.weights().fallback)


def test_document_frequencies_of_shards_add_up_to_the_whole(mt_pairs):
    cands, refs = mt_pairs[0][:10], mt_pairs[1][:10]
    whole = fb.BERTScorer(model_type=MINILM, idf=True, idf_sents=refs)
    sharded = fb.BERTScorer(model_type=MINILM, idf=True)
    counts = sharded.document_frequencies(refs[:4]) + sharded.document_frequencies(refs[4:])
    assert torch.equal(counts, whole.document_frequencies(refs))
    counted = sharded.with_idf(fb.IdfWeights.from_counts(counts, len(refs)))
    assert counted.hash == whole.hash
    assert_scores_close(counted.score(cands, refs), whole.score(cands, refs))
    assert counted.embedder is sharded.embedder, "the same loaded model"
    with pytest.raises(ValueError, match="idf=True but no idf weights"):
        sharded.weights()  # with_idf made another scorer: this one, perhaps shared, is unchanged


def test_a_scorer_with_other_idf_weights_names_them_in_its_signature_as_one_built_with_them(mt_pairs):
    refs = mt_pairs[1][:6]
    counted = fb.IdfWeights.counted(fb.BERTScorer(model_type=MINILM).tokenizer, refs, None)
    mapping = {7592: 2.0}
    mapped = fb.IdfWeights.from_mapping(mapping, counted.table.numel())
    bases = {
        "counted": fb.BERTScorer(model_type=MINILM, idf=True),
        "mapping": fb.BERTScorer(model_type=MINILM, idf=mapping),
        "mapped weights of idf=True": fb.BERTScorer.from_settings(Settings(model_type=MINILM, idf=True), idf=mapped),
    }
    built = {"counted": fb.BERTScorer(model_type=MINILM, idf=True, idf_sents=refs).signature}
    built["mapping"] = fb.BERTScorer(model_type=MINILM, idf=mapping).signature
    for name, base in bases.items():
        base.hash  # noqa: B018 (the base's signature, made before the other scorer is)
        for weights, kind in ((counted, "counted"), (mapped, "mapping")):
            other = base.with_idf(weights).signature
            assert (other, other.hash) == (built[kind], built[kind].hash), (name, kind)


def test_a_shared_scorer_is_never_changed_by_later_calls(mt_pairs):
    """compute() reuses one scorer while the settings stay; idf over other references is another scorer, and the
    first keeps its weights (a caller holding it sees the same numbers as before)."""
    cands, refs = mt_pairs[0][:6], mt_pairs[1][:6]
    first = fb.compute(cands, refs, model_type=MINILM, idf=True)
    held = fb.cached_scorer(fb.Settings(model_type=MINILM, idf=True), refs)
    table = held.weights().table.clone()
    fb.compute(cands, refs[::-1][:3] + refs[3:], model_type=MINILM, idf=True)
    fb.compute(cands[:2], ["x y z", "a b c"], model_type=MINILM, idf=True)
    assert torch.equal(held.weights().table, table)
    assert held.score_result(cands, refs).to_dict()["f1"] == first["f1"]


def test_token_embeddings_and_weights_rebuild_score(mt_pairs):
    """Greedy matching done by hand on the scorer's token embeddings and weights gives score()'s P and R."""
    cand, ref = mt_pairs[0][9], mt_pairs[1][9]
    scorer = fb.BERTScorer(model_type=MINILM, num_layers=3, idf=True, idf_sents=mt_pairs[1][:20])
    ids = [scorer.tokenizer(t)["input_ids"] for t in (cand, ref)]
    c, r = scorer.token_embeddings(ids, batch_size=1)
    sim = (c @ r.T).double()
    wc, wr = (scorer.token_weights(x).double() for x in ids)
    P = (sim.max(dim=1).values * wc).sum() / wc.sum()
    R = (sim.max(dim=0).values * wr).sum() / wr.sum()
    scored = scorer.score([cand], [ref])
    assert_close(P, scored[0][0], fp32(), "P by hand")
    assert_close(R, scored[1][0], fp32(), "R by hand")


def test_raw_scores_and_finish_give_score_result_with_several_references(mt_pairs):
    cands = mt_pairs[0][:4]
    refs = [[mt_pairs[1][i], mt_pairs[0][i + 5]] for i in range(4)]
    scorer = fb.BERTScorer(model_type=MINILM, lang="en", rescale_with_baseline=True)
    expected = fb.score(cands, refs, model_type=MINILM, lang="en", rescale_with_baseline=True)
    result = scorer.score_result(cands, refs, batch_size=3)
    assert_scores_close((result.precision, result.recall, result.f1), expected, baseline=scorer.baseline_vals)
    assert result.hash == scorer.hash and repr(scorer).startswith(f"BERTScorer(hash={scorer.hash}")
