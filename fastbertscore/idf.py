"""idf weights as a value: a vocabulary-sized table and where it came from, built once and handed to a scorer.

A scorer never changes its idf weights behind the back of whoever shares it: the weights are counted over
sentences, summed from document frequencies (across the ranks of a process group or the blocks of a Ray dataset)
or taken from a user's mapping, and a scorer with other weights is another scorer
(:meth:`~fastbertscore.BERTScorer.with_idf`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from fastbertscore.pipeline.tokens import tokenize
from fastbertscore.pipeline.weights import document_frequencies, idf_table, table_from_mapping
from fastbertscore.signature import mapping_digest
from fastbertscore.validate import Texts, check_idf_sents, check_texts

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


@dataclass(frozen=True)
class IdfWeights:
    """``table``: ``(vocab,)`` float32 idf weight of each token id; ``mapping``: the digest of the user's
    ``{token_id: weight}`` mapping they came from, or ``None`` when they were counted (the signature says which)."""

    table: torch.Tensor
    mapping: str | None = None

    @classmethod
    def from_counts(cls, doc_freq: torch.Tensor, num_docs: int) -> IdfWeights:
        """``log((M + 1) / (df + 1))`` from document frequencies ``doc_freq`` over ``num_docs`` sentences."""
        return cls(idf_table(doc_freq, num_docs))

    @classmethod
    def from_mapping(cls, weights: Mapping[int, float], vocab_size: int) -> IdfWeights:
        """A user's ``{token_id: weight}`` mapping (a ``defaultdict``'s default is the weight of unseen tokens)."""
        return cls(table_from_mapping(weights, vocab_size), mapping_digest(weights))

    @classmethod
    def counted(cls, tokenizer: PreTrainedTokenizerBase, sents: Texts, token_limit: int | None) -> IdfWeights:
        """Counted over ``sents`` (the references), tokenized as scoring tokenizes them."""
        sents = check_idf_sents(sents)
        return cls.from_counts(count_documents(tokenizer, sents, token_limit), len(sents))


def count_documents(tokenizer: PreTrainedTokenizerBase, sents: Texts, token_limit: int | None) -> torch.Tensor:
    """``(vocab,)`` int64: in how many of ``sents`` each token occurs (summable across processes)."""
    ids = tokenize(tokenizer, check_texts(sents, "sents"), token_limit).ids
    return document_frequencies(ids, len(tokenizer))
