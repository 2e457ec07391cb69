"""The front door: options (or a scorer), checked texts and, where asked, the texts idf is counted over → a result.

Every entry point is an adapter over :func:`run`: ``score``, ``compute`` (and so the evaluate module), ``pairwise``,
``mbr``, ``explain``, ``compare``, the commands, the torchmetrics metric, torchrun and Ray, the Space, and
``BERTScorer``'s own methods (which have their scorer, so they start at :meth:`BERTScorer.execute`). Settings are
made and checked here, the scorer is found here (the one kept between calls, or a new one), idf weights are counted
here, as a value, over the texts the caller names (by default the work's references), and the work is run.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, overload

from fastbertscore import assembly
from fastbertscore.files import sha256_of
from fastbertscore.idf import IdfWeights
from fastbertscore.matrix import MBRResult
from fastbertscore.models.loading import model_identity
from fastbertscore.pipeline.budget import BatchHook
from fastbertscore.result import ScoreResult
from fastbertscore.scorer import BERTScorer
from fastbertscore.settings import Settings
from fastbertscore.validate import Matrix, Pairs, Refs, Samples, check_idf_sents

#: Scorers kept between calls (by :func:`_kept_key`: their settings and what their files are now), all of one model
#: on one device: ``score``'s beside ``compute``'s (another ``cache_mb``), the Space's raw twin beside its rescaling
#: scorer. A scorer of another model, or of the same one saved again, lets them all go, so that none holds a model
#: :mod:`fastbertscore.models.shared` has let go.
MAX_SCORERS = 4
#: Settings kept by the options they were made from: a call with the options of an earlier one (``score`` called in
#: a loop) finds its settings checked, not checked again.
MAX_CHECKED = 16
_Key = tuple[object, ...]
_scorers: OrderedDict[_Key, BERTScorer] = OrderedDict()
_checked: OrderedDict[_Key, Settings] = OrderedDict()
_lock = threading.Lock()
Options = Settings | Mapping[str, Any]


def clear_model_cache() -> None:
    """Free the models and embedding caches kept between calls (and the scorer the one-call functions reuse); the
    next call reloads."""
    assembly.clear_models()
    with _lock:
        _scorers.clear()
        _checked.clear()


def cached_scorer(settings: Settings, idf_texts: Refs | None = None) -> BERTScorer:
    """The scorer kept for ``settings`` between calls, reused while nothing but batch size and thread count changes
    (they change no number: callers pass them per call); with ``idf=True``, a scorer on it weighing tokens by idf
    counted over ``idf_texts`` (so its loaded model, caches and baseline carry over: no embedding depends on idf)."""
    return scorer_for(settings, idf_texts)


def scorer_for(settings: Settings, idf_texts: Refs | None = None, *, shared: bool = True) -> BERTScorer:
    """The scorer of ``settings``: the one kept between calls (``shared``) or one of its own; with ``idf=True`` and
    ``idf_texts`` (strings, or lists of strings, flattened), weighing tokens by idf counted over them."""
    if not shared:
        scorer = BERTScorer.from_settings(settings)
    else:  # the kept one (made and kept on the first call), never changed once kept
        key = _kept_key(settings)
        with _lock:
            kept = _scorers.get(key)
            if kept is not None:
                _scorers.move_to_end(key)
        scorer = kept if kept is not None else _keep(key, BERTScorer.from_settings(settings))
    if settings.idf is not True or idf_texts is None:
        return scorer
    flat = [t for item in idf_texts for t in ([item] if isinstance(item, str) else item)]
    return scorer.with_idf(IdfWeights.counted(scorer.tokenizer, flat, scorer.token_limit))


def _kept_key(settings: Settings) -> _Key:
    """What a kept scorer is found by: the model's identity now (a folder's files by name, size and time; a Hub id's
    cached commit), the custom baseline file's content, and the settings: a fine-tuning loop that saves into
    one folder, or a baseline file written again, gets the new numbers without :func:`clear_model_cache`."""
    baseline = None
    if settings.baseline_path is not None:
        try:  # a small file, hashed whole: a rewrite within the file system's clock tick keeps its time
            baseline = sha256_of(settings.baseline_path)
        except OSError:  # the scorer's load names the missing file
            pass
    return model_identity(settings.model_type_or_default), baseline, settings.scorer_key()


def _keep(key: _Key, scorer: BERTScorer) -> BERTScorer:
    """Keep ``scorer`` under ``key`` beside the others of its model (those of another model, or of another save of
    it, go)."""
    scorer.shared = True  # before any caller has it: its compute_idf would change every caller's numbers
    with _lock:
        if any(k[0] != key[0] or s.device != scorer.device for k, s in _scorers.items()):
            _scorers.clear()
        _scorers[key] = scorer
        while len(_scorers) > MAX_SCORERS:
            _scorers.popitem(last=False)
    return scorer


@overload
def run(
    work: Pairs | Matrix,
    options: Options | None = ...,
    *,
    scorer: BERTScorer | None = ...,
    caller: str = ...,
    idf_texts: Refs | None = ...,
    shared: bool = ...,
    one_layer: str | None = ...,
    batch_size: int | None = ...,
    verbose: bool = ...,
    between_batches: BatchHook = ...,
) -> ScoreResult: ...
@overload
def run(
    work: Samples,
    options: Options | None = ...,
    *,
    scorer: BERTScorer | None = ...,
    caller: str = ...,
    idf_texts: Refs | None = ...,
    shared: bool = ...,
    one_layer: str | None = ...,
    batch_size: int | None = ...,
    verbose: bool = ...,
    between_batches: BatchHook = ...,
) -> MBRResult: ...
def run(
    work: Pairs | Matrix | Samples,
    options: Options | None = None,
    *,
    scorer: BERTScorer | None = None,
    caller: str = "score()",
    idf_texts: Refs | None = None,
    shared: bool = True,
    one_layer: str | None = None,
    batch_size: int | None = None,
    verbose: bool = False,
    between_batches: BatchHook = None,
) -> ScoreResult | MBRResult:
    """Score checked ``work`` (pairs, an all-vs-all matrix or MBR groups) with ``options`` (a :class:`Settings` or
    its fields by name; an unknown one is a ``TypeError`` naming it and ``caller``) or with ``scorer``, not both.

    With ``idf=True`` in the options, idf is counted over ``idf_texts`` (default: the work's references); a scorer
    brings its own idf weights. ``shared``: the scorer kept between calls, else one of this call's own (the model
    stays loaded either way). ``one_layer``: why ``caller`` needs one layer, refused with ``all_layers=True``.
    ``batch_size``: sentences per encoder batch (default: the settings'); ``between_batches``: called before each
    encoder batch (an exception it raises stops the call).

    Raises:
        TypeError, ValueError: bad options, or options beside a scorer, before any model work.
    """
    scorer, kept_batch = resolve(
        options,
        scorer=scorer,
        caller=caller,
        idf_texts=work.refs if idf_texts is None else idf_texts,
        shared=shared,
        one_layer=one_layer,
    )
    batch_size = batch_size or kept_batch
    return scorer.execute(work, batch_size=batch_size, verbose=verbose, between_batches=between_batches)


def resolve(
    options: Options | None,
    *,
    scorer: BERTScorer | None = None,
    caller: str = "score()",
    idf_texts: Refs | None = None,
    shared: bool = True,
    one_layer: str | None = None,
) -> tuple[BERTScorer, int | None]:
    """The scorer :func:`run` scores with, and the batch size asked for (``None``: the device's; a kept scorer may
    have been made with another): for callers that need the scorer itself (``explain``'s token embeddings). Arguments as in :func:`run`;
    ``idf_texts`` has no default here."""
    if scorer is not None and options:
        given = ["settings"] if isinstance(options, Settings) else list(options)
        raise TypeError(f"{caller} takes either scorer= or settings options, not both (got {', '.join(given)})")
    sents = None
    if isinstance(options, Mapping) and "idf_sents" in options:  # a call option: the texts idf is counted over
        options = dict(options)
        sents = options.pop("idf_sents")
    settings = scorer.settings if scorer is not None else checked(caller, options)
    if sents is not None:  # checked beside the settings' idf, once the settings are
        idf_texts = check_idf_sents(sents, settings.idf)
    if one_layer is not None and settings.all_layers:
        raise ValueError(f"{caller} needs one layer: {one_layer}; drop all_layers=True")
    if scorer is None:
        scorer = scorer_for(settings, idf_texts, shared=shared)
    return scorer, settings.batch_size


def checked(caller: str, options: Options | None) -> Settings:
    """Settings from ``options`` (its fields by name; an unknown one is a ``TypeError`` naming it and ``caller``),
    checked once: the one place options become settings, for adapters that check them before any work (the
    torchmetrics metric's constructor, Ray's driver). Settings made from hashable options are kept by them
    (:data:`MAX_CHECKED`): the same options again, of the same types, find them; an idf mapping (the caller may
    change it) or a ``cache_dir`` (a file may now stand where the folder was) is checked again."""
    if isinstance(options, Settings):
        return options
    options = options or {}
    try:  # each value with its type: 1 == True, and would find the settings of idf=True
        key: _Key | None = tuple((name, type(value), value) for name, value in options.items())
        hash(key)
    except TypeError:  # an idf mapping, or a value of a wrong kind that the settings refuse
        key = None
    if options.get("cache_dir") is not None:  # checked on the file system, which changes between calls
        key = None
    with _lock:
        settings = None if key is None else _checked.get(key)
    if settings is None:
        settings = Settings.from_options(caller, options)
        if key is not None:
            with _lock:
                _checked[key] = settings
                while len(_checked) > MAX_CHECKED:
                    _checked.popitem(last=False)
    return settings
