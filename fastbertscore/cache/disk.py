"""An on-disk cache of sentence embeddings that survives restarts.

One folder per scorer identity (a fingerprint of the encoder's weights plus every setting that changes an
embedding), one file per text inside it, named by a hash of the text's token ids. Files are written to a
temporary name and renamed into place, so a crash never leaves a half-written entry under a real name.

A file is used only when everything in it checks out against what the cache expects: its header is small,
flat JSON naming the hash of its own key (a file copied under another text's name is refused), a shape of
exactly ``(tokens, *token_shape)`` in whole numbers, and the sha256 of a payload of that many finite float32
values, each token vector of unit length. A folder, pipe or device in an entry's place is never read. Any other
file is counted, reported, deleted where possible and recomputed, never used.

The cache only ever costs speed, never a score or a crash: a folder that cannot be made or read turns the cache
off, and one that cannot be written turns its writes off (entries already there are still read), each with
one warning per cache. Who may read it and what in it is never followed (``cache_dir`` is for trusted writers
only): :mod:`fastbertscore.cache.folder`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn, Protocol

import torch

from fastbertscore.cache.folder import GROUP_VARIABLE, NotFollowed, modes, read_entry, real_folder
from fastbertscore.files import sweep_temporaries, write_atomic

logger = logging.getLogger(__name__)

_MAGIC = b"FBSEMB2\n"
_OLD_MAGICS = (b"FBSEMB1\n",)  # entries of an earlier format: replaced without a warning
_HEADER_SIZE = struct.Struct("<I")
#: The largest header read; one of ours is about 190 bytes (key, shape, checksum).
MAX_HEADER_BYTES = 1024
#: How far from 1 a stored token vector's length may be: every embedding is unit-norm per token in float32, whose
#: rounding moves a 1024-wide vector's length by under 1e-6; a planted entry of other lengths would move scores.
UNIT_NORM_SLACK = 1e-4
#: Where entries are written before they are renamed into place; swept of stale files when the cache opens.
TEMPORARY_FOLDER = "tmp"


def weights_digest(module: torch.nn.Module) -> str:
    """A hash of every weight: a fine-tuned model saved at the same path gets a new folder. Computed once per
    loaded model (the scorer keeps it with the model), not per call."""
    digest = hashlib.blake2b(digest_size=16)
    for name, tensor in module.state_dict().items():
        tensor = tensor.detach().cpu().contiguous()
        digest.update(f"{name}:{tuple(tensor.shape)}:{tensor.dtype}".encode())
        digest.update(tensor.reshape(-1).view(torch.uint8).numpy().tobytes())  # reshape: 0-d tensors cannot be viewed
    return digest.hexdigest()


def encoder_fingerprint(weights: str, settings: dict[str, object]) -> str:
    """The cache folder's name: the weights' digest and every setting that changes an embedding."""
    return hashlib.blake2b(f"{weights}|{json.dumps(settings, sort_keys=True)}".encode(), digest_size=16).hexdigest()


def entry_key(ids: Sequence[int]) -> str:
    """The name of a text's entry: a hash of its token ids (its file's header carries it too)."""
    return hashlib.blake2b(struct.pack(f"<{len(ids)}q", *ids), digest_size=20).hexdigest()


class DiskCache:
    """``get(ids)``/``put(ids, embedding)`` backed by files under ``root/<fingerprint>/``.

    ``token_shape`` is the shape of one token's embedding: ``(width,)``, or ``(layers, width)`` with all layers.
    """

    def __init__(
        self, root: str | os.PathLike[str], fingerprint: str, settings: dict[str, object], *, token_shape: Sequence[int]
    ) -> None:
        self.folder = Path(root) / fingerprint
        self.folder_mode, self.entry_mode = modes()
        self.token_shape = tuple(int(n) for n in token_shape)
        self.hits = 0
        self.misses = 0
        self.corrupted = 0
        self.readable = True
        self.writable = True
        self._warned = False
        try:
            Path(root).mkdir(parents=True, exist_ok=True)
            real_folder(self.folder, self.folder_mode)  # private (or the group's); never a link
        except OSError as error:
            self._turn_off("make", error, reads=True)
            return
        if not os.access(self.folder, os.R_OK | os.X_OK):  # another user's private cache
            self._turn_off("read", PermissionError(f"private to its owner; see {GROUP_VARIABLE}"), reads=True)
            return
        try:
            real_folder(self.folder / TEMPORARY_FOLDER, self.folder_mode)  # a link is refused, never swept
            sweep_temporaries(self.folder / TEMPORARY_FOLDER)  # what writers that were killed left
            about = self.folder / "settings.json"
            if not about.exists():
                text = json.dumps(settings, indent=1, sort_keys=True)
                write_atomic(about, text, durable=False, mode=self.entry_mode)
        except OSError as error:
            self._turn_off("write to", error, reads=False)

    def path_for(self, ids: Sequence[int]) -> Path:
        key = entry_key(ids)
        return self.folder / key[:2] / f"{key}.emb"

    def get(self, ids: Sequence[int]) -> torch.Tensor | None:
        if not self.readable:
            return None
        key = entry_key(ids)
        path = self.folder / key[:2] / f"{key}.emb"
        try:
            data = read_entry(path, _largest_file(len(ids), self.token_shape) + 1)  # a bigger file: refused unread
        except FileNotFoundError:
            self.misses += 1
            return None
        except NotFollowed as why:  # a link, folder, pipe or device: never read through
            self.misses += 1
            self.corrupted += 1
            logger.warning("embedding cache entry %s is not a regular file (%s); recomputing its text", path, why)
            return None
        except OSError as error:
            self._turn_off("read", error, reads=True)
            return None
        embedding, problem = parse_entry(data, key=key, tokens=len(ids), token_shape=self.token_shape)
        if embedding is not None:
            self.hits += 1
            return embedding
        self.misses += 1
        if problem == _OLD_FORMAT:
            logger.debug("embedding cache file %s is of an earlier format; replacing it", path)
        else:
            self.corrupted += 1
            logger.warning("embedding cache file %s is corrupted (%s); removing it, recomputing", path, problem)
        try:
            path.unlink(missing_ok=True)
        except OSError as error:
            self._turn_off("remove a bad entry from", error, reads=False)
        return None

    def put(self, ids: Sequence[int], embedding: torch.Tensor) -> None:
        if not self.writable:
            return
        shape = tuple(embedding.shape)
        if shape != (len(ids), *self.token_shape):  # the model's output is not what this cache checks entries for
            self.writable = False
            self._warn_once(
                "the embedding cache %s expects embeddings of shape %s, the model gave %s; going on without writing "
                "to it",
                self.folder,
                (len(ids), *self.token_shape),
                shape,
            )
            return
        key = entry_key(ids)
        path = self.folder / key[:2] / f"{key}.emb"
        try:
            real_folder(path.parent, self.folder_mode)  # a shard that is a link is refused: no write through it
            if path.exists():
                return
            data = entry_bytes(embedding, key)
            tmp = self.folder / TEMPORARY_FOLDER
            write_atomic(path, data, durable=False, temporary_folder=tmp, mode=self.entry_mode)
        except OSError as error:  # a full or read-only disk costs speed, never a score
            self._turn_off("write to", error, reads=False)

    def _turn_off(self, action: str, error: OSError, *, reads: bool) -> None:
        """Stop writing (and, with ``reads``, reading) this cache; one warning per cache, whatever goes wrong."""
        self.writable = False
        if reads:
            self.readable = False
        going_on = "going on without it" if reads else "going on without writing to it"
        self._warn_once("cannot %s the embedding cache %s (%s); %s", action, self.folder, error, going_on)

    def _warn_once(self, message: str, *args: object) -> None:
        if not self._warned:
            self._warned = True
            logger.warning(message, *args)


def entry_bytes(embedding: torch.Tensor, key: str) -> bytes:
    """An entry's bytes: magic, header size, a JSON header (``key``, ``shape``, ``sha256``), float32 payload."""
    payload = embedding.detach().to("cpu", torch.float32).contiguous().numpy().tobytes()
    header = {"key": key, "shape": list(embedding.shape), "sha256": hashlib.sha256(payload).hexdigest()}
    raw = json.dumps(header).encode()
    return _MAGIC + _HEADER_SIZE.pack(len(raw)) + raw + payload


