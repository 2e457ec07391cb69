"""``BERTScorer`` (model loaded once) and ``score`` (one call): drop-in for ``bert_score``."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import astuple, replace
from pathlib import Path

import torch

from fastbertscore._version import __version__
from fastbertscore.baselines.table import read_baseline, rescale, select_layers
from fastbertscore.cache.disk import (
    DiskCache,
    LayeredCache,
    encoder_fingerprint,
    weights_digest,
)
from fastbertscore.cache.memory import EmbeddingCache
from fastbertscore.hardware import cpu_bf16_gap, cpu_native_bf16
from fastbertscore.pipeline.embed import embed, pad_id_of
from fastbertscore.pipeline.engine import Budget, Weights, score_pairs
from fastbertscore.pipeline.models import load_encoder, load_tokenizer, max_input_length
from fastbertscore.pipeline.tokens import tokenize
from fastbertscore.pipeline.weights import (
    document_frequencies,
    idf_table,
    plain_table,
    sentence_weights,
    table_from_mapping,
)
from fastbertscore.pipeline.windows import WindowSpec, special_layout
from fastbertscore.result import ScoreResult, best_of_groups, split_prf
from fastbertscore.settings import Settings
from fastbertscore.signature import Signature, digest, mapping_digest
from fastbertscore.validate import (
    check_idf_sents,
    check_pairs,
    check_positive_int,
    check_texts,
)

logger = logging.getLogger(__name__)

DTYPES = {"float32": None, "bfloat16": torch.bfloat16, "float16": torch.float16}


# The loaded model of the last settings, and the scorer compute() reuses: the one place models stay alive
# between calls (bert-score reloads per call). clear_model_cache() frees both.
_models: dict[tuple, tuple] = {}
_scorers: dict[tuple, BERTScorer] = {}
_lock = threading.Lock()


def _load(settings: Settings, device: str, weights: str = "float32"):
    """The shared (tokenizer, encoder, facts) of these model settings, its weights stored in ``weights``."""
    key = (settings.model_type_or_default, settings.num_layers, settings.all_layers, device,
           settings.use_fast_tokenizer, settings.layer_registry, weights)
    with _lock:
        if key not in _models:
            _models.clear()  # one model at a time: free the old one before loading the next
            tokenizer = load_tokenizer(key[0], settings.use_fast_tokenizer)
            encoder = load_encoder(key[0], settings.num_layers, settings.all_layers, use_registry=settings.layer_registry)
            encoder.module.to(device)
            if weights != "float32":
                encoder.cast_to(DTYPES[weights])
            _models[key] = (tokenizer, encoder, {})
        return _models[key]


def clear_model_cache() -> None:
    """Free the model kept loaded between calls (and the scorer :func:`compute` reuses); the next call reloads."""
    with _lock:
        _models.clear()
        _scorers.clear()


def cached_scorer(settings: Settings) -> BERTScorer:
    """A :class:`BERTScorer` for ``settings``, reused while nothing but batch size and thread count changes."""
    key = settings.numbers_key(ignore=("batch_size", "nthreads"))  # score() takes the batch size per call
    with _lock:
        scorer = _scorers.get(key)
    if scorer is None:
        scorer = BERTScorer.from_settings(settings)
        with _lock:
            _scorers.clear()
            _scorers[key] = scorer
    return scorer


class BERTScorer:
    """BERTScore with the model, tokenizer, idf weights and baseline loaded once.

    The positional arguments are those of ``bert_score.BERTScorer``; ``idf`` may also be a ``{token_id: weight}``
    mapping, and ``options`` takes any other field of :class:`~fastbertscore.Settings` (``dtype``,
    ``long_inputs``, ``cache_dir``, ...). ``nthreads`` is accepted for compatibility; tokenization is already
    parallel in the Rust tokenizer.

    Example:
        >>> scorer = BERTScorer(model_type="sentence-transformers/all-MiniLM-L6-v2")
        >>> P, R, F = scorer.score(["the cat sat"], ["a cat was sitting"])
        >>> round(float(F[0]), 4) == round(float(scorer.score_result(["the cat sat"], ["a cat was sitting"]).f1[0]), 4)
        True
    """

    def __init__(
        self,
        model_type: str | None = None,
        num_layers: int | None = None,
        batch_size: int = 64,
        nthreads: int = 4,
        all_layers: bool = False,
        idf: bool | Mapping[int, float] = False,
        idf_sents: list[str] | None = None,
        device: str | None = None,
        lang: str | None = None,
        rescale_with_baseline: bool = False,
        baseline_path: str | None = None,
        use_fast_tokenizer: bool = False,
        **options,
    ):
        settings = Settings.from_options("BERTScorer()", dict(
            model_type=model_type, num_layers=num_layers, batch_size=batch_size, nthreads=nthreads,
            all_layers=all_layers, idf=idf, idf_sents=idf_sents, device=device, lang=lang,
            rescale_with_baseline=rescale_with_baseline, baseline_path=baseline_path,
            use_fast_tokenizer=use_fast_tokenizer, **options,
        ))
        self._setup(settings)

    @classmethod
    def from_settings(cls, settings: Settings) -> BERTScorer:
        scorer = cls.__new__(cls)
        scorer._setup(settings)
        return scorer

    def _setup(self, settings: Settings) -> None:
        self.settings = settings
        self.device = settings.resolved_device
        self.batch_size = settings.batch_size
        self.nthreads = settings.nthreads
        self.all_layers = settings.all_layers
        #: The precision the encoder runs in: ``dtype`` with "auto" resolved for this device (what the hash names).
        self.dtype = settings.resolved_dtype
        on_cpu = torch.device(self.device).type == "cpu"
        if self.dtype == "bfloat16" and on_cpu and not cpu_native_bf16():
            logger.warning(
                "dtype='bfloat16': %s and runs several times slower than float32 here; use dtype='auto' "
                "(float32 on this CPU) unless you need these bfloat16 numbers", cpu_bf16_gap(),
            )
        # Where bfloat16 is native on the CPU, the weights are stored in it too, not only autocast (issue 23).
        weights = "bfloat16" if self.dtype == "bfloat16" and on_cpu and cpu_native_bf16() else "float32"
        tokenizer, encoder, self._model_facts = _load(settings, self.device, weights)
        # A per-scorer view of the shared model: the precision mode belongs to this scorer only.
        self._tokenizer, self._encoder = tokenizer, replace(encoder, autocast=DTYPES[self.dtype])
        self._max_length = max_input_length(self._tokenizer, self._encoder)
        self.long_inputs = settings.long_inputs
        self._window = None
        if self._max_length is not None:
            prefix, suffix = special_layout(self._tokenizer)
            self._window = WindowSpec(self._max_length, prefix, suffix, settings.window_stride)
            if self._window.capacity < 2:
                raise ValueError(f"max length {self._max_length} leaves no room for text between the special tokens")
        # Texts seen before (the references of every system, say) are not embedded again: in memory with
        # cache_mb, across restarts with cache_dir.
        memory = EmbeddingCache(settings.cache_mb << 20) if settings.cache_mb else None
        self.disk_cache = self._open_disk_cache(settings.cache_dir) if settings.cache_dir is not None else None
        layers = [cache for cache in (memory, self.disk_cache) if cache is not None]
        self.cache = layers[0] if len(layers) == 1 else LayeredCache(*layers) if layers else None
        vocab_size = len(self._tokenizer)
        self._plain = plain_table(vocab_size, (self._tokenizer.sep_token_id, self._tokenizer.cls_token_id))
        idf = settings.idf
        self._idf_table = table_from_mapping(idf, vocab_size) if isinstance(idf, Mapping) else None
        self._idf_source = ("mapping", mapping_digest(idf)) if isinstance(idf, Mapping) else None
        if settings.idf_sents is not None:
            self.compute_idf(list(settings.idf_sents))
        self._baseline_source: tuple[str, str] | None = None
        self._baseline = self._load_baseline() if settings.rescale_with_baseline else None

    # -- read-only settings, as in bert_score --------------------------------------------------------
    lang = property(lambda self: self.settings.lang)
    idf = property(lambda self: self.settings.idf)
    model_type = property(lambda self: self.settings.model_type_or_default)
    num_layers = property(lambda self: self._encoder.num_layers)
    rescale_with_baseline = property(lambda self: self.settings.rescale_with_baseline)
    baseline_path = property(lambda self: self.settings.baseline_path)
    use_custom_baseline = property(lambda self: self.settings.baseline_path is not None)
    use_fast_tokenizer = property(lambda self: self.settings.use_fast_tokenizer)
    tokenizer = property(lambda self: self._tokenizer)
    max_length = property(lambda self: self._max_length, doc="Longest input in tokens, special tokens included.")

    @property
    def token_limit(self) -> int | None:
        """Where texts are cut when tokenized: the max length with ``"truncate"``, nowhere otherwise."""
        return self._max_length if self.long_inputs == "truncate" else None

    @property
    def baseline_vals(self) -> torch.Tensor:
        if self._baseline is None:
            self._baseline = self._load_baseline()
        return self._baseline

    @property
    def signature(self) -> Signature:
        """Every setting behind this scorer's numbers (long form ``str()``, short form ``.short()``)."""
        import transformers

        layer = str(self.num_layers)
        if self._encoder.layer_from_registry:
            layer += " (registry)"
        if self.all_layers:
            layer += " (all layers returned)"
        idf = "no" if not self.idf else f"map:{self._idf_source[1]}" if self._idf_source else "yes"
        if not self.rescale_with_baseline:
            rescale = "no"
        else:
            self.baseline_vals  # the content digest is known once the table is read
            kind, where, content = self._baseline_source
            rescale = f"{kind}:{content} ({where})"
        long_inputs = self.long_inputs
        if long_inputs == "window" and self._window is not None:
            long_inputs = f"window(stride={self._window.overlap})"
        return Signature(
            model=self.model_type, layer=layer, idf=idf, rescale=rescale, lang=self.lang or "-",
            tokenizer="fast" if self.use_fast_tokenizer else "slow", long_inputs=long_inputs, dtype=self.dtype,
            version=__version__, transformers=transformers.__version__, torch=torch.__version__.split("+")[0],
        )

    @property
    def hash(self) -> str:
        """bert-score's hash code, plus a suffix for each number-changing setting bert-score lacks (see
        :class:`~fastbertscore.Signature`)."""
        return self.signature.hash

    def compute_idf(self, sents: list[str]) -> None:
        """Count document frequencies over ``sents`` (the references) and use them as idf weights."""
        sents = check_idf_sents(sents)
        self.set_document_frequencies(self.document_frequencies(sents), len(sents))

    def document_frequencies(self, sents: list[str]) -> torch.Tensor:
        """``(vocab,)`` int64: in how many of ``sents`` each token occurs (summable across processes)."""
        ids = tokenize(self._tokenizer, check_texts(sents, "sents"), self.token_limit).ids
        return document_frequencies(ids, len(self._tokenizer))

    def set_document_frequencies(self, doc_freq: torch.Tensor, num_docs: int) -> None:
        """Use idf ``log((M + 1) / (df + 1))`` from counts, e.g. all-reduced over the ranks of a process group."""
        if self._idf_table is not None:
            logger.warning("Overwriting the previous importance weights.")
        self._idf_table = idf_table(doc_freq, num_docs)
        self._idf_source = None  # counted weights replace a mapping: the hash says so (idf=yes, not map:)

    def score(self, cands, refs, verbose: bool = False, batch_size: int | None = None, return_hash: bool = False):
        """Score each candidate against its reference(s); the return value of ``bert_score.BERTScorer.score``.

        Args:
            cands: candidate texts, ``N`` of them.
            refs: one reference per candidate, or one list of references per candidate (the best is kept,
                separately for P, R and F).
            verbose: show progress bars.
            batch_size: sentences per encoder batch; defaults to the constructor's ``batch_size``.
            return_hash: also return :attr:`hash`.

        Returns:
            ``(P, R, F)``, each ``(N,)`` — ``(L + 1, N)`` with ``all_layers`` — rescaled when the scorer
            rescales; or ``((P, R, F), hash)``. :meth:`score_result` also gives raw values and which
            reference counted.

        Raises:
            TypeError, ValueError: bad inputs, named with their index, before any model work.
        """
        result = self.score_result(cands, refs, verbose=verbose, batch_size=batch_size)
        return (result.scores, result.hash) if return_hash else result.scores

    def score_result(self, cands, refs, *, verbose: bool = False, batch_size: int | None = None) -> ScoreResult:
        """Like :meth:`score`, as a :class:`~fastbertscore.ScoreResult`: raw and rescaled P/R/F, and for
        several references per candidate the index of the one that counted for each of P, R and F."""
        pairs = check_pairs(cands, refs)
        budget = self._budget(batch_size)
        weights = Weights(self._weight_table(), self._plain)
        raw = score_pairs(
            self._encoder, self._tokenizer, pairs, weights,
            max_length=self._max_length, budget=budget, verbose=verbose, long_inputs=self.long_inputs,
            window=self._active_window, cache=self.cache,
        )
        best = None
        if pairs.multi_ref:
            raw, best = best_of_groups(raw, pairs.groups)
        rescaled = split_prf(rescale(raw, self.baseline_vals)) if self.rescale_with_baseline else None
        return ScoreResult(split_prf(raw), rescaled, None if best is None else split_prf(best), self.hash)

    def pairwise(self, texts_a, texts_b=None, *, verbose: bool = False, batch_size: int | None = None):
        """All-vs-all BERTScore: ``(P, R, F)``, each ``(N, M)`` (``(L + 1, N, M)`` with all layers), where ``[i, j]``
        scores ``texts_a[i]`` as the candidate against ``texts_b[j]`` as the reference (``texts_b=None``: against
        ``texts_a`` itself). Equal to :meth:`score` on every pair; each distinct text is embedded once.
        ``batch_size``: sentences per encoder batch (default: the constructor's).

        Example:
            >>> scorer = BERTScorer(model_type="sentence-transformers/all-MiniLM-L6-v2")
            >>> P, R, F = scorer.pairwise(["a cat sat", "it rains", "the cat sat"])
            >>> tuple(F.shape), bool(F[0, 2] > F[0, 1])
            ((3, 3), True)
        """
        from fastbertscore.matrix import pairwise_scores

        return pairwise_scores(self, texts_a, texts_b, verbose=verbose, batch_size=batch_size)

    def mbr(self, samples, references=None, *, utility: str = "f1", verbose: bool = False, batch_size: int | None = None):
        """Minimum-Bayes-risk selection per group of samples; see :func:`fastbertscore.mbr`."""
        from fastbertscore.matrix import mbr_select

        return mbr_select(self, samples, references, utility=utility, verbose=verbose, batch_size=batch_size)

    def token_embeddings(self, ids: list[list[int]], *, batch_size: int | None = None) -> list[torch.Tensor]:
        """Unit-norm embeddings ``(T, D)`` of token id sequences (special tokens included), on the model's device."""
        budget = self._budget(batch_size)
        with torch.inference_mode():
            out = embed(self._encoder, ids, range(len(ids)), pad_id=pad_id_of(self._tokenizer),
                        batch_size=budget.batch_size, max_tokens=budget.max_tokens, window=self._active_window)
        return [out[i] for i in range(len(ids))]

    def token_weights(self, ids: list[int]) -> torch.Tensor:
        """Unnormalised weight of each token: idf when ``idf`` is on, else 0 for [CLS]/[SEP]-style tokens, 1 for others."""
        return sentence_weights(ids, self._weight_table(), self._plain)

    def _open_disk_cache(self, root) -> DiskCache:
        import transformers

        settings = {
            "format": 1, "model_type": self.model_type, "num_layers": self.num_layers, "all_layers": self.all_layers,
            "hidden_index": self._encoder.hidden_index, "dtype": self.dtype, "device": torch.device(self.device).type,
            "window": None if self._window is None else list(astuple(self._window)),
            "versions": [__version__, torch.__version__, transformers.__version__],
        }
        if "weights" not in self._model_facts:
            self._model_facts["weights"] = weights_digest(self._encoder.module)
        return DiskCache(root, encoder_fingerprint(self._model_facts["weights"], settings), settings)

    def _budget(self, batch_size: int | None) -> Budget:
        batch_size = check_positive_int(batch_size or self.batch_size, "batch_size")
        # Reduced precision runs fastest on larger batches (measured on AMX CPUs; see benchmarks/).
        return Budget(batch_size=batch_size, max_tokens=Budget.max_tokens * (2 if self.dtype != "float32" else 1))

    @property
    def _active_window(self) -> WindowSpec | None:
        return self._window if self.long_inputs == "window" else None

    def _weight_table(self) -> torch.Tensor:
        if not self.idf:
            return self._plain
        if self._idf_table is None:
            raise ValueError("idf=True but no idf weights: pass idf_sents= to BERTScorer or call compute_idf(refs)")
        return self._idf_table

    def _load_baseline(self) -> torch.Tensor:
        from fastbertscore.baselines.lookup import find_baseline

        if self.baseline_path is not None:
            path, source, kind = self.baseline_path, self.baseline_path, "custom"
        else:
            path, source = find_baseline(
                self.lang, self.model_type, repo_id=self.settings.baseline_repo, revision=self.settings.baseline_revision
            )
            kind = "baseline"
        table = read_baseline(path)
        self._baseline_source = (kind, str(source), digest(Path(path).read_bytes()))
        logger.info("rescaling with baseline %s", source)
        return select_layers(table, self.num_layers, self.all_layers, str(source))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(hash={self.hash}, batch_size={self.batch_size}, nthreads={self.nthreads})"


