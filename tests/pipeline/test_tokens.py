"""Text → token ids: the ids bert-score 0.3.13 feeds its model, emptiness by content tokens, truncation reported."""

from __future__ import annotations

import pytest
from bert_score.utils import sent_encode
from families import cases
from paths import MINILM

from fastbertscore.models.loading import load_tokenizer
from fastbertscore.pipeline.tokens import pieces, tokenize


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer(MINILM)


def test_ids_equal_bert_scores_encoding(tokenizer, mt_pairs):
    texts = list(mt_pairs[0][:20]) + ["  padded with spaces  ", "Ünïcödé — “quotes” 漢字"]
    got = tokenize(tokenizer, texts, tokenizer.model_max_length)
    assert got.ids == [sent_encode(tokenizer, text) for text in texts]
    assert got.truncated == []


def test_empty_means_no_content_tokens_and_long_texts_are_reported(tokenizer, mt_pairs):
    long_text = " ".join(mt_pairs[1][:60])
    got = tokenize(tokenizer, ["", "   ", "a cat", long_text], 512)
    assert [got.is_empty(i) for i in range(4)] == [True, True, False, False]
    assert got.truncated == [3] and len(got.ids[3]) == 512 and got.ids[3][-1] == tokenizer.sep_token_id
    assert got.ids[3] == sent_encode(tokenizer, long_text)  # bert-score cuts at the same place


def test_pieces_keep_the_ids_and_point_into_the_original_text(tokenizer):
    text = "  The cat sat on the mat."
    got = pieces(tokenizer, text, 512)
    assert got.ids == tokenize(tokenizer, [text], 512).ids[0]
    words = [text[a:b] for (a, b), special in zip(got.spans, got.special, strict=True) if not special]
    assert words == ["the", "cat", "sat", "on", "the", "mat", "."] or [w.lower() for w in words] == [
        "the",
        "cat",
        "sat",
        "on",
        "the",
        "mat",
        ".",
    ]
    assert got.special[0] and got.special[-1] and got.words[0] is None


@pytest.mark.parametrize("family", [f for f in cases.FAMILIES])
def test_bulk_ids_equal_the_tokenizers_own_call_for_every_family(family, mt_pairs):
    """The bulk path (each fast tokenizer's own Rust copy, without truncation) gives the ids of a transformers
    call on every family's tokenizer, at no limit, at 512 and at a cut of 16, special-token strings included."""
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(str(cases.FIXTURES / f"tiny-{family}"))
    texts = [
        *mt_pairs[0][:8],
        *mt_pairs[1][:8],
        "",
        "  a  ",
        "Ünïcödé [SEP] <s> </s> <mask> [MASK] 漢字",
        "word " * 600,
    ]
    if family == "mpnet":  # its fixture's WordPiece has no unknown token: both paths refuse an unknown character
        with pytest.raises(Exception, match="Missing"):
            tokenize(tokenizer, [texts.pop(-2)], None)
    for limit in (None, 512, 16):
        call = tokenizer([t.strip() for t in texts], truncation=limit is not None, max_length=limit)
        assert tokenize(tokenizer, texts, limit).ids == call["input_ids"], (family, limit)
