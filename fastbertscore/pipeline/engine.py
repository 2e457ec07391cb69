"""Score (candidate, reference) pairs: tokenize, weight, embed and match, a chunk of pairs at a time.

Memory stays bounded: only the embeddings of one chunk's distinct sentences are alive at once
(``embedding_bytes`` decides the chunk size), never those of the whole corpus.
"""

from __future__ import annotations

import logging

import torch
from torch.nn.utils.rnn import pad_sequence
from tqdm.auto import tqdm

from fastbertscore.pipeline.embedder import Budget, Embedder, Weights
from fastbertscore.pipeline.heap import release_free_memory
from fastbertscore.pipeline.match import greedy_match
from fastbertscore.pipeline.tokens import EMPTY_SCORES, Tokenized
from fastbertscore.validate import Pairs

logger = logging.getLogger(__name__)

# Similarity entries (pairs × cand tokens × ref tokens × layers) in one matching step: 64 MiB of fp32.
_SIM_BUDGET = 1 << 24
# Padded embedding entries (pairs × (cand + ref tokens) × width × layers) copied for one matching step: 64 MiB.
_PAD_BUDGET = 1 << 24


class _Texts:
    """Distinct texts of a batch of pairs, each tokenized and weighted once."""

    def __init__(self, pairs: Pairs):
        index: dict[str, int] = {}
        self.cand = [index.setdefault(text, len(index)) for text in pairs.cands]
        self.ref = [index.setdefault(text, len(index)) for text in pairs.refs]
        self.texts = list(index)
        self.pairs = pairs

    def first_use(self, u: int) -> str:
        """Where distinct text ``u`` first appears in the caller's input, for error messages."""
        for side, column in (("refs", self.ref), ("cands", self.cand)):
            if u in column:
                return self.pairs.label(side, column.index(u))
        raise KeyError(u)


