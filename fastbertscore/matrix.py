"""``pairwise`` and ``mbr``: all-vs-all BERTScore matrices and minimum-Bayes-risk (MBR) selection.

Both run the one path (prepare → embed → match → finish) with all-vs-all matching
(:mod:`fastbertscore.pipeline.allpairs`); each entry equals ``score([a[i]], [b[j]])``, which equals bert-score
0.3.13 run with ``batch_size=1``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from fastbertscore.pipeline.allpairs import embed_texts, score_matrix
from fastbertscore.validate import UTILITIES


def _finish(scorer, raw: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Rescale when the scorer does; drop the layer axis unless all layers were asked for."""
    if scorer.rescale_with_baseline:
        raw = scorer.rescale(raw)
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


def pairwise_scores(scorer, a: list[str], b: list[str], *, verbose: bool = False, batch_size: int | None = None):
    """``(P, R, F)``, each ``(N, M)`` (``(L + 1, N, M)`` with all layers): ``[i, j]`` scores ``a[i]`` as the
    candidate against ``b[j]`` as the reference. ``a`` and ``b`` are checked (``validate.check_matrix_texts``)."""
    index, labels = _distinct(
        (f"{name}[{i}]", text) for name, texts in (("texts_a", a), ("texts_b", b)) for i, text in enumerate(texts)
    )
    emb = _embed(scorer, list(index), labels, batch_size, verbose)
    raw = score_matrix(emb, [index[t] for t in a], [index[t] for t in b], scorer.embedder.n_layers, verbose=verbose)
    return _finish(scorer, raw)


@dataclass(frozen=True)
class MBRResult:
    """Per group: ``index`` of the chosen sample and every sample's ``utilities`` (mean utility against the other
    samples, or against the group's references). A group of one sample has index 0 and utility nan."""

    index: list[int]
    utilities: list[torch.Tensor]
    utility: str

    def chosen(self, samples: Sequence[Sequence[str]]) -> list[str]:
        """The chosen sample of each group.

        Raises:
            ValueError: ``samples`` has another number of groups than this result (not the samples it chose from).
        """
        if len(samples) != len(self.index):
            raise ValueError(
                f"chosen() got {len(samples)} groups of samples, but this result chose from {len(self.index)}: "
                "pass the samples given to mbr()"
            )
        return [group[i] for group, i in zip(samples, self.index, strict=True)]


def mbr_select(
    scorer,
    groups: list[list[str]],
    pseudo: list[list[str]] | None,
    *,
    utility: str = "f1",
    verbose: bool = False,
    batch_size: int | None = None,
) -> MBRResult:
    """Minimum-Bayes-risk selection with BERTScore as the utility (see :func:`fastbertscore.mbr`), over groups
    checked by ``validate.check_mbr``."""
    if scorer.all_layers:
        raise ValueError("mbr needs one layer: build the scorer without all_layers=True")
    named = (("samples", groups), ("references", pseudo or []))
    index, labels = _distinct(
        (f"{name}[{g}][{k}]", text)
        for name, all_groups in named
        for g, group in enumerate(all_groups)
        for k, text in enumerate(group)
    )
    emb = _embed(scorer, list(index), labels, batch_size, verbose)
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


def _embed(scorer, texts: list[str], labels: list[str], batch_size: int | None, verbose: bool):
    return embed_texts(
        scorer.embedder, texts, labels, scorer.weights(), batch_size=batch_size or scorer.batch_size, verbose=verbose
    )
