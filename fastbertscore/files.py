"""Files in and out: one reader per input format (text lines, JSON Lines, CSV/TSV/JSONL tables), one writer of
score tables, one atomic write, and the two content hashes the Hub uses (git blob id, sha256)."""

from __future__ import annotations

import csv
import errno
import hashlib
import io
import json
import os
import secrets
import stat
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import torch
    from matplotlib.figure import Figure


def split_lines(text: str) -> list[str]:
    """``text`` cut into lines at ``"\\n"`` only, a trailing ``"\\r"`` dropped from each; one final newline ends
    the last line instead of starting an empty one. U+2028, U+0085, ``\\v``, ``\\f`` and a lone ``\\r`` stay
    inside their line (``str.splitlines()`` cuts at them, which misaligned candidates and references).

    The one line reader of every entry point: text files, standard input, the torchrun reader, the Space.
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def read_lines(path: str | Path) -> list[str]:
    """The stripped lines of a UTF-8 text file (:func:`split_lines`), blank ones kept (so line ``i`` is still
    text ``i``).

    Raises:
        ValueError: the file cannot be read or is not UTF-8 (the message names it).
    """
    return [line.strip() for line in split_lines(_read_text(Path(path), encoding="utf-8", shown=str(path), newline=""))]


def _read_text(path: Path, *, encoding: str = "utf-8-sig", shown: str | None = None, newline: str | None = None) -> str:
    """The file's text; unreadable or not ``encoding``: a ValueError naming it as ``shown`` (default: its name).
    ``newline=""`` keeps line ends as they are (the default turns ``"\\r\\n"`` and a lone ``"\\r"`` into ``"\\n"``)."""
    try:
        with open(path, encoding=encoding, newline=newline) as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"cannot read {shown or path.name}: {error}") from None


def _json_values(text: str, name: str) -> Iterator[tuple[int, object]]:
    """(line number, value) of each non-blank line. Split on "\\n" only: JSON strings may hold U+2028 raw."""
    for line_no, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            try:
                yield line_no, json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{name} line {line_no}: not valid JSON ({error.msg})") from None


def read_json_lines(path: str | Path) -> list[object]:
    """The JSON value on each non-blank line of a JSON Lines file (lists of texts for MBR, objects for pairs).

    Raises:
        ValueError: unreadable file, or a line that is not JSON (named by its number).
    """
    path = Path(path)
    return [value for _, value in _json_values(_read_text(path), path.name)]


def read_rows(path: str | Path) -> list[dict[str, object]]:
    """Rows of a ``.csv``, ``.tsv`` or ``.jsonl`` file as dicts (header row for CSV/TSV).

    Raises:
        ValueError: unknown extension, unreadable file, or a JSON line that is not an object (named by line).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".tsv", ".jsonl", ".json"):
        raise ValueError(f"{path.name}: expected a .csv, .tsv or .jsonl file")
    text = _read_text(path)
    if suffix in (".csv", ".tsv"):
        # A StringIO, not splitlines(): a quoted field may hold a line break, and U+2028 is not one for CSV.
        return list(csv.DictReader(io.StringIO(text, newline=""), delimiter="\t" if suffix == ".tsv" else ","))
    rows: list[dict[str, object]] = []
    for line_no, row in _json_values(text, path.name):
        if not isinstance(row, dict):
            raise ValueError(f"{path.name} line {line_no}: expected a JSON object")
        rows.append(row)
    return rows


def pairs_from_rows(
    rows: Sequence[Mapping[str, object]],
    cand_column: str,
    ref_columns: Sequence[str],
    *,
    source: str = "the file",
    boxes: tuple[str, str] = ("candidate column", "reference column"),
    max_chars: int | None = None,
    taker: str = "the command",
) -> tuple[list[str], list[str] | list[list[str]]]:
    """Candidates and references from named columns; several reference columns (or a JSON list) give
    several references per candidate. Messages name the rows' ``source`` (a file's name) and where the caller
    took each column's name (``boxes``: a command's flags, the Space's boxes); ``taker`` names who takes at most
    ``max_chars`` characters per text, where that is bounded.

    Raises:
        ValueError: no rows, a column is missing (the message lists the columns there are), a cell is not text, or
            a text is over ``max_chars``.
    """
    if not rows:
        raise ValueError(f"{source} has no rows: give it a row per candidate")
    if isinstance(ref_columns, str):  # its characters would be read as column names
        raise TypeError(f"ref_columns must be a list of column names, got the str {ref_columns!r}")
    if not ref_columns:
        raise ValueError("no reference column named: name the column (or columns) that holds the references")
    columns, named = list(rows[0]), [(boxes[0], cand_column), *((boxes[1], name) for name in ref_columns)]
    for box, name in named:
        if name not in columns:
            raise ValueError(f"{box} names {name!r}, not a column of {source}; it has: {', '.join(map(str, columns))}")
    cands: list[str] = []
    refs: list[list[str]] = []
    for number, row in enumerate(rows, start=1):
        texts: list[str] = []
        for index, (box, name) in enumerate(named):  # the candidate first: one text; a reference's cell may hold a
            if (cell := row.get(name)) is None:  # a short CSV row, a JSON line without the key or with null
                raise ValueError(f"{box} {name!r} has no value in row {number} of {source}")
            cells = cell if isinstance(cell, list) and index else [cell]  # JSON list of texts
            if not cells or not all(isinstance(text, str) for text in cells):
                raise ValueError(f"{box} {name!r} holds {cell!r:.40} in row {number} of {source}, not text")
            strings = cast("list[str]", cells)
            if max_chars is not None and (longest := max(map(len, strings))) > max_chars:
                raise ValueError(
                    f"{box} {name!r} holds a text of {longest:,} characters in row {number} of {source}; "
                    f"{taker} takes at most {max_chars:,} per text"
                )
            texts.extend(strings)
        cands.append(texts[0])
        refs.append(texts[1:])
    multi = any(len(group) > 1 for group in refs)
    return cands, (refs if multi else [group[0] for group in refs])