def score_pairs(
    embedder: Embedder, pairs: Pairs, weights: Weights, *, budget: Budget, verbose: bool = False
) -> torch.Tensor:
    """Raw BERTScore of each pair: ``(N, 3)`` holding P, R, F — ``(L + 1, N, 3)`` for all layers.

    Pairs with an empty candidate or reference score 0 (with a warning). Texts longer than the model's window
    are cut, scored in full through windows or refused, as the embedder's ``long_inputs`` says.
    """
    texts = _Texts(pairs)
    n_pairs = len(pairs.cands)
    prepared = embedder.prepare(texts.texts, weights, texts.first_use, lambda u: _input_position(texts, u))
    tok, sent_weights = prepared.tok, prepared.weights
    _warn_empty(tok, texts)

    encoder, n_layers = embedder.encoder, embedder.n_layers
    out = torch.zeros((n_layers, n_pairs, 3), dtype=torch.float32)
    live = [i for i in range(n_pairs) if not (tok.is_empty(texts.cand[i]) or tok.is_empty(texts.ref[i]))]
    chunk_tokens = max(budget.embedding_bytes // (4 * encoder.width * n_layers), embedder.max_length or 0, 1)
    n_live = len({u for i in live for u in (texts.cand[i], texts.ref[i])})
    with torch.inference_mode(), tqdm(total=n_live, desc="embedding", unit="sent", disable=not verbose) as bar:
        for chunk, wanted in _chunks(live, texts, tok, chunk_tokens):
            emb = embedder.embed(tok.ids, wanted, batch_size=budget.batch_size, progress=bar, budget=budget)
            dev_weights = {u: sent_weights[u].to(encoder.device) for u in wanted}
            for rows in _match_batches(chunk, texts, tok, n_layers, encoder.width):
                scores = _match(rows, texts, emb, dev_weights, encoder.all_layers)
                out[:, torch.tensor(rows)] = scores.to("cpu", torch.float32)
            del emb, dev_weights
            release_free_memory()
    return out if encoder.all_layers else out[0]


def _input_position(texts: _Texts, u: int) -> int:
    """Row of the first pair that uses text ``u``, for "the first offending input"."""
    return min((row for row, (c, r) in enumerate(zip(texts.cand, texts.ref)) if u in (c, r)), default=0)


def _warn_empty(tok: Tokenized, texts: _Texts) -> None:
    for side, column in (("cands", texts.cand), ("refs", texts.ref)):
        empty = [row for row, u in enumerate(column) if tok.is_empty(u)]
        if empty:
            logger.warning(
                "%d pair(s) with an empty %s text (first: %s): %s",
                len(empty),
                side[:-1],
                texts.pairs.label(side, empty[0]),
                EMPTY_SCORES,
            )


def _chunks(rows: list[int], texts: _Texts, tok: Tokenized, chunk_tokens: int):
    """Group pair rows, in input order, so that each group's distinct sentences fit ``chunk_tokens``."""
    chunk: list[int] = []
    wanted: dict[int, None] = {}
    tokens = 0
    for row in rows:
        new = [u for u in dict.fromkeys((texts.cand[row], texts.ref[row])) if u not in wanted]
        extra = sum(len(tok.ids[u]) for u in new)
        if chunk and tokens + extra > chunk_tokens:
            yield chunk, list(wanted)
            chunk, wanted, tokens = [], {}, 0
            new = list(dict.fromkeys((texts.cand[row], texts.ref[row])))
            extra = sum(len(tok.ids[u]) for u in new)
        chunk.append(row)
        wanted.update(dict.fromkeys(new))
        tokens += extra
    if chunk:
        yield chunk, list(wanted)


def _match_batches(rows: list[int], texts: _Texts, tok: Tokenized, n_layers: int, width: int):
    """Rows sorted by lengths and grouped so that one step's similarities and padded copies stay under budget."""
    length = lambda u: len(tok.ids[u])
    ordered = sorted(rows, key=lambda r: (length(texts.cand[r]), length(texts.ref[r])))
    batch: list[int] = []
    max_c = max_r = 0
    for row in ordered:
        c, r = max(max_c, length(texts.cand[row])), max(max_r, length(texts.ref[row]))
        n = len(batch) + 1
        if batch and (n * c * r * n_layers > _SIM_BUDGET or n * (c + r) * n_layers * width > _PAD_BUDGET):
            yield batch
            batch, c, r = [], length(texts.cand[row]), length(texts.ref[row])
        batch.append(row)
        max_c, max_r = c, r
    if batch:
        yield batch


def _padded(units: list[int], emb: dict[int, torch.Tensor], weights: dict[int, torch.Tensor], all_layers: bool):
    vectors = pad_sequence([emb[u] for u in units], batch_first=True)
    if all_layers:  # (B, T, L, D) → (L, B, T, D): layers broadcast in the matching
        vectors = vectors.permute(2, 0, 1, 3)
    lengths = torch.tensor([emb[u].shape[0] for u in units], device=vectors.device)
    mask = torch.arange(int(lengths.max()), device=vectors.device) < lengths.unsqueeze(1)
    return vectors, mask, pad_sequence([weights[u] for u in units], batch_first=True)


def _match(rows, texts: _Texts, emb, weights, all_layers: bool) -> torch.Tensor:
    cand = _padded([texts.cand[r] for r in rows], emb, weights, all_layers)
    ref = _padded([texts.ref[r] for r in rows], emb, weights, all_layers)
    # One pair of long documents can exceed the budget alone: then match it a block of candidate tokens at a time.
    per_cand_token = len(rows) * ref[0].shape[-2] * (ref[0].shape[0] if all_layers else 1)
    P, R, F = greedy_match(*cand, *ref, block=max(1, _SIM_BUDGET // max(per_cand_token, 1)))
    scores = torch.stack((P, R, F), dim=-1)
    return scores if all_layers else scores.unsqueeze(0)
