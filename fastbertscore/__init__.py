"""fastbertscore: BERTScore, exact to ``bert-score`` 0.3.13, fast, and Hub-native."""

from fastbertscore._version import __version__
from fastbertscore.baselines.table import BaselineError
from fastbertscore.compute import compute, mbr, pairwise, score
from fastbertscore.explanations.explanation import Explanation, Unit, explain
from fastbertscore.files import pairs_from_rows, read_lines, read_rows, split_lines
from fastbertscore.front import cached_scorer, clear_model_cache
from fastbertscore.hardware import auto_dtype, describe
from fastbertscore.hashing import get_hash
from fastbertscore.idf import IdfWeights
from fastbertscore.matrix import MBRResult
from fastbertscore.models.defaults import DEFAULT_MODEL, LANG2MODEL, MODEL2LAYERS
from fastbertscore.phases import phase_times
from fastbertscore.pipeline.budget import default_batch_size
from fastbertscore.result import ScoreResult
from fastbertscore.scorer import BERTScorer
from fastbertscore.settings import Settings
from fastbertscore.signature import Signature
from fastbertscore.significance import Comparison, compare
from fastbertscore.validate import check_hub_model_id


def __getattr__(name: str) -> object:
    """``similarity_figure`` on first use only: it imports matplotlib, an optional dependency; ``space`` (what the
    Space shows, for ``app.py``) likewise."""
    if name == "similarity_figure":
        from fastbertscore.explanations.plot import similarity_figure

        return similarity_figure
    if name == "space":
        import fastbertscore.space

        return fastbertscore.space
    raise AttributeError(f"module 'fastbertscore' has no attribute {name!r}")


# bert_score's names for the two tables, for drop-in use.
model2layers = MODEL2LAYERS
lang2model = LANG2MODEL

__all__ = [
    "DEFAULT_MODEL",
    "LANG2MODEL",
    "MODEL2LAYERS",
    "BERTScorer",
    "BaselineError",
    "Comparison",
    "Explanation",
    "IdfWeights",
    "MBRResult",
    "ScoreResult",
    "Settings",
    "Signature",
    "Unit",
    "__version__",
    "auto_dtype",
    "cached_scorer",
    "check_hub_model_id",
    "clear_model_cache",
    "compare",
    "compute",
    "default_batch_size",
    "describe",
    "explain",
    "get_hash",
    "lang2model",
    "mbr",
    "model2layers",
    "pairs_from_rows",
    "pairwise",
    "phase_times",
    "read_lines",
    "read_rows",
    "score",
    "similarity_figure",
    "space",
    "split_lines",
]
