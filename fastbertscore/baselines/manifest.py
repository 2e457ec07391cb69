"""``manifest.json`` of a baseline folder: where each file came from, and its sha256."""

from __future__ import annotations

import json
from pathlib import Path

from fastbertscore.files import sha256_of, write_atomic

MANIFEST = "manifest.json"


def load(root: Path) -> dict:
    path = Path(root) / MANIFEST
    if not path.exists():
        return {"files": {}}
    return json.loads(path.read_text(encoding="utf-8"))


def record(root: Path, relpath: str, **fields) -> dict:
    """Add or replace the entry of ``relpath`` (its sha256 is computed here) and save atomically."""
    data = load(root)
    data["files"][relpath] = {**fields, "sha256": sha256_of(Path(root) / relpath)}
    data["files"] = dict(sorted(data["files"].items()))
    write_atomic(Path(root) / MANIFEST, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return data
