"""Where a command's files go: never over one of its inputs or another of its outputs, and only where a file can
be written, checked before any model work (the commands' :func:`~fastbertscore.cli.common.check_outputs` adds the
files the settings' flags read; every command calls that)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def refuse_overwriting_inputs(
    outputs: Mapping[str, str | os.PathLike[str]], inputs: Mapping[str, str | os.PathLike[str]]
) -> None:
    """Refuse a run whose output would overwrite one of its inputs, or another of its outputs.

    ``outputs`` and ``inputs`` map how each file was named (``"--out"``, ``"--data"``) to its path. Two paths are
    the same file when they resolve to the same path or, both existing, :func:`os.path.samefile` says so (hard
    links, case-insensitive file systems).

    Every output is also checked to be writable where it is named (not a folder; under a folder that can be
    written, missing folders being made by the writer), so a bad output path fails before any model work.

    Raises:
        ValueError: one line naming both (``--out wmt.csv would overwrite --data wmt.csv``), or the output and
            what is wrong with its path.
    """
    for name, path in outputs.items():
        _check_writable(name, Path(path))
    named = list(outputs.items())
    for i, (out_name, out_path) in enumerate(named):
        others = [*named[:i], *inputs.items()]
        for other_name, other_path in others:
            if same_file(Path(out_path), Path(other_path)):
                raise ValueError(
                    f"{out_name} {out_path} would overwrite {other_name} {other_path}: write it to another file"
                )


def _check_writable(name: str, path: Path) -> None:
    """An output's path can be written: not a folder, and its nearest existing folder (the writer makes the rest)
    is a folder that can be written."""
    if path.is_dir():
        raise ValueError(f"{name} {path} is a folder: name a file to write")
    existing = next(parent for parent in path.absolute().parents if parent.exists())
    if not existing.is_dir():
        raise ValueError(f"{name} {path}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ValueError(f"{name} {path} cannot be written here (no write permission)")


def same_file(a: Path, b: Path) -> bool:
    """Two paths name one file: they resolve to the same path or, both existing, :func:`os.path.samefile` says so."""
    try:
        if a.resolve() == b.resolve():
            return True
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False
