"""Compare systems on shared references: corpus BERTScore with 95% confidence intervals and a paired test of
each system against a baseline, as sacrebleu reports BLEU and chrF (``sacrebleu -i A B --paired-bs``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, cast

import numpy as np

from fastbertscore.front import run
from fastbertscore.hardware import free_device_memory
from fastbertscore.pipeline.budget import BatchHook
from fastbertscore.scorer import BERTScorer
from fastbertscore.signature import Signature
from fastbertscore.significance.resampling import (
    AR_CONFIDENCE_SAMPLES,
    DEFAULT_SAMPLES,
    RESAMPLE_BYTES,
    TESTS,
    Interval,
    Test,
    bootstrap_indices,
    estimate_ci,
    paired_bootstrap,
    paired_randomization,
    randomization_masks,
    resampled_means,
)
from fastbertscore.validate import Pairs, Refs, Texts, check_pairs, check_positive_int

COLUMNS = ("precision", "recall", "f1")
#: How messages name a text: ``(system or None for a reference, segment, which reference or None) -> name``.
Label = Callable[[str | None, int, int | None], str]
SIGNIFICANT = 0.05


@dataclass(frozen=True)
class SystemScore:
    """One system's corpus scores (means of its segment scores), their 95% intervals and its p-value."""

    name: str
    scores: tuple[float, float, float]  # precision, recall, f1
    intervals: tuple[Interval, Interval, Interval]
    p_value: float | None  # against the baseline on F1; None for the baseline itself and without a test

    @property
    def marked_p_value(self) -> str:
        """The p-value to 4 decimals, ``*`` where p < 0.05; empty without one."""
        return "" if self.p_value is None else f"{self.p_value:.4f}{'*' if self.p_value < SIGNIFICANT else ''}"

    def to_dict(self) -> dict[str, float | None]:
        out: dict[str, float | None] = dict(zip(COLUMNS, self.scores, strict=True))
        out.update({f"{name}_ci": ci.half_width for name, ci in zip(COLUMNS, self.intervals, strict=True)})
        out["p_value"] = self.p_value
        return out


@dataclass(frozen=True)
class Comparison:
    """What :func:`compare` found: the baseline first, then the other systems in the order given."""

    systems: tuple[SystemScore, ...]
    test: Test | None
    n_samples: int  # bootstrap resamples ("bs", no test) or randomization trials ("ar")
    seed: int | None
    scores_signature: str  # the signature of the segment scores (BERTScorer.signature, short form)
    segment_scores: dict[str, np.ndarray]  # name → (3, segments): P, R, F of every segment

    @property
    def baseline(self) -> str:
        return self.systems[0].name

    @property
    def signature(self) -> str:
        """The scores' signature plus what the intervals and p-values depend on."""
        samples = f"{'trials' if self.test == 'ar' else 'resamples'}:{self.n_samples}"
        parts = [self.scores_signature, f"test:{self.test or 'none'}", samples]
        if self.test == "ar":
            parts.append(f"resamples:{AR_CONFIDENCE_SAMPLES}")
        return "|".join(parts + [f"seed:{'none' if self.seed is None else self.seed}"])

    def to_dict(self) -> dict[str, dict[str, float | None]]:
        """``{name: {"precision", "recall", "f1", "precision_ci", "recall_ci", "f1_ci", "p_value"}}``; the
        ``*_ci`` values are 95% half-widths."""
        return {s.name: s.to_dict() for s in self.systems}

    def to_json(self) -> str:
        payload = {"signature": self.signature, "baseline": self.baseline, "systems": self.to_dict()}
        return json.dumps(payload, ensure_ascii=False, indent=1)

    def _rows(self) -> tuple[list[str], list[list[str]]]:
        header = ["System", "P (μ ± 95% CI)", "R (μ ± 95% CI)", "F1 (μ ± 95% CI)"]
        if self.test is not None:
            header.append("p-value")
        rows = []
        for k, s in enumerate(self.systems):
            row = [f"Baseline: {s.name}" if k == 0 else s.name]
            row += [
                f"{x:.4f} ({ci.mean:.4f} ± {ci.half_width:.4f})" for x, ci in zip(s.scores, s.intervals, strict=True)
            ]
            if self.test is not None:
                row.append(s.marked_p_value)
            rows.append(row)
        return header, rows

    def table(self) -> str:
        """A text table in the spirit of sacrebleu's paired output, the signature under it."""
        header, rows = self._rows()
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        line = "-+-".join("-" * w for w in widths)
        fmt = lambda r: " | ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        return "\n".join([fmt(header), line, *map(fmt, rows), "", *self._notes()]) + "\n"

    def to_markdown(self) -> str:
        header, rows = self._rows()
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join([*lines, "", *self._notes()]) + "\n"

    def _notes(self) -> list[str]:
        notes = []
        if self.test is not None:
            name = "paired bootstrap resampling" if self.test == "bs" else "paired approximate randomization"
            notes.append(f"p-values: {name} of F1 against the baseline; * marks p < {SIGNIFICANT}.")
        return notes + [f"Signature: {self.signature}"]