_OLD_FORMAT = "written in an earlier format"


def parse_entry(
    data: bytes, *, key: str, tokens: int, token_shape: tuple[int, ...]
) -> tuple[torch.Tensor | None, str | None]:
    """``(embedding, None)`` if ``data`` is a sound entry of ``key`` for a text of ``tokens`` tokens, else
    ``(None, why)``. Never raises, whatever the bytes."""
    if data.startswith(_OLD_MAGICS):
        return None, _OLD_FORMAT
    if not data.startswith(_MAGIC):
        return None, "bad magic bytes"
    start = len(_MAGIC) + _HEADER_SIZE.size
    if len(data) < start:
        return None, "truncated header"
    (size,) = _HEADER_SIZE.unpack_from(data, len(_MAGIC))
    if size > MAX_HEADER_BYTES:
        return None, f"a header of {size} bytes (at most {MAX_HEADER_BYTES})"
    header, problem = _header(data[start : start + size], size)
    if header is None:
        return None, problem
    if header.get("key") != key:
        return None, "its header names another text's key (a file copied or renamed)"
    expected = [tokens, *token_shape]
    shape = header.get("shape")
    if not (isinstance(shape, list) and all(type(n) is int for n in shape) and shape == expected):
        return None, f"shape {str(shape)[:80]} is not the expected {expected}"
    payload = data[start + size :]
    if len(payload) != 4 * math.prod(expected):
        return None, f"payload is {len(payload)} bytes, expected {4 * math.prod(expected)}"
    if hashlib.sha256(payload).hexdigest() != header.get("sha256"):
        return None, "checksum mismatch"
    embedding = torch.frombuffer(bytearray(payload), dtype=torch.float32).reshape(expected)
    if not bool(torch.isfinite(embedding).all()):
        return None, "values that are not finite"
    if not bool(((embedding.norm(dim=-1) - 1).abs() <= UNIT_NORM_SLACK).all()):
        return None, "token vectors that are not of unit length"
    return embedding, None


