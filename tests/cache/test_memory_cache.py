"""The in-process embedding cache: reused across calls, never changes a score, stays within its budget."""

from __future__ import annotations

import torch
from paths import MINILM
from tolerances import assert_scores_close

import fastbertscore as fb
from fastbertscore.cache.memory import EmbeddingCache


def test_cache_reuses_references_without_changing_scores(mt_pairs):
    cands, refs = mt_pairs
    cached = fb.BERTScorer(model_type=MINILM, num_layers=4, cache_mb=64)
    plain = fb.BERTScorer(model_type=MINILM, num_layers=4)
    first = cached.score(cands[:30], refs[:30])
    misses = cached.cache.misses
    second = cached.score(cands[30:], refs[:30])  # another "system" against the same references
    assert cached.cache.hits >= len(set(refs[:30]) - set(cands[30:]))
    assert cached.cache.misses - misses <= len(set(cands[30:]) | set(refs[:30]))
    assert_scores_close(second, plain.score(cands[30:], refs[:30]))
    assert_scores_close(first, plain.score(cands[:30], refs[:30]))


def test_cache_stays_within_its_budget():
    cache = EmbeddingCache(max_bytes=3 * 4 * 10 * 8)  # room for three (10, 8) float32 tensors
    for i in range(5):
        cache.put([i], torch.zeros(10, 8))
    assert len(cache) == 3 and cache.bytes <= cache.max_bytes
    assert cache.get([0]) is None and cache.get([4]) is not None
    cache.put([99], torch.zeros(1000, 8))  # larger than the whole budget: not kept
    assert cache.get([99]) is None


def test_texts_seen_once_never_push_out_texts_asked_for_again():
    """A multi-system evaluation in datasets.map batches: each batch brings new candidates (seen once) and the
    same references. The references, once asked for again, outlive any number of one-off candidates."""
    unit = 4 * 10 * 8
    cache = EmbeddingCache(max_bytes=10 * unit)  # room for ten; the protected share holds eight
    references = [[1000 + r] for r in range(4)]
    for ids in references:
        cache.put(ids, torch.zeros(10, 8))
    assert all(cache.get(ids) is not None for ids in references)  # asked for again: protected
    for c in range(200):  # a stream of candidates, each seen once
        cache.put([c], torch.zeros(10, 8))
    assert all(cache.get(ids) is not None for ids in references), "a plain LRU would have evicted them"
    assert cache.bytes <= cache.max_bytes and len(cache) == 10


def test_the_protected_share_gives_way_to_newer_texts_asked_for_again():
    unit = 4 * 10 * 8
    cache = EmbeddingCache(max_bytes=5 * unit)  # protected share: four
    for r in range(6):
        cache.put([r], torch.zeros(10, 8))
        assert cache.get([r]) is not None
    assert cache.bytes <= cache.max_bytes
    assert cache.get([5]) is not None and cache.get([4]) is not None  # the most recent stay
    assert cache.get([0]) is None  # the oldest left


def test_compute_keeps_its_embeddings_between_calls_whatever_their_idf(mt_pairs):
    """Each datasets.map batch with idf=True counts idf over its own references, so its settings differ from the
    last batch's: the scorer it gets still shares the loaded model and its cache (no embedding depends on idf)."""
    import transformers
    from torch.nn.modules.module import register_module_forward_hook

    cands, refs = mt_pairs
    options = {"model_type": MINILM, "num_layers": 4, "idf": True}
    embedded: list[int] = []

    def count(module, args, kwargs, output):
        if isinstance(module, transformers.PreTrainedModel) and kwargs.get("attention_mask") is not None:
            embedded.append(int(kwargs["attention_mask"].shape[0]))

    fb.clear_model_cache()
    fb.compute(predictions=cands[:30], references=refs[:30], **options)
    hook = register_module_forward_hook(count, with_kwargs=True)
    try:
        second = fb.compute(predictions=cands[30:], references=refs[:30], **options)  # idf over the same refs
        third = fb.compute(predictions=cands[:30], references=refs[30:], **options)  # idf over other refs
    finally:
        hook.remove()
    seen = set(cands[:30]) | set(refs[:30])  # embedded by the first call
    new_second = (set(cands[30:]) | set(refs[:30])) - seen
    new_third = (set(cands[:30]) | set(refs[30:])) - seen - new_second
    assert sum(embedded) == len(new_second) + len(new_third), "each text embedded by one call only"
    for out, (c, r) in ((second, (cands[30:], refs[:30])), (third, (cands[:30], refs[30:]))):
        fresh = fb.compute(predictions=c, references=r, cache_mb=0, **options)
        assert_scores_close([torch.tensor(out[k]) for k in ("precision", "recall", "f1")],
                            [torch.tensor(fresh[k]) for k in ("precision", "recall", "f1")])  # fmt: skip
