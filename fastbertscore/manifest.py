"""``manifest.json`` of a baseline folder: where each file came from, and its sha256."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

MANIFEST = "manifest.json"


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def load(root: Path) -> dict:
    path = Path(root) / MANIFEST
    if not path.exists():
        return {"files": {}}
    return json.loads(path.read_text(encoding="utf-8"))


def record(root: Path, relpath: str, **fields) -> dict:
    """Add or replace the entry of ``relpath`` (its sha256 is computed here) and save atomically."""
    data = load(root)
    data["files"][relpath] = {**fields, "sha256": sha256(Path(root) / relpath)}
    data["files"] = dict(sorted(data["files"].items()))
    write_atomic(Path(root) / MANIFEST, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return data


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so a crash never leaves a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
