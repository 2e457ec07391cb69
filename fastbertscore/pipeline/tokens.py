"""Text → token ids, the way ``bert-score`` encodes a sentence (stripped, special tokens, truncated)."""

from __future__ import annotations

import logging
import re
import threading
import weakref
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from fastbertscore.models.encoder import UNLIMITED
from fastbertscore.pipeline.batching import Packed

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
    def packed(self) -> Packed:
        """Every text's token ids end to end (``flat``, int64) and each text's number of them (``lengths``, special
        tokens included)."""
        return Packed.of_lists(self.ids)


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


def _cut_at(max_length: int | None) -> dict[str, object]:
    """What both tokenizer calls pass: special tokens added, cut at ``max_length`` tokens (``None``: not cut), and
    no "sequence longer than the maximum" notice (cuts are counted and reported by the callers)."""
    return {
        "add_special_tokens": True,
        "truncation": max_length is not None,
        "max_length": max_length,
        "verbose": False,
    }


def pieces(tokenizer: PreTrainedTokenizerBase, text: str, max_length: int | None) -> Pieces:
    """Tokenize ``text`` exactly as :func:`tokenize` does, keeping offsets and word ids."""
    stripped = text.strip()
    shift = len(text) - len(text.lstrip())
    enc = tokenizer(stripped, **_cut_at(max_length), return_offsets_mapping=True, return_special_tokens_mask=True)
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
            ids.extend(backend.ids(chunk))
            continue
        ids.extend(
            tokenizer(chunk, **_cut_at(max_length), return_attention_mask=False, return_token_type_ids=False)[
                "input_ids"
            ]
        )
    return ids


class _Backend:
    """A fast tokenizer's own copy of its Rust tokenizer, for ids in bulk: the Rust batch call (in parallel, without
    offsets) gives the ids transformers returns for the same call, with no Python object per text beyond its ids
    (tests/families hold every family to it).

    With a BERT normalizer (BERT, DistilBERT, ELECTRA, MiniLM, MPNet, Funnel), a text of printable ASCII only is
    normalized to itself, or to its lowercase: what the normalizer does to such a text is only that (nothing to
    clean, no Chinese character, no accent; Rust's and Python's lowercase agree on ASCII). Such texts are lowercased
    here and go through a second copy without the normalizer (on English text it took 40% of the tokenizer's time),
    unless an added token's text ("[CLS]", "<s>") or its normalized form appears in them, where matching before or
    after normalization could differ. Every other text goes through the whole tokenizer."""

    def __init__(self, full: tokenizers.Tokenizer):
        self.full = full
        self.plain: tokenizers.Tokenizer | None = None
        self.lowercase = False
        self.added: re.Pattern[str] | None = None
        from tokenizers.normalizers import BertNormalizer

        if isinstance(full.normalizer, BertNormalizer):  # alone, not inside a Sequence of normalizers
            self.plain = _copy(full)
            self.plain.normalizer = None
            self.lowercase = bool(full.normalizer.lowercase)
            # an added token is found in the raw text by its content, and, when it is normalized, in the normalized
            # text by its normalized form ("café" as "cafe"; a zero-width space as "", which matches every text)
            added = full.get_added_tokens_decoder().values()
            contents = {token.content.lower() for token in added}
            contents |= {full.normalizer.normalize_str(token.content).lower() for token in added if token.normalized}
            self.added = re.compile("|".join(map(re.escape, sorted(contents)))) if contents else None

    def ids(self, texts: list[str]) -> list[list[int]]:
        """The token ids of each of ``texts`` (stripped), special tokens added."""
        plain: list[str | None] = [None] * len(texts)
        if self.plain is not None:  # each text as the normalizer leaves it, where that is known without running it
            ascii_lower = [text.lower() if text.isascii() and text.isprintable() else None for text in texts]
            plain = [
                None if low is None or (self.added and self.added.search(low)) else low if self.lowercase else text
                for low, text in zip(ascii_lower, texts, strict=True)
            ]
        ids: list[list[int]] = [[]] * len(texts)
        for tokenizer, members in (
            (self.plain, [(i, text) for i, text in enumerate(plain) if text is not None]),
            (self.full, [(i, texts[i]) for i, text in enumerate(plain) if text is None]),
        ):
            if tokenizer is not None and members:
                got = tokenizer.encode_batch_fast([text for _, text in members], add_special_tokens=True)
                for (i, _), encoding in zip(members, got, strict=True):
                    ids[i] = encoding.ids
        return ids


# Each fast tokenizer's own copy of its Rust tokenizer, without the truncation and padding a tokenizer.json may
# preset: a transformers call sets those on the shared one for its own call, so it is never called directly.
# Kept with what the copy was made from that a user may change afterwards (``add_tokens``, ``split_special_tokens``).
_BACKENDS: weakref.WeakKeyDictionary[PreTrainedTokenizerBase, tuple[tuple[int, bool], _Backend | None]] = (
    weakref.WeakKeyDictionary()
)
_BACKENDS_LOCK = threading.Lock()
# Methods through which a tokenizer class could change what its ids are beyond its Rust tokenizer's.
_ENCODING_METHODS = ("__call__", "_call_one", "encode", "batch_encode_plus", "_encode_plus", "_batch_encode_plus")


def _own_backend(tokenizer: PreTrainedTokenizerBase) -> _Backend | None:
    """A private copy of ``tokenizer``'s Rust tokenizer set up as transformers runs it for ``tokenizer(texts)``
    (special tokens split or not as the tokenizer says), or ``None`` where its class encodes through Python."""
    state = (len(tokenizer), bool(tokenizer.split_special_tokens))
    with _BACKENDS_LOCK:
        if tokenizer not in _BACKENDS or _BACKENDS[tokenizer][0] != state:
            _BACKENDS[tokenizer] = (state, _copy_backend(tokenizer))
        return _BACKENDS[tokenizer][1]


def _copy_backend(tokenizer: PreTrainedTokenizerBase) -> _Backend | None:
    from transformers.tokenization_utils_tokenizers import TokenizersBackend

    if not isinstance(tokenizer, TokenizersBackend):
        return None
    mro = type(tokenizer).__mro__
    if any(name in vars(cls) for cls in mro[: mro.index(TokenizersBackend)] for name in _ENCODING_METHODS):
        return None
    own = _copy(tokenizer.backend_tokenizer)
    own.encode_special_tokens = bool(tokenizer.split_special_tokens)
    return _Backend(own)


def _copy(shared: tokenizers.Tokenizer) -> tokenizers.Tokenizer:
    """A copy of ``shared`` (its special-token splitting kept) that neither truncates nor pads."""
    import tokenizers

    own = tokenizers.Tokenizer.from_str(shared.to_str())
    own.no_truncation()
    own.no_padding()
    own.encode_special_tokens = shared.encode_special_tokens
    return own


#: What the scores of a pair with an empty text are, in every warning that counts such pairs or texts.
EMPTY_SCORES = "their raw P, R and F are set to 0, as bert-score does (rescaling then applies to that 0)"


def warn_truncated(count: int, total: int, max_length: int | None, reported: float | None = None) -> None:
    """Say how many texts were cut, and whether that is where bert-score cuts them.

    ``reported`` is the tokenizer's own ``model_max_length``: bert-score cuts there. Where the cut is shorter (the
    tokenizer reports no limit, or more than the model's position embeddings hold), bert-score cuts nothing and
    fails on such texts (a position index out of range), so the message says so instead. Called only where
    ``count`` is above 0.
    """
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
