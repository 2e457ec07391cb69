"""``BERTScorer`` (model loaded once) and ``score`` (one call): drop-in for ``bert_score``."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import astuple, replace
from functools import lru_cache
from typing import Literal

import torch

from ._version import __version__
from .baselines import read_baseline, rescale, select_layers
from .cache import EmbeddingCache
from .diskcache import DiskCache, LayeredCache, encoder_fingerprint
from .embed import embed, pad_id_of
from .hardware import check_device, cpu_bf16_gap, cpu_native_bf16, resolve_dtype
from .engine import Budget, Weights, score_pairs
from .hashing import get_hash
from .idf import document_frequencies, idf_table, plain_table, sentence_weights, table_from_mapping
from .memory import limit_kernel_cache
from .result import ScoreResult, best_of_groups, split_prf
from .models import load_encoder, load_tokenizer, max_input_length
from .tables import model_for_lang
from .tokenize import tokenize
from .validate import check_idf_sents, check_options, check_pairs, check_positive_int, check_texts
from .windows import WindowSpec, special_layout

logger = logging.getLogger(__name__)

LongInputs = Literal["truncate", "window", "error"]
DType = Literal["float32", "bfloat16", "float16", "auto"]
DTYPES = {"float32": None, "bfloat16": torch.bfloat16, "float16": torch.float16}


@lru_cache(maxsize=1)
def _load(model_type: str, num_layers: int | None, all_layers: bool, device: str, use_fast: bool):
    # Kept between calls so that repeated score() calls do not reload the model (bert-score reloads).
    tokenizer = load_tokenizer(model_type, use_fast)
    encoder = load_encoder(model_type, num_layers, all_layers)
    encoder.module.to(device)
    return tokenizer, encoder


class BERTScorer:
    """BERTScore with the model, tokenizer, idf weights and baseline loaded once.

    Arguments are those of ``bert_score.BERTScorer``; ``idf`` may also be a ``{token_id: weight}`` mapping.
    ``nthreads`` is accepted for compatibility; tokenization is already parallel in the Rust tokenizer.

    Example:
        >>> scorer = BERTScorer(model_type="sentence-transformers/all-MiniLM-L6-v2")  # doctest: +SKIP
        >>> P, R, F = scorer.score(["the cat sat"], ["a cat was sitting"])  # doctest: +SKIP
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
        *,
        baseline_repo: str | None = None,
        baseline_revision: str | None = None,
        long_inputs: LongInputs = "truncate",
        window_stride: int | None = None,
        dtype: DType = "float32",
        cache_mb: int = 0,
        cache_dir: str | os.PathLike | None = None,
    ):
        self.device = check_device(device)
        check_options(
            model_type=model_type, lang=lang, rescale_with_baseline=rescale_with_baseline, baseline_path=baseline_path,
            dtype=dtype, long_inputs=long_inputs, window_stride=window_stride, cache_mb=cache_mb, cache_dir=cache_dir,
            device=self.device,
        )
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.nthreads = nthreads
        self.all_layers = bool(all_layers)
        self._lang = lang
        self._model_type = model_type if model_type is not None else model_for_lang(lang)
        if idf_sents is not None:
            idf_sents = check_idf_sents(idf_sents)
        self._use_fast_tokenizer = use_fast_tokenizer
        #: The precision the encoder runs in: ``dtype`` with "auto" resolved for this device (what the hash names).
        self.dtype = resolve_dtype(dtype, self.device)
        on_cpu = torch.device(self.device).type == "cpu"
        if self.dtype == "bfloat16" and on_cpu and not cpu_native_bf16():
            logger.warning(
                "dtype='bfloat16': %s and runs several times slower than float32 here; use dtype='auto' "
                "(float32 on this CPU) unless you need these bfloat16 numbers", cpu_bf16_gap(),
            )
        if self.dtype != "float32" and on_cpu:
            limit_kernel_cache()
        loaded = _load(self._model_type, num_layers, self.all_layers, self.device, use_fast_tokenizer)
        # A per-scorer view of the shared model: the precision mode belongs to this scorer only.
        self._tokenizer, self._encoder = loaded[0], replace(loaded[1], autocast=DTYPES[self.dtype])
        self._max_length = max_input_length(self._tokenizer, self._encoder)
        self.long_inputs = long_inputs
        self._window = None
        if self._max_length is not None:
            prefix, suffix = special_layout(self._tokenizer)
            self._window = WindowSpec(self._max_length, prefix, suffix, window_stride)
            if self._window.capacity < 2:
                raise ValueError(f"max length {self._max_length} leaves no room for text between the special tokens")
        # Texts seen before (the references of every system, say) are not embedded again: in memory with
        # cache_mb, across restarts with cache_dir.
        memory = EmbeddingCache(cache_mb << 20) if cache_mb else None
        self.disk_cache = self._open_disk_cache(cache_dir) if cache_dir is not None else None
        layers = [cache for cache in (memory, self.disk_cache) if cache is not None]
        self.cache = layers[0] if len(layers) == 1 else LayeredCache(*layers) if layers else None
        vocab_size = len(self._tokenizer)
        self._plain = plain_table(vocab_size, (self._tokenizer.sep_token_id, self._tokenizer.cls_token_id))
        self._idf = idf if isinstance(idf, Mapping) else bool(idf)
        self._idf_table = table_from_mapping(idf, vocab_size) if isinstance(idf, Mapping) else None
        if idf_sents is not None:
            self.compute_idf(idf_sents)
        self._rescale_with_baseline = bool(rescale_with_baseline)
        self.baseline_path = baseline_path
        self.use_custom_baseline = baseline_path is not None
        self._baseline_repo = (baseline_repo, baseline_revision)
        self._baseline = self._load_baseline() if rescale_with_baseline else None

    # -- read-only settings, as in bert_score --------------------------------------------------------
    lang = property(lambda self: self._lang)
    idf = property(lambda self: self._idf)
    model_type = property(lambda self: self._model_type)
    num_layers = property(lambda self: self._encoder.num_layers)
    rescale_with_baseline = property(lambda self: self._rescale_with_baseline)
    use_fast_tokenizer = property(lambda self: self._use_fast_tokenizer)
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
    def hash(self) -> str:
        """bert-score's hash; a non-default precision or long-input mode is appended so numbers are never confused."""
        text = get_hash(
            self.model_type, self.num_layers, bool(self.idf), self.rescale_with_baseline,
            self.use_custom_baseline, self.use_fast_tokenizer,
        )
        if self.dtype != "float32":
            text += f"_dtype={self.dtype}"
        if self.long_inputs == "window":
            text += "_long=window"
        return text

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

    def token_embeddings(self, ids: list[list[int]]) -> list[torch.Tensor]:
        """Unit-norm embeddings ``(T, D)`` of token id sequences (special tokens included), on the model's device."""
        budget = self._budget(None)
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
        return DiskCache(root, encoder_fingerprint(self._encoder.module, settings), settings)

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
        from .store import find_baseline

        if self.baseline_path is not None:
            path, source = self.baseline_path, self.baseline_path
        else:
            repo_id, revision = self._baseline_repo
            path, source = find_baseline(self.lang, self.model_type, repo_id=repo_id, revision=revision)
        table = read_baseline(path)
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
    *,
    baseline_repo: str | None = None,
    baseline_revision: str | None = None,
    long_inputs: LongInputs = "truncate",
    window_stride: int | None = None,
    dtype: DType = "float32",
    cache_dir: str | os.PathLike | None = None,
):
    """BERTScore of candidates against references; the signature and return value of ``bert_score.score``.

    With ``idf=True`` the idf weights are counted over the (flattened) references. ``baseline_repo`` and
    ``baseline_revision`` choose the Hub dataset repo that rescaling baselines come from (default:
    ``$FASTBERTSCORE_BASELINE_REPO`` or ``fastbertscore/baselines``, at ``main``). ``long_inputs`` decides
    what happens to texts longer than the model's window: ``"truncate"`` (as bert-score, with a warning),
    ``"window"`` (scored in full through overlapping windows sharing ``window_stride`` tokens, default a
    quarter of the window) or ``"error"``. ``dtype="bfloat16"`` (CPU or GPU) or ``"float16"`` (GPU) runs the
    encoder under autocast, within about 2e-3 of the exact scores: faster only where the hardware has native
    bf16 (AMX/AVX512-BF16 CPUs, recent GPUs), several times slower on other CPUs. ``dtype="auto"`` picks the
    fastest precision that holds those bounds on the device (float32 where bf16 is emulated). ``cache_dir`` keeps
    sentence embeddings on disk, so texts scored again, even by another process, are not embedded again. See
    :meth:`BERTScorer.score` for shapes; the model stays loaded for the next call with the same settings.
    """
    pairs = check_pairs(cands, refs)
    scorer = BERTScorer(
        model_type=model_type, num_layers=num_layers, batch_size=batch_size, nthreads=nthreads,
        all_layers=all_layers, idf=idf, device=device, lang=lang, rescale_with_baseline=rescale_with_baseline,
        baseline_path=baseline_path, use_fast_tokenizer=use_fast_tokenizer, baseline_repo=baseline_repo,
        baseline_revision=baseline_revision, long_inputs=long_inputs, window_stride=window_stride, dtype=dtype,
        cache_dir=cache_dir,
    )
    if scorer.idf is True:
        scorer.compute_idf(pairs.refs)
    return scorer.score(cands, refs, verbose=verbose, return_hash=return_hash)
