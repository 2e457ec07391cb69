"""Token ids → unit-norm embeddings: the model's own hidden state, whatever the batching."""

from __future__ import annotations

import torch
from paths import MINILM
from tolerances import assert_close, unit_norm
from tolerances import encoder as encoder_bound

from fastbertscore.models.encoder import load_encoder
from fastbertscore.models.loading import load_tokenizer
from fastbertscore.pipeline.forward import encode, pad_id_of
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
