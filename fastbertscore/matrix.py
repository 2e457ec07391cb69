"""All-vs-all BERTScore: ``(N, M)`` matrices of P, R and F, and minimum-Bayes-risk (MBR) selection.

Each distinct text is tokenized, weighted and embedded once. Similarities then come from large matrix products
over blocks of length-sorted, padded texts, with masked max reductions per text, instead of N x M small
matches. Padding never matches: every vector gets two extra coordinates so that a padded token's similarity is
-1e4 inside the same product, and real pairs are unchanged (the extra terms are exact zeros). Each entry
equals ``score([a[i]], [b[j]])``, which equals bert-score 0.3.13 run with ``batch_size=1``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch.nn.utils.rnn import pad_sequence
from tqdm.auto import tqdm

from fastbertscore.baselines.table import rescale
from fastbertscore.pipeline.embed import pad_id_of
from fastbertscore.pipeline.engine import (
    Weights,
    check_long,
    embed_cached,
    text_weights,
)
from fastbertscore.pipeline.tokens import tokenize, warn_truncated
from fastbertscore.validate import check_texts

logger = logging.getLogger(__name__)

#: Similarity entries (padded tokens x padded tokens x layers) computed in one product: 64 MiB of float32.
BLOCK_ENTRIES = 1 << 24
_ROW_TOKENS = 2048  # padded candidate tokens per block; the reference side gets the rest of the budget
_PAD = -1e4  # a padded token's similarity: below any cosine, finite so that 0-weighted rows stay finite
UTILITIES = ("precision", "recall", "f1")


@dataclass
class Embedded:
    """Distinct texts, each embedded once: unit-norm vectors, normalised weights, and which are empty."""

    vectors: list[torch.Tensor]  # (T, D), or (T, L + 1, D) with all layers
    weights: list[torch.Tensor]  # (T,), summing to 1 (empty texts: all 0)
    empty: list[bool]


def embed_texts(scorer, texts: list[str], labels: list[str], *, verbose: bool = False, batch_size: int | None = None) -> Embedded:
    """Tokenize, weight and embed ``texts`` (distinct) with ``scorer``'s model, precision, window and caches.

    ``labels[k]`` names text ``k`` as the caller gave it (``texts_a[3]``), for errors and warnings.
    """
    tokenizer, encoder = scorer.tokenizer, scorer._encoder
    tok = tokenize(tokenizer, texts, scorer.token_limit)
    max_length = scorer.max_length
    if scorer.long_inputs == "truncate":
        warn_truncated(len(tok.truncated), len(tok.ids), max_length)
    elif max_length is not None:
        check_long(tok, max_length, scorer.long_inputs, labels.__getitem__)  # texts are in input order
    empty = [tok.is_empty(k) for k in range(len(texts))]
    if any(empty):
        first = labels[empty.index(True)]
        logger.warning("%d empty text(s) (first: %s): their P, R and F are set to 0", sum(empty), first)
    raw = text_weights(tok, Weights(scorer._weight_table(), scorer._plain), labels.__getitem__)
    weights = [torch.zeros(len(ids)) if empty[k] else raw[k] / raw[k].sum() for k, ids in enumerate(tok.ids)]
    wanted = [k for k in range(len(texts)) if not empty[k]]
    budget = scorer._budget(batch_size)
    with torch.inference_mode(), tqdm(total=len(wanted), desc="embedding", unit="text", disable=not verbose) as bar:
        found = embed_cached(
            scorer.cache, encoder, tok.ids, wanted, pad_id=pad_id_of(tokenizer), batch_size=budget.batch_size,
            max_tokens=budget.max_tokens, progress=bar, window=scorer._active_window,
        )
    vectors = [found[k].float().cpu() if k in found else torch.zeros(0) for k in range(len(texts))]
    return Embedded(vectors, weights, empty)


def _padded_side(emb: Embedded, units: list[int], own_mask_slot: int):
    """``(n, T, ..., D + 2)`` padded vectors with the two masking coordinates, and ``(n, T)`` weights.

    Slot ``own_mask_slot`` holds 0 on real tokens and -1e4 on padding; the other slot holds 1 everywhere, so a
    product with the other side adds -1e4 exactly where this side is padding.
    """
    vectors = pad_sequence([emb.vectors[u] for u in units], batch_first=True)
    lengths = torch.tensor([emb.vectors[u].shape[0] for u in units])
    real = torch.arange(vectors.shape[1]) < lengths.unsqueeze(1)
    extra = torch.ones((*vectors.shape[:-1], 2), dtype=vectors.dtype)
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
    f1 = (2 * precision * recall / (precision + recall)).nan_to_num(0.0)
    return torch.stack((precision, recall, f1), dim=-1)


def _token_blocks(units: list[int], lengths: list[int], budget: int) -> list[list[int]]:
    """Consecutive groups of ``units`` (sorted by length) whose padded token count stays within ``budget``."""
    blocks, block, longest = [], [], 0
    for u in units:
        longest_if = max(longest, lengths[u])
        if block and longest_if * (len(block) + 1) > budget:
            blocks.append(block)
            block, longest_if = [], lengths[u]
        block.append(u)
        longest = longest_if
    return blocks + ([block] if block else [])


def score_matrix(emb: Embedded, rows: list[int], cols: list[int], n_layers: int, *, verbose: bool = False) -> torch.Tensor:
    """``(layers, len(rows), len(cols), 3)`` raw P, R, F of every candidate ``rows[i]`` against reference ``cols[j]``.

    When ``rows == cols`` (all-vs-all within one list) only block pairs on and above the diagonal are computed:
    the similarities of (j, i) are the transpose of those of (i, j), so P[j, i] = R[i, j] and R[j, i] = P[i, j].
    """
    out = torch.zeros((n_layers, len(rows), len(cols), 3))
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
    with torch.inference_mode():
        for a, b in tqdm(pairs, desc="matching", unit="block", disable=not verbose):
            rb, cb = row_blocks[a], col_blocks[b]
            scores = _block(emb, [rows[i] for i in rb], [cols[j] for j in cb], n_layers)
            out[:, torch.tensor(rb).unsqueeze(1), torch.tensor(cb).unsqueeze(0)] = scores
            if symmetric and a != b:
                mirrored = scores.transpose(1, 2)[..., [1, 0, 2]]  # (j, i): P and R swap, F stays
                out[:, torch.tensor(cb).unsqueeze(1), torch.tensor(rb).unsqueeze(0)] = mirrored
    return out


def _finish(scorer, raw: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Rescale when the scorer does; drop the layer axis unless all layers were asked for."""
    if scorer.rescale_with_baseline:
        baseline = scorer.baseline_vals
        raw = rescale(raw, baseline.unsqueeze(1) if scorer.all_layers else baseline)
    if not scorer.all_layers:
        raw = raw[0]
    return raw[..., 0], raw[..., 1], raw[..., 2]


