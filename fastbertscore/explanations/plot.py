"""Heatmap of candidate × reference token similarities (matplotlib is imported only here)."""

from __future__ import annotations

from fastbertscore.explanations.explanation import Explanation


def _labels(units, word_ids: list[int]) -> list[str]:
    """Token texts; a piece that continues the previous token's word is marked "##"."""
    return [
        ("##" if k > 0 and word_ids[k] == word_ids[k - 1] else "") + (unit.text or "∅") for k, unit in enumerate(units)
    ]


def similarity_figure(explanation: Explanation, *, annotate: bool | None = None):
    """A matplotlib ``Figure`` of the token similarity matrix of a token-level :class:`Explanation`.

    Raises:
        ValueError: the explanation is not token level.
        ImportError: matplotlib is missing (``pip install fastbertscore[plot]``).
    """
    if explanation.similarity is None:
        raise ValueError("a heatmap needs a token-level explanation: explain(..., level='token')")
    try:
        # A bare Figure, not pyplot: pyplot keeps every figure alive until closed, which leaks in a server.
        from matplotlib.figure import Figure
    except ImportError:  # pragma: no cover - exercised only without matplotlib
        raise ImportError("the heatmap needs matplotlib: pip install 'fastbertscore[plot]'") from None
    sim = explanation.similarity.numpy()
    rows = _labels(explanation.candidate_units, explanation.word_ids[0])
    cols = _labels(explanation.reference_units, explanation.word_ids[1])
    width, height = max(4.0, 0.55 * len(cols) + 2), max(3.0, 0.45 * len(rows) + 1.8)
    fig = Figure(figsize=(width, height))
    ax = fig.subplots()
    image = ax.imshow(sim, cmap="Blues", vmin=min(0.0, float(sim.min())) if sim.size else 0, vmax=1)
    ax.set_xticks(range(len(cols)), cols, rotation=45, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(len(rows)), rows)
    ax.set_xlabel("Reference (tokenized)")
    ax.set_ylabel("Candidate (tokenized)")
    ax.set_title(f"P={explanation.precision:.3f}  R={explanation.recall:.3f}  F1={explanation.f1:.3f}")
    if annotate if annotate is not None else sim.size <= 400:
        for i in range(sim.shape[0]):
            for j in range(sim.shape[1]):
                ax.text(j, i, f"{sim[i, j]:.2f}", ha="center", va="center", fontsize=7, color="w" if sim[i, j] > 0.6 else "k")
    fig.colorbar(image, ax=ax, fraction=0.03, pad=0.02)
    fig.tight_layout()
    return fig
