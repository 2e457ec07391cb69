"""Every bound the Space holds a request to, in one place: the handlers check them, the page's labels and
docs/space.md show them, and a request over one is refused with a sentence naming it, before any model work.

One model thread serves every user, so each bound keeps one request from holding it (or the memory) for long.
"""

from __future__ import annotations

import math
from typing import TypeGuard

#: Rows of a Batch file, and segments (references) of a comparison.
MAX_ROWS = 2000
#: References of one candidate: lines of the Pair tab's reference box, references of one Batch row (its
#: reference columns, a JSON list in a cell counted by its items).
MAX_REFERENCES = 8
#: Pairs one request scores, every reference counted: Batch rows × references, Compare segments × systems.
MAX_PAIRS = 8000
#: Characters of one text (a candidate, a reference, a system's output).
MAX_CHARS = 4000
#: Systems of one comparison (uploaded and pasted together); more files are refused before any is read.
MAX_SYSTEMS = 8
#: Bootstrap resamples or randomization trials of one comparison (the tests' defaults are 1,000 and 10,000).
MAX_SAMPLES = 10_000
#: Bytes of one uploaded file: Gradio refuses a larger upload, and the Space checks each file's size before
#: reading it. A pasted box holds at most as many characters.
MAX_UPLOAD_BYTES = 10_000_000
#: Entries of the Space's note cache (which settings have no rescaling baseline).
MAX_NOTES = 64
#: Result files kept for download; the oldest beyond it are deleted when a new one is written.
MAX_RESULT_FILES = 64
#: Megabytes of the embedding cache of the loaded model: the Pair tab embeds its texts to score them and again
#: inside its explanation, and the second time is free.
CACHE_MB = 16
#: Seconds a result file is kept, so that a long-running Space does not fill its disk.
KEEP_RESULTS_S = 3600
#: Work of one request, in tokens of the default model: the tokens of its distinct texts, counted with the model's
#: own tokenizer on the request's thread before any model work, times the model's cost per token against the
#: default model's (its layers and width). Over it, a request is refused naming what it needs.
WORK_BUDGET = 200_000
#: Seconds of scoring one request may take on the model thread (from its first encoder batch, time lent to smaller
#: requests not counted): past it, the request stops between two encoder batches and says so.
DEADLINE_S = 120
#: Requests of one visitor session waiting for or running on the model thread at once; another is refused.
JOBS_PER_SESSION = 1
#: A request of at most this much work (tokens of the default model) on the model already loaded runs between the
#: encoder batches of a larger one, so a pair never waits behind a long file.
SMALL_WORK = 2_000
#: Tokenizers kept for counting work (a copy per model, never the model thread's).
MAX_TOKENIZERS = 4
#: Bytes of a Compare request's uploaded files together (each file at most MAX_UPLOAD_BYTES).
MAX_REQUEST_BYTES = 20_000_000
#: Bytes of the note cache's keys and notes together (as text), beside MAX_NOTES entries.
MAX_NOTE_BYTES = 100_000
#: The largest seed of the Compare tab (0 ≤ seed < 2**63, NumPy's seeds as sacrebleu passes them).
MAX_SEED = 2**63 - 1

#: The limits a request meets, by name: what docs/space.md lists (a test holds the two together).
LIMITS = {
    "MAX_ROWS": MAX_ROWS,
    "MAX_REFERENCES": MAX_REFERENCES,
    "MAX_PAIRS": MAX_PAIRS,
    "MAX_CHARS": MAX_CHARS,
    "MAX_SYSTEMS": MAX_SYSTEMS,
    "MAX_SAMPLES": MAX_SAMPLES,
    "MAX_UPLOAD_BYTES": MAX_UPLOAD_BYTES,
    "MAX_NOTES": MAX_NOTES,
    "MAX_RESULT_FILES": MAX_RESULT_FILES,
    "CACHE_MB": CACHE_MB,
    "KEEP_RESULTS_S": KEEP_RESULTS_S,
    "WORK_BUDGET": WORK_BUDGET,
    "DEADLINE_S": DEADLINE_S,
    "JOBS_PER_SESSION": JOBS_PER_SESSION,
    "SMALL_WORK": SMALL_WORK,
    "MAX_TOKENIZERS": MAX_TOKENIZERS,
    "MAX_REQUEST_BYTES": MAX_REQUEST_BYTES,
    "MAX_NOTE_BYTES": MAX_NOTE_BYTES,
    "MAX_SEED": MAX_SEED,
}


