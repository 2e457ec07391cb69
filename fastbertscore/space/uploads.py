"""Files in and out of the Space: reading an upload, and the result files a request offers for download.

The result folder is made on first use (importing the Space makes no folder), and result files older than
:data:`~fastbertscore.space.limits.KEEP_RESULTS_S` are deleted whenever a new one is written.
"""

from __future__ import annotations

import csv
import functools
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from fastbertscore.files import read_lines, read_rows
from fastbertscore.space.limits import KEEP_RESULTS_S, MAX_RESULT_FILES, MAX_UPLOAD_BYTES, megabytes
from fastbertscore.space.tables import Cell


class Named(Protocol):
    """An upload as some Gradio versions hand it: an object whose ``name`` is its path."""

    @property
    def name(self) -> str: ...


#: An upload: its path, or an object naming it.
Upload = str | Named


def upload_path(file: Upload) -> Path:
    """Where Gradio put an upload: it hands a path, or an object with a ``name``."""
    return Path(file if isinstance(file, str) else file.name)


def check_size(file: Upload) -> None:
    """Refuse an upload of more than :data:`~fastbertscore.space.limits.MAX_UPLOAD_BYTES` before it is read (Gradio
    refuses one at upload too; this holds wherever a file comes from)."""
    path = upload_path(file)
    try:
        size = path.stat().st_size
    except OSError:
        return  # reading it says why
    if size > MAX_UPLOAD_BYTES:
        raise ValueError(
            f"{path.name} has {size:,} bytes; the Space reads at most {megabytes(MAX_UPLOAD_BYTES)} "
            f"({MAX_UPLOAD_BYTES:,} bytes) per file"
        )


def rows_of(file: Upload) -> list[dict[str, object]]:
    """The rows of an uploaded ``.csv``, ``.tsv`` or ``.jsonl`` file (:func:`~fastbertscore.read_rows`), its size
    checked first."""
    check_size(file)
    path = upload_path(file)
    try:
        return read_rows(path)
    except ValueError as error:
        raise ValueError(_named(error, path)) from None
    except csv.Error as error:  # the csv module's own (a field past its size limit, a stray NUL)
        raise ValueError(f"{path.name} is not a CSV/TSV file the Space can read: {error}") from None


def lines_of(file: Upload) -> tuple[str, list[str]]:
    """An uploaded text file's name and its lines (:func:`~fastbertscore.read_lines`), its size checked first."""
    check_size(file)
    path = upload_path(file)
    try:
        return path.name, read_lines(path)
    except ValueError as error:
        message = _named(error, path)
        raise ValueError(message if path.name in message else f"{path.name}: {message}") from None


def _named(error: Exception, path: Path) -> str:
    """``error``'s message with the upload's path (Gradio's folder for it) written as the file's name alone."""
    return str(error).replace(str(path), path.name).replace(str(path.resolve()), path.name)


@functools.cache
def results_folder() -> Path:
    """The folder of this process's result files, made on the first call."""
    return Path(tempfile.mkdtemp(prefix="fastbertscore-results-"))


def _age(path: Path) -> float:
    """Seconds since ``path`` was written (a file deleted meanwhile counts as the oldest)."""
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return float("inf")


def write_results(rows: Sequence[Sequence[Cell]]) -> str:
    """Write ``rows`` as a new CSV file in :func:`results_folder` and return its path. Files older than
    :data:`~fastbertscore.space.limits.KEEP_RESULTS_S`, and the oldest beyond
    :data:`~fastbertscore.space.limits.MAX_RESULT_FILES`, are deleted first."""
    folder = results_folder()
    folder.mkdir(parents=True, exist_ok=True)  # a temp cleaner may have removed it
    kept = sorted(folder.glob("*.csv"), key=_age, reverse=True)  # oldest first
    for number, old in enumerate(kept):
        if number <= len(kept) - MAX_RESULT_FILES or _age(old) > KEEP_RESULTS_S:  # room for the new one
            old.unlink(missing_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".csv", dir=folder, delete=False, encoding="utf-8", newline="") as out:
        csv.writer(out).writerows(rows)
    return out.name
