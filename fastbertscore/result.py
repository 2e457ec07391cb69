"""What a scorer returns: raw and rescaled P/R/F, which reference counted, and the hash behind the numbers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from fastbertscore.signature import Signature

Scores = tuple[torch.Tensor, torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class ScoreResult:
    """Scores of ``N`` candidates; every tensor is ``(N,)``, or ``(L + 1, N)`` with ``all_layers``.

    ``raw`` is BERTScore as matched; ``rescaled`` is ``(x - b) / (1 - b)`` with the model's baseline, present
    when the scorer rescales. ``precision``/``recall``/``f1`` are what ``score()`` returns: the rescaled
    values when rescaling is on, else the raw ones. With several references per candidate,
    ``best_reference`` holds, for P, R and F separately, the index (within the candidate's own list) of the
    reference that gave the best value; it is ``None`` for single references. ``signature``: every setting
    behind the numbers, of which ``hash`` is the short code (``None`` where only the hash is known).
    """

    raw: Scores
    rescaled: Scores | None
    best_reference: Scores | None
    hash: str
    signature: Signature | None = field(default=None, compare=False, repr=False)

    @property
    def scores(self) -> Scores:
        return self.rescaled if self.rescaled is not None else self.raw

    @property
    def precision(self) -> torch.Tensor:
        return self.scores[0]

    @property
    def recall(self) -> torch.Tensor:
        return self.scores[1]

    @property
    def f1(self) -> torch.Tensor:
        return self.scores[2]

    def returned(self, return_hash: bool = False) -> Scores | tuple[Scores, str]:
        """What bert-score's ``score`` returns: ``(P, R, F)``, or ``((P, R, F), hash)``."""
        return (self.scores, self.hash) if return_hash else self.scores

    def to_dict(self) -> dict[str, list[Any] | str]:
        """Plain lists, as ``evaluate`` modules return them (of numbers, or of one list per layer with
        ``all_layers``), and the hash under ``hashcode``."""
        out: dict[str, list[Any] | str] = {
            "precision": self.precision.tolist(),
            "recall": self.recall.tolist(),
            "f1": self.f1.tolist(),
        }
        if self.rescaled is not None:
            out.update(zip(("raw_precision", "raw_recall", "raw_f1"), (x.tolist() for x in self.raw), strict=True))
        if self.best_reference is not None:
            out.update(
                zip(
                    ("best_reference_p", "best_reference_r", "best_reference_f"),
                    (x.tolist() for x in self.best_reference),
                    strict=True,
                )
            )
        out["hashcode"] = self.hash
        return out


def split_prf(stacked: torch.Tensor) -> Scores:
    """``(..., 3)`` → the three ``(...)`` tensors P, R, F."""
    return stacked[..., 0], stacked[..., 1], stacked[..., 2]


def best_of_groups(raw: torch.Tensor, groups: list[tuple[int, int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Max over each candidate's references, separately for P, R and F, and where it was.

    ``raw`` is ``(..., N_pairs, 3)`` with each candidate's pairs contiguous (``groups[i]`` is its slice);
    returns values and reference indices, each ``(..., N_cands, 3)``. Ties go to the first reference.
    """
    sizes = torch.tensor([end - start for start, end in groups])
    owner = torch.repeat_interleave(torch.arange(len(groups)), sizes)
    slot = torch.arange(len(owner)) - torch.tensor([start for start, _ in groups])[owner]
    padded = raw.new_full((*raw.shape[:-2], len(groups), int(sizes.max()), 3), float("-inf"))
    padded[..., owner, slot, :] = raw
    values, index = padded.max(dim=-2)
    return values, index
