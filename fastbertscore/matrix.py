"""``pairwise`` and ``mbr``: all-vs-all BERTScore matrices and minimum-Bayes-risk (MBR) selection.

Both run the one path (prepare → embed → match → finish) with all-vs-all matching
(:mod:`fastbertscore.pipeline.allpairs`); each entry equals ``score([a[i]], [b[j]])``, which equals bert-score
0.3.13 run with ``batch_size=1``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

import torch

from fastbertscore.pipeline.allpairs import Embedded, embedded, score_matrix
from fastbertscore.pipeline.embedder import Embedder
from fastbertscore.pipeline.prepare import Distinct, Weights
from fastbertscore.result import Scores
from fastbertscore.validate import UTILITIES, Utility


class Scorer(Protocol):
    """What the matrices use of a :class:`~fastbertscore.BERTScorer` (which calls them, so it is not imported here)."""

    @property
    def embedder(self) -> Embedder: ...
    @property
    def batch_size(self) -> int: ...
    @property
    def all_layers(self) -> bool: ...
    @property
    def rescale_with_baseline(self) -> bool: ...
    def weights(self) -> Weights: ...
    def rescale(self, raw: torch.Tensor) -> torch.Tensor: ...


def _finish(scorer: Scorer, raw: torch.Tensor) -> Scores:
    """Rescale when the scorer does; drop the layer axis unless all layers were asked for."""
    if scorer.rescale_with_baseline:
        raw = scorer.rescale(raw)
    if not scorer.all_layers:
        raw = raw[0]
    return raw[..., 0], raw[..., 1], raw[..., 2]


def pairwise_scores(
    scorer: Scorer, a: list[str], b: list[str], *, verbose: bool = False, batch_size: int | None = None
) -> Scores:
    """``(P, R, F)``, each ``(N, M)`` (``(L + 1, N, M)`` with all layers): ``[i, j]`` scores ``a[i]`` as the
    candidate against ``b[j]`` as the reference. ``a`` and ``b`` are checked (``validate.check_matrix_texts``)."""
    texts = Distinct(a, b)

    def label(u: int) -> str:
        column, i = texts.first(u)
        return f"{('texts_a', 'texts_b')[column]}[{i}]"

    with _embedded(scorer, texts.texts, label, batch_size, verbose) as emb:
        raw = score_matrix(emb, *texts.columns, verbose=verbose)
    return _finish(scorer, raw)


@dataclass(frozen=True)
class MBRResult:
    """Per group: ``index`` of the chosen sample and every sample's ``utilities`` (mean utility against the other
    samples, or against the group's references). A group of one sample has index 0 and utility nan."""

    index: list[int]
    utilities: list[torch.Tensor]
    utility: Utility

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
    scorer: Scorer,
    groups: list[list[str]],
    pseudo: list[list[str]] | None,
    *,
    utility: Utility = "f1",
    verbose: bool = False,
    batch_size: int | None = None,
) -> MBRResult:
    """Minimum-Bayes-risk selection with BERTScore as the utility (see :func:`fastbertscore.mbr`), over groups
    checked by ``validate.check_mbr``."""
    if scorer.all_layers:
        raise ValueError("mbr needs one layer: build the scorer without all_layers=True")
    named = (("samples", groups), ("references", pseudo or []))
    owners = [[(g, k) for g, group in enumerate(all_groups) for k in range(len(group))] for _, all_groups in named]
    texts = Distinct(*([text for group in all_groups for text in group] for _, all_groups in named))
    starts = [[0, *itertools.accumulate(len(group) for group in all_groups)] for _, all_groups in named]

    def label(u: int) -> str:
        column, i = texts.first(u)
        g, k = owners[column][i]
        return f"{named[column][0]}[{g}][{k}]"

    which = UTILITIES.index(utility)
    picks, utilities = [], []
    with _embedded(scorer, texts.texts, label, batch_size, verbose) as emb:
        for g, group in enumerate(groups):
            rows = texts.columns[0][starts[0][g] : starts[0][g] + len(group)]
            cols = rows if pseudo is None else texts.columns[1][starts[1][g] : starts[1][g] + len(pseudo[g])]
            picks_g, mean = _pick(_finish(scorer, score_matrix(emb, rows, cols))[which], pseudo is None)
            picks.append(picks_g)
            utilities.append(mean)
    return MBRResult(picks, utilities, utility)


def _pick(values: torch.Tensor, against_each_other: bool) -> tuple[int, torch.Tensor]:
    """The chosen sample of one group and every sample's mean utility, from its ``(K, M)`` utility matrix."""
    if against_each_other:
        if len(values) == 1:
            return 0, torch.full((1,), float("nan"))
        values = values.masked_fill(torch.eye(len(values), dtype=torch.bool), 0.0)
        mean = values.sum(dim=1) / (len(values) - 1)  # against every other sample, not itself
    else:
        mean = values.mean(dim=1)
    return int(mean.argmax()), mean


def _embedded(
    scorer: Scorer, texts: list[str], label: Callable[[int], str], batch_size: int | None, verbose: bool
) -> AbstractContextManager[Embedded]:
    budget = scorer.embedder.budget(batch_size or scorer.batch_size)
    return embedded(scorer.embedder, texts, label, scorer.weights(), budget, verbose=verbose)
