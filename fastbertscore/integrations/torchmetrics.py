"""A ``torchmetrics.Metric`` that scores as bert-score does: a drop-in for ``torchmetrics.text.BERTScore``.

torchmetrics' own class (1.9) sorts predictions and targets by length separately and pairs them again wrongly
(torchmetrics issue #2728): on real MT pairs most per-pair F1 are off by 0.2 on average. This one keeps the texts
themselves as its state and scores them with the engine at ``compute()``, so several updates, or updates on
several ranks, equal one ``score()`` over everything (idf counted over every reference seen on every rank).

Texts travel between ranks as UTF-8 bytes with their lengths: torchmetrics' "cat" reduction joins the ranks'
states in rank order, so every rank computes the same scores over the same pairs.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, TypeVar

import torch
from torchmetrics import Metric
from torchmetrics.utilities.data import dim_zero_cat

from fastbertscore.front import checked, run
from fastbertscore.settings import Settings
from fastbertscore.validate import check_flag, check_list, check_pairs, check_texts

#: What :func:`_split` cuts: the joined bytes of texts, or a list of texts.
Pieces = TypeVar("Pieces", bytes, list[str])

#: torchmetrics arguments that have no meaning here, and what to use instead.
_NO_MEANING = {
    "model": "pass model_name_or_path= (a Hub id or a local folder); fastbertscore loads and cuts the encoder itself",
    "user_tokenizer": "the model's own tokenizer is used; pass model_name_or_path= of a folder that holds it",
    "user_forward_fn": "the layer is chosen with num_layers=; a custom forward function is not supported",
    "baseline_url": "pass baseline_path= (a local LAYER,P,R,F file) or baseline_repo= (a Hub dataset repo)",
}
_STATES = ("pred_bytes", "pred_lengths", "ref_bytes", "ref_lengths", "ref_counts")


class BERTScore(Metric):
    """BERTScore for torchmetrics and Lightning, exact to bert-score 0.3.13.

    Takes ``torchmetrics.text.BERTScore``'s arguments where they mean something here, and any field of
    :class:`~fastbertscore.Settings` (``dtype``, ``long_inputs``, ``cache_mb``, ...). ``update(preds, target)``
    takes a string or a list, and a list of references per prediction for several references (the best one
    counts). ``compute()`` returns ``{"precision", "recall", "f1"}`` tensors (and ``"hash"`` with
    ``return_hash=True``).

    Examples:
        >>> metric = BERTScore(model_name_or_path="sentence-transformers/all-MiniLM-L6-v2")
        >>> metric.update(["hello there"], ["hello there"])
        >>> metric.update("general kenobi", [["general kenobi", "master kenobi"]])
        >>> [round(x, 3) for x in metric.compute()["f1"].tolist()]
        [1.0, 1.0]
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    # The states made by add_state (_STATES): a list of tensors while updating; a sync joins each into one tensor,
    # which only compute() reads, through _cat.
    pred_bytes: list[torch.Tensor]
    pred_lengths: list[torch.Tensor]
    ref_bytes: list[torch.Tensor]
    ref_lengths: list[torch.Tensor]
    ref_counts: list[torch.Tensor]

    def __init__(
        self,
        model_name_or_path: str | None = None,
        num_layers: int | None = None,
        all_layers: bool = False,
        verbose: bool = False,
        idf: bool = False,
        device: str | torch.device | None = None,
        max_length: int | None = 512,
        batch_size: int | None = None,
        num_threads: int = 0,
        return_hash: bool = False,
        lang: str = "en",
        rescale_with_baseline: bool = False,
        baseline_path: str | None = None,
        truncation: bool = False,
        **kwargs: Any,
    ) -> None:
        for name, instead in _NO_MEANING.items():
            if kwargs.pop(name, None) is not None:
                raise TypeError(f"BERTScore(..., {name}=...) has no meaning in fastbertscore: {instead}")
        if max_length not in (None, 512):
            raise ValueError(
                f"max_length={max_length}: fastbertscore cuts texts at the model's own window (long_inputs='truncate', "
                "as bert-score) or scores them in full (long_inputs='window'); leave max_length at its default"
            )
        options = {name: kwargs.pop(name) for name in list(kwargs) if name in Settings.names()}
        super().__init__(**kwargs)  # torchmetrics' own keywords (dist_sync_on_step, process_group, ...)
        if truncation:
            options.setdefault("long_inputs", "truncate")
        model = model_name_or_path if model_name_or_path is not None else options.pop("model_type", None)
        self.settings = checked(
            "BERTScore()",
            {
                "model_type": model,
                "num_layers": num_layers,
                "all_layers": all_layers,
                "idf": idf,
                "device": None if device is None else str(device),
                "batch_size": batch_size,
                "nthreads": max(num_threads, 1),
                "lang": lang,
                "rescale_with_baseline": rescale_with_baseline,
                "baseline_path": baseline_path,
                **options,
            },
        )
        self.verbose, self.return_hash = verbose, check_flag(return_hash, "return_hash")
        for name in _STATES:
            self.add_state(name, default=[], dist_reduce_fx="cat")

    def update(self, preds: str | Sequence[str], target: str | Sequence[str] | Sequence[Sequence[str]]) -> None:
        """Keep a batch: a prediction (or a list) and its reference, or a list of references per prediction."""
        texts = [preds] if isinstance(preds, str) else check_texts(preds, "preds")
        targets = [target] if isinstance(target, str) else check_list(target, "target")
        if len(texts) != len(targets):
            raise ValueError(
                f"update() got {len(texts)} predictions but {len(targets)} targets: give one target "
                "(or one list of targets) per prediction"
            )
        groups = []
        for i, t in enumerate(targets):
            group = [t] if isinstance(t, str) else list(t) if isinstance(t, (list, tuple)) else None
            if group is None or not group or not all(isinstance(x, str) for x in group):
                raise TypeError(f"target[{i}] must be a string or a non-empty list of strings")
            groups.append(group)
        self._keep("pred", texts)
        self._keep("ref", [r for group in groups for r in group])
        self.ref_counts.append(torch.tensor([len(g) for g in groups], dtype=torch.long, device=self.device))

    def _keep(self, kind: str, texts: list[str]) -> None:
        encoded = [t.encode("utf-8") for t in texts]
        getattr(self, f"{kind}_bytes").append(
            torch.tensor(list(b"".join(encoded)), dtype=torch.uint8, device=self.device)
        )
        getattr(self, f"{kind}_lengths").append(
            torch.tensor([len(b) for b in encoded], dtype=torch.long, device=self.device)
        )

    def _texts(self, kind: str) -> list[str]:
        data = bytes(_cat(getattr(self, f"{kind}_bytes"), torch.uint8).tolist())
        return [b.decode("utf-8") for b in _split(data, _cat(getattr(self, f"{kind}_lengths"), torch.long).tolist())]

    def compute(self) -> dict[str, torch.Tensor | str]:
        """P, R and F1 of every prediction kept (on every rank), as one ``score()`` over all of them would give."""
        preds, flat = self._texts("pred"), self._texts("ref")
        counts = _cat(self.ref_counts, torch.long).tolist()
        if not preds:
            raise ValueError("compute() before any update(): there is nothing to score")
        refs = flat if all(n == 1 for n in counts) else _split(flat, counts)
        result = run(check_pairs(preds, refs), self.settings, idf_texts=flat, verbose=self.verbose)
        out: dict[str, torch.Tensor | str] = {
            "precision": result.precision.to(self.device),
            "recall": result.recall.to(self.device),
            "f1": result.f1.to(self.device),
        }
        if self.return_hash:
            out["hash"] = result.hash
        return out


def _split(items: Pieces, sizes: list[int]) -> list[Pieces]:
    """``items`` cut into consecutive pieces of ``sizes``."""
    ends = list(itertools.accumulate(sizes))
    return [items[end - size : end] for size, end in zip(sizes, ends, strict=True)]


def _cat(state: list[torch.Tensor] | torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A state as one tensor: a list (before a sync) or an already joined tensor (after one)."""
    if isinstance(state, list) and not state:
        return torch.zeros(0, dtype=dtype)
    return dim_zero_cat(state).to(dtype).cpu()
