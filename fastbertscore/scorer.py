"""``BERTScorer`` (model loaded once) and ``score`` (one call): drop-in for ``bert_score``."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import torch

from fastbertscore import assembly
from fastbertscore._version import __version__
from fastbertscore.baselines.lookup import signature_model
from fastbertscore.baselines.table import rescale
from fastbertscore.pipeline.embedder import Embedder, Weights
from fastbertscore.pipeline.engine import score_pairs
from fastbertscore.pipeline.tokens import tokenize
from fastbertscore.pipeline.weights import document_frequencies, idf_table, sentence_weights, table_from_mapping
from fastbertscore.result import ScoreResult, best_of_groups, split_prf
from fastbertscore.settings import Settings
from fastbertscore.signature import Signature, mapping_digest
from fastbertscore.validate import (
    Pairs,
    check_idf_sents,
    check_matrix_texts,
    check_mbr,
    check_pairs,
    check_positive_int,
    check_texts,
)

logger = logging.getLogger(__name__)


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
        settings = Settings.from_options(
            "BERTScorer()",
            dict(
                model_type=model_type,
                num_layers=num_layers,
                batch_size=batch_size,
                nthreads=nthreads,
                all_layers=all_layers,
                idf=idf,
                idf_sents=idf_sents,
                device=device,
                lang=lang,
                rescale_with_baseline=rescale_with_baseline,
                baseline_path=baseline_path,
                use_fast_tokenizer=use_fast_tokenizer,
                **options,
            ),
        )
        self._setup(settings)

    @classmethod
    def from_settings(cls, settings: Settings) -> BERTScorer:
        """A scorer for checked settings (as ``BERTScorer(**fields)``)."""
        return cls(**{name: getattr(settings, name) for name in Settings.names()})

    def _setup(self, settings: Settings) -> None:
        self.settings = settings
        self.device = settings.resolved_device
        self.batch_size = settings.batch_size
        self.nthreads = settings.nthreads
        self.all_layers = settings.all_layers
        #: The precision the encoder runs in: ``dtype`` with "auto" resolved for this device (what the hash names).
        self.dtype = settings.resolved_dtype
        #: The loaded model: tokenizer, encoder, window, caches (shared with every scorer of the same model).
        self.embedder: Embedder = assembly.build_embedder(settings)
        self.long_inputs = settings.long_inputs
        idf = settings.idf
        self._idf_table = table_from_mapping(idf, len(self.tokenizer)) if isinstance(idf, Mapping) else None
        self._idf_source = ("mapping", mapping_digest(idf)) if isinstance(idf, Mapping) else None
        if settings.idf_sents is not None:
            self.compute_idf(list(settings.idf_sents))
        self._baseline: torch.Tensor | None = None
        self._baseline_source: tuple[str, str, str] | None = None  # (kind, where, content digest)
        if settings.rescale_with_baseline:
            self._loaded_baseline()  # read now, so that a missing baseline fails before any scoring

    # -- read-only settings, as in bert_score --------------------------------------------------------
    lang = property(lambda self: self.settings.lang)
    idf = property(lambda self: self.settings.idf)
    model_type = property(lambda self: self.settings.model_type_or_default)
    num_layers = property(lambda self: self.embedder.encoder.num_layers)
    rescale_with_baseline = property(lambda self: self.settings.rescale_with_baseline)
    baseline_path = property(lambda self: self.settings.baseline_path)
    use_custom_baseline = property(lambda self: self.settings.baseline_path is not None)
    use_fast_tokenizer = property(lambda self: self.settings.use_fast_tokenizer)
    tokenizer = property(lambda self: self.embedder.tokenizer)
    max_length = property(
        lambda self: self.embedder.max_length, doc="Longest input in tokens, special tokens included."
    )
    token_limit = property(
        lambda self: self.embedder.token_limit, doc="Where texts are cut when tokenized, if anywhere."
    )
    cache = property(lambda self: self.embedder.cache, doc="The embedding cache (memory, disk or both), if any.")
    disk_cache = property(lambda self: self.embedder.disk_cache, doc="The embedding cache on disk, with ``cache_dir``.")

    @property
    def baseline_vals(self) -> torch.Tensor:
        return self._loaded_baseline()[0]

    def _loaded_baseline(self) -> tuple[torch.Tensor, tuple[str, str, str]]:
        """The baseline rows and where they came from, read on first use."""
        if self._baseline is None or self._baseline_source is None:
            self._baseline, self._baseline_source = assembly.load_baseline(self.settings, self.num_layers)
        return self._baseline, self._baseline_source

    @property
    def signature(self) -> Signature:
        """Every setting behind this scorer's numbers (long form ``str()``, short form ``.short()``)."""
        import transformers

        layer = str(self.num_layers)
        if self.embedder.encoder.layer_from_registry:
            layer += " (registry)"
        if self.all_layers:
            layer += " (all layers returned)"
        idf = "no" if not self.idf else f"map:{self._idf_source[1]}" if self._idf_source else "yes"
        if not self.rescale_with_baseline:
            rescale = "no"
        else:
            kind, where, content = self._loaded_baseline()[1]  # the content digest is known once the table is read
            rescale = f"{kind}:{content} ({where})"
        long_inputs: str = self.long_inputs
        if long_inputs == "window" and self.embedder.window is not None:
            long_inputs = f"window(stride={self.embedder.window.overlap})"
        return Signature(
            model=signature_model(self.model_type),  # a local folder by its path, never as a Hub id
            layer=layer,
            idf=idf,
            rescale=rescale,
            lang=self.lang or "-",
            tokenizer="fast" if self.use_fast_tokenizer else "slow",
            long_inputs=long_inputs,
            dtype=self.dtype,
            version=__version__,
            transformers=transformers.__version__,
            torch=torch.__version__.split("+")[0],
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
        ids = tokenize(self.tokenizer, check_texts(sents, "sents"), self.token_limit).ids
        return document_frequencies(ids, len(self.tokenizer))

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
        return _returned(self.score_result(cands, refs, verbose=verbose, batch_size=batch_size), return_hash)

    def score_result(self, cands, refs, *, verbose: bool = False, batch_size: int | None = None) -> ScoreResult:
        """Like :meth:`score`, as a :class:`~fastbertscore.ScoreResult`: raw and rescaled P/R/F, and for
        several references per candidate the index of the one that counted for each of P, R and F."""
        pairs = check_pairs(cands, refs)
        return self.finish(self.raw_scores(pairs, batch_size=batch_size, verbose=verbose), pairs)

    def raw_scores(self, pairs: Pairs, *, batch_size: int | None = None, verbose: bool = False) -> torch.Tensor:
        """Raw ``(N_pairs, 3)`` P, R, F of checked pairs (``(L + 1, N_pairs, 3)`` with all layers)."""
        budget = self.embedder.budget(self._batch_size(batch_size))
        return score_pairs(self.embedder, pairs, self.weights(), budget=budget, verbose=verbose)

    def finish(self, raw: torch.Tensor, pairs: Pairs) -> ScoreResult:
        """Best of each candidate's references, rescaled when the scorer rescales: the result of a score call."""
        best = None
        if pairs.multi_ref:
            raw, best = best_of_groups(raw, pairs.groups)
        rescaled = split_prf(self.rescale(raw)) if self.rescale_with_baseline else None
        return ScoreResult(split_prf(raw), rescaled, None if best is None else split_prf(best), self.hash)

    def rescale(self, raw: torch.Tensor) -> torch.Tensor:
        """``(..., 3)`` raw P, R, F (``(L + 1, ..., 3)`` with all layers) rescaled with this scorer's baseline."""
        return rescale(raw, self.baseline_vals)

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

        a, b = check_matrix_texts(texts_a, texts_b)
        return pairwise_scores(self, a, b, verbose=verbose, batch_size=batch_size)

    def mbr(
        self, samples, references=None, *, utility: str = "f1", verbose: bool = False, batch_size: int | None = None
    ):
        """Minimum-Bayes-risk selection per group of samples; see :func:`fastbertscore.mbr`."""
        from fastbertscore.matrix import mbr_select

        groups, pseudo = check_mbr(samples, references, utility)
        return mbr_select(self, groups, pseudo, utility=utility, verbose=verbose, batch_size=batch_size)

    def token_embeddings(self, ids: list[list[int]], *, batch_size: int | None = None) -> list[torch.Tensor]:
        """Unit-norm embeddings ``(T, D)`` of token id sequences (special tokens included), on the model's device."""
        with torch.inference_mode():
            out = self.embedder.embed(ids, range(len(ids)), batch_size=self._batch_size(batch_size))
        return [out[i] for i in range(len(ids))]

    def token_weights(self, ids: list[int]) -> torch.Tensor:
        """Unnormalised weight of each token: idf when ``idf`` is on, else 0 for [CLS]/[SEP]-style tokens, 1 for others."""
        weights = self.weights()
        return sentence_weights(ids, weights.table, weights.fallback)

    def weights(self) -> Weights:
        """The token weights this scorer scores with: idf when ``idf`` is on, else plain."""
        plain = self.embedder.plain
        if not self.idf:
            return Weights(plain, plain)
        if self._idf_table is None:
            raise ValueError("idf=True but no idf weights: pass idf_sents= to BERTScorer or call compute_idf(refs)")
        return Weights(self._idf_table, plain)

    def _batch_size(self, batch_size: int | None) -> int:
        return check_positive_int(batch_size or self.batch_size, "batch_size")

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
    ``dtype`` (``"auto"``: the fastest precision that holds 2e-3 on the device; bfloat16 is several times slower
    on CPUs without AMX/AVX512-BF16), ``cache_mb``/``cache_dir`` (embedding caches), ``memory_mb`` (held at once;
    spills past it). ``idf=True`` counts idf over the (flattened) references. See :meth:`BERTScorer.score` for
    shapes; the model stays loaded for the next call with the same settings (:func:`clear_model_cache`).

    Example:
        >>> P, R, F = score(["The cat sat on the mat."], ["A cat was sitting on the mat."],
        ...                 model_type="sentence-transformers/all-MiniLM-L6-v2")
        >>> tuple(F.shape), bool(0 < F[0] < 1)
        ((1,), True)
    """
    pairs = check_pairs(cands, refs)
    settings = Settings.from_options(
        "score()",
        dict(
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
            **options,
        ),
    )
    scorer = BERTScorer.from_settings(settings.idf_over(pairs.refs))
    return _returned(scorer.finish(scorer.raw_scores(pairs, verbose=verbose), pairs), return_hash)


def _returned(result: ScoreResult, return_hash: bool):
    """What bert-score's ``score`` returns: ``(P, R, F)``, or ``((P, R, F), hash)``."""
    return (result.scores, result.hash) if return_hash else result.scores
