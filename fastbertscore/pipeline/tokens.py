"""Text → token ids, the way ``bert-score`` encodes a sentence (stripped, special tokens, truncated)."""

from __future__ import annotations

import itertools
import logging
import threading
import weakref
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import torch

from fastbertscore.models.encoder import UNLIMITED

if TYPE_CHECKING:
    import tokenizers
    from transformers import PreTrainedTokenizerBase

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Tokenized:
    """Token ids of each text, and how many content (non-special) tokens each has."""

    ids: list[list[int]]
    content_lengths: list[int]
    truncated: list[int]  # indices of the texts that were cut at ``max_length``

    def is_empty(self, i: int) -> bool:
        return self.content_lengths[i] == 0

    @cached_property
    def lengths(self) -> torch.Tensor:
        """``(n,)`` int64: each text's number of tokens, special ones included."""
        return torch.tensor([len(seq) for seq in self.ids], dtype=torch.int64)

    @cached_property
    def flat(self) -> torch.Tensor:
        """``(total,)`` int64: every text's token ids, one after the other (text ``u``'s after those of the texts before it)."""
        return torch.tensor(list(itertools.chain.from_iterable(self.ids)), dtype=torch.int64)


def tokenize(tokenizer: PreTrainedTokenizerBase, texts: list[str], max_length: int | None) -> Tokenized:
    """Encode stripped ``texts`` with special tokens, cut at ``max_length`` tokens like ``bert-score``.

    A text is empty when it has no token besides the special ones (``""``, whitespace, or characters the
    tokenizer drops); ``bert-score`` calls this "length 2", which is wrong for tokenizers that add one
    special token (T5) or none (GPT-2).
    """
    stripped = [text.strip() for text in texts]
    ids = _token_ids(tokenizer, stripped, None)  # in full: a text no longer than max_length is the same either way
    truncated: list[int] = []
    if max_length is not None:
        truncated = [i for i, seq in enumerate(ids) if len(seq) > max_length]
        if truncated:  # cut where and as the tokenizer cuts (its truncation side, its special tokens)
            cut = _token_ids(tokenizer, [stripped[i] for i in truncated], max_length)
            for i, seq in zip(truncated, cut, strict=True):
                ids[i] = seq
    n_special = tokenizer.num_special_tokens_to_add(pair=False)
    content = [max(0, len(seq) - n_special) for seq in ids]
    return Tokenized(ids, content, truncated)


@dataclass(frozen=True)
class Pieces:
    """One text's tokens with character spans into the *original* (unstripped) text."""

    ids: list[int]
    spans: list[tuple[int, int]]  # (0, 0) for special tokens
    words: list[int | None]  # word index of each token, None for special tokens
    special: list[bool]


def pieces(tokenizer: PreTrainedTokenizerBase, text: str, max_length: int | None) -> Pieces:
    """Tokenize ``text`` exactly as :func:`tokenize` does, keeping offsets and word ids."""
    stripped = text.strip()
    shift = len(text) - len(text.lstrip())
    enc = tokenizer(
        stripped,
        add_special_tokens=True,
        truncation=max_length is not None,
        max_length=max_length,
        return_offsets_mapping=True,
        return_special_tokens_mask=True,
        verbose=False,
    )
    special = [bool(flag) for flag in enc["special_tokens_mask"]]
    spans = [
        (0, 0) if sp else (start + shift, end + shift)
        for (start, end), sp in zip(enc["offset_mapping"], special, strict=True)
    ]
    words = [None if sp else w for w, sp in zip(enc.word_ids(), special, strict=True)]
    return Pieces(list(enc["input_ids"]), spans, words, special)


# Texts per tokenizer call, so the tokenizer's per-text objects exist for one slice at a time, not the corpus.
_SLICE = 4096


