"""Scale out on Ray Data: many machines, one model per actor (``pip install 'fastbertscore[ray]'``).

    import ray
    from fastbertscore.scale.raydata import score_with_ray
    ray.init()                                  # or ray.init(address="auto") on a cluster
    P, R, F = score_with_ray(cands, refs, model_type="roberta-large", idf=True, concurrency=8, num_gpus=1)

idf stays corpus-level: document frequencies are counted over all references once, on the driver, and the
counts are handed to every actor. Ray does not keep row order by default, so every row carries its index and
results are put back in input order.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from fastbertscore.front import checked, resolve, run
from fastbertscore.idf import IdfWeights
from fastbertscore.result import Scores
from fastbertscore.validate import Refs, Texts, check_pairs

if TYPE_CHECKING:
    from ray.data import Dataset

logger = logging.getLogger(__name__)

SCORE_COLUMNS = ("precision", "recall", "f1")


class PairScorer:
    """A callable class for ``ray.data.Dataset.map_batches``: loads the model once per actor, then adds
    ``precision``, ``recall`` and ``f1`` columns to each batch (every other column passes through).

    A reference cell may hold one string or a list of strings (the best reference is kept). Pass
    ``doc_freq``/``num_docs`` (from :func:`reference_document_frequencies`) for idf weighting.
    """

    def __init__(
        self,
        *,
        candidate_column: str = "candidate",
        reference_column: str = "reference",
        doc_freq: np.ndarray | None = None,
        num_docs: int | None = None,
        **scorer_kwargs: Any,
    ) -> None:
        if (doc_freq is None) != (num_docs is None):
            raise ValueError(
                "PairScorer: doc_freq= and num_docs= go together (both from reference_document_frequencies), "
                f"got doc_freq={'None' if doc_freq is None else 'counts'} and num_docs={num_docs!r}"
            )
        import ray

        self.columns = candidate_column, reference_column
        if not torch.cuda.is_available():
            # Ray gives a CPU actor its share of cores; torch would otherwise start a thread per core of the node.
            cpus = ray.get_runtime_context().get_assigned_resources().get("CPU")
            if cpus:
                torch.set_num_threads(max(1, int(cpus)))
        self.scorer, _ = resolve({"idf": doc_freq is not None, **scorer_kwargs}, caller="PairScorer()", shared=False)
        if doc_freq is not None and num_docs is not None:  # counted over every reference on the driver: the value
            counts = torch.as_tensor(np.asarray(doc_freq), dtype=torch.int64)
            self.scorer = self.scorer.with_idf(IdfWeights.from_counts(counts, int(num_docs)))

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        cand_column, ref_column = self.columns
        cands = [str(c) for c in batch[cand_column]]
        refs = [r if isinstance(r, str) else [str(x) for x in r] for r in batch[ref_column]]
        P, R, F = run(check_pairs(cands, refs), scorer=self.scorer).scores
        return {**batch, "precision": P.numpy(), "recall": R.numpy(), "f1": F.numpy()}


def reference_document_frequencies(refs: Refs, **scorer_kwargs: Any) -> tuple[np.ndarray, int]:
    """``(doc_freq, num_docs)`` over all references (a list of strings or of lists of strings), counted with
    the model's tokenizer and length limit exactly as a single-process ``score(..., idf=True)`` counts them."""
    flat = [r for group in refs for r in ([group] if isinstance(group, str) else group)]
    scorer, _ = resolve({**scorer_kwargs, "device": "cpu"}, caller="reference_document_frequencies()", shared=False)
    return scorer.document_frequencies(flat).numpy(), len(flat)


def score_ray_dataset(
    ds: Dataset,
    *,
    candidate_column: str = "candidate",
    reference_column: str = "reference",
    idf: bool | Mapping[int, float] = False,
    batch_size: int = 256,
    concurrency: int | None = None,
    num_gpus: float | None = None,
    num_cpus: float | None = None,
    **scorer_kwargs: Any,
) -> Dataset:
    """A lazy ``ray.data.Dataset``: ``ds`` with ``precision``, ``recall`` and ``f1`` columns added.

    Keep an id column in ``ds`` if you need the input order back. With ``idf=True`` the reference column is
    read once on the driver to count document frequencies; an idf mapping goes to every actor as it is.
    ``num_gpus`` defaults to 1 per actor when the cluster has GPUs (else CPU actors); ``concurrency`` (actors) to
    the number of GPUs, or 1.
    """
    import ray

    resources = ray.cluster_resources()
    gpus = int(resources.get("GPU", 0))
    if num_gpus is None:
        num_gpus = 1 if gpus else 0
    if concurrency is None:
        concurrency = max(1, gpus) if num_gpus else 1
    checked("score_ray_dataset()", {**scorer_kwargs, "idf": idf})  # bad settings fail here, before any actor starts
    constructor = {"candidate_column": candidate_column, "reference_column": reference_column, **scorer_kwargs}
    if isinstance(idf, Mapping):  # the user's weights: every actor's scorer takes them (it was counted idf)
        constructor["idf"] = idf
    elif idf:
        refs = [
            r if isinstance(r, str) else list(r)
            for batch in ds.select_columns([reference_column]).iter_batches(batch_format="numpy")
            for r in batch[reference_column]
        ]
        constructor["doc_freq"], constructor["num_docs"] = reference_document_frequencies(
            refs, **_model_kwargs(scorer_kwargs)
        )
    return ds.map_batches(
        PairScorer,
        fn_constructor_kwargs=constructor,
        batch_size=batch_size,
        concurrency=concurrency,
        num_gpus=num_gpus,
        num_cpus=num_cpus,  # None: Ray's default, as when it is not passed
        batch_format="numpy",
    )


def score_with_ray(
    cands: Texts,
    refs: Refs,
    *,
    idf: bool | Mapping[int, float] = False,
    batch_size: int = 256,
    concurrency: int | None = None,
    num_gpus: float | None = None,
    num_cpus: float | None = None,
    **scorer_kwargs: Any,
) -> Scores:
    """``(P, R, F)`` in input order, scored by Ray actors; inputs are checked on the driver first.

    ``scorer_kwargs`` are fields of :class:`~fastbertscore.Settings` (``model_type``, ``num_layers``, ``dtype``...).
    Requires a running Ray (``ray.init()``).
    """
    import ray

    pairs = check_pairs(cands, refs)
    rows = [
        {"row": i, "candidate": c, "reference": r if isinstance(r, str) else list(r)}
        for i, (c, r) in enumerate(zip(cands, refs, strict=True))
    ]
    scored = score_ray_dataset(
        ray.data.from_items(rows),
        idf=idf,
        batch_size=batch_size,
        concurrency=concurrency,
        num_gpus=num_gpus,
        num_cpus=num_cpus,
        **scorer_kwargs,
    )
    out = np.zeros((len(pairs.groups), 3), dtype=np.float32)
    for batch in scored.select_columns(["row", *SCORE_COLUMNS]).iter_batches(batch_format="numpy"):
        out[batch["row"]] = np.stack([batch[c] for c in SCORE_COLUMNS], axis=-1)
    scores = torch.from_numpy(out)
    return scores[:, 0], scores[:, 1], scores[:, 2]


def _model_kwargs(scorer_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The settings that decide tokenization (and so document frequencies)."""
    keep = ("model_type", "num_layers", "lang", "use_fast_tokenizer", "long_inputs")
    return {k: v for k, v in scorer_kwargs.items() if k in keep}


if __name__ == "__main__":  # the command lives with the others now
    raise SystemExit("the command moved: python -m fastbertscore.cli.raydata (same flags)")