def compare(
    systems: Mapping[str, Texts],
    references: Refs,
    *,
    baseline: str | None = None,
    test: Test | None = "bs",
    n_samples: int | None = None,
    seed: int | None = 12345,
    scorer: BERTScorer | None = None,
    verbose: bool = False,
    between_batches: BatchHook = None,
    label: Label | None = None,
    **settings: Any,
) -> Comparison:
    """Score several systems on the same references and test each against a baseline, as sacrebleu does.

    Args:
        systems: system name → its outputs, aligned with ``references``.
        references: one reference per segment, or a list of references per segment (the best one counts).
        baseline: the system the others are tested against (default: the first).
        test: ``"bs"`` paired bootstrap resampling (1,000 resamples by default), ``"ar"`` paired approximate
            randomization (10,000 trials; intervals from 1,000 bootstrap resamples), or ``None`` (intervals only).
        n_samples: resamples or trials instead of the default.
        seed: for ``numpy.random.default_rng`` (sacrebleu's default is 12345); ``None`` draws from the OS.
        scorer: a loaded :class:`~fastbertscore.BERTScorer` to score with (then no ``settings``; with idf, its
            idf sentences count, not ``references``).
        verbose: show the progress of the embedding.
        between_batches: called before each encoder batch; an exception it raises stops the call (a deadline).
        label: how warnings name a text: ``label(system or None for a reference, segment, which reference or
            None)``; by default ``systems['B'][3]``, ``references[3][1]`` (``bertscore compare``: file and line).
        settings: any field of :class:`~fastbertscore.Settings`. A system's corpus score is the mean of its
            segment P, R and F (rescaled when the settings rescale). References, and outputs several systems
            share, are embedded once.

    Raises:
        TypeError, ValueError: bad systems, references or options, before any model work.

    Examples:
        >>> refs = ["The cat sat on the mat.", "It is raining."]
        >>> result = compare({"A": ["A cat sat on the mat.", "It rains."], "B": ["The dog ran.", "Sunny."]}, refs,
        ...                  model_type="sentence-transformers/all-MiniLM-L6-v2", n_samples=100)
        >>> result.baseline, result.to_dict()["B"]["f1"] < result.to_dict()["A"]["f1"]
        ('A', True)
    """
    names, outputs, refs = _check(systems, references, baseline, test, n_samples, seed)
    n_samples = n_samples if n_samples is not None else DEFAULT_SAMPLES[test or "bs"]  # no test: as with "bs"
    result = run(
        _pairs(names, outputs, refs, label),
        settings,
        scorer=scorer,
        caller="compare()",
        idf_texts=refs,
        one_layer="corpus scores and tests are per layer",
        verbose=verbose,
        between_batches=between_batches,
    )
    flat = np.stack([x.double().numpy() for x in (result.precision, result.recall, result.f1)])  # (3, N·S)
    segments = flat.reshape(3, len(refs), len(names)).transpose(2, 0, 1).copy()  # (systems, 3, segments)
    results, short = _system_scores(segments, names, test, n_samples, seed), cast(Signature, result.signature).short()
    return Comparison(results, test, n_samples, seed, short, dict(zip(names, segments, strict=True)))  # each (3, segs)


def _pairs(names: list[str], outputs: list[list[str]], refs: list, label: Label | None) -> Pairs:
    """Segment by segment, the systems side by side: a reference, or an output systems share, is embedded once.
    A ``label`` is tried once here, so that a bad one fails before any model work, not at the first warning."""
    if label is not None:
        try:
            named = label(names[0], 0, None)
        except TypeError as error:
            raise TypeError(f"label must be a callable (system or None, segment, k) -> str: {error}") from None
        if not isinstance(named, str):
            raise TypeError(f"label must return a str, got {type(named).__name__}")
    cands = [outputs[s][i] for i in range(len(refs)) for s in range(len(names))]
    pairs = check_pairs(cands, [refs[i] for i in range(len(refs)) for _ in names])
    return replace(pairs, names=partial(_name, names, _default_label if label is None else label))