def _token_ids(tokenizer: PreTrainedTokenizerBase, texts: list[str], max_length: int | None) -> list[list[int]]:
    backend = _own_backend(tokenizer) if max_length is None else None
    ids: list[list[int]] = []
    for start in range(0, len(texts), _SLICE):
        chunk = texts[start : start + _SLICE]
        if backend is not None:
            # The Rust tokenizer's own batch call (in parallel, without offsets): the ids transformers returns for
            # the same call, with no Python object per text beyond its ids (tests/families hold every family to it).
            ids.extend(encoding.ids for encoding in backend.encode_batch_fast(chunk, add_special_tokens=True))
            continue
        ids.extend(
            tokenizer(
                chunk,
                add_special_tokens=True,
                truncation=max_length is not None,
                max_length=max_length,
                return_attention_mask=False,
                return_token_type_ids=False,
                verbose=False,  # the "sequence longer than the maximum" notice; we count and report cuts ourselves
            )["input_ids"]
        )
    return ids


# Each fast tokenizer's own copy of its Rust tokenizer, without the truncation and padding a tokenizer.json may
# preset: a transformers call sets those on the shared one for its own call, so it is never called directly.
_BACKENDS: weakref.WeakKeyDictionary[PreTrainedTokenizerBase, tokenizers.Tokenizer | None] = weakref.WeakKeyDictionary()
_BACKENDS_LOCK = threading.Lock()
# Methods through which a tokenizer class could change what its ids are beyond its Rust tokenizer's.
_ENCODING_METHODS = ("__call__", "_call_one", "encode", "batch_encode_plus", "_encode_plus", "_batch_encode_plus")


def _own_backend(tokenizer: PreTrainedTokenizerBase) -> tokenizers.Tokenizer | None:
    """A private copy of ``tokenizer``'s Rust tokenizer set up as transformers runs it for ``tokenizer(texts)``
    (special tokens split or not as the tokenizer says), or ``None`` where its class encodes through Python."""
    with _BACKENDS_LOCK:
        if tokenizer not in _BACKENDS:
            _BACKENDS[tokenizer] = _copy_backend(tokenizer)
        return _BACKENDS[tokenizer]


def _copy_backend(tokenizer: PreTrainedTokenizerBase) -> tokenizers.Tokenizer | None:
    from transformers.tokenization_utils_tokenizers import TokenizersBackend

    if not isinstance(tokenizer, TokenizersBackend):
        return None
    mro = type(tokenizer).__mro__
    if any(name in vars(cls) for cls in mro[: mro.index(TokenizersBackend)] for name in _ENCODING_METHODS):
        return None
    import tokenizers

    shared = tokenizer.backend_tokenizer
    own = tokenizers.Tokenizer.from_str(shared.to_str())
    own.no_truncation()
    own.no_padding()
    own.encode_special_tokens = bool(tokenizer.split_special_tokens)
    return own


#: What the scores of a pair with an empty text are, in every warning that counts such pairs or texts.
EMPTY_SCORES = "their raw P, R and F are set to 0, as bert-score does (rescaling then applies to that 0)"


def warn_truncated(count: int, total: int, max_length: int | None, reported: float | None = None) -> None:
    """Say how many texts were cut, and whether that is where bert-score cuts them.

    ``reported`` is the tokenizer's own ``model_max_length``: bert-score cuts there. Where the cut is shorter (the
    tokenizer reports no limit, or more than the model's position embeddings hold), bert-score cuts nothing and
    fails on such texts (a position index out of range), so the message says so instead.
    """
    if not count:
        return
    if reported is None or reported == max_length:
        how = "as bert-score does (the tokenizer's limit)"
    elif reported >= UNLIMITED:
        how = (
            "where the model's position embeddings end; the tokenizer reports no limit, so bert-score cuts nothing "
            "there and fails on such texts (with a fast tokenizer on transformers 4.57, on every text)"
        )
    else:
        how = (
            f"where the model's position embeddings end; the tokenizer reports {int(reported)} tokens, so bert-score "
            "cuts there and fails on such texts"
        )
    logger.warning(
        "%d of %d distinct input texts are longer than the model's %s tokens and were cut at that length, %s; their "
        "scores ignore the rest of the text. Pass long_inputs='window' to score them in full.",
        count,
        total,
        max_length,
        how,
    )