def _distinct(labelled) -> tuple[dict[str, int], list[str]]:
    """Each distinct text's position, and the label (``texts_a[3]``) of its first occurrence, from (label, text)."""
    index: dict[str, int] = {}
    labels: list[str] = []
    for label, text in labelled:
        if text not in index:
            index[text] = len(index)
            labels.append(label)
    return index, labels


def pairwise_scores(scorer, texts_a: Sequence[str], texts_b: Sequence[str] | None = None, *, verbose: bool = False,
                    batch_size: int | None = None):
    """``(P, R, F)``, each ``(N, M)`` (``(L + 1, N, M)`` with all layers): ``[i, j]`` scores ``texts_a[i]`` as the
    candidate against ``texts_b[j]`` as the reference; ``texts_b=None`` scores ``texts_a`` against itself."""
    a = check_texts(texts_a, "texts_a")
    b = a if texts_b is None else check_texts(texts_b, "texts_b")
    if not a or not b:
        raise ValueError(f"{'texts_a' if not a else 'texts_b'} is empty: give at least one text")
    index, labels = _distinct((f"{name}[{i}]", text) for name, texts in (("texts_a", a), ("texts_b", b))
                              for i, text in enumerate(texts))
    emb = embed_texts(scorer, list(index), labels, verbose=verbose, batch_size=batch_size)
    n_layers = scorer._encoder.depth + 1 if scorer.all_layers else 1
    raw = score_matrix(emb, [index[t] for t in a], [index[t] for t in b], n_layers, verbose=verbose)
    return _finish(scorer, raw)


