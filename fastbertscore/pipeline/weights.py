"""Token importance weights: plain (special tokens 0, others 1) or idf over a set of references.

Weights live in a dense vocabulary-sized table, so document counts can be summed across processes
(an all-reduce of one integer tensor) and looking up a sentence is one indexing operation.
"""

from __future__ import annotations

import logging
import math
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import SupportsFloat, cast

import torch

from fastbertscore.pipeline.batching import Packed

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Weights:
    """Token weights: ``table`` ``(vocab,)`` (idf or plain), ``fallback`` for texts whose weights are all 0."""

    table: torch.Tensor
    fallback: torch.Tensor


def document_frequencies(id_lists: Iterable[list[int]], vocab_size: int) -> torch.Tensor:
    """Count, for each token id, the number of sentences it occurs in: ``(vocab_size,)`` int64.

    One pass over all ids at once: each (sentence, token) pair is counted once, whatever the sentence's length.
    """
    flat, _, lengths = Packed.of_lists(list(id_lists))
    sentence = torch.repeat_interleave(torch.arange(len(lengths)), lengths)
    distinct = torch.unique(sentence * vocab_size + flat) % vocab_size  # each token once per sentence
    return torch.bincount(distinct, minlength=vocab_size)[:vocab_size]


def idf_table(doc_freq: torch.Tensor, num_docs: int) -> torch.Tensor:
    """``log((M + 1) / (df + 1))`` per token (``log(M + 1)`` for unseen ones), as float32.

    Computed in float64 and rounded once, as ``bert-score`` does with Python floats.
    """
    return torch.log((num_docs + 1) / (doc_freq.to(torch.float64) + 1)).to(torch.float32)


def plain_table(vocab_size: int, special_ids: Iterable[int | None]) -> torch.Tensor:
    """Weight 1 for every token but the [CLS]/[SEP]-style tokens, which get 0 (still match targets)."""
    table = torch.ones(vocab_size, dtype=torch.float32)
    for token_id in special_ids:
        if token_id is not None:
            table[token_id] = 0.0
    return table


def table_from_mapping(weights: Mapping[int, float], vocab_size: int) -> torch.Tensor:
    """A user's ``{token_id: weight}`` mapping as a table; ids it lacks stay NaN unless it has a default.

    ``bert-score``'s own idf dicts are ``defaultdict``s whose default is the weight of unseen tokens.

    Raises:
        TypeError: a key is not an int token id, or a weight is not a number.
        ValueError: a weight (or the default) is infinite, NaN or negative, or overflows float32; the message
            names the token id and the value (such weights gave NaN or sign-flipped scores).
    """
    default, values = check_idf_mapping(weights)
    table = torch.full((vocab_size,), math.nan if default is None else default, dtype=torch.float64)
    for token_id, value in values.items():
        if 0 <= token_id < vocab_size:
            table[token_id] = value
    return table.to(torch.float32)


def check_idf_mapping(weights: Mapping[int, float]) -> tuple[float | None, dict[int, float]]:
    """A user's ``{token_id: weight}`` mapping checked (before any model work): its default weight (a
    ``defaultdict``'s, else ``None``) and each weight as a float.

    Raises:
        TypeError, ValueError: as :func:`table_from_mapping` says.
    """
    default = None
    factory = getattr(weights, "default_factory", None)
    if factory is not None:
        default = check_idf_weight(factory(), "the default weight (of tokens the mapping lacks)")
    values = {}
    for token_id, weight in weights.items():
        if not isinstance(token_id, int) or isinstance(token_id, bool):
            raise TypeError(f"idf weights must map int token ids to floats; got key {token_id!r}")
        values[token_id] = check_idf_weight(weight, f"token id {token_id}")
    return default, values


def check_idf_weight(weight: object, what: str) -> float:
    """One idf weight as a float: a finite, non-negative number, finite in float32 too (what scoring uses)."""
    if isinstance(weight, (str, bytes, bool)):
        raise TypeError(f"idf weight of {what} must be a number, got {type(weight).__name__} {weight!r:.40}")
    try:
        value = float(cast("SupportsFloat", weight))  # what has no __float__ raises TypeError here
    except (TypeError, ValueError):
        raise TypeError(f"idf weight of {what} must be a number, got {type(weight).__name__} {weight!r:.40}") from None
    if not math.isfinite(value) or value < 0 or not _fits_float32(value):
        raise ValueError(
            f"idf weight of {what} is {value!r}: weights must be finite and not negative (and within float32's "
            "range); idf is log((M + 1) / (df + 1)), never below 0"
        )
    return value


def _fits_float32(value: float) -> bool:
    """Whether ``value`` stays finite in float32 (packing raises where it would round to infinity)."""
    try:
        struct.pack("<f", value)
    except OverflowError:
        return False
    return True


def sentence_weights(ids: list[int], table: torch.Tensor, fallback: torch.Tensor) -> torch.Tensor:
    """Weights of one sentence's tokens, unnormalised ``(T,)`` float32 (see :func:`token_weights`).

    Raises:
        ValueError: the table has no weight (NaN) for one of the tokens.
    """
    index = torch.tensor(ids, dtype=torch.int64)
    return token_weights(index, torch.tensor([len(ids)]), table, fallback)


def token_weights(
    flat: torch.Tensor, lengths: torch.Tensor, table: torch.Tensor, fallback: torch.Tensor
) -> torch.Tensor:
    """Unnormalised weights ``(total,)`` float32 of the tokens ``flat`` of several sentences, one after the other
    (``lengths[i]`` tokens each): one look-up in ``table`` for all of them.

    A sentence whose weights are all 0 takes ``fallback``'s: every token occurs in every reference (one
    reference, or identical ones), so idf is 0/0 there and bert-score returns NaN. Plain weights are the limit of
    idf when all tokens are equally common.

    Raises:
        ValueError: the table has no weight (NaN) for a token; the message names the first such token of the
            first sentence that has one, and :class:`MissingWeight` says which sentence that is.
    """
    weights = table[flat]
    missing = torch.isnan(weights)
    if bool(missing.any()):
        at = int(missing.nonzero()[0])
        sentence = int(torch.searchsorted(torch.cumsum(lengths, 0), at, right=True))
        raise MissingWeight(sentence, int(flat[at]))
    sentence_of = torch.repeat_interleave(torch.arange(len(lengths)), lengths)
    sums = torch.zeros(len(lengths), dtype=weights.dtype).index_add_(0, sentence_of, weights)
    zero = (sums == 0.0)[sentence_of]  # weights are never negative: a sum of 0 is all zeros, in any order
    if bool(zero.any()):
        weights = torch.where(zero, fallback[flat], weights)
    return weights


class MissingWeight(ValueError):
    """An idf table without a weight for a token: ``sentence`` (its index in the call) and ``token_id``."""

    def __init__(self, sentence: int, token_id: int):
        super().__init__(
            f"idf has no weight for token id {token_id}; give a weight for every token, "
            "or a collections.defaultdict whose default is the weight of unseen tokens"
        )
        self.sentence = sentence
        self.token_id = token_id
