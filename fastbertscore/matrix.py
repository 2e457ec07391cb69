"""``pairwise`` and ``mbr``: all-vs-all BERTScore matrices and minimum-Bayes-risk (MBR) selection.

Both run the one path (prepare → embed → match → finish) with all-vs-all matching
(:mod:`fastbertscore.pipeline.allpairs`); each entry equals ``score([a[i]], [b[j]])``, which equals bert-score
0.3.13 run with ``batch_size=1``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from fastbertscore.baselines.table import rescale
from fastbertscore.pipeline.allpairs import embedded, score_matrix
from fastbertscore.pipeline.embedder import Embedder
from fastbertscore.pipeline.prepare import Distinct, Names
from fastbertscore.validate import UTILITIES, Matrix, Samples, Utility


def pairwise_scores(embedder: Embedder, m: Matrix, *, verbose: bool) -> torch.Tensor:
    """Raw ``(L', N, M, 3)`` P, R, F (``L'`` is 1, or ``L + 1`` with all layers): ``[.., i, j, :]`` scores
    ``m.a[i]`` as the candidate against ``m.b[j]`` as the reference, with a call's embedder (its weights and
    budget: :meth:`~fastbertscore.pipeline.embedder.Embedder.for_call`)."""
    texts = Distinct(m.a, m.b)

    def label(u: int) -> str:
        column, i = texts.first(u)
        return f"{('texts_a', 'texts_b')[column]}[{i}]"

    with embedded(embedder, texts.texts, Names(label), verbose=verbose) as emb:
        return score_matrix(emb, *texts.columns, verbose=verbose)


@dataclass(frozen=True)
class MBRResult:
    """Per group: ``index`` of the chosen sample and every sample's ``utilities`` (mean utility against the other
    samples, or against the group's references). A group of one sample has index 0 and utility nan."""

    index: list[int]
    utilities: list[torch.Tensor]
    utility: Utility
    hash: str | None = field(default=None, compare=False)  # the scorer's hash code

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


def mbr_select(embedder: Embedder, baseline: torch.Tensor | None, s: Samples, *, verbose: bool) -> MBRResult:
    """Minimum-Bayes-risk selection with BERTScore as the utility (see :func:`fastbertscore.mbr`), rescaled with
    ``baseline`` when given."""
    if embedder.encoder.all_layers:
        raise ValueError("mbr needs one layer: build the scorer without all_layers=True")
    groups, pseudo = s.groups, s.pseudo
    named = (("samples", groups), ("references", pseudo or []))
    owners = [[(g, k) for g, group in enumerate(all_groups) for k in range(len(group))] for _, all_groups in named]
    texts = Distinct(*([text for group in all_groups for text in group] for _, all_groups in named))
    starts = [[0, *itertools.accumulate(len(group) for group in all_groups)] for _, all_groups in named]

    def label(u: int) -> str:
        column, i = texts.first(u)
        g, k = owners[column][i]
        return f"{named[column][0]}[{g}][{k}]"

    which = UTILITIES.index(s.utility)
    picks, utilities = [], []
    with embedded(embedder, texts.texts, Names(label), verbose=verbose) as emb:
        for g, group in enumerate(groups):
            rows = texts.columns[0][starts[0][g] : starts[0][g] + len(group)]
            cols = rows if pseudo is None else texts.columns[1][starts[1][g] : starts[1][g] + len(pseudo[g])]
            raw = score_matrix(emb, rows, cols)
            values = (raw if baseline is None else rescale(raw, baseline))[0, ..., which]
            picks_g, mean = _pick(values, pseudo is None)
            picks.append(picks_g)
            utilities.append(mean)
    return MBRResult(picks, utilities, s.utility)


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
