"""``BERTScorer``, drop-in for ``bert_score``'s: the model, idf weights and baseline loaded once, and the work."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal, overload

import torch

from fastbertscore import assembly
from fastbertscore.baselines.table import rescale
from fastbertscore.idf import IdfWeights, count_documents
from fastbertscore.matrix import MBRResult, Utility, mbr_select, pairwise_scores
from fastbertscore.pipeline.embedder import BatchHook, Embedder
from fastbertscore.pipeline.engine import score_pairs
from fastbertscore.pipeline.weights import Weights, sentence_weights
from fastbertscore.result import ScoreResult, Scores, best_of_groups, split_prf
from fastbertscore.scorer_attributes import ScorerAttributes
from fastbertscore.settings import Settings
from fastbertscore.validate import (
    Matrix,
    Pairs,
    Refs,
    Samples,
    Texts,
    check_flag,
    check_idf_sents,
    check_matrix_texts,
    check_mbr,
    check_pairs,
)

logger = logging.getLogger(__name__)
Baseline = tuple[torch.Tensor, tuple[str, str, str]]  # a baseline's rows and (kind, where, digest)


class BERTScorer(ScorerAttributes):
    """BERTScore with the model, tokenizer, idf weights and baseline loaded once.

    The positional arguments are those of ``bert_score.BERTScorer`` (``nthreads`` accepted: the Rust tokenizer is
    parallel already); ``idf`` may also be a ``{token_id: weight}`` mapping; ``options``: other Settings fields.

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
        batch_size: int | None = None,
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
                device=device,
                lang=lang,
                rescale_with_baseline=rescale_with_baseline,
                baseline_path=baseline_path,
                use_fast_tokenizer=use_fast_tokenizer,
                **options,
            ),
        )
        sents = None if idf_sents is None else check_idf_sents(idf_sents, settings.idf)
        embedder = assembly.build_embedder(settings)
        counted = None if sents is None else IdfWeights.counted(embedder.tokenizer, sents, embedder.token_limit)
        self._set_up(settings, embedder, counted)

    @classmethod
    def from_settings(cls, settings: Settings, *, idf: IdfWeights | None = None) -> BERTScorer:
        """A scorer for settings checked once already (no second check); ``idf``: weights of your own in place of
        those the settings ask for (a mapping's, or none until :meth:`compute_idf`)."""
        return cls._made(settings, assembly.build_embedder(settings), idf)

    def with_idf(self, idf: IdfWeights) -> BERTScorer:
        """Another scorer on this one's loaded model (the same :class:`Embedder`, caches and baseline included)
        that weighs tokens by ``idf``: e.g. ``IdfWeights.from_counts`` of document frequencies summed over the
        ranks of a process group. This scorer is not changed."""
        settings = self.settings if self.settings.idf is True else self.settings.replace(idf=True)
        made = self._made(settings, self.embedder, idf, self._baseline)
        if settings is self.settings and idf.mapping == (self._idf.mapping if self._idf else None):
            vars(made)["signature"] = self.signature  # what signature_of would make again of the same four values
        return made

    @classmethod
    def _made(
        cls, settings: Settings, embedder: Embedder, idf: IdfWeights | None, baseline: Baseline | None = None
    ) -> BERTScorer:
        scorer = cls.__new__(cls)
        cls._set_up(scorer, settings, embedder, idf, baseline)
        return scorer

    def _set_up(
        self, settings: Settings, embedder: Embedder, idf: IdfWeights | None, baseline: Baseline | None = None
    ) -> None:
        """The scorer's whole state: its settings, its loaded model, its idf weights and, read on first use, its
        baseline; nothing else is kept, and nothing here changes after construction but :meth:`compute_idf`."""
        self.settings = settings
        #: The loaded model: tokenizer, encoder, window, caches (shared with every scorer of the same model).
        self.embedder = embedder
        if idf is None and isinstance(settings.idf, Mapping):
            idf = IdfWeights.from_mapping(settings.idf, len(embedder.tokenizer))
        self._idf = idf
        self._baseline = baseline
        if settings.rescale_with_baseline:
            self._loaded_baseline()  # read now, so that a missing baseline fails before any scoring

    def _loaded_baseline(self) -> Baseline:
        """The baseline rows and where they came from, read on first use."""
        if self._baseline is None:
            self._baseline = assembly.load_baseline(self.settings, self.num_layers, self.embedder.encoder.depth)
        return self._baseline

    def compute_idf(self, sents: Texts) -> None:
        """Count idf over ``sents`` (the references) and weigh tokens by it from now on (``bert_score``'s method). A
        shared scorer (:func:`~fastbertscore.cached_scorer`'s, so ``score``'s) refuses: use :meth:`with_idf`."""
        if self.shared:
            raise ValueError("this scorer is shared between calls (cached_scorer, score, compute): use with_idf()")
        if self._idf is not None:
            logger.warning("Overwriting the previous importance weights.")
        self._idf = IdfWeights.counted(self.tokenizer, sents, self.token_limit)
        self.__dict__.pop("signature", None)  # a mapping's digest it named is gone

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
        return_hash = check_flag(return_hash, "return_hash")  # before any work
        return self.score_result(cands, refs, verbose=verbose, batch_size=batch_size).returned(return_hash)

    def score_result(
        self, cands: Texts, refs: Refs, *, verbose: bool = False, batch_size: int | None = None
    ) -> ScoreResult:
        """Like :meth:`score`, as a :class:`~fastbertscore.ScoreResult`: raw and rescaled P/R/F, and for
        several references per candidate the index of the one that counted for each of P, R and F."""
        return self.execute(check_pairs(cands, refs), batch_size=batch_size, verbose=verbose)

    def raw_scores(
        self, pairs: Pairs, *, batch_size: int | None = None, verbose: bool = False, between_batches: BatchHook = None
    ) -> torch.Tensor:
        """Raw ``(N_pairs, 3)`` P, R, F of checked pairs (``(L + 1, N_pairs, 3)`` with all layers);
        ``between_batches``: called before each encoder batch (an exception it raises stops the call)."""
        return score_pairs(self._call(batch_size, between_batches), pairs, verbose=verbose)

    def finish(self, raw: torch.Tensor, pairs: Pairs | None = None) -> ScoreResult:
        """Best of each candidate's references (``pairs`` with several), rescaled when the scorer rescales: the
        result of a score call (``raw``: ``(..., 3)``, pairs or a matrix of them)."""
        raw, best = best_of_groups(raw, pairs.groups) if pairs is not None and pairs.multi_ref else (raw, None)
        rescaled = split_prf(self.rescale(raw)) if self.rescale_with_baseline else None
        sig = self.signature
        return ScoreResult(split_prf(raw), rescaled, None if best is None else split_prf(best), sig.hash, sig)

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
        return self.execute(check_matrix_texts(texts_a, texts_b), batch_size=batch_size, verbose=verbose).scores

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
        return self.execute(check_mbr(samples, references, utility), batch_size=batch_size, verbose=verbose)

    @overload
    def execute(
        self,
        work: Pairs | Matrix,
        *,
        batch_size: int | None = ...,
        verbose: bool = ...,
        between_batches: BatchHook = ...,
    ) -> ScoreResult: ...
    @overload
    def execute(
        self, work: Samples, *, batch_size: int | None = ..., verbose: bool = ..., between_batches: BatchHook = ...
    ) -> MBRResult: ...
    def execute(
        self,
        work: Pairs | Matrix | Samples,
        *,
        batch_size: int | None = None,
        verbose: bool = False,
        between_batches: BatchHook = None,
    ) -> ScoreResult | MBRResult:
        """Checked work, the step every path ends in: pairs or an all-vs-all matrix → a :class:`ScoreResult`, MBR
        groups → an :class:`MBRResult`; ``between_batches``: called before each encoder batch (raising stops it)."""
        call = self._call(batch_size, between_batches)
        if isinstance(work, Pairs):
            return self.finish(score_pairs(call, work, verbose=verbose), work)
        if isinstance(work, Samples):
            baseline = self.baseline_vals if self.rescale_with_baseline else None
            return replace(mbr_select(call, baseline, work, verbose=verbose), hash=self.hash)
        raw = pairwise_scores(call, work, verbose=verbose)
        return self.finish(raw if self.all_layers else raw[0])

    def token_embeddings(self, ids: list[list[int]], *, batch_size: int | None = None) -> list[torch.Tensor]:
        """Unit-norm embeddings ``(T, D)`` of token id sequences (special tokens included), on the model's device."""
        with torch.inference_mode():
            out = self._call(batch_size).embed(ids, range(len(ids)))
        return [out[i] for i in range(len(ids))]

    def token_weights(self, ids: list[int]) -> torch.Tensor:
        """Unnormalised weight of each token: idf when ``idf`` is on, else 0 for [CLS]/[SEP]-style tokens, 1 for others."""
        return sentence_weights(ids, self.weights().table, self.embedder.plain)

    def weights(self) -> Weights:
        """The token weights this scorer scores with: idf when ``idf`` is on, else plain."""
        return self.embedder.weighing(self._idf_table())

    def _idf_table(self) -> torch.Tensor | None:
        if not self.idf:
            return None
        if self._idf is None:
            raise ValueError("idf=True but no idf weights: pass idf_sents= to BERTScorer or call compute_idf(refs)")
        return self._idf.table

    def _call(self, batch_size: int | None, between_batches: BatchHook = None) -> Embedder:
        """The loaded model as one call uses it: its budget (``batch_size``, default the settings') and weights."""
        return self.embedder.for_call(batch_size or self.settings.batch_size, self._idf_table(), between_batches)
