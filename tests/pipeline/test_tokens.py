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


#: Printable-ASCII texts that a BERT normalizer's shortcut must not mistake (special tokens' texts in any case, next
#: to words or alone), and ASCII that is not printable (a tab, a bell): the whole tokenizer takes those.
ASCII_EDGES = (
    "A [SEP] B [sep] c [Sep]",
    "[CLS]",
    "x<s>y </S> <MASK> <mask>z [mask] <pad> [UNK] <unk> <cls> <sep>",
    "Upper CASE and MiXeD, punctuation: (a) [b] {c} <d> 'e' \"f\" ~!@#$%^&*_+-=|\\/?.,;:`",
    "a\tb\x07c\x7fd",
)


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
        *ASCII_EDGES,
        "Ünïcödé [SEP] <s> </s> <mask> [MASK] 漢字",
        "word " * 600,
    ]
    if family == "mpnet":  # its fixture's WordPiece has no unknown token: both paths refuse an unknown character
        for text in (texts.pop(-2), texts.pop(texts.index(ASCII_EDGES[3]))):
            with pytest.raises(Exception, match="Missing"):
                tokenize(tokenizer, [text], None)
    for limit in (None, 512, 16):
        call = tokenizer([t.strip() for t in texts], truncation=limit is not None, max_length=limit)
        assert tokenize(tokenizer, texts, limit).ids == call["input_ids"], (family, limit)


def test_the_ascii_shortcut_keeps_a_cased_bert_tokenizers_ids(mt_pairs):
    """A BERT normalizer that keeps case (bert-base-cased's): printable ASCII goes through unchanged, and the ids
    stay those of the tokenizer's own call."""
    import transformers
    from tokenizers.normalizers import BertNormalizer

    uncased = transformers.AutoTokenizer.from_pretrained(str(cases.FIXTURES / "tiny-bert"))
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(cases.FIXTURES / "tiny-bert"))
    tokenizer.backend_tokenizer.normalizer = BertNormalizer(lowercase=False, strip_accents=False)
    texts = [*mt_pairs[0][:20], *ASCII_EDGES, "Ünïcödé Café"]
    call = tokenizer(texts)["input_ids"]
    assert call[0] != uncased(texts[0])["input_ids"]  # the case is kept: a different text for the model
    assert tokenize(tokenizer, texts, None).ids == call


@pytest.mark.parametrize("added", ["café", "\u200b"])
def test_an_added_token_that_normalization_changes_keeps_the_ascii_shortcut_off_where_it_matches(added, mt_pairs):
    """A token added as a plain string is matched in the normalized text: "café" also in "the cafe", and a
    zero-width space, normalized to nothing, everywhere (the tokenizer then splits every text into characters)."""
    import transformers

    before = transformers.AutoTokenizer.from_pretrained(str(cases.FIXTURES / "tiny-bert"))
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(cases.FIXTURES / "tiny-bert"))
    tokenizer.add_tokens([added])
    texts = [*mt_pairs[0][:10], "the cafe is open", "cafe", "Cafe au lait", "The cat sat"]
    call = tokenizer(texts)["input_ids"]
    assert call[-4:] != before(texts[-4:])["input_ids"]  # the added token changes plain-ASCII texts' ids
    assert tokenize(tokenizer, texts, None).ids == call


def test_tokens_added_after_a_first_call_are_found(mt_pairs):
    """The bulk path's copy of the Rust tokenizer follows ``add_tokens`` and ``split_special_tokens`` set later."""
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(str(cases.FIXTURES / "tiny-bert"))
    texts = [*mt_pairs[0][:4], "the cafe is open", "a [SEP] b"]
    assert tokenize(tokenizer, texts, None).ids == tokenizer(texts)["input_ids"]
    tokenizer.add_tokens(["café"])
    assert tokenize(tokenizer, texts, None).ids == tokenizer(texts)["input_ids"]
    tokenizer.split_special_tokens = True
    assert tokenize(tokenizer, texts, None).ids == tokenizer(texts)["input_ids"]
