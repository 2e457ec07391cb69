"""Score (candidate, reference) pairs: tokenize, weight, embed and match, a chunk of pairs at a time.

Memory stays bounded: only the embeddings of one chunk's distinct sentences are alive at once
(``embedding_bytes`` decides the chunk size), never those of the whole corpus.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import torch
from torch.nn.utils.rnn import pad_sequence
from tqdm.auto import tqdm

from fastbertscore.cache.memory import EmbeddingCache
from fastbertscore.pipeline.embed import embed, pad_id_of
from fastbertscore.pipeline.heap import release_free_memory
from fastbertscore.pipeline.match import greedy_match
from fastbertscore.pipeline.models import Encoder
from fastbertscore.pipeline.tokens import Tokenized, tokenize, warn_truncated
from fastbertscore.pipeline.weights import sentence_weights
from fastbertscore.pipeline.windows import WindowSpec
from fastbertscore.validate import Pairs

logger = logging.getLogger(__name__)

# Similarity entries (pairs × cand tokens × ref tokens × layers) in one matching step: 64 MiB of fp32.
_SIM_BUDGET = 1 << 24
# Padded embedding entries (pairs × (cand + ref tokens) × width × layers) copied for one matching step: 64 MiB.
_PAD_BUDGET = 1 << 24


@dataclass(frozen=True)
class Budget:
    """How much work goes into one step; none of it changes a score."""

    batch_size: int = 64  # sentences per encoder batch at most
    max_tokens: int = 4096  # padded tokens per encoder batch at most
    embedding_bytes: int = 256 << 20  # embeddings kept alive at once (one chunk of pairs)


@dataclass(frozen=True)
class Weights:
    table: torch.Tensor  # (vocab,) float32 weight of each token id
    fallback: torch.Tensor  # plain weights, for sentences whose weights are all 0


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
    encoder: Encoder,
    tokenizer,
    pairs: Pairs,
    weights: Weights,
    *,
    max_length: int | None,
    budget: Budget,
    verbose: bool = False,
    long_inputs: str = "truncate",
    window: WindowSpec | None = None,
    cache: EmbeddingCache | None = None,
) -> torch.Tensor:
    """Raw BERTScore of each pair: ``(N, 3)`` holding P, R, F — ``(L + 1, N, 3)`` for all layers.

    Pairs with an empty candidate or reference score 0 (with a warning). ``long_inputs`` says what happens
    to texts longer than ``max_length``: cut (``"truncate"``), scored in full through sliding windows
    (``"window"``, with ``window``), or a ``ValueError`` naming the first one (``"error"``).
    """
    texts = _Texts(pairs)
    n_pairs = len(pairs.cands)
    tok = tokenize(tokenizer, texts.texts, max_length if long_inputs == "truncate" else None)
    if long_inputs == "truncate":
        warn_truncated(len(tok.truncated), len(tok.ids), max_length, tokenizer.model_max_length)
    elif max_length is not None:
        check_long(tok, max_length, long_inputs, texts.first_use, lambda u: _input_position(texts, u))
    sent_weights = text_weights(tok, weights, texts.first_use)
    _warn_empty(tok, texts)

    n_layers = encoder.depth + 1 if encoder.all_layers else 1
    out = torch.zeros((n_layers, n_pairs, 3), dtype=torch.float32)
    live = [i for i in range(n_pairs) if not (tok.is_empty(texts.cand[i]) or tok.is_empty(texts.ref[i]))]
    chunk_tokens = max(budget.embedding_bytes // (4 * encoder.width * n_layers), max_length or 0, 1)
    pad_id = pad_id_of(tokenizer)
    n_live = len({u for i in live for u in (texts.cand[i], texts.ref[i])})
    with torch.inference_mode(), tqdm(total=n_live, desc="embedding", unit="sent", disable=not verbose) as bar:
        for chunk, wanted in _chunks(live, texts, tok, chunk_tokens):
            emb = embed_cached(
                cache, encoder, tok.ids, wanted, pad_id=pad_id, batch_size=budget.batch_size,
                max_tokens=budget.max_tokens, progress=bar, window=window,
            )
            dev_weights = {u: sent_weights[u].to(encoder.device) for u in wanted}
            for rows in _match_batches(chunk, texts, tok, n_layers, encoder.width):
                scores = _match(rows, texts, emb, dev_weights, encoder.all_layers)
                out[:, torch.tensor(rows)] = scores.to("cpu", torch.float32)
            del emb, dev_weights
            release_free_memory()
    return out if encoder.all_layers else out[0]


def embed_cached(cache: EmbeddingCache | None, encoder, ids, wanted, *, progress, **kwargs) -> dict[int, torch.Tensor]:
    """:func:`~fastbertscore.pipeline.embed.embed` for the texts ``wanted``, taking those the cache holds from it and
    putting the rest in."""
    if cache is None:
        return embed(encoder, ids, wanted, progress=progress, **kwargs)
    found = {u: cache.get(ids[u]) for u in wanted}
    missing = [u for u, e in found.items() if e is None]
    if progress is not None:
        progress.update(len(wanted) - len(missing))
    fresh = embed(encoder, ids, missing, progress=progress, **kwargs)
    for u, e in fresh.items():
        cache.put(ids[u], e)
    return {**{u: e for u, e in found.items() if e is not None}, **fresh}


def check_long(tok: Tokenized, max_length: int, long_inputs: str, label, position=None) -> None:
    """With ``"error"``, a ``ValueError`` naming (``label(u)``) the first text longer than ``max_length`` in input
    order (``position(u)``, default ``u``); with ``"window"``, a log line saying how many go through windows."""
    long = [u for u, ids in enumerate(tok.ids) if len(ids) > max_length]
    if long and long_inputs == "error":
        first = min(long, key=position) if position else long[0]
        raise ValueError(
            f"{label(first)} has {len(tok.ids[first])} tokens, more than the model's {max_length}; pass "
            "long_inputs='window' to score it in full or long_inputs='truncate' to cut it as bert-score does"
        )
    if long:
        logger.info("%d of %d texts exceed %d tokens and are scored through sliding windows", len(long), len(tok.ids), max_length)


def _input_position(texts: _Texts, u: int) -> int:
    """Row of the first pair that uses text ``u``, for "the first offending input"."""
    return min((row for row, (c, r) in enumerate(zip(texts.cand, texts.ref)) if u in (c, r)), default=0)


def text_weights(tok: Tokenized, weights: Weights, label) -> list[torch.Tensor]:
    """Each text's unnormalised token weights (empty texts: an empty tensor); an idf table missing a token is a
    ``ValueError`` naming the text as ``label(u)`` gives it."""
    out = []
    for u, ids in enumerate(tok.ids):
        if tok.is_empty(u):
            out.append(torch.empty(0))
            continue
        try:
            out.append(sentence_weights(ids, weights.table, weights.fallback))
        except ValueError as error:
            raise ValueError(f"{label(u)}: {error}") from None
    return out


def _warn_empty(tok: Tokenized, texts: _Texts) -> None:
    for side, column in (("cands", texts.cand), ("refs", texts.ref)):
        empty = [row for row, u in enumerate(column) if tok.is_empty(u)]
        if empty:
            logger.warning(
                "%d pair(s) with an empty %s text (first: %s): their P, R and F are set to 0",
                len(empty), side[:-1], texts.pairs.label(side, empty[0]),
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
    length = lambda u: len(tok.ids[u])  # noqa: E731
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
