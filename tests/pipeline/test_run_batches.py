"""The encoder run under faults a GPU meets: running out of memory, and float16 overflowing.

The out-of-memory cases run a real encoder behind a device with room for a given number of padded tokens per
batch: a larger batch raises torch's own ``OutOfMemoryError``, as CUDA does. The back-off itself runs for real.
"""

from __future__ import annotations

import dataclasses
import logging
import os

import pytest
import torch
import transformers as T
from paths import MINILM

from fastbertscore.models.encoder import load_encoder
from fastbertscore.models.loading import load_tokenizer
from fastbertscore.pipeline import forward as forward_module
from fastbertscore.pipeline.forward import encode, pad_id_of
from fastbertscore.pipeline.tokens import tokenize

forced_batches = pytest.mark.skipif(
    bool(os.environ.get("FASTBERTSCORE_ENCODER_BATCH")), reason="the batch sizes under test are forced there"
)


class RoomFor:
    """A real encoder on a device with room for ``tokens`` padded tokens per batch."""

    def __init__(self, encoder, tokens: int):
        self.encoder, self.tokens, self.refused = encoder, tokens, 0

    device = property(lambda self: self.encoder.device)
    autocast = property(lambda self: self.encoder.autocast)

    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        if input_ids.numel() > self.tokens:
            self.refused += 1
            raise torch.cuda.OutOfMemoryError(f"CUDA out of memory. Tried to allocate {input_ids.numel()} tokens")
        return self.encoder(input_ids, attention_mask)


@pytest.fixture(scope="module")
def minilm_run(mt_pairs):
    tokenizer, encoder = load_tokenizer(MINILM), load_encoder(MINILM, 3)
    ids = tokenize(tokenizer, list(mt_pairs[0][:16]), 512).ids
    return encoder, ids, pad_id_of(tokenizer)


def _run(encoder, ids, pad_id, batch_size):
    return encode(encoder, ids, range(len(ids)), pad_id=pad_id, batch_size=batch_size, max_tokens=10**6)


@forced_batches
def test_out_of_memory_halves_the_batch_and_gives_the_same_embeddings(minilm_run, caplog):
    encoder, ids, pad_id = minilm_run
    longest = max(len(x) for x in ids)
    device = RoomFor(encoder, 4 * longest)  # batches of 8 do not fit the longest texts; of 4 they all do
    with caplog.at_level(logging.WARNING, logger=forward_module.__name__):
        backed_off = _run(device, ids, pad_id, batch_size=8)
    unbroken = _run(encoder, ids, pad_id, batch_size=4)  # the batches the back-off ends with
    assert device.refused >= 1
    assert len([r for r in caplog.records if "out of memory" in r.getMessage()]) == 1, "logged once"
    for u in range(len(ids)):  # the same batches as an unbroken run: bit for bit the same, so the same scores
        assert torch.equal(backed_off[u], unbroken[u]), f"text {u}"


@forced_batches
def test_out_of_memory_down_to_single_texts_equals_one_text_per_batch(minilm_run):
    encoder, ids, pad_id = minilm_run
    device = RoomFor(encoder, max(len(x) for x in ids))  # only one text at a time fits
    backed_off = _run(device, ids, pad_id, batch_size=64)
    unbroken = _run(encoder, ids, pad_id, batch_size=1)
    assert device.refused >= 1
    assert all(torch.equal(backed_off[u], unbroken[u]) for u in range(len(ids)))


@forced_batches
def test_a_text_that_does_not_fit_alone_names_batch_size_and_its_length(minilm_run):
    encoder, ids, pad_id = minilm_run
    longest = max(len(x) for x in ids)
    with pytest.raises(torch.cuda.OutOfMemoryError, match=rf"one text of {longest} tokens.*batch_size=8"):
        _run(RoomFor(encoder, longest - 1), ids, pad_id, batch_size=8)


@pytest.fixture(scope="module")
def overflowing_bert(tmp_path_factory):
    """A tiny BERT whose feed-forward weights are scaled by 1e6: fine in float32 (LayerNorm rescales), past
    float16's 65504 inside every layer."""
    from tiny_models import save_tiny

    path = save_tiny("bert", tmp_path_factory.mktemp("overflow") / "bert")
    model = T.AutoModel.from_pretrained(path)
    with torch.no_grad():
        for layer in model.encoder.layer:
            layer.intermediate.dense.weight.mul_(1e6)
    model.save_pretrained(path)
    tokenizer = load_tokenizer(str(path))
    ids = tokenize(tokenizer, ["The cat sat on the mat.", "A dog ran."], 40).ids
    return str(path), ids, pad_id_of(tokenizer)


