"""The engine's work splitting (steps, memory and token budgets, batches, spilling) never changes a score, and
each distinct text is embedded once whatever the order and size of the input."""

from __future__ import annotations

import dataclasses
import logging
import random
import re
import tempfile

import bert_score
import pytest
import reference
import torch
from tiny_models import MAX_LEN
from tolerances import TINY_WIDTH, assert_close, assert_scores_close, prf_bounds

import fastbertscore as fb
from fastbertscore.cache.spill import PREFIX
from fastbertscore.pipeline.budget import Budget
from fastbertscore.pipeline.engine import score_pairs
from fastbertscore.pipeline.match import greedy_match
from fastbertscore.validate import check_pairs

MB = 1 << 20


class TokenCounter:
    """Tokens the encoder ran, counted from the attention masks it received (a forward pre-hook)."""

    def __init__(self, scorer):
        self.tokens = 0
        self.handle = scorer.embedder.encoder.module.register_forward_pre_hook(self.count, with_kwargs=True)

    def count(self, module, args, kwargs):
        mask = kwargs["attention_mask"] if "attention_mask" in kwargs else args[1]
        self.tokens += int(mask.sum())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.handle.remove()


def distinct_tokens(scorer, texts):
    return sum(len(ids) for ids in scorer.tokenizer([t.strip() for t in set(texts)])["input_ids"])


def under(scorer, budget):
    """The scorer's loaded model as a call under ``budget`` uses it."""
    return dataclasses.replace(scorer.embedder, budget=budget)


@pytest.fixture(scope="module")
def scorer(minilm_path):
    return fb.BERTScorer(model_type=minilm_path, num_layers=3)


def systems(mt_pairs, n_systems=4):
    """``n_systems`` outputs per reference, system after system (how compare and per-system loops feed pairs)."""
    cands, refs = mt_pairs
    shift = lambda k: cands[k:] + cands[:k]  # another "system": the outputs of other segments
    return [c for k in range(n_systems) for c in shift(k)], refs * n_systems


@pytest.mark.parametrize("order", ["system after system", "segment after segment", "shuffled", "several references"])
def test_each_distinct_text_is_embedded_once_in_any_order_and_budget(scorer, mt_pairs, order):
    cands, refs = systems(mt_pairs)
    rows = list(range(len(cands)))
    if order == "segment after segment":
        rows.sort(key=lambda i: i % len(mt_pairs[0]))
    elif order == "shuffled":
        random.Random(0).shuffle(rows)
    cands, refs = [cands[i] for i in rows], [refs[i] for i in rows]
    if order == "several references":  # each candidate against its reference and two other segments' references
        n = len(refs)
        refs = [[refs[i], refs[(i + 7) % n], refs[(i + 13) % n]] for i in range(n)]
    pairs = check_pairs(cands, refs)
    flat_refs = [r for group in refs for r in ([group] if isinstance(group, str) else group)]
    whole = score_pairs(under(scorer, Budget()), pairs)
    # ~4 MB of embeddings a call: many steps, most kept embeddings spilled to disk
    small = Budget(batch_size=5, max_tokens=200, memory_bytes=4 * MB)
    with TokenCounter(scorer) as counter:
        tiny = score_pairs(under(scorer, small), pairs)
    assert counter.tokens == distinct_tokens(scorer, cands + flat_refs)
    assert_scores_close(whole.unbind(-1), tiny.unbind(-1))


def test_a_reference_with_many_candidates_is_matched_within_the_step_entries(scorer, mt_pairs, monkeypatch):
    """A reference is matched once against its candidates, but never more of them at once than one matching step's
    entries hold (a reference that thousands of outputs share would otherwise make one huge padded copy)."""
    from fastbertscore.pipeline import engine

    cands, refs = mt_pairs
    budget = Budget(memory_bytes=8 * MB)  # 131,072 float32 entries a matching step: a few of these pairs
    copies = []

    def counted(cand, cand_mask, cand_weights, ref, *rest, **kwargs):
        copies.append((cand.numel() + ref.numel(), cand.shape[-3]))
        return greedy_match(cand, cand_mask, cand_weights, ref, *rest, **kwargs)

    monkeypatch.setattr(engine, "greedy_match", counted)
    many = score_pairs(under(scorer, budget), check_pairs(cands[:30], [refs[0]] * 30))
    assert all(entries <= budget.match_entries for entries, _ in copies) and max(k for _, k in copies) > 1
    monkeypatch.undo()
    alone = [score_pairs(under(scorer, Budget()), check_pairs([c], [refs[0]])) for c in cands[:30]]
    assert_scores_close(many.unbind(-1), torch.cat(alone).unbind(-1))


