"""The first step of every path: each distinct text once, tokenized, checked for length and weighted.

Pairs, all-pairs and MBR all start here: :class:`Distinct` numbers the distinct texts of the caller's inputs,
``Embedder.prepare`` tokenizes them once (:func:`check_long`, :func:`text_weights`, :func:`warn_unknown`), and
:func:`warn_empty` names the empty ones.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from fastbertscore.pipeline.batching import Packed
from fastbertscore.pipeline.tokens import EMPTY_SCORES, Tokenized
from fastbertscore.pipeline.weights import MissingWeight, Weights, token_weights
from fastbertscore.validate import LongInputs

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

logger = logging.getLogger(__name__)

#: A text of which more than this share of the content tokens are the tokenizer's unknown token is one the model
#: cannot read (:func:`mostly_unknown`): every unknown character is the same token to it.
UNKNOWN_SHARE = 0.5
#: What the scores of such a text mean, in the warning that names them and in the Space's note.
UNKNOWN_SCORES = (
    "the model reads every character it does not know as the same token, so such texts match one another whatever "
    "they say (one unknown symbol against another scores F = 1)"
)


@dataclass(frozen=True)
class Names:
    """How a call names its distinct texts in errors and warnings, passed down as one value: ``label(u)`` names text
    ``u`` as the caller wrote it (``cands[3]``, ``texts_b[2]``), ``position(u)`` orders the texts as the caller gave
    them (default: ``u``), so that the first offending input is the one named."""

    label: Callable[[int], str]
    position: Callable[[int], int] | None = None

    def first(self, units: Sequence[int]) -> int:
        """The first of ``units`` (non-empty) in the caller's order."""
        return min(units, key=self.position) if self.position else units[0]


@dataclass(frozen=True)
class Prepared:
    """Distinct texts tokenized once, with each text's unnormalised token weights packed end to end (an empty text
    weighs no token)."""

    tok: Tokenized
    token_weights: Packed

    @property
    def weights(self) -> list[torch.Tensor]:
        """Each text's weights, as views into the packed ones."""
        return list(torch.split(self.token_weights.flat, self.token_weights.lengths.tolist()))


class Distinct:
    """The distinct texts of one or more columns of input (candidates, references, ...), each numbered once in
    order of first appearance; ``columns[c][i]`` is the number of item ``i`` of column ``c``.

    Example:
        >>> d = Distinct(["a", "b", "a"], ["b", "c"])
        >>> d.texts, d.columns
        (['a', 'b', 'c'], [[0, 1, 0], [1, 2]])
        >>> d.first(1, order=(1, 0))
        (1, 0)
    """

    def __init__(self, *columns: Sequence[str]):
        index: dict[str, int] = {}
        self.columns = [[index.setdefault(text, len(index)) for text in column] for column in columns]
        self.texts = list(index)

    def first(self, u: int, order: Sequence[int] | None = None) -> tuple[int, int]:
        """``(column, position)`` of the first use of text ``u``, the columns searched in ``order``."""
        for c in range(len(self.columns)) if order is None else order:
            if u in self.columns[c]:
                return c, self.columns[c].index(u)
        raise KeyError(u)


def check_long(tok: Tokenized, max_length: int, long_inputs: LongInputs, names: Names) -> None:
    """With ``"error"``, a ``ValueError`` naming the first text longer than ``max_length`` in the caller's order
    (``names``); with ``"window"``, a log line saying how many go through windows."""
    long = [u for u, ids in enumerate(tok.ids) if len(ids) > max_length]
    if long and long_inputs == "error":
        first = names.first(long)
        raise ValueError(
            f"{names.label(first)} has {len(tok.ids[first])} tokens, more than the model's {max_length}; pass "
            "long_inputs='window' to score it in full or long_inputs='truncate' to cut it as bert-score does"
        )
    if long:
        logger.info(
            "%d of %d texts exceed %d tokens and are scored through sliding windows",
            len(long),
            len(tok.ids),
            max_length,
        )


def text_weights(tok: Tokenized, weights: Weights, names: Names) -> Prepared:
    """``tok`` with each text's unnormalised token weights (empty texts: none), looked up for all texts at once;
    an idf table missing a token is a ``ValueError`` naming the text as ``names`` does."""
    content = torch.tensor(tok.content_lengths) > 0
    lengths = torch.where(content, tok.packed.lengths, 0)  # empty texts weigh nothing
    flat = tok.packed.flat[torch.repeat_interleave(content, tok.packed.lengths)]
    try:
        flat_weights = token_weights(flat, lengths, weights.table, weights.fallback)
    except MissingWeight as error:
        raise ValueError(f"{names.label(error.sentence)}: {error}") from None
    return Prepared(tok, Packed.of(flat_weights, lengths))


def warn_empty(tok: Tokenized, what: str, units: Sequence[int], label: Callable[[int], str]) -> None:
    """One warning for the items whose text is empty (item ``i`` is distinct text ``units[i]``), naming the first
    as ``label(i)`` gives it; ``what`` names the items (``"candidate(s)"``)."""
    # Counted by their labels: with several references per candidate one candidate is the candidate of several pairs.
    empty = list(dict.fromkeys(label(i) for i, u in enumerate(units) if tok.is_empty(u)))
    if empty:
        logger.warning("%d %s empty (first: %s): %s", len(empty), what, empty[0], EMPTY_SCORES)


def mostly_unknown(tok: Tokenized, unk_id: int | None) -> list[int]:
    """The texts of which more than :data:`UNKNOWN_SHARE` of the content tokens are the unknown token ``unk_id``
    (none when the tokenizer has no unknown token). One C-level ``list.count`` per text: no Python loop over tokens.

    Example:
        >>> mostly_unknown(Tokenized([[1, 9, 9, 2], [1, 5, 9, 2], [1, 2]], [2, 2, 0], []), unk_id=9)
        [0]
    """
    if unk_id is None:
        return []
    unknown = [ids.count(unk_id) for ids in tok.ids]
    shares = zip(unknown, tok.content_lengths, strict=True)
    return [u for u, (n, content) in enumerate(shares) if content and n > UNKNOWN_SHARE * content]


def warn_unknown(tok: Tokenized, tokenizer: PreTrainedTokenizerBase, names: Names) -> None:
    """One warning for the texts that are mostly the tokenizer's unknown token (:func:`mostly_unknown`), naming
    the first in the caller's order as ``names`` does."""
    unknown = mostly_unknown(tok, tokenizer.unk_token_id)
    if unknown:
        logger.warning(
            "%d text(s) mostly the unknown token %s (first: %s): %s",
            len(unknown),
            tokenizer.unk_token,
            names.label(names.first(unknown)),
            UNKNOWN_SCORES,
        )
