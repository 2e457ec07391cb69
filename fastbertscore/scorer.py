"""``BERTScorer`` (model loaded once) and ``score`` (one call): drop-in for ``bert_score``."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar, cast, overload

import torch

from fastbertscore import assembly
from fastbertscore.baselines.table import rescale
from fastbertscore.idf import IdfWeights, count_documents
from fastbertscore.matrix import MBRResult, Utility, mbr_select, pairwise_scores
from fastbertscore.pipeline.embedder import BatchHook, Embedder
from fastbertscore.pipeline.engine import score_pairs
from fastbertscore.pipeline.prepare import Weights
from fastbertscore.pipeline.weights import sentence_weights
from fastbertscore.result import ScoreResult, Scores, best_of_groups, split_prf
from fastbertscore.settings import Settings
from fastbertscore.signature import Signature
from fastbertscore.validate import Pairs, Refs, Texts, check_matrix_texts, check_mbr, check_pairs, check_positive_int

logger = logging.getLogger(__name__)
T = TypeVar("T")


def _forward(get: Callable[[BERTScorer], T], doc: str | None = None) -> T:  # a property, typed as what it reads
    return cast(T, property(get, doc=doc))


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
        **options: Any,
    ) -> None:
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
        self._set_up(settings, None, assembly.build_embedder(settings))

    @classmethod
    def from_settings(cls, settings: Settings, *, idf: IdfWeights | None = None) -> BERTScorer:
        """A scorer for settings checked once already (no second check); ``idf``: weights of your own in place of
        those the settings ask for (counted over ``idf_sents``, or the mapping)."""
        scorer = cls.__new__(cls)
        cls._set_up(scorer, settings, idf, assembly.build_embedder(settings))
        return scorer

    def with_idf(self, idf: IdfWeights) -> BERTScorer:
        """Another scorer on this one's loaded model (the same :class:`Embedder`, caches included) that weighs
        tokens by ``idf``: e.g. ``IdfWeights.from_counts`` of document frequencies summed over the ranks of a
        process group. This scorer is not changed."""
        return self.for_idf_of(self.settings.replace(idf=True, idf_sents=None), idf)

    def for_idf_of(self, settings: Settings, idf: IdfWeights | None = None) -> BERTScorer:
        """Another scorer on this one's loaded model for ``settings``, which differ from its own in idf alone
        (:meth:`Settings.differs_in_idf_only`, else ``ValueError``); ``idf`` as in :meth:`from_settings`."""
        if not self.settings.differs_in_idf_only(settings):
            raise ValueError("for_idf_of: the settings differ from this scorer's in more than idf")
        cls = type(self)
        other = cls.__new__(cls)
        cls._set_up(other, settings, idf, self.embedder)
        return other

    def _set_up(self, settings: Settings, idf: IdfWeights | None, embedder: Embedder) -> None:
        """The scorer's whole state: its settings, its loaded model, its idf weights and, read on first use, its
        baseline; nothing else is kept, and nothing here changes after construction but :meth:`compute_idf`."""
        self.settings = settings
        #: The loaded model: tokenizer, encoder, window, caches (shared with every scorer of the same model).
        self.embedder = embedder
        if idf is None and isinstance(settings.idf, Mapping):
            idf = IdfWeights.from_mapping(settings.idf, len(embedder.tokenizer))
        elif idf is None and settings.idf_sents is not None:
            idf = IdfWeights.counted(embedder.tokenizer, list(settings.idf_sents), embedder.token_limit)
        self._idf = idf
        self._baseline: tuple[torch.Tensor, tuple[str, str, str]] | None = None  # rows, (kind, where, digest)
        if settings.rescale_with_baseline:
            self._loaded_baseline()  # read now, so that a missing baseline fails before any scoring

    # -- read-only settings, as in bert_score --------------------------------------------------------
    lang = _forward(lambda self: self.settings.lang)
    idf = _forward(lambda self: self.settings.idf)
    model_type = _forward(lambda self: self.settings.model_type_or_default)
    num_layers = _forward(lambda self: self.embedder.encoder.num_layers)
    batch_size = _forward(lambda self: self.settings.batch_size)
    nthreads = _forward(lambda self: self.settings.nthreads)
    all_layers = _forward(lambda self: self.settings.all_layers)
    device = _forward(lambda self: self.settings.resolved_device)
    dtype = _forward(
        lambda self: self.settings.resolved_dtype,
        doc='The precision the encoder runs in: ``dtype`` with "auto" resolved for this device (what the hash names).',
    )
    long_inputs = _forward(lambda self: self.settings.long_inputs)
    rescale_with_baseline = _forward(lambda self: self.settings.rescale_with_baseline)
    baseline_path = _forward(lambda self: self.settings.baseline_path)
    use_custom_baseline = _forward(lambda self: self.settings.baseline_path is not None)
    use_fast_tokenizer = _forward(lambda self: self.settings.use_fast_tokenizer)
    tokenizer = _forward(lambda self: self.embedder.tokenizer)
    max_length = _forward(lambda self: self.embedder.max_length, doc="Longest input in tokens, specials included.")
    token_limit = _forward(lambda self: self.embedder.token_limit, doc="Where texts are cut when tokenized, if at all.")
    cache = _forward(lambda self: self.embedder.cache, doc="The embedding cache (memory, disk or both), if any.")
    disk_cache = _forward(lambda self: self.embedder.disk_cache, doc="The embedding cache on disk, with ``cache_dir``.")
    baseline_vals = _forward(lambda self: self._loaded_baseline()[0], doc="The baseline's rows (read on first use).")

    def _loaded_baseline(self) -> tuple[torch.Tensor, tuple[str, str, str]]:
        """The baseline rows and where they came from, read on first use."""
        if self._baseline is None:
            self._baseline = assembly.load_baseline(self.settings, self.num_layers)
        return self._baseline

    @property
    def signature(self) -> Signature:
        """Every setting behind this scorer's numbers (long form ``str()``, short form ``.short()``)."""
        baseline = self._loaded_baseline()[1] if self.rescale_with_baseline else None  # its digest: read the table
        return assembly.describe(self.settings, self.embedder, self._idf.mapping if self._idf else None, baseline)

    @property
    def hash(self) -> str:
        """bert-score's hash code, plus a suffix for each number-changing setting bert-score lacks (see
        :class:`~fastbertscore.Signature`)."""
        return self.signature.hash

    def compute_idf(self, sents: Texts) -> None:
        """Count idf over ``sents`` (the references) and weigh tokens by it from now on: ``bert_score``'s method, kept
        for drop-in use on a scorer of your own. A scorer others share (``compute``, the Space) is never changed:
        build another with :meth:`with_idf` or ``idf_sents=``."""
        if self._idf is not None:
            logger.warning("Overwriting the previous importance weights.")
        self._idf = IdfWeights.counted(self.tokenizer, sents, self.token_limit)

    def document_frequencies(self, sents: Texts) -> torch.Tensor:
        """``(vocab,)`` int64: in how many of ``sents`` each token occurs (summable across processes; then
        ``with_idf(IdfWeights.from_counts(total, num_docs))``)."""
        return count_documents(self.tokenizer, sents, self.token_limit)

    @overload
    def score(
        self,
        cands: Texts,
        refs: Refs,
        verbose: bool = ...,
        batch_size: int | None = ...,
        return_hash: Literal[False] = ...,
    ) -> Scores: ...
    @overload
    def score(
        self, cands: Texts, refs: Refs, verbose: bool = ..., batch_size: int | None = ..., *, return_hash: Literal[True]
    ) -> tuple[Scores, str]: ...
    @overload
    def score(
        self, cands: Texts, refs: Refs, verbose: bool = ..., batch_size: int | None = ..., return_hash: bool = ...
    ) -> Scores | tuple[Scores, str]: ...
    def score(
        self, cands: Texts, refs: Refs, verbose: bool = False, batch_size: int | None = None, return_hash: bool = False
    ) -> Scores | tuple[Scores, str]:
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
        return self.score_result(cands, refs, verbose=verbose, batch_size=batch_size).returned(return_hash)

    def score_result(
        self, cands: Texts, refs: Refs, *, verbose: bool = False, batch_size: int | None = None
    ) -> ScoreResult:
        """Like :meth:`score`, as a :class:`~fastbertscore.ScoreResult`: raw and rescaled P/R/F, and for
        several references per candidate the index of the one that counted for each of P, R and F."""
        pairs = check_pairs(cands, refs)
        return self.finish(self.raw_scores(pairs, batch_size=batch_size, verbose=verbose), pairs)

    def raw_scores(
        self, pairs: Pairs, *, batch_size: int | None = None, verbose: bool = False, between_batches: BatchHook = None
    ) -> torch.Tensor:
        """Raw ``(N_pairs, 3)`` P, R, F of checked pairs (``(L + 1, N_pairs, 3)`` with all layers);
        ``between_batches``: called before each encoder batch (an exception it raises stops the call)."""
        budget = self.embedder.budget(self._batch_size(batch_size), between_batches)
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

    def pairwise(
        self, texts_a: Texts, texts_b: Texts | None = None, *, verbose: bool = False, batch_size: int | None = None
    ) -> Scores:
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
        a, b = check_matrix_texts(texts_a, texts_b)
        return pairwise_scores(self, a, b, verbose=verbose, batch_size=batch_size)

    def mbr(
        self,
        samples: Sequence[Texts],
        references: Sequence[Texts] | None = None,
        *,
        utility: Utility = "f1",
        verbose: bool = False,
        batch_size: int | None = None,
    ) -> MBRResult:
        """Minimum-Bayes-risk selection per group of samples; see :func:`fastbertscore.mbr`."""
        groups, pseudo = check_mbr(samples, references, utility)
        return mbr_select(self, groups, pseudo, utility=utility, verbose=verbose, batch_size=batch_size)

    def token_embeddings(self, ids: list[list[int]], *, batch_size: int | None = None) -> list[torch.Tensor]:
        """Unit-norm embeddings ``(T, D)`` of token id sequences (special tokens included), on the model's device."""
        with torch.inference_mode():
            out = self.embedder.embed(ids, range(len(ids)), self.embedder.budget(self._batch_size(batch_size)))
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
        if self._idf is None:
            raise ValueError("idf=True but no idf weights: pass idf_sents= to BERTScorer or call compute_idf(refs)")
        return Weights(self._idf.table, plain)

    def _batch_size(self, batch_size: int | None) -> int:
        return check_positive_int(batch_size or self.settings.batch_size, "batch_size")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(hash={self.hash}, batch_size={self.batch_size}, nthreads={self.nthreads})"