def megabytes(size: int) -> str:
    """A byte count as the page shows it.

    Example:
        >>> megabytes(MAX_UPLOAD_BYTES)
        '10 MB'
    """
    return f"{size / 1e6:g} MB"


def shown(value: object, length: int = 24) -> str:
    """``value`` as a message echoes it (a whole number with thousands separators, anything else as ``repr``): at
    most ``length`` characters, so a 300-digit seed is not echoed whole.

    Example:
        >>> shown(100_000_000), shown(10**300), shown("x" * 100)
        ('100,000,000', '1,000,000,000,000,000,0…', "'xxxxxxxxxxxxxxxxxxxxxx…")
    """
    text = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else repr(value)
    return text if len(text) <= length else text[: length - 1] + "…"


def check_samples(n_samples: object) -> int | None:
    """The Compare tab's resamples/trials box: ``None`` (the test's default) for 0 or empty, else a whole number
    from 1 to :data:`MAX_SAMPLES`.

    Raises:
        ValueError: a negative, fractional or too large number.

    Example:
        >>> check_samples(0), check_samples(500.0)
        (None, 500)
        >>> check_samples(100_000_000)
        Traceback (most recent call last):
        ValueError: Resamples / trials is 100,000,000; the Space runs at most 10,000
    """
    if n_samples is None or n_samples == 0:
        return None
    if not _whole(n_samples):
        raise ValueError(f"Resamples / trials must be a whole number; got {shown(n_samples)}")
    if not 0 < n_samples <= MAX_SAMPLES:
        raise ValueError(f"Resamples / trials is {shown(int(n_samples))}; the Space runs at most {MAX_SAMPLES:,}")
    return int(n_samples)


def check_seed(seed: object) -> int:
    """The Compare tab's seed box: a whole number from 0 to :data:`MAX_SEED` (Gradio's number box may send a float
    or nothing), checked before any scoring.

    Raises:
        ValueError: no seed, not a whole number, or out of range.

    Example:
        >>> check_seed(-1)
        Traceback (most recent call last):
        ValueError: Seed must be from 0 to 9,223,372,036,854,775,807 (2**63 - 1); got -1
    """
    if not _whole(seed):
        raise ValueError(f"Seed must be a whole number; got {shown(seed)}")
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(f"Seed must be from 0 to {MAX_SEED:,} (2**63 - 1); got {shown(int(seed))}")
    return int(seed)


def _whole(value: object) -> TypeGuard[int | float]:
    """A whole number as a number box sends it: an int, or a finite float without a fraction (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return isinstance(value, int) or (math.isfinite(value) and value == int(value))


def check_pairs(pairs: int, what: str, max_pairs: int = MAX_PAIRS) -> None:
    """Refuse a request of more than ``max_pairs`` pairs; ``what`` says how they were counted.

    Example:
        >>> check_pairs(9000, "3 systems of 3,000 segments")
        Traceback (most recent call last):
        ValueError: 3 systems of 3,000 segments make 9,000 pairs; the Space scores at most 8,000 per request
    """
    if pairs > max_pairs:
        raise ValueError(f"{what} make {pairs:,} pairs; the Space scores at most {max_pairs:,} per request")


def check_box(text: str | None, what: str) -> None:
    """Refuse a pasted box of more than :data:`MAX_UPLOAD_BYTES` characters before it is parsed."""
    if text is not None and len(text) > MAX_UPLOAD_BYTES:
        raise ValueError(
            f"{what} holds {len(text):,} characters; the Space takes at most {MAX_UPLOAD_BYTES:,} in a box"
        )