def fan_out(mt_pairs):
    """Four long candidates (~300 tokens, ~0.45 MB of embeddings each), each against every reference."""
    cands, refs = mt_pairs
    long = [" ".join(cands[k : k + 12]) for k in range(0, 48, 12)]
    return long, refs, check_pairs([c for r in refs for c in long], [r for r in refs for _ in long])


def test_spilled_embeddings_are_not_embedded_again(scorer, mt_pairs, caplog):
    """Four long candidates, each against every reference: one group larger than a step, whose candidates later
    steps need again and which outgrow the kept share (half of 2 MB), so some wait on disk and come back from it
    (bit for bit: tests/cache/test_spill.py) instead of being embedded again."""
    long, refs, pairs = fan_out(mt_pairs)
    run = lambda memory: score_pairs(under(scorer, Budget(batch_size=8, max_tokens=400, memory_bytes=memory)), pairs)
    with caplog.at_level(logging.INFO, logger="fastbertscore.cache.spill"), TokenCounter(scorer) as counter:
        spilled = run(2 * MB)
    assert any("MB spilled to disk, 0 text(s) to embed again" in r.message for r in caplog.records)
    assert counter.tokens == distinct_tokens(scorer, long + refs)
    assert_scores_close(spilled.unbind(-1), run(64 * MB).unbind(-1))


def test_a_folder_that_cannot_be_written_costs_time_never_a_score(scorer, mt_pairs, tmp_path, monkeypatch, caplog):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setattr(tempfile, "tempdir", str(blocked / "tmp"))  # where every temporary folder would go
    long, refs, pairs = fan_out(mt_pairs)
    budget = Budget(batch_size=8, max_tokens=400, memory_bytes=2 * MB)
    with caplog.at_level(logging.WARNING), TokenCounter(scorer) as counter:
        broken = score_pairs(under(scorer, budget), pairs)
    warnings = [r for r in caplog.records if "cannot spill" in r.message]
    assert len(warnings) == 1  # said once
    assert counter.tokens > distinct_tokens(scorer, long + refs)  # the candidates were embedded again
    monkeypatch.undo()
    assert (broken == score_pairs(under(scorer, budget), pairs)).all()


