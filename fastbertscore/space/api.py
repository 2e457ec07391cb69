"""The JSON the Space's ``score`` endpoint returns (what ``gradio_client`` callers read)."""

from __future__ import annotations

from fastbertscore.result import ScoreResult

_NAMES = ("precision", "recall", "f1")
#: The ``score`` endpoint's arguments: the types each takes, and how a message names them.
SCORE_ARGUMENTS = {
    "candidate": ((str,), "a string"),
    "reference": ((str,), "a string"),
    "model": ((str, type(None)), "a string (a Hub model id)"),
    "num_layers": ((str, int, type(None)), "a whole number or a string holding one"),
    "lang": ((str, type(None)), "a string (a language code such as en)"),
    "idf": ((bool,), "true or false"),
    "dtype": ((str, type(None)), "a string (float32, auto or bfloat16)"),
}


def check_score_arguments(**arguments: object) -> None:
    """Refuse an argument of the ``score`` endpoint of the wrong type, naming it and the type it got (a list
    given as the candidate would otherwise read as an empty candidate).

    Raises:
        TypeError: the first argument of a wrong type.

    Example:
        >>> check_score_arguments(candidate=["a", "b"], reference="c")
        Traceback (most recent call last):
        TypeError: argument 'candidate' of /score must be a string; got list (['a', 'b'])
    """
    for name, value in arguments.items():
        types, expected = SCORE_ARGUMENTS[name]
        if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
            shown = repr(value)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise TypeError(f"argument {name!r} of /score must be {expected}; got {type(value).__name__} ({shown})")


def score_json(result: ScoreResult, index: int = 0) -> dict[str, object]:
    """P, R and F of candidate ``index`` (rescaled where the scorer rescales, as ``BERTScorer.score`` returns
    them), which reference counted for each (0-based, with several references) and the hash code.

    Example:
        >>> import torch
        >>> one = (torch.tensor([0.5]), torch.tensor([0.25]), torch.tensor([1 / 3]))
        >>> score_json(ScoreResult(one, None, None, "h"))
        {'precision': 0.5, 'recall': 0.25, 'f1': 0.3333333432674408, 'hashcode': 'h'}
    """
    out: dict[str, object] = {name: float(x[index]) for name, x in zip(_NAMES, result.scores, strict=True)}
    if result.best_reference is not None:
        out["best_reference"] = {name: int(x[index]) for name, x in zip(_NAMES, result.best_reference, strict=True)}
    return {**out, "hashcode": result.hash}
