"""Rescaling baselines: :mod:`.table` parses a ``LAYER,P,R,F`` table and rescales, :mod:`.lookup` finds a model's
table (shipped, HF cache, Hub dataset repo), :mod:`.build` computes one for any model, :mod:`.manifest` records
where each file came from, :mod:`.publish` imports bert-score's tables and pushes a folder to the Hub.

:mod:`.build` scores with :class:`fastbertscore.BERTScorer`, so it is not imported here (the scorer imports
:mod:`.table` and :mod:`.lookup`).
"""

from fastbertscore.baselines.lookup import find_baseline
from fastbertscore.baselines.table import BaselineError, read_baseline, rescale

__all__ = ["BaselineError", "find_baseline", "read_baseline", "rescale"]
