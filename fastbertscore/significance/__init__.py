"""Comparing systems: :mod:`.resampling` holds sacrebleu's paired bootstrap and approximate randomization,
vectorised over segment scores; :mod:`.comparison` scores every system on shared references and reports."""

from fastbertscore.significance.comparison import Comparison, SystemScore, compare
from fastbertscore.significance.resampling import Interval

__all__ = ["Comparison", "Interval", "SystemScore", "compare"]
