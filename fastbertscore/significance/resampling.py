"""Paired bootstrap resampling and paired approximate randomization over segment scores, as sacrebleu 2.6 defines
them (``sacrebleu.significance``), vectorised: one index matrix (or one sign matrix) for every system.

A corpus score here is the mean of segment scores, so a resample is a gather and a mean, and an approximate
randomization trial is a signed sum of the segment differences. The random draws are sacrebleu's, in its
order, from ``numpy.random.default_rng(seed)``, so the same seed and count give sacrebleu's intervals and
p-values on the same segment scores (``tests/significance/``). One deliberate difference: a system whose
segment scores equal the baseline's gets p = 1.0, where sacrebleu's ``(count + 1) / (trials + 1)`` gives it
``1 / (trials + 1)`` — "significant" for a system identical to its baseline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

TESTS = ("bs", "ar")
#: A paired test: ``"bs"`` bootstrap resampling, ``"ar"`` approximate randomization (one of :data:`TESTS`).
Test = Literal["bs", "ar"]
#: sacrebleu's defaults: bootstrap resamples, randomization trials.
DEFAULT_SAMPLES = {"bs": 1000, "ar": 10000}
#: Bootstrap resamples for the intervals of an approximate randomization run (sacrebleu's --paired-ar-confidence-n).
AR_CONFIDENCE_SAMPLES = 1000
#: Bytes a resample or trial takes per segment at once: a bootstrap's int64 index and float64 score, a trial's mask.
RESAMPLE_BYTES = {"bs": 16, "ar": 1}


@dataclass(frozen=True)
class Interval:
    """sacrebleu's 95% interval: the mean of the resampled scores and half the width between the 2.5% points."""

    mean: float
    half_width: float


def estimate_ci(samples: np.ndarray) -> Interval:
    """sacrebleu's ``estimate_ci``: sort, take the ``n // 40``-th value from each end, half their distance."""
    ordered = np.sort(samples)
    lower = len(ordered) // 40
    return Interval(float(ordered.mean()), float(0.5 * (ordered[len(ordered) - lower - 1] - ordered[lower])))


def p_value(statistics: np.ndarray, observed: float) -> float:
    """``(count of statistics > observed + 1) / (trials + 1)``, sacrebleu's (and multeval's) estimate."""
    return (int(np.count_nonzero(statistics > observed)) + 1) / (len(statistics) + 1)


def bootstrap_indices(n_segments: int, n_samples: int, seed: int | None) -> np.ndarray:
    """The ``(n_samples, n_segments)`` resample indices sacrebleu draws, shared by every system."""
    return np.random.default_rng(seed).choice(n_segments, size=(n_samples, n_segments), replace=True)


def resampled_means(scores: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Corpus scores of each resample: ``scores`` ``(..., n_segments)`` → ``(..., n_samples)``.

    One row at a time: numpy gathers a 1-D row five times faster than the same indices across a leading axis."""
    rows = scores.reshape(-1, scores.shape[-1])
    return np.stack([row[indices].mean(axis=-1) for row in rows]).reshape(*scores.shape[:-1], len(indices))


def paired_bootstrap(
    baseline: np.ndarray, system: np.ndarray, baseline_resamples: np.ndarray, system_resamples: np.ndarray
) -> float:
    """sacrebleu's paired bootstrap p-value: how often the resampled difference, centred on its mean, exceeds the
    observed one. ``baseline`` and ``system``: segment scores; ``*_resamples``: their :func:`resampled_means` over
    the same :func:`bootstrap_indices` (computed once per system, for its interval too)."""
    if np.array_equal(baseline, system):
        return 1.0
    observed = abs(baseline.mean() - system.mean())
    differences = np.abs(system_resamples - baseline_resamples)
    return p_value(differences - differences.mean(), observed)


def randomization_masks(n_segments: int, n_trials: int, rng: np.random.Generator) -> np.ndarray:
    """sacrebleu's ``(n_trials, n_segments)`` masks: True where pseudo-system a takes the baseline's segment."""
    return rng.integers(2, size=(n_trials, n_segments), dtype=bool)


def paired_randomization(baseline: np.ndarray, systems: np.ndarray, masks: np.ndarray, rows: int = 1024) -> list[float]:
    """sacrebleu's paired approximate randomization p-value of each of ``systems`` ``(k, segments)`` against
    ``baseline``: how often swapping the two systems' segments at random gives corpus scores farther apart than
    observed. ``masks``: :func:`randomization_masks`, shared by every system."""
    d = baseline[None, :] - systems  # (k, segments)
    # Pseudo-systems a and b differ by Σ ±d, + where a took the baseline: 2·(mask @ d) - Σ d; every system in one
    # product, ``rows`` trials at a time.
    statistics = np.concatenate(
        [
            np.abs(2 * (masks[start : start + rows].astype(d.dtype) @ d.T) - d.sum(axis=1)) / d.shape[1]
            for start in range(0, len(masks), rows)
        ]
    )  # (trials, k)
    return [1.0 if not d[k].any() else p_value(statistics[:, k], abs(d[k].mean())) for k in range(len(d))]
