"""One-call entry points, each an adapter over :func:`fastbertscore.front.run` and the scorer it keeps between calls
for their settings: ``score`` (bert-score's), ``compute`` (the ``evaluate``-style dict of lists), ``pairwise`` and
``mbr``.

A kept scorer is another whenever a setting that changes numbers changes (the device included, which the official
``evaluate-metric/bertscore`` module forgets); idf weights are counted per call over the call's references, on the
same loaded model; settings that change no number (``batch_size``, ``verbose``) are passed per call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, overload

from fastbertscore.front import run
from fastbertscore.hardware import check_device
from fastbertscore.matrix import MBRResult
from fastbertscore.pipeline.budget import default_cache_mb
from fastbertscore.result import Scores
from fastbertscore.settings import documenting_options
from fastbertscore.validate import Refs, Texts, Utility, check_flag, check_matrix_texts, check_mbr, check_pairs


@overload
def score(
    cands: Texts,
    refs: Refs,
    model_type: str | None = ...,
    num_layers: int | None = ...,
    verbose: bool = ...,
    idf: bool | Mapping[int, float] = ...,
    device: str | None = ...,
    batch_size: int | None = ...,
    nthreads: int = ...,
    all_layers: bool = ...,
    lang: str | None = ...,
    return_hash: Literal[False] = ...,
    rescale_with_baseline: bool = ...,
    baseline_path: str | None = ...,
    use_fast_tokenizer: bool = ...,
    **options: Any,
) -> Scores: ...
@overload
def score(
    cands: Texts,
    refs: Refs,
    model_type: str | None = ...,
    num_layers: int | None = ...,
    verbose: bool = ...,
    idf: bool | Mapping[int, float] = ...,
    device: str | None = ...,
    batch_size: int | None = ...,
    nthreads: int = ...,
    all_layers: bool = ...,
    lang: str | None = ...,
    *,
    return_hash: Literal[True],
    rescale_with_baseline: bool = ...,
    baseline_path: str | None = ...,
    use_fast_tokenizer: bool = ...,
    **options: Any,
) -> tuple[Scores, str]: ...
@overload
def score(
    cands: Texts,
    refs: Refs,
    model_type: str | None = ...,
    num_layers: int | None = ...,
    verbose: bool = ...,
    idf: bool | Mapping[int, float] = ...,
    device: str | None = ...,
    batch_size: int | None = ...,
    nthreads: int = ...,
    all_layers: bool = ...,
    lang: str | None = ...,
    return_hash: bool = ...,
    rescale_with_baseline: bool = ...,
    baseline_path: str | None = ...,
    use_fast_tokenizer: bool = ...,
    **options: Any,
) -> Scores | tuple[Scores, str]: ...
@documenting_options
def score(
    cands: Texts,
    refs: Refs,
    model_type: str | None = None,
    num_layers: int | None = None,
    verbose: bool = False,
    idf: bool | Mapping[int, float] = False,
    device: str | None = None,
    batch_size: int | None = None,
    nthreads: int = 4,
    all_layers: bool = False,
    lang: str | None = None,
    return_hash: bool = False,
    rescale_with_baseline: bool = False,
    baseline_path: str | None = None,
    use_fast_tokenizer: bool = False,
    **options: Any,
) -> Scores | tuple[Scores, str]:
    """BERTScore of candidates against references; the signature and return value of ``bert_score.score``.

    ``options`` takes the other fields of :class:`~fastbertscore.Settings` (extra: not one of bert-score's).
    ``idf=True`` counts idf over the (flattened) references. See :meth:`BERTScorer.score` for shapes; the scorer
    (its model, and its baseline as read) is kept for the next call with the same settings and the same files (a
    model saved again into its folder, or a baseline file written again, is read again; :func:`clear_model_cache`
    lets every kept one go).

    Args:
        cands: N candidate texts.
        refs: one reference, or a list of references (the best one counts), per candidate.
        verbose: progress bars.
        return_hash: also return the hash code naming every setting behind the numbers.
        **options: the fields of fastbertscore.Settings, each by its name.

    Example:
        >>> P, R, F = score(["The cat sat on the mat."], ["A cat was sitting on the mat."],
        ...                 model_type="sentence-transformers/all-MiniLM-L6-v2")
        >>> tuple(F.shape), bool(0 < F[0] < 1)
        ((1,), True)
    """
    options.update(
        model_type=model_type,
        num_layers=num_layers,
        idf=idf,
        device=device,
        batch_size=batch_size,
        nthreads=nthreads,
        all_layers=all_layers,
        lang=lang,
        rescale_with_baseline=rescale_with_baseline,
        baseline_path=baseline_path,
        use_fast_tokenizer=use_fast_tokenizer,
    )
    pairs, return_hash = check_pairs(cands, refs), check_flag(return_hash, "return_hash")  # both before any work
    return run(pairs, options, verbose=verbose).returned(return_hash)


def compute(
    predictions: Texts, references: Refs, *, verbose: bool = False, **options: Any
) -> dict[str, list[Any] | str]:
    """BERTScore as ``evaluate-metric/bertscore`` returns it: ``precision``, ``recall``, ``f1`` lists and ``hashcode``.

    The scorer it reuses keeps the embeddings of recent texts between calls (``cache_mb``, by default a sixteenth of
    the device's default memory budget; ``cache_mb=0`` turns it off): a reference shared by several systems, or
    scored again in a later ``datasets.map`` batch, is embedded once.

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
    if "cache_mb" not in options:
        options["cache_mb"] = default_cache_mb(check_device(options.get("device")))
    return run(pairs, options, caller="compute()", verbose=verbose).to_dict()


def pairwise(texts_a: Texts, texts_b: Texts | None = None, *, verbose: bool = False, **options: Any) -> Scores:
    """All-vs-all BERTScore matrices: ``(P, R, F)``, each ``(N, M)``; ``[i, j]`` scores ``texts_a[i]`` (candidate)
    against ``texts_b[j]`` (reference), ``texts_b=None`` meaning ``texts_a`` against itself.

    ``options`` are the fields of :class:`~fastbertscore.Settings`; with ``idf=True`` the weights are counted over
    the references (``texts_b``, or ``texts_a`` for all-vs-all). Each distinct text is embedded once and the
    similarities come from blocked matrix products; every entry equals ``score([texts_a[i]], [texts_b[j]])``.

    Example:
        >>> P, R, F = pairwise(["a cat sat", "it rains"], ["the cat sat", "rain falls", "a dog ran"],
        ...                    model_type="sentence-transformers/all-MiniLM-L6-v2")
        >>> tuple(F.shape)
        (2, 3)
    """
    return run(check_matrix_texts(texts_a, texts_b), options, caller="pairwise()", verbose=verbose).scores


def mbr(
    samples: Sequence[Texts],
    references: Sequence[Texts] | None = None,
    *,
    utility: Utility = "f1",
    verbose: bool = False,
    **options: Any,
) -> MBRResult:
    """Minimum-Bayes-risk selection with BERTScore as the utility.

    ``samples`` is a list of groups (one list of K outputs per input; K may differ). For each group, every sample
    is scored as the candidate against the group's other samples (or against ``references[g]``, pseudo-references
    from another sampler, when given), its utility is the mean ``utility`` (``"f1"``, ``"precision"`` or
    ``"recall"``), and the sample with the highest one is chosen. Returns a
    :class:`~fastbertscore.MBRResult` (``index``, ``utilities``, ``chosen(samples)``). ``options`` are the fields
    of :class:`~fastbertscore.Settings`; with ``idf=True`` the weights are counted over all pseudo-references.

    Raises:
        TypeError, ValueError: a group that is not a list of strings or is empty, named with its index.

    Example:
        >>> picks = mbr([["the cat sat on the mat", "a cat sat on the mat", "dogs bark"]],
        ...             model_type="sentence-transformers/all-MiniLM-L6-v2")
        >>> picks.index[0] in (0, 1), len(picks.utilities[0])
        (True, 3)
    """
    return run(check_mbr(samples, references, utility), options, caller="mbr()", verbose=verbose)
