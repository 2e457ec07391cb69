"""Embeddings one score call keeps for its later steps: in memory up to a budget, then spilled to local disk.

A :class:`KeptEmbeddings` lives for one call. Past its memory budget it writes embeddings to one file in a
temporary folder of its own (``fastbertscore-spill-<pid>-*`` in the system's temporary directory), reads them
back when a later step needs them, and removes the folder when the call ends. Where the disk is full or the
folder cannot be written, it says so once and forgets the embedding: the caller embeds that text again, so a
failing disk costs time, never a wrong number. A run killed midway leaves its folder behind; the next call that
spills removes the folders of processes that no longer exist, and never reads another call's files.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import shutil
import tempfile
from pathlib import Path

import torch

logger = logging.getLogger(__name__)

PREFIX = "fastbertscore-spill-"


class KeptEmbeddings:
    """``put(u, e)``, ``get(u)`` (``None`` if it was lost to a failing disk), ``drop(u)``, ``close()``.

    Tensors come back on ``device``, in the dtype and shape they were put in, bit for bit.
    """

    def __init__(
        self, memory_bytes: int, device: torch.device | str, folder: str | os.PathLike[str] | None = None
    ) -> None:
        self.memory_bytes = memory_bytes
        self.device = torch.device(device)
        self.parent = folder  # where the temporary folder is made (None: the system's temporary directory)
        self.in_memory: dict[int, torch.Tensor] = {}
        self.bytes = 0
        self.spilled: dict[int, tuple[int, int, torch.dtype, tuple[int, ...]]] = {}  # offset, size, dtype, shape
        self.spilled_bytes = 0  # written to disk over the call
        self.lost = 0  # embeddings forgotten because the disk failed
        self.folder: Path | None = None
        self.file: io.FileIO | None = None
        self.failed = False

    def put(self, u: int, embedding: torch.Tensor) -> None:
        size = embedding.numel() * embedding.element_size()
        if self.bytes + size <= self.memory_bytes:
            # A copy of its own: the encoder hands out slices of a whole batch's output, and a kept slice would
            # hold that batch alive, uncounted by the budget.
            self.in_memory[u] = embedding.clone()
            self.bytes += size
        elif not self._spill(u, embedding):
            self.lost += 1

    def get(self, u: int) -> torch.Tensor | None:
        if u in self.in_memory:
            return self.in_memory[u]
        if u not in self.spilled or self.file is None:
            return None
        offset, size, dtype, shape = self.spilled[u]
        data = bytearray(os.pread(self.file.fileno(), size, offset))
        if len(data) != size:  # the file was cut short under us: recompute rather than guess
            return None
        return torch.frombuffer(data, dtype=torch.uint8).view(dtype).reshape(shape).to(self.device)

    def drop(self, u: int) -> None:
        found = self.in_memory.pop(u, None)
        if found is not None:
            self.bytes -= found.numel() * found.element_size()
        self.spilled.pop(u, None)

    def close(self) -> None:
        """Forget everything and remove the temporary folder; log what spilled or was lost, if anything."""
        if self.spilled_bytes or self.lost:
            logger.info(
                "kept embeddings: %.0f MB spilled to disk, %d text(s) to embed again",
                self.spilled_bytes / 2**20,
                self.lost,
            )
            self.spilled_bytes = self.lost = 0
        self.in_memory.clear()
        self.spilled.clear()
        self.bytes = 0
        if self.file is not None:
            with contextlib.suppress(OSError):  # nothing is left to write: closing cannot lose a number
                self.file.close()
            self.file = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def __enter__(self) -> KeptEmbeddings:  # noqa: PYI034 - Self needs Python 3.11
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _spill(self, u: int, embedding: torch.Tensor) -> bool:
        if self.failed:
            return False
        payload = embedding.detach().to("cpu").contiguous().view(torch.uint8).numpy().tobytes()
        parent = self.parent
        try:
            if self.file is None:
                parent = parent if parent is not None else tempfile.gettempdir()
                remove_stale(parent)
                self.folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=parent))
                # unbuffered: a refused write fails here, not later in a flush
                self.file = open(self.folder / "embeddings.bin", "w+b", buffering=0)  # noqa: SIM115 - for the whole call
            offset = self.file.seek(0, os.SEEK_END)
            if self.file.write(payload) != len(payload):
                raise OSError(f"wrote less than the {len(payload)} bytes of an embedding")
        except OSError as error:
            self.failed = True
            logger.warning(
                "cannot spill embeddings to %s (%s); texts that later steps need are embedded again instead",
                self.folder or parent or "the temporary folder",  # gettempdir() itself may be what failed
                error,
            )
            return False
        self.spilled[u] = (offset, len(payload), embedding.dtype, tuple(embedding.shape))
        self.spilled_bytes += len(payload)
        return True


def remove_stale(parent: str | os.PathLike) -> None:
    """Remove spill folders under ``parent`` left by processes that no longer run (a killed run's leftovers)."""
    try:
        entries = list(Path(parent).glob(f"{PREFIX}*"))
    except OSError:
        return
    for entry in entries:
        pid = entry.name[len(PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _running(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists but belongs to someone else
        return True
    return True
