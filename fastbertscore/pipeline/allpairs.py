"""All-vs-all matching: every candidate text against every reference text, as ``(N, M)`` matrices of P, R, F.

The matching strategy of :func:`fastbertscore.pairwise` and :func:`fastbertscore.mbr`, over texts prepared and
embedded as every other path does (:meth:`~fastbertscore.pipeline.embedder.Embedder.prepare`/``embed``). Each
distinct text is embedded once. Similarities then come from large matrix products over blocks of length-sorted,
padded texts, with masked max reductions per text, instead of N x M small matches. Padding never matches: every
vector gets two extra coordinates so that a padded token's similarity is -1e4 inside the same product, and real
pairs are unchanged (the extra terms are exact zeros). Each entry equals ``score([a[i]], [b[j]])``. Embeddings stay
on the encoder's device, so a GPU runs the products too; each block's scores come back to the matrices on the CPU.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import torch
from torch.nn.utils.rnn import pad_sequence
from tqdm.auto import tqdm

from fastbertscore import hardware
from fastbertscore.pipeline.embedder import Embedder, Weights
from fastbertscore.pipeline.match import f_measure
from fastbertscore.pipeline.tokens import EMPTY_SCORES

logger = logging.getLogger(__name__)

#: Similarity entries (padded tokens x padded tokens x layers) computed in one product: 64 MiB of float32.
BLOCK_ENTRIES = 1 << 24
_ROW_TOKENS = 2048  # padded candidate tokens per block; the reference side gets the rest of the budget
_PAD = -1e4  # a padded token's similarity: below any cosine, finite so that 0-weighted rows stay finite


@dataclass
class Embedded:
    """Distinct texts, each embedded once: unit-norm vectors, normalised weights, and which are empty."""

    vectors: list[torch.Tensor]  # (T, D), or (T, L + 1, D) with all layers
    weights: list[torch.Tensor]  # (T,), summing to 1 (empty texts: all 0)
    empty: list[bool]


def embed_texts(
    embedder: Embedder, texts: list[str], labels: list[str], weights: Weights, *, batch_size: int, verbose: bool = False
) -> Embedded:
    """Prepare and embed ``texts`` (distinct); ``labels[k]`` names text ``k`` as the caller gave it (``texts_a[3]``),
    for errors and warnings."""
    prepared = embedder.prepare(texts, weights, labels.__getitem__)
    tok = prepared.tok
    empty = [tok.is_empty(k) for k in range(len(texts))]
    if any(empty):
        first = labels[empty.index(True)]
        logger.warning("%d empty text(s) (first: %s): %s", sum(empty), first, EMPTY_SCORES)
    raw = prepared.weights
    normalised = [torch.zeros(len(ids)) if empty[k] else raw[k] / raw[k].sum() for k, ids in enumerate(tok.ids)]
    wanted = [k for k in range(len(texts)) if not empty[k]]
    with torch.inference_mode(), tqdm(total=len(wanted), desc="embedding", unit="text", disable=not verbose) as bar:
        found = embedder.embed(tok.ids, wanted, batch_size=batch_size, progress=bar)
    device = embedder.encoder.device
    vectors = [found[k].float() if k in found else torch.zeros(0, device=device) for k in range(len(texts))]
    return Embedded(vectors, [w.to(device) for w in normalised], empty)


def _padded_side(emb: Embedded, units: list[int], own_mask_slot: int):
    """``(n, T, ..., D + 2)`` padded vectors with the two masking coordinates, and ``(n, T)`` weights.

    Slot ``own_mask_slot`` holds 0 on real tokens and -1e4 on padding; the other slot holds 1 everywhere, so a
    product with the other side adds -1e4 exactly where this side is padding.
    """
    vectors = pad_sequence([emb.vectors[u] for u in units], batch_first=True)
    device = vectors.device
    lengths = torch.tensor([emb.vectors[u].shape[0] for u in units], device=device)
    real = torch.arange(vectors.shape[1], device=device) < lengths.unsqueeze(1)
    extra = torch.ones((*vectors.shape[:-1], 2), dtype=vectors.dtype, device=device)
    mark = torch.where(real, 0.0, _PAD).view(*real.shape, *([1] * (vectors.dim() - 3)))
    extra[..., own_mask_slot] = mark.expand(vectors.shape[:-1])
    weights = pad_sequence([emb.weights[u] for u in units], batch_first=True)
    return torch.cat([vectors, extra], dim=-1), weights


def _block(emb: Embedded, rows: list[int], cols: list[int], n_layers: int) -> torch.Tensor:
    """P, R, F of every (row, col) pair: ``(layers, len(rows), len(cols), 3)``."""
    a, a_w = _padded_side(emb, rows, own_mask_slot=0)
    b, b_w = _padded_side(emb, cols, own_mask_slot=1)
    # (n, T, [L,] D) -> (L, n * T, D): layers lead, so one batched product covers them all.
    a = a.movedim(2, 0) if a.dim() == 4 else a.unsqueeze(0)
    b = b.movedim(2, 0) if b.dim() == 4 else b.unsqueeze(0)
    na, ta, nb, tb = a.shape[1], a.shape[2], b.shape[1], b.shape[2]
    sim = torch.matmul(a.reshape(n_layers, na * ta, -1), b.reshape(n_layers, nb * tb, -1).transpose(1, 2))
    sim = sim.view(n_layers, na, ta, nb, tb)
    precision = torch.einsum("lijm,ij->lim", sim.amax(dim=4), a_w)  # each candidate token's best reference token
    recall = torch.einsum("limt,mt->lim", sim.amax(dim=2), b_w)  # each reference token's best candidate token
    return torch.stack((precision, recall, f_measure(precision, recall)), dim=-1)


def _token_blocks(units: list[int], lengths: list[int], budget: int) -> list[list[int]]:
    """Consecutive groups of ``units`` (sorted by length) whose padded token count stays within ``budget``."""
    blocks: list[list[int]] = []
    block: list[int] = []
    longest = 0
    for u in units:
        longest_if = max(longest, lengths[u])
        if block and longest_if * (len(block) + 1) > budget:
            blocks.append(block)
            block, longest_if = [], lengths[u]
        block.append(u)
        longest = longest_if
    return blocks + ([block] if block else [])


def score_matrix(
    emb: Embedded, rows: list[int], cols: list[int], n_layers: int, *, verbose: bool = False
) -> torch.Tensor:
    """``(layers, len(rows), len(cols), 3)`` raw P, R, F of every candidate ``rows[i]`` against reference ``cols[j]``.

    When ``rows == cols`` (all-vs-all within one list) only block pairs on and above the diagonal are computed:
    the similarities of (j, i) are the transpose of those of (i, j), so P[j, i] = R[i, j] and R[j, i] = P[i, j].
    """
    out = torch.zeros((n_layers, len(rows), len(cols), 3))  # on the host: N x M need not fit on the device
    lengths = [v.shape[0] for v in emb.vectors]
    row_len = [lengths[u] for u in rows]
    col_len = [lengths[u] for u in cols]
    live_rows = sorted((i for i in range(len(rows)) if not emb.empty[rows[i]]), key=row_len.__getitem__)
    live_cols = sorted((j for j in range(len(cols)) if not emb.empty[cols[j]]), key=col_len.__getitem__)
    if not live_rows or not live_cols:
        return out
    symmetric = rows == cols
    row_blocks = _token_blocks(live_rows, row_len, _ROW_TOKENS)
    if symmetric:
        col_blocks = row_blocks
        pairs = [(a, b) for a in range(len(row_blocks)) for b in range(a, len(row_blocks))]
    else:
        col_budget = max(BLOCK_ENTRIES // (_ROW_TOKENS * n_layers), max(col_len))
        col_blocks = _token_blocks(live_cols, col_len, col_budget)
        pairs = [(a, b) for a in range(len(row_blocks)) for b in range(len(col_blocks))]
    with torch.inference_mode(), hardware.exact_float32():
        for a, b in tqdm(pairs, desc="matching", unit="block", disable=not verbose):
            rb, cb = row_blocks[a], col_blocks[b]
            scores = _block(emb, [rows[i] for i in rb], [cols[j] for j in cb], n_layers).cpu()
            out[:, torch.tensor(rb).unsqueeze(1), torch.tensor(cb).unsqueeze(0)] = scores
            if symmetric and a != b:
                mirrored = scores.transpose(1, 2)[..., [1, 0, 2]]  # (j, i): P and R swap, F stays
                out[:, torch.tensor(cb).unsqueeze(1), torch.tensor(rb).unsqueeze(0)] = mirrored
    return out
