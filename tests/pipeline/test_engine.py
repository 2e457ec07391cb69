"""The engine's work splitting (chunks, token budgets, batches) never changes a score."""

from __future__ import annotations

from tolerances import assert_scores_close

import fastbertscore as fb
from fastbertscore.pipeline.embed import length_batches
from fastbertscore.pipeline.embedder import Budget
from fastbertscore.pipeline.engine import score_pairs
from fastbertscore.validate import check_pairs


def test_length_batches_respect_both_limits():
    lengths = [10, 9, 9, 5, 3, 3, 3, 1]
    batches = list(length_batches(lengths, range(8), batch_size=3, max_tokens=20))
    assert [i for b in batches for i in b] == list(range(8))
    for b in batches:
        assert len(b) <= 3 and (len(b) == 1 or len(b) * lengths[b[0]] <= 20)
    assert list(length_batches([50], [0], batch_size=4, max_tokens=8)) == [[0]]  # too long alone: own batch


def test_small_chunks_and_budgets_give_the_same_scores(minilm_path, mt_pairs):
    scorer = fb.BERTScorer(model_type=minilm_path, num_layers=3, all_layers=True)
    pairs = check_pairs(
        mt_pairs[0], [[r, c] for r, c in zip(mt_pairs[1], mt_pairs[0][1:] + mt_pairs[0][:1], strict=True)]
    )
    run = lambda budget: score_pairs(scorer.embedder, pairs, scorer.weights(), budget=budget)
    whole = run(Budget())
    # ~2 sentences' worth of embeddings per chunk, 1-3 sentences per batch: many chunks, re-embedded texts
    tiny = run(Budget(batch_size=3, max_tokens=40, embedding_bytes=2 * 30 * 7 * 384 * 4))
    assert whole.shape == (7, len(pairs.cands), 3)
    assert_scores_close(whole.unbind(-1), tiny.unbind(-1))
