"""``compute``: the ``evaluate``-style entry point (dict of lists), on the scorer the engine keeps loaded.

The scorer is rebuilt whenever a setting that changes numbers changes — device and idf sentences
included, which the official ``evaluate-metric/bertscore`` module forgets.
"""

from __future__ import annotations

from fastbertscore.scorer import cached_scorer
from fastbertscore.settings import Settings
from fastbertscore.validate import check_pairs


def compute(predictions, references, *, verbose: bool = False, **options) -> dict:
    """BERTScore as ``evaluate-metric/bertscore`` returns it: ``precision``, ``recall``, ``f1`` lists and ``hashcode``.

    ``references`` holds one string or one list of strings per prediction; ``options`` are the fields of
    :class:`~fastbertscore.Settings` (an unknown one is a ``TypeError`` naming it). With ``idf=True`` the idf
    weights are counted over all references (flattened), as the official module does. With several
    references per prediction, ``best_reference_p``/``_r``/``_f`` say which one counted; with rescaling,
    ``raw_precision``/``raw_recall``/``raw_f1`` hold the unrescaled values.

    Example:
        >>> out = compute(predictions=["hello there"], references=[["general kenobi", "hello there"]],
        ...               model_type="sentence-transformers/all-MiniLM-L6-v2")
        >>> out["f1"], out["best_reference_f"]
        ([1.0], [1])
    """
    pairs = check_pairs(predictions, references, names=("predictions", "references"))
    settings = Settings.from_options("compute()", options)
    scorer = cached_scorer(settings.idf_over(pairs.refs))
    result = scorer.score_result(predictions, references, verbose=verbose, batch_size=settings.batch_size)
    return result.to_dict()
