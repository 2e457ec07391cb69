"""The pictures of the docs, made from the committed benchmark and meta-evaluation files (and one explanation on
the embedded model), so that a new benchmark run is one command away from new pictures:

    python benchmarks/figures.py            # writes docs/*.png

- docs/heatmap.png: the output of the `bertscore-show ... -f heatmap.png` command docs/explanations.md shows
- docs/metaeval_minilm.png: mean segment-level Kendall τ against layer (docs/metaeval_minilm.csv)
- docs/system_level.png: pairwise accuracy of system rankings with 95% intervals (docs/metaeval_system_level_minilm.md)
- docs/speed_<class>.png, docs/memory_<class>.png: × bert-score and peak RSS per contender (benchmarks/results_<class>.md)
"""

from __future__ import annotations

import csv
import re
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE.parent / "docs"


def markdown_rows(path: Path) -> list[list[str]]:
    """The body rows of the Markdown tables in ``path``, as cells."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("|") and not re.match(r"^\|[-:| ]+\|$", line):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def heatmap(plt) -> Path:
    """Runs the ``bertscore-show`` command that docs/explanations.md shows under the picture, writing the picture."""
    import shlex

    from fastbertscore.cli.show import main

    page = (DOCS / "explanations.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(bertscore-show .*?)\n# ", page, re.DOTALL)[1].replace("\\\n", " ")
    argv = shlex.split(block)[1:]
    argv[argv.index("-f") + 1] = str(DOCS / "heatmap.png")
    if main(argv) != 0:
        raise RuntimeError(f"bertscore-show {block} failed")
    return DOCS / "heatmap.png"


def layer_curve(plt) -> Path:
    taus = defaultdict(list)
    with (DOCS / "metaeval_minilm.csv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["group"] != "pooled" and row["kendall"]:
                taus[row["metric"]].append(float(row["kendall"]))
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for kind in "PRF":
        layers = sorted(int(m.split("L")[1]) for m in taus if m.startswith(f"{kind} L"))
        ax.plot(
            layers,
            [sum(taus[f"{kind} L{k}"]) / len(taus[f"{kind} L{k}"]) for k in layers],
            marker="o",
            label=f"BERTScore {kind}",
        )
    for name, style in (("chrF", "--"), ("SentBLEU", ":")):
        ax.axhline(sum(taus[name]) / len(taus[name]), color="gray", linestyle=style, label=name)
    ax.set(
        xlabel="layer (0 = embeddings)",
        ylabel="mean segment-level Kendall τ",
        title="sentence-transformers/all-MiniLM-L6-v2",
    )
    ax.legend(fontsize=8)
    return _save(fig, "metaeval_minilm.png")


def system_level(plt) -> Path:
    names, values, low, high = [], [], [], []
    for cells in markdown_rows(DOCS / "metaeval_system_level_minilm.md")[1:]:
        match = re.match(r"([\d.]+) \(([\d.]+)–([\d.]+)\)", cells[1])
        names.append(cells[0].strip("*").replace("BERTScore F ", ""))
        values.append(float(match[1]))
        low.append(float(match[1]) - float(match[2]))
        high.append(float(match[3]) - float(match[1]))
    fig, ax = plt.subplots(figsize=(7, 3.4))
    ax.errorbar(range(len(names)), values, yerr=[low, high], fmt="o", capsize=5, color="#3b6ea8")
    ax.set_xticks(range(len(names)), names, rotation=25, ha="right", fontsize=8)
    ax.set(ylabel="pairwise accuracy (95% CI)", title="System rankings as people order them (513 WMT system pairs)")
    return _save(fig, "system_level.png")


def speed_and_memory(plt, results: Path) -> list[Path]:
    cpu = results.stem.removeprefix("results_")
    rows = [r for r in markdown_rows(results)[1:] if r[0] == "a"]
    names = [r[1] for r in rows]
    out = []
    for column, label, name in (
        (5, "× bert-score (higher is faster)", f"speed_{cpu}.png"),
        (6, "peak RSS, MB", f"memory_{cpu}.png"),
    ):
        fig, ax = plt.subplots(figsize=(6.5, 3.2))
        values = [float(r[column]) for r in rows]
        ax.barh(names, values, color=["#999999" if n == "bert-score" else "#3b6ea8" for n in names])
        ax.invert_yaxis()
        ax.set(xlabel=label, title=f"workload a, 600 MT pairs, all-MiniLM-L6-v2 ({cpu} CPU)")
        for y, v in enumerate(values):
            ax.text(v, y, f" {v:g}", va="center", fontsize=8)
        out.append(_save(fig, name))
    return out


def _save(fig, name: str) -> Path:
    path = DOCS / name
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


def main() -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = [heatmap(plt), layer_curve(plt), system_level(plt)]
    for results in sorted(HERE.glob("results_*.md")):
        written += speed_and_memory(plt, results)
    plt.close("all")
    print("\n".join(str(p.relative_to(HERE.parent)) for p in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
