"""``manifest.json`` of a baseline folder: where each file came from, and its sha256."""

from __future__ import annotations

import json
from pathlib import Path

from fastbertscore.baselines.table import BaselineError
from fastbertscore.files import file_lock, sha256_of, write_atomic

MANIFEST = "manifest.json"


def load(root: Path) -> dict:
    """The manifest of ``root`` (``{"files": {}}`` when there is none).

    Raises:
        BaselineError: the file is not a JSON object with a ``files`` object (the message names it).
    """
    path = Path(root) / MANIFEST
    if not path.exists():
        return {"files": {}}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise BaselineError(f"the baseline manifest {path} cannot be read ({error}); fix or remove it") from None
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        raise BaselineError(
            f"the baseline manifest {path} is not a JSON object with a 'files' object; fix or remove it"
        )
    return data


def record(root: Path, relpath: str, **fields: object) -> dict:
    """Add or replace the entry of ``relpath`` (its sha256 is computed here) and save atomically, under a lock:
    two builds into one folder keep both entries. A manifest that cannot be read is refused, never overwritten.
    """
    path = Path(root) / MANIFEST
    with file_lock(path):
        data = load(root)
        data["files"][relpath] = {**fields, "sha256": sha256_of(Path(root) / relpath)}
        data["files"] = dict(sorted(data["files"].items()))
        write_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return data
