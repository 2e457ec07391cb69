"""Files in and out of the Space: reading an upload (bounded: reading stops past the row limit), and the result
files a request offers for download (escaped as spreadsheets expect).

The result folder is made on first use (importing the Space makes no folder), and result files older than
:data:`~fastbertscore.space.limits.KEEP_RESULTS_S` are deleted whenever a new one is written.
"""

from __future__ import annotations

import csv
import functools
import itertools
import json
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Protocol, TextIO

from fastbertscore.space.limits import (
    KEEP_RESULTS_S,
    MAX_REQUEST_BYTES,
    MAX_RESULT_FILES,
    MAX_ROWS,
    MAX_UPLOAD_BYTES,
    megabytes,
)
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


def check_total(files: list[Upload], max_bytes: int = MAX_REQUEST_BYTES) -> None:
    """Refuse a request whose uploads hold more than ``max_bytes`` together, before any is read."""
    total = 0
    for file in files:
        try:
            total += upload_path(file).stat().st_size
        except OSError:
            continue  # reading it says why
    if total > max_bytes:
        raise ValueError(
            f"The uploaded files hold {total:,} bytes together; the Space reads at most {megabytes(max_bytes)} "
            f"({max_bytes:,} bytes) per request"
        )


def rows_of(file: Upload, max_rows: int = MAX_ROWS) -> list[dict[str, object]]:
    """The rows of an uploaded ``.csv``, ``.tsv`` or ``.jsonl`` file (a header row for CSV/TSV), its size checked
    first; reading stops at ``max_rows`` + 1 rows, so a file of a million tiny rows is never held whole.

    Raises:
        ValueError: more than ``max_rows`` rows, another extension, an unreadable file, or a line that does not
            parse (named by its number: a CSV error, JSON that is not valid or nests too deeply, not an object).
    """
    check_size(file)
    path = upload_path(file)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".tsv", ".jsonl", ".json"):
        raise ValueError(f"{path.name}: expected a .csv, .tsv or .jsonl file")
    tabular = suffix in (".csv", ".tsv")
    try:
        with open(path, encoding="utf-8-sig", newline="" if tabular else "\n") as f:
            found = _csv_rows(f, path.name, suffix) if tabular else _json_rows(f, path.name)
            rows = list(itertools.islice(found, max_rows + 1))
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(_unreadable(path, error)) from None
    if len(rows) > max_rows:
        raise ValueError(
            f"{path.name} has more than {max_rows:,} rows; the Space scores at most {max_rows:,} per batch"
        )
    return rows


def _csv_rows(f: TextIO, name: str, suffix: str) -> Iterator[dict[str, object]]:
    # The file object, not splitlines(): a quoted field may hold a line break, and U+2028 is not one for CSV.
    reader = csv.DictReader(f, delimiter="\t" if suffix == ".tsv" else ",")
    try:
        yield from reader
    except csv.Error as error:  # the csv module's own (a field past its size limit, a stray NUL)
        raise ValueError(
            f"{name} is not a CSV/TSV file the Space can read: {error}, at line {reader.reader.line_num}"
        ) from None


def _json_rows(f: TextIO, name: str) -> Iterator[dict[str, object]]:
    """The object on each non-blank line; lines are cut at "\\n" only (a JSON string may hold U+2028 raw)."""
    for number, line in enumerate(f, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{name} line {number}: not valid JSON ({error.msg})") from None
        except RecursionError:  # "[" * 200,000: the parser's own stack
            raise ValueError(f"{name} line {number}: not valid JSON here (it nests too deeply)") from None
        except ValueError as error:  # a number of more digits than Python converts
            raise ValueError(f"{name} line {number}: not valid JSON here ({first_words(error)})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{name} line {number}: expected a JSON object")  # noqa: TRY004 - bad input
        yield row


def lines_of(file: Upload, max_lines: int = MAX_ROWS) -> tuple[str, list[str]]:
    """An uploaded text file's name and its stripped lines (blank ones kept, so line ``i`` is text ``i``; cut at
    "\\n" only, as :func:`~fastbertscore.files.split_lines` does), its size checked first; reading stops at
    ``max_lines`` + 1 lines.

    Raises:
        ValueError: more than ``max_lines`` lines, or a file that cannot be read or is not UTF-8 (named).
    """
    check_size(file)
    path = upload_path(file)
    try:
        with open(path, encoding="utf-8", newline="\n") as f:
            lines = [line.strip() for line in itertools.islice(f, max_lines + 1)]
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(_unreadable(path, error)) from None
    if len(lines) > max_lines:
        raise ValueError(
            f"{path.name} has more than {max_lines:,} lines; the Space compares at most {max_lines:,} segments"
        )
    return path.name, lines


def _unreadable(path: Path, error: OSError | UnicodeDecodeError) -> str:
    """Why ``path`` cannot be read, named by its name alone (an OSError's message would show the server's path)."""
    why = str(error) if isinstance(error, UnicodeDecodeError) else error.strerror or type(error).__name__
    return f"cannot read {path.name}: {why}"


def first_words(error: Exception, length: int = 60) -> str:
    """The start of ``error``'s first line, at most ``length`` characters."""
    text = (str(error).splitlines() or [type(error).__name__])[0]
    return text if len(text) <= length else text[: length - 1] + "…"


#: A text cell starting with one of these is a formula to a spreadsheet: the result CSV writes it behind a quote,
#: as spreadsheets expect (OWASP's advice on CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(cell: Cell) -> Cell:
    """``cell`` as a spreadsheet shows it and never runs it: a text starting with :data:`FORMULA_STARTS` behind a
    quote; numbers as they are.

    Example:
        >>> spreadsheet_safe("=1+1"), spreadsheet_safe("-1 point"), spreadsheet_safe(-0.25)
        ("'=1+1", "'-1 point", -0.25)
    """
    return "'" + cell if isinstance(cell, str) and cell.startswith(FORMULA_STARTS) else cell


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
        csv.writer(out).writerows([[spreadsheet_safe(cell) for cell in row] for row in rows])
    return out.name