@pytest.mark.parametrize("stored", ["float32", "float16"])
def test_float16_overflow_is_a_clear_error_not_nan_scores(overflowing_bert, stored):
    path, ids, pad_id = overflowing_bert
    exact = _run(load_encoder(path, 2), ids, pad_id, batch_size=8)
    assert all(torch.isfinite(e).all() for e in exact.values()), "float32 holds these values"
    half = load_encoder(path, 2)
    if stored == "float16":  # as on a GPU, where float16 weights are stored in float16
        half.cast_to(torch.float16)
    half = dataclasses.replace(half, autocast=torch.float16)
    with pytest.raises(ValueError, match=r'dtype="float16" overflowed.*2 of 2 texts.*dtype="bfloat16".*"float32"'):
        _run(half, ids, pad_id, batch_size=8)


class Damaged:
    """A real encoder whose hidden states are zeroed (``zero``) or set to NaN (``nan``) at some (text, token) places of
    each batch; the place of a padded token changes no embedding."""

    def __init__(self, encoder, places):
        self.encoder, self.places = encoder, places

    device = property(lambda self: self.encoder.device)
    autocast = property(lambda self: self.encoder.autocast)

    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids, attention_mask)
        for (row, token), value in self.places.items():
            hidden[row, token if token >= 0 else hidden.shape[1] + token] = value
        return hidden


@pytest.mark.parametrize("value", [0.0, float("nan"), float("inf")])
def test_an_unusable_hidden_state_of_a_real_token_is_an_error_and_of_padding_is_not(minilm_run, value):
    encoder, ids, pad_id = minilm_run
    one_batch = [min(ids, key=len), max(ids, key=len)]  # the shorter one is padded
    assert len(one_batch[0]) < len(one_batch[1])
    with pytest.raises(ValueError, match=r"inf/NaN hidden states for 1 of 2 texts"):
        _run(Damaged(encoder, {(0, 1): value}), one_batch, pad_id, batch_size=8)
    padded_token = {(1, -1): value}  # the batch runs longest first: row 1 is the shorter text, its last place padding
    assert set(_run(Damaged(encoder, padded_token), one_batch, pad_id, batch_size=8)) == {0, 1}


class Counted:
    """A real encoder that counts the batches it runs."""

    def __init__(self, encoder):
        self.encoder, self.batches = encoder, 0

    device = property(lambda self: self.encoder.device)
    autocast = property(lambda self: self.encoder.autocast)

    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        self.batches += 1
        return self.encoder(input_ids, attention_mask)


class Stop(Exception):
    pass


@forced_batches
def test_the_hook_between_encoder_batches_can_stop_the_run(minilm_run):
    # The Space's one model thread was held for as long as a request's encoder batches took (50 minutes): its
    # deadline is this hook.
    encoder, ids, pad_id = minilm_run
    calls = []

    def stop_before_the_third():
        calls.append(len(calls))
        if len(calls) == 3:
            raise Stop

    counted = Counted(encoder)
    with pytest.raises(Stop):
        encode(
            counted,
            ids,
            range(len(ids)),
            pad_id=pad_id,
            batch_size=4,
            max_tokens=10**6,
            between_batches=stop_before_the_third,
        )
    assert counted.batches == 2 and len(calls) == 3
    calls.clear()
    hooked = encode(
        encoder,
        ids,
        range(len(ids)),
        pad_id=pad_id,
        batch_size=4,
        max_tokens=10**6,
        between_batches=lambda: calls.append(0),
    )
    assert len(calls) == len(ids) // 4, "once before each batch"
    assert all(torch.equal(hooked[u], e) for u, e in _run(encoder, ids, pad_id, batch_size=4).items())


@pytest.mark.numeric
def test_the_second_numeric_path_forces_each_of_its_batch_sizes_in_turn(request):
    """.ci/run's second path runs the numeric tests once per size of FASTBERTSCORE_TEST_ENCODER_BATCHES, in one
    pytest run (tests/conftest.py): each run of this test sees its own size forced, as every call does."""
    from fastbertscore.pipeline.budget import forced_batch_size

    sizes = [int(size) for size in os.environ.get("FASTBERTSCORE_TEST_ENCODER_BATCHES", "").split(",") if size]
    if not sizes:
        pytest.skip("only .ci/run's second numeric path forces batch sizes in turn")
    size = request.getfixturevalue("encoder_batch")
    assert size in sizes and forced_batch_size() == size