def _name(names: list[str], label: Label, side: str, i: int, k: int | None) -> str:
    """Pair ``i`` is system ``i % len(names)``'s output for segment ``i // len(names)``: so warnings name it."""
    return label(names[i % len(names)] if side == "cands" else None, i // len(names), k)


def _default_label(system: str | None, segment: int, k: int | None) -> str:
    """``systems['B'][3]``, ``references[3]`` or ``references[3][1]``: as a Python caller wrote them."""
    if system is not None:
        return f"systems[{system!r}][{segment}]"
    return f"references[{segment}]" + ("" if k is None else f"[{k}]")


def _system_scores(
    segments: np.ndarray, names: list[str], test: Test | None, n_samples: int, seed: int | None
) -> tuple[SystemScore, ...]:
    """Each system's corpus P, R and F with 95% intervals and, but for the baseline (system 0), the p-value of
    ``test`` on F1 against it; ``segments`` is (systems, 3, segments)."""
    n = segments.shape[2]
    if test == "ar":
        rng = np.random.default_rng(seed)
        masks = randomization_masks(n, n_samples, rng)
        system_indices = rng.choice(n, size=(AR_CONFIDENCE_SAMPLES, n), replace=True)
        baseline_indices = bootstrap_indices(n, AR_CONFIDENCE_SAMPLES, seed)  # sacrebleu draws it afresh
    else:
        system_indices = baseline_indices = bootstrap_indices(n, n_samples, seed)
    # p-values of systems 1.. against the baseline (system 0) on F1, under approximate randomization.
    randomization = paired_randomization(segments[0, 2], segments[1:, 2], masks) if test == "ar" else []
    # Each system's P, R and F resampled once: for its intervals and, with "bs", its test (the indices are shared).
    resamples = [
        resampled_means(segments[k], baseline_indices if k == 0 else system_indices) for k in range(len(names))
    ]
    results = []
    for k, name in enumerate(names):
        ci = [estimate_ci(resamples[k][c]) for c in range(3)]  # P, R, F
        p = None
        if k and test == "bs":
            p = paired_bootstrap(segments[0, 2], segments[k, 2], resamples[0][2], resamples[k][2])
        elif k and test == "ar":
            p = randomization[k - 1]
        mean = [float(segments[k, c].mean()) for c in range(3)]
        results.append(SystemScore(name, (mean[0], mean[1], mean[2]), (ci[0], ci[1], ci[2]), p))
    return tuple(results)


def _check(
    systems: Mapping[str, Texts],
    references: Refs,
    baseline: str | None,
    test: Test | None,
    n_samples: int | None,
    seed: int | None,
) -> tuple[list[str], list[list[str]], list[str] | list[Texts]]:
    """The systems in order, baseline first; every problem named before any model work."""
    if not isinstance(systems, Mapping):
        raise TypeError(f"systems must be a mapping of name → outputs, got {type(systems).__name__}")
    if not systems:
        raise ValueError("systems is empty: give at least one system")
    for name in systems:
        if not isinstance(name, str) or not name:
            raise TypeError(f"system names must be non-empty strings, got {name!r}")
    if test not in (*TESTS, None):
        raise ValueError(f"test={test!r} is not one of 'bs', 'ar', None")
    if test is not None and len(systems) < 2:
        raise ValueError(f"a paired test (test={test!r}) needs at least two systems, got {len(systems)}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise TypeError(f"seed must be an int or None, got {type(seed).__name__}")
    if seed is not None and seed < 0:  # numpy's generators take none: that failed after the scoring
        raise ValueError(f"seed must be 0 or more (or None), got {seed}")
    if n_samples is not None:
        check_positive_int(n_samples, "n_samples")
    names = list(systems)
    if baseline is not None:
        if baseline not in systems:
            raise ValueError(f"baseline={baseline!r} is not one of the systems: {', '.join(names)}")
        names.remove(baseline)
        names.insert(0, baseline)
    for name in names:
        check_pairs(systems[name], references, names=(f"systems[{name!r}]", "references"))
    if n_samples is not None:  # refused now, not in a MemoryError after the scoring
        per_segment = RESAMPLE_BYTES[test or "bs"] * n_samples
        if test == "ar":  # its intervals draw bootstrap resamples besides the trials
            per_segment += RESAMPLE_BYTES["bs"] * AR_CONFIDENCE_SAMPLES
        need, free = per_segment * len(references), free_device_memory("cpu")
        if need > free:
            raise ValueError(
                f"n_samples={n_samples:,} over {len(references):,} segments needs about {need / 2**30:,.1f} GiB for "
                f"the resampling, more than the {free / 2**30:,.1f} GiB free here; give fewer"
            )
    return names, [list(systems[name]) for name in names], list(references)
