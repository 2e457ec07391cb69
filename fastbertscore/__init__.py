"""fastbertscore: BERTScore, exact to ``bert-score`` 0.3.13, fast, and Hub-native."""

from fastbertscore._version import __version__
from fastbertscore.baselines.table import BaselineError
from fastbertscore.compute import cached_scorer, clear_model_cache, compute, mbr, pairwise
from fastbertscore.explanations.explanation import Explanation, Unit, explain
from fastbertscore.files import pairs_from_rows, read_lines, read_rows, split_lines
from fastbertscore.hardware import auto_dtype
from fastbertscore.hashing import get_hash
from fastbertscore.matrix import MBRResult
from fastbertscore.pipeline.defaults import DEFAULT_MODEL, LANG2MODEL, MODEL2LAYERS
from fastbertscore.result import ScoreResult
from fastbertscore.scorer import BERTScorer, score
from fastbertscore.settings import Settings
from fastbertscore.signature import Signature
from fastbertscore.significance import Comparison, compare
from fastbertscore.validate import check_hub_model_id


def __getattr__(name: str):
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
    "BERTScorer",
    "Comparison",
    "compare",
    "MBRResult",
    "mbr",
    "pairwise",
    "Settings",
    "Signature",
    "auto_dtype",
    "check_hub_model_id",
    "pairs_from_rows",
    "read_lines",
    "read_rows",
    "split_lines",
    "cached_scorer",
    "clear_model_cache",
    "compute",
    "BaselineError",
    "DEFAULT_MODEL",
    "Explanation",
    "Unit",
    "explain",
    "LANG2MODEL",
    "MODEL2LAYERS",
    "ScoreResult",
    "__version__",
    "get_hash",
    "lang2model",
    "model2layers",
    "score",
    "similarity_figure",
    "space",
]
