"""How much work goes into one encoder batch and one step, and how much memory one call holds.

Nothing here changes a score: a budget only decides how texts are grouped and when embeddings spill to disk.
Every share of the budget is a named constant below, with what it bounds.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass

import torch

from fastbertscore.hardware import free_device_memory
from fastbertscore.heap import Ceiling, resident_bytes

MB = 1 << 20
#: Bytes of one embedding coordinate as the pipeline keeps it (float32).
FLOAT_BYTES = 4
#: Sentences per encoder batch unless the caller says otherwise (``batch_size``): on a CPU (bert-score's default),
#: and on a GPU, where a batch of 64 short texts leaves the device waiting on the host's kernel launches (docs/speed.md,
#: "On a GPU": batches of 256 ran roberta-large's shape in bfloat16 about twice as fast).
BATCH_SIZE, GPU_BATCH_SIZE = 64, 256
#: Padded tokens per encoder batch on a CPU; longer texts get smaller batches.
MAX_TOKENS = 4096
#: Reduced precision (bfloat16, float16) runs fastest on larger batches: its encoder batches take this many times
#: ``MAX_TOKENS`` (docs/speed.md).
REDUCED_PRECISION_TOKENS = 2
#: What one call may hold when the device's free memory cannot be read.
DEFAULT_MEMORY = 512 * MB
#: The part of the host's available RAM a call takes by default on a CPU, and its floor and ceiling.
CPU_MEMORY_SHARE, CPU_MEMORY_MIN, CPU_MEMORY_MAX = 8, 256 * MB, 4 << 30
#: The part of the free GPU memory a call takes by default on CUDA, and its floor and ceiling.
GPU_MEMORY_SHARE, GPU_MEMORY_MIN, GPU_MEMORY_MAX = 4, 256 * MB, 32 << 30
#: One step's texts get this part of the budget (a quarter): also what a given budget must hold for the largest pair.
STEP_SHARE = 4
#: On a CPU a step's texts take at most the embeddings of this many full encoder batches (96 MB of MiniLM's, 256 MB
#: of roberta-large's): larger steps embed no faster and only hold more, a step's memory is reused by the next, and
#: a step's texts stay few enough for the least-padded cut (docs/speed.md, "The host path").
CPU_STEP_BATCHES = 16
#: One matching step's similarities get this part of the budget in float32 entries, and so do its padded copies.
MATCH_SHARE = 16
#: The most similarity entries one matching step computes (64 MiB of float32), whatever the budget.
MATCH_ENTRIES_CAP = 1 << 24
#: On a CPU, the most a matching step computes (4 MiB of float32): buffers this small are reused from the heap,
#: while larger ones are fresh pages from the OS each step, and zeroing those cost as much as the matching itself
#: (docs/speed.md, "The host path").
CPU_MATCH_ENTRIES_CAP = 1 << 20
#: The encoder's working memory per token, in floats per unit of the embedding's width (float32 activations).
ACTIVATION_FLOATS = 8
#: On CUDA, encoder batches grow to fill this part of the free memory (of the budget, where the user gave one), at
#: about this many floats a token per unit of width, up to ``GPU_MAX_TOKENS`` padded tokens (rounded down to a
#: multiple of ``GPU_TOKEN_STEP``).
GPU_ACTIVATION_SHARE, GPU_ACTIVATION_FLOATS, GPU_MAX_TOKENS, GPU_TOKEN_STEP = 4, 64, 65536, 1024
#: compute() (and so the evaluate module) keeps the embeddings of recent texts between calls in this part of the
#: default budget: a reference shared by several systems is embedded once across datasets.map batches.
CACHE_SHARE = 16
#: Environment variable that forces every encoder batch to this many sentences, whatever a call asks for. It
#: changes no number beyond float32 rounding; the test suite runs the exactness tests again under it.
ENCODER_BATCH_VARIABLE = "FASTBERTSCORE_ENCODER_BATCH"
#: A call's hook between encoder batches: called before each one; an exception it raises stops the call (a deadline
#: passed, a request cancelled). ``None``: none.
BatchHook = Callable[[], None] | None


@dataclass(frozen=True)
class Budget:
    """How much work goes into one step and how much memory one call holds; none of it changes a score.

    ``memory_bytes`` bounds what a call holds at once beyond the model and its tokenized texts: a share of it for
    the texts of the step being matched (:attr:`step_bytes`), a share each for one matching step's similarities
    and padded copies (:attr:`match_entries`), ``activation_bytes`` for the encoder's work on one batch, and the
    rest for the embeddings that later steps need (:attr:`kept_bytes`; past that, they spill to local disk).
    """

    batch_size: int = BATCH_SIZE  # sentences per encoder batch at most
    max_tokens: int = MAX_TOKENS  # padded tokens per encoder batch at most
    memory_bytes: int = DEFAULT_MEMORY  # held at once by one call: embeddings, matching buffers, a batch's work
    step_cap: int | None = None  # the most one step's texts take; None: no cap
    explicit: bool = False  # the user gave memory_bytes: a pair larger than a step is then an error
    activation_bytes: int = 0  # the encoder's working memory for one batch of max_tokens
    match_cap: int = MATCH_ENTRIES_CAP  # the most similarity entries of one matching step, whatever the memory
    between_batches: BatchHook = None  # called before each encoder batch; may raise to stop the call

    @property
    def step_share(self) -> int:
        """The most one step's texts may take, and what a given budget must hold for the largest pair (past the
        CPU's step cap, such a pair gets a step of its own)."""
        return self.memory_bytes // STEP_SHARE

    @property
    def step_bytes(self) -> int:
        """What the embeddings of one step's texts may take together."""
        return self.step_share if self.step_cap is None else min(self.step_share, self.step_cap)

    @property
    def match_entries(self) -> int:
        """float32 entries in one matching step's similarities, and again in its padded copies."""
        return max(1, min(self.match_cap, self.memory_bytes // (MATCH_SHARE * FLOAT_BYTES)))

    @property
    def match_bytes(self) -> int:
        """What one matching step's similarities and padded copies take together."""
        return 2 * FLOAT_BYTES * self.match_entries

    @property
    def kept_bytes(self) -> int:
        """What the embeddings kept for later steps may take in memory before they spill to disk."""
        return max(0, self.memory_bytes - self.step_bytes - self.match_bytes - self.activation_bytes)

    def accounted_bytes(self, kept_in_memory: int) -> int:
        """What a call holds by this budget's count while ``kept_in_memory`` bytes of embeddings wait for later
        steps: the process growing past it is freed heap not handed back (see :mod:`.heap`)."""
        return self.step_bytes + self.match_bytes + self.activation_bytes + kept_in_memory

    def ceiling(self, kept_in_memory: Callable[[], int]) -> Ceiling:
        """The resident memory of a process whose call holds ``kept_in_memory()`` bytes of kept embeddings, counted
        from the process's memory as the call starts (``None`` where it cannot be read): what the budget accounts
        for where the user gave it, else the whole default budget (the encoder's real work on a deep model's batch
        is more than the budget counts, and trimming each step would fault those pages in again). Past it, freed
        heap goes back to the OS: within a step only where the user gave the budget, between steps always
        (:mod:`fastbertscore.heap`)."""
        start = resident_bytes()
        if start is None:
            return None
        if self.explicit:
            return lambda: start + self.accounted_bytes(kept_in_memory())
        return lambda: start + max(self.accounted_bytes(kept_in_memory()), self.memory_bytes)

    @classmethod
    def for_device(
        cls, device: torch.device, *, batch_size: int | None, max_tokens: int, width: int, memory_mb: int | None = None
    ) -> Budget:
        """The budget of a call on ``device``: the memory the user gave (``memory_mb``), else a share of the host's
        available RAM on CPU or of the free GPU memory on CUDA. On CUDA the encoder batches and steps grow with
        the free memory too: ``width`` (floats per token of an embedding) sizes them. ``batch_size`` ``None``: the
        device's (:func:`default_batch_size`)."""
        free = free_device_memory(device)
        on_cuda = torch.device(device).type == "cuda"
        memory = memory_mb * MB if memory_mb is not None else default_memory(device, free)
        if on_cuda:  # batches grow with the free memory, or with the budget where the user gave one
            room = free if memory_mb is None else min(free, memory)
            fits = (room // GPU_ACTIVATION_SHARE) // (GPU_ACTIVATION_FLOATS * FLOAT_BYTES * width)
            max_tokens = max(max_tokens, min(GPU_MAX_TOKENS, fits) // GPU_TOKEN_STEP * GPU_TOKEN_STEP)
        step_cap = None if on_cuda else CPU_STEP_BATCHES * max_tokens * width * FLOAT_BYTES
        match_cap = MATCH_ENTRIES_CAP if on_cuda else CPU_MATCH_ENTRIES_CAP
        activation = max_tokens * width * FLOAT_BYTES * ACTIVATION_FLOATS
        size = default_batch_size(device) if batch_size is None else batch_size
        return cls(size, max_tokens, memory, step_cap, memory_mb is not None, activation, match_cap)


def default_memory(device: torch.device | str, free: int | None = None) -> int:
    """What one call holds by default on ``device``: a share of the host's available RAM on CPU, of the free memory
    on CUDA (``free``: that memory in bytes, read now when not given)."""
    free = free_device_memory(device) if free is None else free
    if torch.device(device).type == "cuda":
        return min(max(free // GPU_MEMORY_SHARE, GPU_MEMORY_MIN), GPU_MEMORY_MAX)
    return min(max(free // CPU_MEMORY_SHARE, CPU_MEMORY_MIN), CPU_MEMORY_MAX)


@functools.lru_cache(maxsize=8)
def default_cache_mb(device: str) -> int:
    """The embedding cache ``compute`` keeps between calls by default on ``device``: :data:`CACHE_SHARE` of the
    default budget, read once per process, so that every call of a run sees the same size (and the same scorer)."""
    return max(1, default_memory(device) // CACHE_SHARE // MB)


def default_batch_size(device: torch.device | str) -> int:
    """Sentences per encoder batch on ``device`` where the caller gives no ``batch_size``."""
    return GPU_BATCH_SIZE if torch.device(device).type == "cuda" else BATCH_SIZE


def forced_batch_size() -> int | None:
    """``$FASTBERTSCORE_ENCODER_BATCH`` as a positive whole number, or ``None`` when it is not set.

    Raises:
        ValueError: it is set to anything but a positive whole number.
    """
    value = os.environ.get(ENCODER_BATCH_VARIABLE, "").strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{ENCODER_BATCH_VARIABLE}={value!r} must be a positive whole number (sentences per batch)")
    return int(value)
