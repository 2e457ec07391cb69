"""All-vs-all matching: every candidate text against every reference text, as ``(N, M)`` matrices of P, R, F.

The matching strategy of :func:`fastbertscore.pairwise` and :func:`fastbertscore.mbr`, over texts prepared and
embedded as every other path does (:meth:`~fastbertscore.pipeline.embedder.Embedder.prepare`/``embed``). Each
distinct text is embedded once and kept under the call's :class:`~.budget.Budget` (past it, on local disk), and
blocks of similarities take a matching step's share of that budget. Similarities then come from large matrix products over blocks of length-sorted,
padded texts, with masked max reductions per text, instead of N x M small matches. Padding never matches: every
vector gets two extra coordinates so that a padded token's similarity is -1e4 inside the same product, and real
pairs are unchanged (the extra terms are exact zeros). Each entry equals ``score([a[i]], [b[j]])``. Embeddings stay
on the encoder's device, so a GPU runs the products too; each block's scores come back to the matrices on the CPU.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence

import torch
from tqdm.auto import tqdm

from fastbertscore import exact
from fastbertscore.cache.spill import KeptEmbeddings
from fastbertscore.heap import Ceiling, keep_under_ceiling
from fastbertscore.pipeline.batching import buckets, pad
from fastbertscore.pipeline.budget import FLOAT_BYTES
from fastbertscore.pipeline.embedder import Embedder
from fastbertscore.pipeline.match import f_measure
from fastbertscore.pipeline.prepare import Names, warn_empty

#: Padded candidate tokens per block at most (fewer in a small budget); the reference side gets the rest of a
#: matching step's entries.
ROW_TOKENS = 2048
#: A padded token's similarity: below any cosine, finite so that 0-weighted rows stay finite.
PAD_SIMILARITY = -1e4


class Embedded:
    """Distinct texts, each embedded once and kept for the call under its budget (in memory, then spilled to
    local disk): their normalised weights, token counts and which are empty, and the call's heap ``ceiling``.
    :meth:`vectors` hands them out."""

    def __init__(
        self,
        embedder: Embedder,
        ids: list[list[int]],
        weights: list[torch.Tensor],
        empty: list[bool],
        kept: KeptEmbeddings,
        ceiling: Ceiling,
    ):
        self.embedder, self.ids, self.weights, self.empty, self.kept, self.ceiling = (
            embedder,
            ids,
            weights,
            empty,
            kept,
            ceiling,
        )
        self.budget = embedder.budget
        self.lengths = [len(seq) for seq in ids]
        self.n_layers = embedder.n_layers

    def vectors(self, units: Sequence[int]) -> list[torch.Tensor]:
        """Unit-norm float32 embeddings of ``units`` on the encoder's device; a text the disk lost is embedded
        again, never guessed."""
        found: dict[int, torch.Tensor] = {}
        lost = []
        for u in units:
            kept = self.kept.get(u)
            if kept is None:
                lost.append(u)
            else:
                found[u] = kept
        if lost:
            embedded = self.embedder.embed(self.ids, lost, ceiling=self.ceiling)
            found.update({u: e.float() for u, e in embedded.items()})
        return [found[u] for u in units]


@contextlib.contextmanager
def embedded(
    embedder: Embedder,
    texts: list[str],
    names: Names,
    *,
    verbose: bool = False,
) -> Iterator[Embedded]:
    """Prepare and embed ``texts`` (distinct) for all-vs-all matching with the embedder's weights, holding them
    under its budget (:meth:`Embedder.for_call`) while the context lasts; ``label(k)`` names text ``k`` as the caller gave it (``texts_a[3]``), for errors and warnings."""
    prepared = embedder.prepare(texts, names)
    budget = embedder.budget
    tok = prepared.tok
    empty = [tok.is_empty(k) for k in range(len(texts))]
    warn_empty(tok, "text(s)", range(len(texts)), names.label)
    device = embedder.encoder.device
    raw = prepared.weights
    normalised = [torch.zeros(len(ids)) if empty[k] else raw[k] / raw[k].sum() for k, ids in enumerate(tok.ids)]
    size = (tok.packed.lengths * (FLOAT_BYTES * embedder.encoder.width * embedder.n_layers)).tolist()
    wanted = sorted((k for k in range(len(texts)) if not empty[k]), key=lambda k: -size[k])
    steps = buckets(wanted, [(bytes_,) for bytes_ in size], lambda n, padded: n * padded[0], budget.step_bytes)
    kept = KeptEmbeddings(budget.kept_bytes, device)
    limit = budget.ceiling(lambda: kept.bytes)  # checked between steps
    within = limit if budget.explicit else None  # and within a step only where the user gave the budget
    with (
        torch.inference_mode(),
        kept,
        tqdm(total=len(wanted), desc="embedding", unit="text", disable=not verbose) as bar,
    ):
        for step in steps:
            for k, e in embedder.embed(tok.ids, step, progress=bar, ceiling=within).items():
                kept.put(k, e.float())
            keep_under_ceiling(limit)
        bar.close()
        yield Embedded(embedder, tok.ids, [w.to(device) for w in normalised], empty, kept, within)


def _padded_side(
    vectors: list[torch.Tensor], weights: list[torch.Tensor], own_mask_slot: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(n, T, ..., D + 2)`` padded vectors with the two masking coordinates, and ``(n, T)`` weights.

    Slot ``own_mask_slot`` holds 0 on real tokens and -1e4 on padding; the other slot holds 1 everywhere, so a
    product with the other side adds -1e4 exactly where this side is padding.
    """
    padded, real = pad(vectors)
    extra = torch.ones((*padded.shape[:-1], 2), dtype=padded.dtype, device=padded.device)
    mark = torch.where(real, 0.0, PAD_SIMILARITY).view(*real.shape, *([1] * (padded.dim() - 3)))
    extra[..., own_mask_slot] = mark.expand(padded.shape[:-1])
    padded_weights, _ = pad(weights)
    return torch.cat([padded, extra], dim=-1), padded_weights


