"""Files in and out of the Space: reading an upload, and the result files a request offers for download.

The result folder is made on first use (importing the Space makes no folder), and result files older than
:data:`~fastbertscore.space.limits.KEEP_RESULTS_S` are deleted whenever a new one is written.
"""

from __future__ import annotations

import csv
import functools
import tempfile
import time
from pathlib import Path

from fastbertscore.files import read_lines, read_rows
from fastbertscore.space.limits import KEEP_RESULTS_S


def upload_path(file) -> Path:
    """Where Gradio put an upload: it hands a path, or an object with a ``name``."""
    return Path(file if isinstance(file, str) else file.name)


def rows_of(file) -> list[dict]:
    """The rows of an uploaded ``.csv``, ``.tsv`` or ``.jsonl`` file (:func:`~fastbertscore.read_rows`)."""
    return read_rows(upload_path(file))


def lines_of(file) -> tuple[str, list[str]]:
    """An uploaded text file's name and its lines (:func:`~fastbertscore.read_lines`)."""
    path = upload_path(file)
    try:
        return path.name, read_lines(path)
    except ValueError as error:
        raise ValueError(f"{path.name}: {error}") from None


@functools.cache
def results_folder() -> Path:
    """The folder of this process's result files, made on the first call."""
    return Path(tempfile.mkdtemp(prefix="fastbertscore-results-"))


def write_results(rows: list[list]) -> str:
    """Write ``rows`` as a new CSV file in :func:`results_folder` and return its path; older files go first."""
    folder = results_folder()
    folder.mkdir(parents=True, exist_ok=True)  # a temp cleaner may have removed it
    for old in folder.glob("*.csv"):
        if old.stat().st_mtime < time.time() - KEEP_RESULTS_S:
            old.unlink(missing_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".csv", dir=folder, delete=False, encoding="utf-8", newline="") as out:
        csv.writer(out).writerows(rows)
    return out.name
