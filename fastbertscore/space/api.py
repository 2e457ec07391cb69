"""The JSON the Space's ``score`` endpoint returns (what ``gradio_client`` callers read)."""

from __future__ import annotations

from fastbertscore.result import ScoreResult

_NAMES = ("precision", "recall", "f1")


def score_json(result: ScoreResult, index: int = 0) -> dict:
    """P, R and F of candidate ``index`` (rescaled where the scorer rescales, as ``BERTScorer.score`` returns
    them), which reference counted for each (0-based, with several references) and the hash code.

    Example:
        >>> import torch
        >>> one = (torch.tensor([0.5]), torch.tensor([0.25]), torch.tensor([1 / 3]))
        >>> score_json(ScoreResult(one, None, None, "h"))
        {'precision': 0.5, 'recall': 0.25, 'f1': 0.3333333432674408, 'hashcode': 'h'}
    """
    out = {name: float(x[index]) for name, x in zip(_NAMES, result.scores)}
    if result.best_reference is not None:
        out["best_reference"] = {name: int(x[index]) for name, x in zip(_NAMES, result.best_reference)}
    return {**out, "hashcode": result.hash}