#: A temporary file of an atomic write left this long (untouched: a live writer keeps writing to it) belongs to a
#: writer that died; the next write of the same target, or the embedding cache opening its folder, removes it.
STALE_TEMPORARY_SECONDS = 3600


def write_scores(path: str | Path, P: torch.Tensor, R: torch.Tensor, F: torch.Tensor) -> None:
    """A ``P, R, F1`` TSV with one row per pair, six decimals: the output file of the scale-out commands. Written
    atomically: a killed run leaves the old file or none, never a truncated table."""
    rows = zip(P.tolist(), R.tolist(), F.tolist(), strict=True)
    write_atomic(path, "P\tR\tF1\n" + "".join(f"{p:.6f}\t{r:.6f}\t{x:.6f}\n" for p, r, x in rows))


def write_atomic(
    path: str | Path,
    data: str | bytes,
    *,
    durable: bool = True,
    temporary_folder: str | Path | None = None,
    mode: int | None = None,
) -> None:
    """Write ``data`` to a temporary file and rename it over ``path``, so a crash or a concurrent reader never sees
    half a file. ``durable`` also syncs it to disk first (checkpoints and published tables; the embedding cache
    skips it, since a lost entry is only recomputed).

    The temporary file ``.<name>.<random>.tmp`` sits beside ``path``, or in ``temporary_folder`` (on the same
    file system: the embedding cache keeps its own in one folder, swept when it opens). A file that exists keeps
    its permission bits (a 0600 output stays 0600); a new one gets ``mode`` exactly, or without it 0666 less the
    process umask, as ``open()`` makes files (``tempfile.mkstemp`` makes 0600). Stale temporaries of the same
    target (:data:`STALE_TEMPORARY_SECONDS`) are removed first.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    folder = path.parent if temporary_folder is None else Path(temporary_folder)
    folder.mkdir(parents=True, exist_ok=True)
    prefix = f".{path.name}."
    sweep_temporaries(folder, prefix)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)  # rewritten, not widened
    except OSError:
        pass  # a new file (or one that cannot be looked at): the mode asked for, or the umask's
    fd, tmp = _new_temporary(folder, prefix)
    try:
        if mode is not None and hasattr(os, "fchmod"):
            os.fchmod(fd, mode & 0o777)
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_figure(path: str | Path, figure: Figure, *, dpi: int = 120) -> None:
    """A matplotlib figure, in the format its suffix names, written atomically (:func:`write_atomic`)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format=Path(path).suffix.lstrip(".").lower() or None, dpi=dpi)
    write_atomic(path, buffer.getvalue())


def _new_temporary(folder: Path, prefix: str) -> tuple[int, Path]:
    """A new file ``<prefix><random>.tmp`` in ``folder``, open for writing, mode 0666 less the umask. ``O_EXCL``
    (as ``mkstemp``): never an existing file, nor a link planted under that name."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        tmp = folder / f"{prefix}{secrets.token_hex(6)}.tmp"
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name for {prefix}*.tmp in {folder}")


def sweep_temporaries(folder: str | Path, prefix: str = ".", older_than: float = STALE_TEMPORARY_SECONDS) -> int:
    """Remove ``<prefix>*.tmp`` files in ``folder`` not written to for ``older_than`` seconds: what writers that
    died between creating and renaming them left. Best effort (a folder that cannot be listed, or a file that
    cannot be removed, is left as it is); returns how many were removed."""
    removed = 0
    now = time.time()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        if not (entry.name.startswith(prefix) and entry.name.endswith(".tmp")):
            continue
        try:
            if entry.is_file(follow_symlinks=False) and now - entry.stat(follow_symlinks=False).st_mtime > older_than:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
    return removed


@contextmanager
def file_lock(path: str | Path) -> Iterator[None]:
    """Hold an exclusive lock for a read-modify-write of ``path``: ``fcntl.flock`` on ``.<name>.lock`` beside it
    (a hidden file, so a baseline folder's push skips it), which every writer of ``path`` takes. Two processes
    recording into one manifest or registry then never lose each other's entries. Where ``fcntl`` is missing
    (Windows) nothing is locked: one writer at a time is the user's to keep."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    name = path.with_name(f".{path.name}.lock")
    try:  # made if missing, never truncated, never through a link planted under its name
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise OSError(f"lock file {name} is a symbolic link: remove it (no lock is taken through a link)") from None
        raise
    with os.fdopen(fd, "a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def sha256_of(path: str | Path) -> str:
    """Hex sha256 of a file's bytes: the manifest's checksum, and the Hub's name for an LFS file."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def git_blob_id(path: str | Path) -> str:
    """The git blob id of a file (sha1 of ``blob <size>\\0`` + bytes): the Hub's name for a regular file."""
    data = Path(path).read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
