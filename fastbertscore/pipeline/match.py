"""Greedy cosine matching: pure tensor math, no loading, no logging."""

from __future__ import annotations

import torch


def normalize(embeddings: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Divide each token vector by its L2 norm, in place (the same division ``bert-score`` applies, without a
    second copy of the embeddings); the embeddings and their norms (a norm that is 0 or not finite marks a vector
    that no division makes a unit vector)."""
    norms = torch.norm(embeddings, dim=-1)
    return embeddings.div_(norms.unsqueeze(-1)), norms


def greedy_match(
    cand: torch.Tensor,
    cand_mask: torch.Tensor,
    cand_weights: torch.Tensor,
    ref: torch.Tensor,
    ref_mask: torch.Tensor,
    ref_weights: torch.Tensor,
    *,
    block: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """BERTScore precision, recall and F1 of padded, normalised candidate/reference embeddings.

    Args:
        cand: ``(..., B, Tc, D)`` unit-norm candidate token embeddings (leading dims, e.g. layers, broadcast),
            zero vectors on padding (as :func:`~.batching.pad` pads). Grouped (a mask of one dimension more than
            ``ref_mask``): ``(..., B, K, Tc, D)``, up to ``K`` candidates against each of the ``B`` references, so
            that each reference is padded and multiplied once (a slot with no real token scores nothing that counts).
        cand_mask: ``(B, Tc)`` (grouped: ``(B, K, Tc)``) bool, True on real tokens.
        cand_weights: token weights of the mask's shape, 0 on padding; normalised here to sum to 1 per sentence.
        ref, ref_mask, ref_weights: the same for the references, ``(..., B, Tr, D)``, ``(B, Tr)``.
        block: compute the similarities this many candidate tokens at a time (same result, bounded memory).

    Returns:
        ``(P, R, F)``, each ``(..., B)`` (grouped: ``(..., B, K)``). Every token is matched to its most similar
        token on the other side; padding is never a match (``bert-score`` lets padding act as a similarity of 0,
        so its scores depend on what else is in the batch whenever a token's best similarity is negative).
    """
    if cand_mask.dim() == ref_mask.dim():  # one candidate per reference: a group of one
        P, R, F = greedy_match(
            cand.unsqueeze(-3), cand_mask.unsqueeze(-2), cand_weights.unsqueeze(-2), ref, ref_mask, ref_weights,
            block=block,
        )  # fmt: skip
        return P.squeeze(-1), R.squeeze(-1), F.squeeze(-1)
    ref_mask, ref_weights = ref_mask.unsqueeze(-2), ref_weights.unsqueeze(-2)  # (B, 1, Tr): against every slot
    word_precision, word_recall = _best_similarities(cand, cand_mask, ref, ref_mask, block or cand.shape[-2])
    word_precision = word_precision.masked_fill(~cand_mask, 0.0)
    word_recall = word_recall.masked_fill(~ref_mask, 0.0)
    precision_scale = cand_weights / cand_weights.sum(dim=-1, keepdim=True)
    recall_scale = ref_weights / ref_weights.sum(dim=-1, keepdim=True)
    P = (word_precision * precision_scale).sum(dim=-1)
    R = (word_recall * recall_scale).sum(dim=-1)
    return P, R, f_measure(P, R)


def f_measure(P: torch.Tensor, R: torch.Tensor) -> torch.Tensor:
    """``2PR / (P + R)``, 0 where it is undefined (P = R = 0), as bert-score computes it: the one F formula."""
    F = 2 * P * R / (P + R)
    return F.masked_fill(torch.isnan(F), 0.0)


def _best_similarities(
    cand: torch.Tensor, cand_mask: torch.Tensor, ref: torch.Tensor, ref_mask: torch.Tensor, block: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Each candidate token's best similarity ``(..., B, K, Tc)`` and each reference token's best similarity for each
    candidate slot ``(..., B, K, Tr)``, ``block`` candidate tokens at a time (``ref_mask``: ``(B, 1, Tr)``).

    On a CPU padding is not masked: a zero vector's similarity to anything is exactly 0, so a maximum over padding
    and real tokens is the real tokens' one wherever that is above 0. Only where a real token's best is not above 0
    and the other side has padding could padding have won: then (rare with real models, whose token vectors mostly
    point the same way) the maxima are taken again with padding masked out. The same numbers, with two passes over
    the similarities fewer. On a GPU the masked maxima are taken at once (the check would make the host wait at
    every step)."""
    if cand.device.type == "cpu":
        rows, cols = _maxima(cand, None, ref, None, block)
        # a slot with no real token (a reference with fewer candidates than K) is never read: it is not "padded"
        cand_padded = ~cand_mask.all(dim=-1, keepdim=True) & cand_mask.any(dim=-1, keepdim=True)  # (B, K, 1)
        ref_padded = ~ref_mask.all(dim=-1, keepdim=True)  # (B, 1, 1)
        if not (((rows <= 0) & cand_mask & ref_padded).any() or ((cols <= 0) & ref_mask & cand_padded).any()):
            return rows, cols
    return _maxima(cand, cand_mask, ref, ref_mask, block)


def _maxima(
    cand: torch.Tensor, cand_mask: torch.Tensor | None, ref: torch.Tensor, ref_mask: torch.Tensor | None, block: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The row and column maxima of the similarities, padding masked out where the masks are given: each reference
    is multiplied once against its slots' candidate tokens, laid end to end (``(..., B, K * Tc, D)``)."""
    rows, cols = [], None
    for start in range(0, max(cand.shape[-2], 1), block):
        part = cand[..., start : start + block, :]  # (..., B, K, b, D)
        flat = part.reshape(*part.shape[:-3], -1, part.shape[-1])
        sim = torch.matmul(flat, ref.transpose(-1, -2)).unflatten(-2, part.shape[-3:-1])  # (..., B, K, b, Tr)
        if cand_mask is not None and ref_mask is not None:
            pair_mask = cand_mask[..., start : start + block].unsqueeze(-1) & ref_mask.unsqueeze(-2)
            sim = sim.masked_fill_(~pair_mask, float("-inf"))
        rows.append(sim.amax(dim=-1))
        col = sim.amax(dim=-2)
        cols = col if cols is None else torch.maximum(cols, col)
    assert cols is not None  # the loop above runs at least once
    return torch.cat(rows, dim=-1), cols
