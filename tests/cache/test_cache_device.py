"""Caches keep host copies and hand every hit back on the device the encoder runs on.

A machine without a GPU has one device beside the CPU that shows where a tensor lives: torch's ``meta`` device
(shapes and a device, no values). An embedder whose encoder sits there, with every text already in its cache,
never runs the encoder; what it hands back must be on that device, as it must be on ``cuda`` on a GPU, where a
CPU hit mixed with fresh GPU embeddings crashes the first cached run.
"""

from __future__ import annotations

import copy
import dataclasses

import pytest
import torch

import fastbertscore as fb
from fastbertscore.cache.memory import EmbeddingCache
from fastbertscore.pipeline.allpairs import embedded
from fastbertscore.pipeline.prepare import Names

TEXTS = ["The cat sat on the mat.", "A dog ran across the road.", "It was raining at the station."]


def _on_meta(embedder):
    """The same embedder (caches included) with its encoder moved to the ``meta`` device."""
    module = copy.deepcopy(embedder.encoder.module).to("meta")
    return dataclasses.replace(embedder, encoder=dataclasses.replace(embedder.encoder, module=module))


def _filled(tiny_model, tmp_path, kind: str):
    """A scorer whose caches (``kind``) already hold TEXTS, and the token ids of TEXTS."""
    options = {"memory": {"cache_mb": 8}, "disk": {"cache_dir": str(tmp_path)}}
    options["both"] = {**options["memory"], **options["disk"]}
    scorer = fb.BERTScorer(model_type=tiny_model("bert"), num_layers=2, **options[kind])
    ids = scorer.embedder.prepare(TEXTS, Names(str)).tok.ids
    on_cpu = scorer.embedder.for_call(4).embed(ids, range(len(TEXTS)))
    return scorer, ids, on_cpu


@pytest.mark.parametrize("kind", ["memory", "disk", "both"])
def test_cache_hits_come_back_on_the_encoders_device(tiny_model, tmp_path, kind):
    scorer, ids, on_cpu = _filled(tiny_model, tmp_path, kind)
    if kind != "disk":
        assert all(scorer.cache.get(ids[u]).device.type == "cpu" for u in range(len(TEXTS))), "kept on the host"
    hits = _on_meta(scorer.embedder.for_call(4)).embed(ids, range(len(TEXTS)))
    for u in range(len(TEXTS)):
        assert hits[u].device.type == "meta", f"text {u}: a cache hit came back on {hits[u].device}"
        assert hits[u].shape == on_cpu[u].shape


def test_all_pairs_embeddings_stay_on_the_encoders_device(tiny_model, tmp_path):
    scorer, _, _ = _filled(tiny_model, tmp_path, "memory")
    with embedded(_on_meta(scorer.embedder.for_call(4)), TEXTS, Names(TEXTS.__getitem__)) as emb:
        assert [v.device.type for v in emb.vectors(range(len(TEXTS)))] == ["meta"] * len(TEXTS)
        assert [w.device.type for w in emb.weights] == ["meta"] * len(TEXTS)


def test_memory_cache_keeps_a_compact_host_copy():
    batch = torch.randn(4, 10, 8)
    kept = EmbeddingCache(1 << 20)
    kept.put([1, 2], batch[1, :6])
    stored = kept.get([1, 2])
    assert stored.device.type == "cpu" and torch.equal(stored, batch[1, :6])
    assert stored.untyped_storage().nbytes() == 6 * 8 * 4, "a slice must not keep its whole batch alive"