def _header(raw: bytes, size: int) -> tuple[dict[str, object] | None, str | None]:
    """The header's JSON object, or why not: short, at most one object and one list deep (ours is exactly that;
    deeper nesting could exhaust the parser's recursion), no ``NaN``/``Infinity`` constants."""
    if len(raw) < size:
        return None, "truncated header"
    if raw.count(b"{") + raw.count(b"[") > 2:
        return None, "unreadable header (nested)"
    try:
        header = json.loads(raw, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        return None, "unreadable header"
    if not isinstance(header, dict):
        return None, "unreadable header (not an object)"
    return header, None


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} in a header")


def _largest_file(tokens: int, token_shape: tuple[int, ...]) -> int:
    """The most bytes a sound entry of ``tokens`` tokens takes."""
    return len(_MAGIC) + _HEADER_SIZE.size + MAX_HEADER_BYTES + 4 * tokens * math.prod(token_shape)


class EmbeddingStore(Protocol):
    """An embedding cache as the embedder uses it: in memory, on disk, or both (:class:`LayeredCache`)."""

    def get(self, ids: list[int]) -> torch.Tensor | None: ...

    def put(self, ids: list[int], embedding: torch.Tensor) -> None: ...


class LayeredCache:
    """Memory first, then disk: a hit in a lower layer is copied up; new entries go to every layer."""

    def __init__(self, *layers: EmbeddingStore | None) -> None:
        self.layers = [layer for layer in layers if layer is not None]

    def get(self, ids: list[int]) -> torch.Tensor | None:
        for depth, layer in enumerate(self.layers):
            found = layer.get(ids)
            if found is not None:
                for upper in self.layers[:depth]:
                    upper.put(ids, found)
                return found
        return None

    def put(self, ids: list[int], embedding: torch.Tensor) -> None:
        for layer in self.layers:
            layer.put(ids, embedding)
