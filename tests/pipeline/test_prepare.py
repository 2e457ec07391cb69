"""fastbertscore.pipeline.prepare: the first step of every path, and what it says of texts the tokenizer cannot
read (empty after tokenizing, or mostly its unknown token)."""

from __future__ import annotations

import logging

from paths import MINILM

import fastbertscore as fb
from fastbertscore.models.loading import load_tokenizer
from fastbertscore.pipeline.prepare import UNKNOWN_SCORES, UNKNOWN_SHARE, mostly_unknown
from fastbertscore.pipeline.tokens import tokenize


def test_texts_of_unknown_symbols_are_named_in_a_warning(caplog):
    # 😀 against 🚀 scored F = 1.000 with no word said: both are one [UNK] to the model.
    with caplog.at_level(logging.WARNING, logger="fastbertscore"):
        F = fb.score(["a cat sat", "😀"], ["a cat sat down", "🚀"], model_type=MINILM)[2]
    assert float(F[1]) > 0.999
    messages = [r.getMessage() for r in caplog.records if "unknown token" in r.getMessage()]
    assert messages == [f"2 text(s) mostly the unknown token [UNK] (first: cands[1]): {UNKNOWN_SCORES}"]


def test_mostly_means_more_than_the_share_of_content_tokens():
    tokenizer = load_tokenizer(MINILM)
    texts = ["😀", "a cat 😀", "😀 😀 cat", "a cat sat", "\u200b\u200b", ""]
    tok = tokenize(tokenizer, texts, 512)
    unk = tokenizer.unk_token_id
    shares = [ids.count(unk) / n if n else None for ids, n in zip(tok.ids, tok.content_lengths, strict=True)]
    assert shares == [1.0, 1 / 3, 2 / 3, 0.0, None, None]  # zero-width characters: empty after tokenizing
    assert mostly_unknown(tok, unk) == [u for u, s in enumerate(shares) if s is not None and s > UNKNOWN_SHARE]
    assert mostly_unknown(tok, unk) == [0, 2] and mostly_unknown(tok, None) == []