def test_no_spill_folder_outlives_the_call(scorer, mt_pairs, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    pairs = fan_out(mt_pairs)[2]
    score_pairs(under(scorer, Budget(batch_size=8, memory_bytes=2 * MB)), pairs)
    assert not list(tmp_path.glob(f"{PREFIX}*"))


def test_a_budget_too_small_for_one_pair_names_the_setting_and_the_size(minilm_path, mt_pairs):
    cands, refs = mt_pairs
    long = " ".join(refs[:30])  # cut at 512 tokens: 0.75 MB of embeddings at 384 floats a token
    given = {"model_type": minilm_path, "num_layers": 3}
    with pytest.raises(
        ValueError, match=r"memory_mb=1 is too small: the pair at cands\[1\] and refs\[1\] needs .* MB"
    ) as e:
        fb.score(cands[:3], [refs[0], long, refs[2]], memory_mb=1, **given)
    with pytest.raises(ValueError, match="memory_mb must be a positive integer, got 0"):
        fb.score(cands[:3], refs[:3], memory_mb=0, **given)
    enough = int(re.search(r"give memory_mb=(\d+) or more", str(e.value)).group(1))
    assert enough > 1
    P, R, F = fb.score(cands[:3], [refs[0], long, refs[2]], memory_mb=enough, **given)  # the size it names is enough
    assert_scores_close((P, R, F), fb.score(cands[:3], [refs[0], long, refs[2]], **given))


def test_a_given_budget_that_holds_the_pair_is_enough_past_the_step_cap(scorer, mt_pairs):
    # The size the error names was checked against the CPU's 256 MB step cap, so the memory_mb it
    # asked for failed again with the same message. A pair over the cap but within the budget gets its own step.
    cands, refs = mt_pairs
    long = " ".join(refs[:30])  # 0.75 MB of embeddings at 512 tokens
    pairs = check_pairs([cands[0], cands[1]], [refs[0], long])
    capped = Budget(batch_size=8, memory_bytes=4 * MB, step_cap=MB // 4, explicit=True)
    ours = score_pairs(under(scorer, capped), pairs)
    assert_scores_close(ours.unbind(-1), score_pairs(under(scorer, Budget()), pairs).unbind(-1))


def test_the_default_budget_follows_the_device_and_a_given_one_is_kept():
    from fastbertscore.hardware import free_device_memory

    cpu = Budget.for_device("cpu", batch_size=64, max_tokens=4096, width=384)
    assert cpu.memory_bytes == min(max(free_device_memory("cpu") // 8, 256 * MB), 4 << 30)
    assert not cpu.explicit and cpu.step_bytes <= 256 * MB and cpu.max_tokens == 4096
    given = Budget.for_device("cpu", batch_size=64, max_tokens=4096, width=384, memory_mb=300)
    assert given.memory_bytes == 300 * MB and given.explicit
    # shares add up, the encoder's work on a batch included: memory_mb bounds the call, not only its embeddings
    assert given.activation_bytes == 4096 * 384 * 4 * 8
    assert given.step_bytes + 8 * given.match_entries + given.activation_bytes + given.kept_bytes == given.memory_bytes
    assert given.accounted_bytes(given.kept_bytes) == given.memory_bytes


def test_memory_mb_changes_no_number_and_not_the_hash(minilm_path, mt_pairs):
    cands, refs = mt_pairs
    default = fb.BERTScorer(model_type=minilm_path, num_layers=3)
    small = fb.BERTScorer(model_type=minilm_path, num_layers=3, memory_mb=2)
    assert small.hash == default.hash
    assert_scores_close(small.score(cands, refs), default.score(cands, refs))


def test_empty_and_blank_texts_score_zero(minilm_path, mt_pairs, caplog):
    cands, refs = list(mt_pairs[0][:6]), list(mt_pairs[1][:6])
    cands[1], refs[3], cands[4], refs[4] = "", "   \t ", "\n", ""
    with pytest.raises(AttributeError):  # bert-score crashes on empty strings under transformers 5
        bert_score.score(cands, refs, model_type=minilm_path, num_layers=4)
    with caplog.at_level(logging.WARNING, logger="fastbertscore"):
        P, R, F = fb.score(cands, refs, model_type=minilm_path, num_layers=4)
    for i in (1, 3, 4):
        assert P[i] == R[i] == F[i] == 0
    keep = [0, 2, 5]
    ref = reference.score([cands[i] for i in keep], [refs[i] for i in keep], model_type=minilm_path, num_layers=4)
    assert_scores_close([x[keep] for x in (P, R, F)], ref)
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "candidate(s) empty (first: cands[1])" in messages and "reference(s) empty (first: refs[3])" in messages


def test_an_empty_candidate_with_several_references_is_counted_once(tiny_model, caplog):
    with caplog.at_level(logging.WARNING, logger="fastbertscore"):
        fb.score(["", "a cat"], [["a", "b", "c"], ["the cat", "a dog"]], model_type=tiny_model("bert"), num_layers=2)
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "1 candidate(s) empty (first: cands[0])" in messages


def test_scores_do_not_depend_on_order_batch_or_company(tiny_model, mt_pairs):
    # Random weights give negative similarities, where bert-score's padding acts as a 0 match.
    path = tiny_model("electra")
    cands, refs = mt_pairs[0][:20], mt_pairs[1][:20]
    base = fb.BERTScorer(model_type=path, num_layers=2, batch_size=64).score(cands, refs)
    order = list(range(len(cands)))
    random.Random(0).shuffle(order)
    for batch_size in (1, 3, 64):
        shuffled = fb.BERTScorer(model_type=path, num_layers=2, batch_size=batch_size).score(
            [cands[i] for i in order], [refs[i] for i in order]
        )
        assert_scores_close(shuffled, [x[order] for x in base], width=TINY_WIDTH, tokens=MAX_LEN)
    alone = fb.score(cands[7:8], refs[7:8], model_type=path, num_layers=2)
    assert_scores_close(alone, [x[7:8] for x in base], width=TINY_WIDTH, tokens=MAX_LEN)


def test_identical_texts_and_duplicates(minilm_path, mt_pairs):
    texts = list(mt_pairs[1][:8])
    _P, _R, F = fb.score(texts + texts[:2], texts + texts[:2], model_type=minilm_path, num_layers=4)
    assert_close(F, torch.ones_like(F), prf_bounds()[2], "F of identical texts")
    assert torch.equal(F[:2], F[-2:])
