"""Per-call settings that change no number reach the work on every path: ``batch_size`` reaches the encoder also
when a scorer with another batch size is already cached (it does not split the model cache: each call passes its
own), and ``verbose`` shows progress."""

from __future__ import annotations

import os

import pytest
import torch
import transformers
from paths import MINILM

import fastbertscore as fb
from fastbertscore.integrations.torchmetrics import BERTScore

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("FASTBERTSCORE_ENCODER_BATCH")),
    reason="encoder batches are forced to one size on this run",
)


@pytest.fixture()
def encoder_batches():
    """Sentences in each forward pass of a Hugging Face model, recorded by a global forward hook (observing only)."""
    seen: list[int] = []

    def record(module, args):
        if isinstance(module, transformers.PreTrainedModel) and args and isinstance(args[0], torch.Tensor):
            seen.append(int(args[0].shape[0]))

    handle = torch.nn.modules.module.register_module_forward_pre_hook(record)
    yield seen
    handle.remove()


def _texts(mt_pairs, n: int = 10) -> tuple[list[str], list[str]]:
    return mt_pairs[0][:n], mt_pairs[1][:n]


PATHS = {
    "pairwise": lambda c, r, **o: fb.pairwise(c, r, model_type=MINILM, **o),
    "mbr": lambda c, r, **o: fb.mbr([c], [r], model_type=MINILM, **o),
    "explain": lambda c, r, **o: fb.explain(". ".join(c), ". ".join(r), level="sentence", model_type=MINILM, **o),
    "compare": lambda c, r, **o: fb.compare({"A": c, "B": r[::-1]}, r, test=None, n_samples=10, model_type=MINILM, **o),
    "compute": lambda c, r, **o: fb.compute(predictions=c, references=r, model_type=MINILM, **o),
}


def _torchmetrics(c, r, **options):
    metric = BERTScore(model_name_or_path=MINILM, **options)
    metric.update(c, r)
    return metric.compute()


PATHS["torchmetrics"] = _torchmetrics
VERBOSE = ("pairwise", "mbr", "compare", "compute", "torchmetrics")


@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_smaller_batch_size_after_a_cached_default_reaches_the_encoder(path, mt_pairs, encoder_batches):
    cands, refs = _texts(mt_pairs)
    PATHS[path](cands, refs)  # caches a scorer built with the default batch size (64)
    assert max(encoder_batches) > 2, "the default run should batch more than 2 sentences"
    encoder_batches.clear()
    cands, refs = mt_pairs[0][10:20], mt_pairs[1][10:20]  # texts not embedded yet: compute keeps what it embedded
    PATHS[path](cands, refs, batch_size=2)
    assert encoder_batches and max(encoder_batches) == 2, f"{path}: encoder batches {encoder_batches}"


@pytest.mark.parametrize("path", VERBOSE)
def test_verbose_shows_the_embedding_progress(path, mt_pairs, capsys):
    cands, refs = _texts(mt_pairs, 4)
    PATHS[path](cands, refs)
    assert "embedding" not in capsys.readouterr().err
    PATHS[path](cands, refs, verbose=True)
    assert "embedding" in capsys.readouterr().err, f"{path}: no progress bar"
