"""fastbertscore: BERTScore, exact to ``bert-score`` 0.3.13, fast, and Hub-native."""

from ._version import __version__
from .baselines import BaselineError
from .compute import compute
from .explain import Explanation, Unit, explain
from .hardware import auto_dtype
from .hashing import get_hash
from .io import pairs_from_rows, read_rows
from .result import ScoreResult
from .matrix import MBRResult
from .scorer import BERTScorer, cached_scorer, clear_model_cache, mbr, pairwise, score
from .settings import Settings
from .signature import Signature
from .tables import DEFAULT_MODEL, LANG2MODEL, MODEL2LAYERS
from .validate import check_hub_model_id

# bert_score's names for the two tables, for drop-in use.
model2layers = MODEL2LAYERS
lang2model = LANG2MODEL

__all__ = [
    "BERTScorer",
    "MBRResult",
    "mbr",
    "pairwise",
    "Settings",
    "Signature",
    "auto_dtype",
    "check_hub_model_id",
    "pairs_from_rows",
    "read_rows",
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
]