def _block(a: torch.Tensor, a_w: torch.Tensor, b: torch.Tensor, b_w: torch.Tensor, n_layers: int) -> torch.Tensor:
    """P, R, F of every pair of a row side and a column side (:func:`_padded_side`): ``(layers, n_a, n_b, 3)``."""
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
    return list(buckets(units, [(length,) for length in lengths], lambda n, padded: n * padded[0], budget))


def score_matrix(emb: Embedded, rows: list[int], cols: list[int], *, verbose: bool = False) -> torch.Tensor:
    """``(layers, len(rows), len(cols), 3)`` raw P, R, F of every candidate ``rows[i]`` against reference ``cols[j]``.

    When ``rows == cols`` (all-vs-all within one list) only block pairs on and above the diagonal are computed:
    the similarities of (j, i) are the transpose of those of (i, j), so P[j, i] = R[i, j] and R[j, i] = P[i, j].
    """
    n_layers = emb.n_layers
    out = torch.zeros((n_layers, len(rows), len(cols), 3))  # on the host: N x M need not fit on the device
    row_len = [emb.lengths[u] for u in rows]
    col_len = [emb.lengths[u] for u in cols]
    live_rows = sorted((i for i in range(len(rows)) if not emb.empty[rows[i]]), key=row_len.__getitem__)
    live_cols = sorted((j for j in range(len(cols)) if not emb.empty[cols[j]]), key=col_len.__getitem__)
    if not live_rows or not live_cols:
        return out
    symmetric = rows == cols
    entries = emb.budget.match_entries
    row_tokens = min(ROW_TOKENS, max(1, math.isqrt(entries)))  # a text longer than that gets a block of its own
    row_blocks = _token_blocks(live_rows, row_len, row_tokens)
    col_blocks = row_blocks
    if not symmetric:
        col_blocks = _token_blocks(live_cols, col_len, max(entries // (row_tokens * n_layers), max(col_len)))

    def side(block: list[int], units: list[int], slot: int) -> tuple[torch.Tensor, torch.Tensor]:
        chosen = [units[i] for i in block]
        return _padded_side(emb.vectors(chosen), [emb.weights[u] for u in chosen], own_mask_slot=slot)

    total = len(row_blocks) * (len(row_blocks) + 1) // 2 if symmetric else len(row_blocks) * len(col_blocks)
    with (
        torch.inference_mode(),
        exact.exact_float32(),
        tqdm(total=total, desc="matching", unit="block", disable=not verbose) as bar,
    ):
        for a, rb in enumerate(row_blocks):
            a_side, a_weights = side(rb, rows, 0)
            for b in range(a if symmetric else 0, len(col_blocks)):
                cb = col_blocks[b]
                b_side, b_weights = side(cb, cols, 1)
                scores = _block(a_side, a_weights, b_side, b_weights, n_layers).cpu()
                out[:, torch.tensor(rb).unsqueeze(1), torch.tensor(cb).unsqueeze(0)] = scores
                if symmetric and a != b:
                    mirrored = scores.transpose(1, 2)[..., [1, 0, 2]]  # (j, i): P and R swap, F stays
                    out[:, torch.tensor(cb).unsqueeze(1), torch.tensor(rb).unsqueeze(0)] = mirrored
                bar.update(1)
                keep_under_ceiling(emb.ceiling)
    return out
