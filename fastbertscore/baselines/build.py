"""Compute a rescaling baseline: the mean BERTScore of random sentence pairs, for every layer.

This is the procedure of the BERTScore paper (random pairs of monolingual sentences; the expected score of
unrelated text), whose code was never released. Pairs are scored a block at a time with all layers in
one pass; after each block the running sums go to a checkpoint, so an interrupted build resumes.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path

import torch
from tqdm.auto import tqdm

from fastbertscore._version import __version__
from fastbertscore.baselines import manifest
from fastbertscore.baselines.lookup import baseline_relpath, relpath_of_id
from fastbertscore.files import read_lines, sha256_of, write_atomic
from fastbertscore.models.loading import model_id
from fastbertscore.outputs import refuse_overwriting_inputs
from fastbertscore.scorer import BERTScorer
from fastbertscore.validate import check_positive_int

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class BuildSettings:
    model: str
    lang: str
    corpus: str
    corpus_sha256: str
    sentences: int
    pairs: int
    seed: int
    block: int


def read_corpus(path: Path) -> list[str]:
    """Distinct non-blank lines of a text file, in file order."""
    return list(dict.fromkeys(line for line in read_lines(path) if line))


def sample_pairs(n_sentences: int, n_pairs: int, seed: int) -> list[tuple[int, int]]:
    """``n_pairs`` random (candidate, reference) index pairs of two different sentences; fixed by ``seed``."""
    if n_sentences < 2:
        raise ValueError(f"a baseline needs at least 2 distinct sentences, the corpus has {n_sentences}")
    rng = random.Random(seed)
    pairs = []
    for _ in range(n_pairs):
        cand = rng.randrange(n_sentences)
        ref = rng.randrange(n_sentences - 1)
        pairs.append((cand, ref + (ref >= cand)))
    return pairs


def build(
    model: str,
    lang: str,
    corpus: Path,
    out_root: Path,
    *,
    name: str | None = None,
    pairs: int = 500_000,
    seed: int = 0,
    block: int = 2000,
    batch_size: int | None = None,
    device: str | None = None,
    checkpoint: Path | None = None,
    verbose: bool = True,
    on_checkpoint: Callable[[int], None] | None = None,
) -> Path:
    """Build ``<out_root>/<lang>/<name>.tsv`` (``LAYER,P,R,F``) and its manifest entry; return its path.

    ``name`` is the Hub id to file the baseline under (default: ``model``, which must then be an id).
    ``on_checkpoint(done)`` runs after each checkpoint is safely on disk (progress reports; the tests kill the
    process there, at a known point).
    """
    given = [(pairs, "pairs"), (block, "block")] + ([(batch_size, "batch_size")] if batch_size is not None else [])
    for value, what in given:  # batch_size None: the device's
        check_positive_int(value, what)  # pairs=0 wrote a header-only table and a manifest entry for it
    sentences = read_corpus(corpus)
    if name is None:
        relpath = baseline_relpath(lang, model)  # refuses a local folder: it names no Hub id to file it under
        name = model_id(model)
    else:
        relpath = relpath_of_id(lang, name)
    settings = BuildSettings(name, lang, Path(corpus).name, sha256_of(corpus), len(sentences), pairs, seed, block)
    checkpoint = Path(checkpoint) if checkpoint else Path(out_root) / f".{relpath.replace('/', '__')}.checkpoint.json"
    outputs = {"the table": Path(out_root) / relpath, "the manifest": Path(out_root) / manifest.MANIFEST}
    refuse_overwriting_inputs({**outputs, "the checkpoint": checkpoint}, {"the corpus": corpus})
    state = _resume(checkpoint, settings)
    index = sample_pairs(len(sentences), pairs, seed)
    scorer = BERTScorer(model_type=model, all_layers=True, batch_size=batch_size, device=device)
    with tqdm(total=pairs, initial=state["done"], desc="baseline pairs", disable=not verbose) as bar:
        while state["done"] < pairs:
            done = _score_block(scorer, sentences, index[state["done"] : state["done"] + block], state, checkpoint)
            bar.update(done)
            if on_checkpoint is not None:
                on_checkpoint(state["done"])
    path = _write_table(Path(out_root), relpath, settings, state)
    checkpoint.unlink(missing_ok=True)
    return path


def _score_block(
    scorer: BERTScorer, sentences: list[str], chunk: list[tuple[int, int]], state: dict, checkpoint: Path
) -> int:
    """Score one block of pairs at every layer, add its sums to ``state`` and checkpoint it; return its size."""
    P, R, F = scorer.score([sentences[c] for c, _ in chunk], [sentences[r] for _, r in chunk])
    scores = torch.stack((P, R, F), dim=-1).to(torch.float64)  # (L + 1, n, 3)
    state["sum"] = _add(state["sum"], scores.sum(1))
    state["sumsq"] = _add(state["sumsq"], (scores**2).sum(1))
    state["done"] += len(chunk)
    write_atomic(checkpoint, json.dumps(state))
    return len(chunk)


def _write_table(out_root: Path, relpath: str, settings: BuildSettings, state: dict) -> Path:
    """The ``LAYER,P,R,F`` table of the means in ``state`` and its manifest entry (with the largest standard error
    of F); return the table's path."""
    pairs = settings.pairs
    mean = torch.tensor(state["sum"]) / pairs
    stderr = ((torch.tensor(state["sumsq"]) / pairs - mean**2).clamp(min=0) / max(pairs - 1, 1)).sqrt()
    path = out_root / relpath
    rows = ["LAYER,P,R,F"] + [
        f"{layer}," + ",".join(repr(float(x)) for x in mean[layer]) for layer in range(mean.shape[0])
    ]
    write_atomic(path, "\n".join(rows) + "\n")
    manifest.record(
        out_root,
        relpath,
        source="computed",
        **asdict(settings),
        max_standard_error_F=float(stderr[:, 2].max()),
        fastbertscore=__version__,
        **_versions(),
        date=date.today().isoformat(),
    )
    logger.info("wrote %s (largest standard error of F: %.2g)", path, float(stderr[:, 2].max()))
    return path


def _resume(checkpoint: Path, settings: BuildSettings) -> dict:
    fresh = {"settings": asdict(settings), "done": 0, "sum": [], "sumsq": []}
    if not checkpoint.exists():
        return fresh
    try:
        state = json.loads(checkpoint.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        logger.warning("checkpoint %s is unreadable; starting over", checkpoint)
        return fresh
    if state.get("settings") != asdict(settings):
        logger.warning("checkpoint %s is for other settings; starting over", checkpoint)
        return fresh
    logger.info("resuming from %s: %d pairs done", checkpoint, state["done"])
    return state


def _add(total: list, block: torch.Tensor) -> list:
    """Running sums kept as JSON lists (float64 round-trips exactly through JSON)."""
    return (torch.tensor(total, dtype=torch.float64) + block).tolist() if total else block.tolist()


def _versions() -> dict:
    import transformers

    return {"transformers": transformers.__version__, "torch": torch.__version__.split("+")[0]}
