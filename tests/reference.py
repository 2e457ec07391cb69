"""bert-score 0.3.13's scores, computed live in the test run, once for each distinct call.

``.ci/run``'s second numeric path runs every numeric test once per forced encoder batch size of ours
(``FASTBERTSCORE_ENCODER_BATCH``). bert-score does not read that setting, so within one run, under one set of
kernels, its scores for the same call are the same each time: :func:`score` computes them for the first test that
asks and stores them in a folder the run's workers share (:data:`FOLDER_VARIABLE`, made by tests/conftest.py and
removed when the run ends); a call with the same arguments later in the run reads them. A call is kept only where
every argument is a plain value (texts, numbers, flags, paths); any other (an idf dict) is computed each time. A
model folder or baseline file is named by its files' sizes and times, so one written again is scored again.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

#: The environment variable naming the run's folder of stored scores (unset: every call is computed).
FOLDER_VARIABLE = "FASTBERTSCORE_TEST_REFERENCES"
#: bert-score's ``nthreads`` for idf: its document counts are the same with any number, and 0 counts in this process.
#: Its default, 4, starts a multiprocessing Pool of 4 forks of the test's process (torch loaded) for each idf call,
#: and pickles the tokenizer to them: about 1.6 s a call here, against 0.03 s.
NTHREADS = 0
_PLAIN = (str, int, float, bool, type(None))


def score(cands, refs, **options):
    """``bert_score.score(cands, refs, **options)``, computed once per run for each distinct call."""
    import bert_score
    import torch
    import transformers

    options = {"nthreads": NTHREADS, **options}
    key = _key(cands, refs, options, (bert_score.__version__, torch.__version__, transformers.__version__))
    if key is None:
        return bert_score.score(cands, refs, **options)
    path = Path(os.environ[FOLDER_VARIABLE]) / f"{key}.pt"
    if path.exists():
        return torch.load(path, weights_only=True)
    result = bert_score.score(cands, refs, **options)
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    torch.save(result, partial)
    partial.replace(path)  # whole or absent: two workers computing the same call both write the same scores
    return result


def _key(cands, refs, options: dict, versions: tuple[str, ...]) -> str | None:
    """The call's digest (with the ``versions`` of bert-score, torch and transformers), or ``None`` where it is not
    to be kept (no folder, or an argument that is not plain)."""
    if not os.environ.get(FOLDER_VARIABLE) or not all(_plain(v) for v in (cands, refs, *options.values())):
        return None
    files = {name: _files(value) for name, value in options.items() if isinstance(value, str) and Path(value).exists()}
    material = json.dumps([cands, refs, sorted(options.items()), files, versions])
    return hashlib.sha256(material.encode()).hexdigest()[:32]


def _plain(value) -> bool:
    if isinstance(value, list | tuple):
        return all(_plain(item) for item in value)
    return isinstance(value, _PLAIN)


def _files(path: str) -> list:
    """Each file under ``path`` (or the file itself) with its size and time of change."""
    root = Path(path)
    found = sorted(root.rglob("*")) if root.is_dir() else [root]
    return [(str(f.relative_to(root)), f.stat().st_size, f.stat().st_mtime_ns) for f in found if f.is_file()]