def score(
    cands,
    refs,
    model_type: str | None = None,
    num_layers: int | None = None,
    verbose: bool = False,
    idf: bool | Mapping[int, float] = False,
    device: str | None = None,
    batch_size: int = 64,
    nthreads: int = 4,
    all_layers: bool = False,
    lang: str | None = None,
    return_hash: bool = False,
    rescale_with_baseline: bool = False,
    baseline_path: str | None = None,
    use_fast_tokenizer: bool = False,
    **options,
):
    """BERTScore of candidates against references; the signature and return value of ``bert_score.score``.

    ``options`` takes any other field of :class:`~fastbertscore.Settings`, where each is documented:
    ``baseline_repo``/``baseline_revision`` (where baselines come from), ``long_inputs``/``window_stride``
    (texts longer than the model's window: cut as bert-score, scored in full through windows, or an error),
    ``dtype`` (``"auto"`` picks the fastest precision that holds 2e-3 on the device; bfloat16 is several
    times slower on CPUs without AMX/AVX512-BF16), ``cache_mb``/``cache_dir`` (embedding caches). With
    ``idf=True`` the idf weights are counted over the (flattened) references. See :meth:`BERTScorer.score`
    for shapes; the model stays loaded for the next call with the same settings (:func:`clear_model_cache`).

    Example:
        >>> P, R, F = score(["The cat sat on the mat."], ["A cat was sitting on the mat."],
        ...                 model_type="sentence-transformers/all-MiniLM-L6-v2")
        >>> tuple(F.shape), bool(0 < F[0] < 1)
        ((1,), True)
    """
    pairs = check_pairs(cands, refs)
    settings = Settings.from_options("score()", dict(
        model_type=model_type, num_layers=num_layers, idf=idf, device=device, batch_size=batch_size,
        nthreads=nthreads, all_layers=all_layers, lang=lang, rescale_with_baseline=rescale_with_baseline,
        baseline_path=baseline_path, use_fast_tokenizer=use_fast_tokenizer, **options,
    ))
    scorer = BERTScorer.from_settings(settings.idf_over(pairs.refs))
    return scorer.score(cands, refs, verbose=verbose, return_hash=return_hash)


def pairwise(texts_a, texts_b=None, *, verbose: bool = False, **options):
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
    settings = Settings.from_options("pairwise()", options)
    candidates = check_texts(texts_a, "texts_a")  # bad input fails here, before any model work
    references = candidates if texts_b is None else check_texts(texts_b, "texts_b")
    scorer = cached_scorer(settings.idf_over(references))
    return scorer.pairwise(texts_a, texts_b, verbose=verbose, batch_size=settings.batch_size)


def mbr(samples, references=None, *, utility: str = "f1", verbose: bool = False, **options):
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
    from fastbertscore.matrix import check_groups

    settings = Settings.from_options("mbr()", options)
    groups = check_groups(samples, "samples")  # bad input fails here, before any model work
    pool = groups if references is None else check_groups(references, "references")
    scorer = cached_scorer(settings.idf_over(pool))
    return scorer.mbr(samples, references, utility=utility, verbose=verbose, batch_size=settings.batch_size)