@dataclass(frozen=True)
class MBRResult:
    """Per group: ``index`` of the chosen sample and every sample's ``utilities`` (mean utility against the other
    samples, or against the group's references). A group of one sample has index 0 and utility nan."""

    index: list[int]
    utilities: list[torch.Tensor]
    utility: str

    def chosen(self, samples: Sequence[Sequence[str]]) -> list[str]:
        """The chosen sample of each group."""
        return [group[i] for group, i in zip(samples, self.index)]


def check_groups(groups, name: str) -> list[list[str]]:
    if isinstance(groups, (str, bytes)) or not isinstance(groups, Sequence):
        raise TypeError(f"{name} must be a list of lists of strings (one list per input), got {type(groups).__name__}")
    out = []
    for g, group in enumerate(groups):
        if isinstance(group, (str, bytes)) or not isinstance(group, Sequence):
            raise TypeError(f"{name}[{g}] must be a list of strings, got {type(group).__name__}")
        out.append(check_texts(group, f"{name}[{g}]"))
        if not out[-1]:
            raise ValueError(f"{name}[{g}] is an empty list; every group needs at least one text")
    if not out:
        raise ValueError(f"{name} is empty: give at least one group")
    return out


def mbr_select(scorer, samples, references=None, *, utility: str = "f1", verbose: bool = False,
               batch_size: int | None = None) -> MBRResult:
    """Minimum-Bayes-risk selection with BERTScore as the utility (see :func:`fastbertscore.mbr`)."""
    if utility not in UTILITIES:
        raise ValueError(f"utility={utility!r} is not one of {', '.join(UTILITIES)}")
    groups = check_groups(samples, "samples")
    pseudo = None if references is None else check_groups(references, "references")
    if pseudo is not None and len(pseudo) != len(groups):
        raise ValueError(f"samples has {len(groups)} groups but references has {len(pseudo)}; give one list per group")
    if scorer.all_layers:
        raise ValueError("mbr needs one layer: build the scorer without all_layers=True")
    named = (("samples", groups), ("references", pseudo or []))
    index, labels = _distinct((f"{name}[{g}][{k}]", text) for name, all_groups in named
                              for g, group in enumerate(all_groups) for k, text in enumerate(group))
    emb = embed_texts(scorer, list(index), labels, verbose=verbose, batch_size=batch_size)
    which = UTILITIES.index(utility)
    picks, utilities = [], []
    for g, group in enumerate(groups):
        rows = [index[t] for t in group]
        cols = rows if pseudo is None else [index[t] for t in pseudo[g]]
        values = _finish(scorer, score_matrix(emb, rows, cols, 1))[which]
        if pseudo is None:
            if len(rows) == 1:
                picks.append(0)
                utilities.append(torch.full((1,), float("nan")))
                continue
            values = values.masked_fill(torch.eye(len(rows), dtype=torch.bool), 0.0)
            mean = values.sum(dim=1) / (len(rows) - 1)  # against every other sample, not itself
        else:
            mean = values.mean(dim=1)
        picks.append(int(mean.argmax()))
        utilities.append(mean)
    return MBRResult(picks, utilities, utility)
