"""fastbertscore: BERTScore, exact to ``bert-score`` 0.3.13, fast, and Hub-native."""

from ._version import __version__
from .baselines import BaselineError
from .explain import Explanation, Unit, explain
from .hashing import get_hash
from .result import ScoreResult
from .scorer import BERTScorer, score
from .tables import DEFAULT_MODEL, LANG2MODEL, MODEL2LAYERS

# bert_score's names for the two tables, for drop-in use.
model2layers = MODEL2LAYERS
lang2model = LANG2MODEL

__all__ = [
    "BERTScorer",
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
