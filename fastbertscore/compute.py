"""``compute``: the ``evaluate``-style entry point (dict of lists), with a cached scorer.

The scorer is rebuilt whenever a setting that changes numbers changes — device and idf sentences
included, which the official ``evaluate-metric/bertscore`` module forgets.
"""

from __future__ import annotations

import hashlib
import threading

from .scorer import BERTScorer
from .validate import check_pairs

_cache: dict[str, object] = {"key": None, "scorer": None}
_lock = threading.Lock()


def _fingerprint(texts: list[str] | None) -> str | None:
    if texts is None:
        return None
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8", "surrogatepass") + b"\x00")
    return digest.hexdigest()


def cached_scorer(*, idf_sents: list[str] | None = None, **settings) -> BERTScorer:
    """A :class:`BERTScorer` for ``settings``, reused while nothing that changes results changes."""
    # batch_size and nthreads never change a score (compute passes batch_size to every score call).
    key = repr(sorted((k, v) for k, v in settings.items() if k not in ("batch_size", "nthreads")))
    key += f"|idf={_fingerprint(idf_sents)}"
    with _lock:
        if _cache["key"] != key:
            _cache["scorer"] = None  # free the old model before loading a new one
            _cache["scorer"] = BERTScorer(idf_sents=idf_sents, **settings)
            _cache["key"] = key
        return _cache["scorer"]


def compute(
    predictions,
    references,
    *,
    lang: str | None = None,
    model_type: str | None = None,
    num_layers: int | None = None,
    verbose: bool = False,
    idf: bool = False,
    device: str | None = None,
    batch_size: int = 64,
    nthreads: int = 4,
    all_layers: bool = False,
    rescale_with_baseline: bool = False,
    baseline_path: str | None = None,
    use_fast_tokenizer: bool = False,
    baseline_repo: str | None = None,
    baseline_revision: str | None = None,
    long_inputs: str = "truncate",
    dtype: str = "float32",
    cache_dir: str | None = None,
) -> dict:
    """BERTScore as ``evaluate-metric/bertscore`` returns it: ``precision``, ``recall``, ``f1`` lists and ``hashcode``.

    ``references`` holds one string or one list of strings per prediction. With ``idf=True`` the idf
    weights are counted over all references (flattened), as the official module does.
    """
    pairs = check_pairs(predictions, references, names=("predictions", "references"))
    if model_type is None and lang is None:
        raise ValueError(
            "Either 'lang' (e.g. 'en') or 'model_type' (e.g. 'sentence-transformers/all-MiniLM-L6-v2') must be specified"
        )
    scorer = cached_scorer(
        model_type=model_type, num_layers=num_layers, batch_size=batch_size, nthreads=nthreads, all_layers=all_layers,
        idf=bool(idf), idf_sents=pairs.refs if idf else None, device=device, lang=lang,
        rescale_with_baseline=rescale_with_baseline, baseline_path=baseline_path, use_fast_tokenizer=use_fast_tokenizer,
        baseline_repo=baseline_repo, baseline_revision=baseline_revision, long_inputs=long_inputs,
        dtype=dtype, cache_dir=cache_dir,
    )
    P, R, F = scorer.score(predictions, references, verbose=verbose, batch_size=batch_size)
    return {"precision": P.tolist(), "recall": R.tolist(), "f1": F.tolist(), "hashcode": scorer.hash}
