"""Token ids → unit-norm embeddings: the model's own hidden state, whatever the batching."""

from __future__ import annotations

import torch
from paths import MINILM
from tolerances import assert_close, unit_norm
from tolerances import encoder as encoder_bound

from fastbertscore.models.encoder import load_encoder
from fastbertscore.models.loading import load_tokenizer
from fastbertscore.pipeline.batching import Packed
from fastbertscore.pipeline.forward import HALF_SHAPE_STEP, encode, pad_id_of
from fastbertscore.pipeline.tokens import tokenize


def test_embeddings_are_the_normalised_hidden_state_whatever_the_batching(mt_pairs):
    tokenizer, encoder = load_tokenizer(MINILM), load_encoder(MINILM, 3)
    ids = tokenize(tokenizer, list(mt_pairs[0][:12]), 512).ids
    wanted = range(len(ids))
    one = encode(encoder, ids, wanted, pad_id=pad_id_of(tokenizer), batch_size=1, max_tokens=10_000)
    many = encode(encoder, ids, wanted, pad_id=pad_id_of(tokenizer), batch_size=64, max_tokens=200)
    with torch.inference_mode():
        direct = encoder.module(torch.tensor([ids[4]])).last_hidden_state[0]
    bound = encoder_bound(encoder.width, layers=3)
    assert_close(one[4], direct / direct.norm(dim=-1, keepdim=True), bound, "batch of one against the bare model")
    for i in wanted:
        assert one[i].shape == (len(ids[i]), encoder.width)
        assert_close(one[i].norm(dim=-1), torch.ones(len(ids[i])), unit_norm(encoder.width), f"norms of {i}")
        assert_close(one[i], many[i], bound, f"sentence {i} in batches of 1 and of 64")


def test_padding_a_batch_past_its_longest_text_changes_no_vector(mt_pairs):
    """On a GPU in half precision a batch is padded to a multiple of ``HALF_SHAPE_STEP`` tokens (so that a call's
    batches reuse a few matrix shapes): the extra padding is masked, and every real token's vector stays the same."""
    tokenizer, encoder = load_tokenizer(MINILM), load_encoder(MINILM, 3)
    ids = tokenize(tokenizer, list(mt_pairs[0][:6]), 512).ids
    packed = Packed.of(torch.tensor([i for seq in ids for i in seq]), torch.tensor([len(seq) for seq in ids]))
    tight, mask = packed.padded(range(len(ids)), pad_id_of(tokenizer))
    wide, wide_mask = packed.padded(range(len(ids)), pad_id_of(tokenizer), width=tight.shape[1] + HALF_SHAPE_STEP - 1)
    assert wide.shape[1] == tight.shape[1] + HALF_SHAPE_STEP - 1 and torch.equal(wide_mask[:, : tight.shape[1]], mask)
    with torch.inference_mode():
        a, b = encoder(tight, mask.long()), encoder(wide, wide_mask.long())
    assert_close(b[:, : tight.shape[1]][mask], a[mask], encoder_bound(encoder.width, layers=3), "tight against wide")
